"""Config errors and issues: what a rejected key reports, and the helpers every config module shares."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any, Literal, TypeAlias

import pulumi

PROJECT = "gpu-platform"
CONFIG_FILE_ENV = "GPU_PLATFORM_CONFIG_FILE"

PathPart: TypeAlias = str | int
Path: TypeAlias = tuple[PathPart, ...]

OperatorOs = Literal["ubuntu-22.04", "ubuntu-24.04", "ubuntu-26.04"]
PoolOs = Literal["ubuntu-22.04", "ubuntu-24.04", "ubuntu-26.04", "bottlerocket", "al2023"]
CapacityType = Literal["on-demand", "spot"]
_UNSET: Any = object()


class ConfigError(pulumi.RunError):
    """The stack configuration was rejected; the message says where, what, why and the fix.

    A `pulumi.RunError`, so `pulumi up` prints the message without a Python traceback.
    """


class ConfigIssue(ValueError):
    """One problem with one key: raised inside validators, collected into a `ConfigError`."""

    def __init__(
        self,
        rule: str,
        *,
        value: Any = _UNSET,
        path: Path = (),
        nearest: Sequence[str] = (),
        fix: str | None = None,
    ) -> None:
        super().__init__(rule)
        self.rule = rule
        self.value = value
        self.path = path
        self.nearest = tuple(nearest)
        self.fix = fix


class ConfigIssues(ValueError):
    """Several `ConfigIssue`s found together by a cross-field check."""

    def __init__(self, issues: Sequence[ConfigIssue]) -> None:
        super().__init__("; ".join(i.rule for i in issues))
        self.issues = list(issues)


def _close(value: str, choices: Iterable[str]) -> list[str]:
    return difflib.get_close_matches(value, list(choices), n=1, cutoff=0.5)


def _format_path(path: Sequence[PathPart]) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text

