"""Version parsing for NVIDIA driver, CUDA and Kubernetes version strings.

`packaging.Version` is not used for NVIDIA drivers: it accepts PEP 440 forms that are not driver
versions (`580.post1`, `v580`, `580a1`) and drops the leading zeros of a patch (`535.54.03` would
print as `535.54.3`). NVIDIA versions are `<branch>[.<minor>[.<patch>]]`, compared numerically
component by component: `570.26 < 570.124.06 < 570.133.20`.
Source: https://docs.nvidia.com/datacenter/tesla/drivers/ (branch = first component, e.g. R570)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

_DRIVER_RE = re.compile(r"^(?P<branch>\d{3,4})(?:\.(?P<minor>\d{1,4})(?:\.(?P<patch>\d{1,4}))?)?$")
_CUDA_RE = re.compile(r"^(?P<major>\d{1,2})\.(?P<minor>\d{1,2})(?:\.(?P<patch>\d{1,3}))?(?:\.\d+)?$")
_KUBE_RE = re.compile(r"^v?(?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<patch>\d+))?(?:[-+][0-9A-Za-z.\-+]*)?$")


@dataclass(frozen=True, order=True)
class DriverVersion:
    """An NVIDIA Linux driver version (`580.173.02`) or a bare branch (`580`).

    Ordering compares the numeric components; a bare branch sorts before every release of that
    branch (`580 < 580.65.06`). `text` keeps the spelling as written (leading zeros intact).
    """

    key: tuple[int, ...]
    text: str = field(compare=False)

    @property
    def branch(self) -> int:
        """The driver branch, e.g. 535 for 535.309.01 (NVIDIA calls it R535)."""
        return self.key[0]

    @property
    def is_branch_only(self) -> bool:
        """True for a bare branch such as `580` (what baked node images declare)."""
        return len(self.key) == 1

    def __str__(self) -> str:
        return self.text


@lru_cache(maxsize=4096)  # a pure function of an immutable string, called for every row of every query
def parse_driver_version(version: str) -> DriverVersion:
    """Parse `580.173.02`, `570.26` or a branch `580` (an `R` prefix is accepted: `R580`).

    Raises ValueError naming the value and the expected form on anything else.
    """
    text = version.strip()
    candidate = text[1:] if text[:1] in ("R", "r") else text
    match = _DRIVER_RE.match(candidate)
    if match is None:
        raise ValueError(
            f"driver version {version!r} is not an NVIDIA driver version; expected "
            "<branch>.<minor>[.<patch>] such as 580.173.02, or a branch such as 580"
        )
    parts = [int(match.group("branch"))]
    for name in ("minor", "patch"):
        value = match.group(name)
        if value is not None:
            parts.append(int(value))
    return DriverVersion(key=tuple(parts), text=candidate)


@dataclass(frozen=True, order=True)
class CudaVersion:
    """A CUDA toolkit/runtime version: `12.8` (GA, patch 0), `12.2.2` (Update 2), `13.0.0`.

    A fourth build component, as NGC release notes print it (`12.8.1.012`), is ignored.
    """

    major: int
    minor: int
    patch: int = 0

    @property
    def minor_key(self) -> tuple[int, int]:
        """(major, minor), e.g. (12, 8)."""
        return (self.major, self.minor)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    @property
    def short(self) -> str:
        """`12.8` for 12.8.0, `12.2.2` otherwise."""
        return f"{self.major}.{self.minor}" if self.patch == 0 else str(self)


def parse_cuda_version(version: str) -> CudaVersion:
    """Parse a CUDA version such as `12.8`, `12.2.2` or `13.0.2.006`; ValueError otherwise."""
    match = _CUDA_RE.match(version.strip())
    if match is None:
        raise ValueError(
            f"CUDA version {version!r} is not a CUDA release; expected <major>.<minor>[.<update>] "
            "such as 12.8 or 12.2.2"
        )
    patch = match.group("patch")
    return CudaVersion(int(match.group("major")), int(match.group("minor")), int(patch) if patch else 0)


@dataclass(frozen=True, order=True)
class KubeMinor:
    """A Kubernetes minor version: `1.35` (patch and EKS suffixes such as `1.32.3-eks-1` dropped)."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def minors_behind(self, newer: KubeMinor) -> int:
        """How many minor versions this one is older than `newer` (negative when newer)."""
        if self.major != newer.major:
            raise ValueError(f"Kubernetes {self} and {newer} differ in major version")
        return newer.minor - self.minor


def parse_kube_minor(version: str) -> KubeMinor:
    """Parse `1.35`, `v1.35.2` or `1.32.3-eks-1`; ValueError naming the value otherwise."""
    match = _KUBE_RE.match(version.strip())
    if match is None:
        raise ValueError(
            f"Kubernetes version {version!r} is not a Kubernetes version; expected <major>.<minor> such as 1.35"
        )
    return KubeMinor(int(match.group("major")), int(match.group("minor")))
