"""What a matrix query answers: `Finding`s with a level, and the shared names (OS labels, levels)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args

OsName = Literal["ubuntu-22.04", "ubuntu-24.04", "ubuntu-26.04", "bottlerocket", "al2023"]
Level = Literal["ok", "advisory", "mandatory"]
OS_NAMES: tuple[str, ...] = get_args(OsName)

# OS label value (CONFIG.md §2) -> driver container image OS tag. Ubuntu only: the GPU Operator builds
# driver containers for Ubuntu; Bottlerocket and AL2023 NVIDIA images bake the driver in.
# Source: https://github.com/NVIDIA/gpu-driver-container (Makefile: IMAGE_TAG = $(DRIVER_VERSION)-$(DIST))
OS_TAG = {"ubuntu-22.04": "ubuntu22.04", "ubuntu-24.04": "ubuntu24.04", "ubuntu-26.04": "ubuntu26.04"}
BAKED_DRIVER_OS = ("bottlerocket", "al2023")
DRIVER_REPOSITORY = "nvcr.io/nvidia/driver"
NEAREST = 5
_LEVEL_ORDER: dict[str, int] = {"ok": 0, "advisory": 1, "mandatory": 2}
# The words an advisory uses when its fact is unconfirmed and the check therefore judged nothing: `matrix check`
# counts it among the checks not run (cannot see, cannot pass), never as a pass with advisories.
UNJUDGED_MARK = "is not judged"


# What to do about a release newer than the matrix (issue 46: never a downgrade). `refresh --fetch` reads NVIDIA's
# newest life-cycle-policy.rst and reports a release with no row as a hand edit (tools/matrix/refresh.py
# _missing_operators, writable=False); driver versions it writes itself (`--write`: driver_images and the operator rows'
# drivers).
ADD_OPERATOR = (
    "Add it: `.venv/bin/gpu-platform matrix refresh --fetch` reads NVIDIA's component matrix and reports the "
    "release as a row to add to policies/gpu_guard/matrix.yaml by hand (with its source and reviewed date); or pin a "
    "release the matrix knows"
)
ADD_DRIVER = (
    "Add it: `.venv/bin/gpu-platform matrix refresh --fetch --write` reads NVIDIA's driver images and component "
    "matrix and writes the new versions into policies/gpu_guard/matrix.yaml (review the diff)"
)


class MatrixError(Exception):
    """matrix.yaml is missing, unreadable or fails validation; the message names file, row and key."""


@dataclass(frozen=True)
class Finding:
    """One verdict of the matrix: the level, a short rule id, the message, its source row and fixes."""

    level: Level
    rule: str
    message: str
    source: str
    nearest: tuple[str, ...] = ()


def worst_level(findings: Iterable[Finding]) -> Level:
    """The most severe level among `findings` ("ok" when there are none)."""
    worst: Level = "ok"
    for finding in findings:
        if _LEVEL_ORDER[finding.level] > _LEVEL_ORDER[worst]:
            worst = finding.level
    return worst


def pick(versions: Iterable[str], lead: str, none: str) -> str:
    """`<lead> a, b.` naming what to choose, or, where nothing qualifies, `none` (a sentence that says so and what
    to do): never "choose one of none" (issue 46)."""
    listed = fmt_versions(versions)
    return f"{lead} {listed}." if listed else f"{none}."


def fmt_versions(versions: Iterable[str]) -> str:
    """`a, b, c`: versions as messages list them."""
    return ", ".join(versions)
