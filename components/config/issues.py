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


# The node OS a misspelt OS value is steered to when several are equally close ("ubuntu", "ubuntu-20.04"): the one
# whose Canonical EKS images cover EKS 1.31-1.36 and whose driver images cover R570 to R610 (matrix.yaml
# node_images, driver_images). Ubuntu 26.04 starts at EKS 1.35 and R595, so it fits fewer stacks: a suggestion
# that a stack on R580 or EKS 1.34 would then fail is no fix.
PREFERRED_NODE_OS = "ubuntu-24.04"


def _close(value: str, choices: Iterable[str], preferred: str | None = None) -> list[str]:
    """The choice nearest to `value` (none below a 0.5 similarity). Among equally near ones `preferred` wins when
    it is one of them, else the one difflib ranks first."""
    found = difflib.get_close_matches(value, list(choices), n=len(list(choices)) or 1, cutoff=0.5)
    if not found:
        return []
    best = difflib.SequenceMatcher(None, value, found[0]).ratio()
    ties = [c for c in found if difflib.SequenceMatcher(None, value, c).ratio() == best]
    return [preferred if preferred in ties else found[0]]


def _format_path(path: Sequence[PathPart]) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text

