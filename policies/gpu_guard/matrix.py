"""Typed loader and queries for the GPU compatibility matrix (`matrix.yaml` next to this file).

Consumers: the policy rules, the components' fail-fast config checks and `python -m tools.matrix`.
Every fact lives in matrix.yaml with its `source` and `reviewed` date; this module only holds rules
(how facts combine), never version numbers. Queries return `Finding`s whose message says the rule,
the offending value and the fix, with the nearest valid choices in `nearest`.
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .versions import (
    DriverVersion,
    KubeMinor,
    parse_cuda_version,
    parse_driver_version,
    parse_kube_minor,
)

__all__ = [
    "OS_NAMES",
    "CudaRelease",
    "DriverBranch",
    "DriverVersion",
    "EksVersion",
    "Finding",
    "GpuModel",
    "ImageCuda",
    "InstanceType",
    "Level",
    "Matrix",
    "MatrixError",
    "NodeImage",
    "OperatorRelease",
    "OsName",
    "load_matrix",
    "worst_level",
]

OsName = Literal["ubuntu-22.04", "ubuntu-24.04", "bottlerocket", "al2023"]
Level = Literal["ok", "advisory", "mandatory"]
OS_NAMES: tuple[str, ...] = get_args(OsName)
MATRIX_PATH = Path(__file__).with_name("matrix.yaml")

# OS label value (CONFIG.md §2) -> driver container image OS tag. Ubuntu only: the GPU Operator builds
# driver containers for Ubuntu; Bottlerocket and AL2023 NVIDIA images bake the driver in.
# Source: https://github.com/NVIDIA/gpu-driver-container (Makefile: IMAGE_TAG = $(DRIVER_VERSION)-$(DIST))
_OS_TAG = {"ubuntu-22.04": "ubuntu22.04", "ubuntu-24.04": "ubuntu24.04", "ubuntu-26.04": "ubuntu26.04"}
_BAKED_DRIVER_OS = ("bottlerocket", "al2023")
_DRIVER_REPOSITORY = "nvcr.io/nvidia/driver"
_LEVEL_ORDER: dict[str, int] = {"ok": 0, "advisory": 1, "mandatory": 2}
_NEAREST = 5


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


# --------------------------------------------------------------------------------------------------------
# Data rows (pydantic). Every row has `source` and `reviewed`; `confirmed: false` marks unverified facts.
# --------------------------------------------------------------------------------------------------------


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(description="URL of the public source the row was taken from", pattern=r"^https?://\S+$")
    reviewed: date = Field(description="Date the row was last checked against its source")
    confirmed: bool = Field(default=True, description="False when the fact could not be verified")
    note: str | None = Field(default=None, description="Caveat, discrepancy or reason it is unconfirmed")


def _strict_str(value: Any) -> Any:
    # YAML reads 570.26 as a float and 1.30 as 1.3: versions must be quoted strings in matrix.yaml.
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(f"version {value!r} must be a quoted string in matrix.yaml (YAML reads it as a number)")
    return value


def _check_driver(value: str) -> str:
    parse_driver_version(value)
    return value


class CudaRelease(_Row):
    """A row of the CUDA Toolkit driver table: toolkit release and its minimum Linux x86_64 driver."""

    cuda: str = Field(description="Toolkit version: GA = x.y.0, Update N = x.y.N")
    label: str = Field(description="Release name as NVIDIA prints it, e.g. 'CUDA 12.2 Update 2'")
    min_driver: str = Field(description="Minimum Linux x86_64 driver for this toolkit")

    _strict = field_validator("cuda", "min_driver", mode="before")(_strict_str)

    @field_validator("cuda")
    @classmethod
    def _cuda_ok(cls, value: str) -> str:
        parse_cuda_version(value)
        return value

    @field_validator("min_driver")
    @classmethod
    def _driver_ok(cls, value: str) -> str:
        return _check_driver(value)


class MvcRow(_Row):
    """Minor version compatibility floor for one CUDA major version."""

    major: int = Field(description="CUDA major version")
    floor: str = Field(description="Lowest driver that runs every minor release of this major via MVC")

    _strict = field_validator("floor", mode="before")(_strict_str)
    _floor_ok = field_validator("floor")(classmethod(lambda cls, v: _check_driver(v)))


class MvcCaveat(_Row):
    """Something minor version compatibility does not cover."""

    id: str = Field(description="Short id of the caveat")
    text: str = Field(description="What breaks")


class ForwardCompatRow(_Row):
    """Older driver branches the cuda-compat package of a CUDA x.y image admits (NVIDIA_REQUIRE_CUDA)."""

    cuda: str = Field(description="CUDA major.minor of the image")
    admitted_branches: tuple[int, ...] = Field(description="Driver branches admitted through forward compatibility")

    _strict = field_validator("cuda", mode="before")(_strict_str)


class DriverBranch(_Row):
    """An NVIDIA data-center driver branch (R535, R580, ...)."""

    branch: int = Field(description="Branch number, e.g. 580")
    type: Literal["LTSB", "PB", "NFB"] = Field(description="Long Term Support, Production or New Feature Branch")
    eol: date | None = Field(default=None, description="End of life: last day of the month NVIDIA gives")
    listed_end_of_life: bool = Field(default=False, description="Named end of life by NVIDIA without a date")
    native_cuda: str | None = Field(default=None, description="CUDA version of the branch's first release")
    max_cuda_major: int = Field(description="Highest CUDA major runnable without the forward-compat package")

    _strict = field_validator("native_cuda", mode="before")(_strict_str)

    @field_validator("eol", mode="before")
    @classmethod
    def _month_to_date(cls, value: Any) -> Any:
        if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}", value):
            year, month = (int(part) for part in value.split("-"))
            return date(year, month, calendar.monthrange(year, month)[1])
        return value

    @property
    def end_of_life_label(self) -> str:
        """`June 2026`, or `an undated end of life` for branches NVIDIA lists as EOL without a date."""
        return self.eol.strftime("%B %Y") if self.eol else "an undated end of life"

    def is_end_of_life(self, today: date) -> bool:
        """True once the EOL month has passed, or when NVIDIA lists the branch as EOL."""
        return self.listed_end_of_life or (self.eol is not None and today > self.eol)


class UnpublishedDriver(_Row):
    """A driver version that was never published as a data-center driver container."""

    version: str = Field(description="The version people mistake for a release")
    reason: str = Field(description="Why it does not exist")

    _strict = field_validator("version", mode="before")(_strict_str)


class DriverImages(_Row):
    """Conventional driver container tags `<version>-<os_tag>` built for one OS."""

    os_tag: str = Field(description="Image OS tag, e.g. ubuntu22.04")
    versions: tuple[str, ...] = Field(description="Driver versions with a published image for this OS")

    @field_validator("versions", mode="before")
    @classmethod
    def _versions_ok(cls, value: Any) -> Any:
        if isinstance(value, list):
            for item in value:
                _strict_str(item)
                _check_driver(item)
        return value


class PrecompiledBuild(_Row):
    """Branches whose precompiled driver containers NVIDIA CI builds for an OS from a date on."""

    os_tag: str = Field(description="Image OS tag")
    since: date = Field(description="First month of this build set")
    branches: tuple[int, ...] = Field(description="Branches built")


class PrecompiledKernels(_Row):
    """Kernels precompiled driver containers exist for on one OS."""

    os_tag: str = Field(description="Image OS tag")
    kernel_lines: tuple[str, ...] = Field(description="Kernel major.minor lines, e.g. 5.15 and 6.8")
    flavours: tuple[str, ...] = Field(description="Kernel flavour suffixes, e.g. aws, generic")


class OperatorRelease(_Row):
    """A GPU Operator release: supported drivers, branches per OS, Kubernetes per OS, precompiled branches."""

    version: str = Field(description="Release tag, e.g. v26.7.0")
    default_driver: str = Field(description="values.yaml driver.version at this tag")
    toolkit: str = Field(description="NVIDIA Container Toolkit shipped")
    drivers: tuple[str, ...] = Field(description="Drivers in the component matrix")
    branches: dict[str, tuple[int, ...]] = Field(description="Driver branches supported per OS label")
    kubernetes: dict[str, tuple[str, str]] = Field(description="Kubernetes [min, max] per OS label")
    eks: tuple[str, str] = Field(description="Amazon EKS [min, max] from the Cloud Service Providers table")
    precompiled: dict[str, tuple[int, ...]] = Field(description="Precompiled driver branches per OS label")
    status: Literal["supported", "deprecated", "end-of-support"] = Field(description="Lifecycle as of review")

    _strict = field_validator("default_driver", "toolkit", mode="before")(_strict_str)

    @field_validator("drivers", mode="before")
    @classmethod
    def _drivers_ok(cls, value: Any) -> Any:
        if isinstance(value, list):
            for item in value:
                _strict_str(item)
                _check_driver(item)
        return value

    @field_validator("version")
    @classmethod
    def _version_ok(cls, value: str) -> str:
        if not re.fullmatch(r"v\d+\.\d+\.\d+", value):
            raise ValueError(f"operator version {value!r} must look like v26.7.0")
        return value


class GpuModel(_Row):
    """A GPU model: architecture, compute capability and driver/CUDA bounds."""

    model: str = Field(description="GPU name as AWS/NVIDIA print it")
    architecture: str = Field(description="NVIDIA architecture, e.g. Ampere")
    compute_capability: str = Field(description="Compute capability, e.g. 8.6")
    data_center: bool = Field(description="Data-center GPU (forward compatibility applies)")
    min_cuda: str = Field(description="First CUDA release that supports the architecture")
    min_driver: str | None = Field(description="Lowest driver the GPU needs")
    max_branch: int | None = Field(description="Last driver branch that supports the GPU")
    max_cuda_major: int | None = Field(description="Last CUDA major with toolkit support for the GPU")
    open_kernel_modules: Literal["required", "supported", "unsupported"] = Field(
        description="Whether the open GPU kernel modules are required, possible or impossible"
    )

    _strict = field_validator("compute_capability", "min_cuda", "min_driver", mode="before")(_strict_str)


class InstanceFamily(_Row):
    """An EC2 GPU instance family and the GPU count of each size."""

    family: str = Field(description="Family, e.g. g5 or p6-b200")
    gpu_model: str = Field(description="GPU model (a row of `gpus`)")
    cpu_arch: Literal["x86_64", "arm64"] = Field(description="CPU architecture")
    sizes: dict[str, int] = Field(description="GPU count per size, e.g. {xlarge: 1, 12xlarge: 4}")


class BakedDriver(_Row):
    """The driver branch a node image ships from a date on."""

    since: date = Field(description="Date from which images ship this branch")
    branch: int = Field(description="Driver branch")


class NodeImageRow(_Row):
    """An EKS node image family: SSM parameter format, published EKS versions, baked driver branch."""

    os: str = Field(description="OS label value")
    product: str = Field(description="Image product, e.g. eks (free Canonical) or aws-k8s-nvidia")
    ssm_parameter: str = Field(description="SSM parameter name format with {kubernetes} and {arch}")
    arch_names: dict[str, str] = Field(description="x86_64/arm64 -> spelling in the SSM path")
    published: tuple[str, ...] = Field(description="EKS versions with a published image")
    baked_driver: tuple[BakedDriver, ...] = Field(default=(), description="Driver branch shipped, by date")


class EksVersion(_Row):
    """An Amazon EKS Kubernetes version and its support dates."""

    version: str = Field(description="Kubernetes minor, e.g. 1.34")
    released: date | None = Field(description="Amazon EKS release date")
    available_by: date | None = Field(default=None, description="Date by which it was seen available")
    end_standard: date | None = Field(description="End of standard support")
    end_extended: date | None = Field(description="End of extended support")

    _strict = field_validator("version", mode="before")(_strict_str)


class KubeletSkewRow(_Row):
    """The kubelet/kube-apiserver version skew rule."""

    max_minors_older: int = Field(description="How many minors a kubelet may trail the apiserver")
    newer_allowed: bool = Field(description="Whether a kubelet may be newer than the apiserver")


class NgcImage(_Row):
    """An NGC container release and the CUDA toolkit it is built on."""

    repository: str = Field(description="Image repository, e.g. nvcr.io/nvidia/tritonserver")
    release: str = Field(description="Release YY.MM")
    cuda: str = Field(description="CUDA toolkit version x.y.z")

    _strict = field_validator("release", "cuda", mode="before")(_strict_str)


class CudaImageRepository(_Row):
    """A repository whose tags start with the CUDA version (nvidia/cuda)."""

    repository: str = Field(description="Canonical repository name")
    aliases: tuple[str, ...] = Field(description="Other spellings of the repository")
    forward_compat: bool = Field(description="Images carry the cuda-compat package")


class MatrixData(BaseModel):
    """The whole of matrix.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = Field(description="File format version")
    cuda_releases: tuple[CudaRelease, ...] = Field(description="CUDA toolkit minimum drivers")
    mvc: tuple[MvcRow, ...] = Field(description="Minor version compatibility floors")
    mvc_caveats: tuple[MvcCaveat, ...] = Field(description="What MVC does not cover")
    forward_compat: tuple[ForwardCompatRow, ...] = Field(description="Forward compatibility admitted branches")
    driver_branches: tuple[DriverBranch, ...] = Field(description="Driver branches")
    unpublished_drivers: tuple[UnpublishedDriver, ...] = Field(description="Versions that do not exist")
    driver_images: tuple[DriverImages, ...] = Field(description="Conventional driver images per OS")
    precompiled_builds: tuple[PrecompiledBuild, ...] = Field(description="Precompiled CI build history")
    precompiled_kernels: tuple[PrecompiledKernels, ...] = Field(description="Precompiled kernels per OS")
    operators: tuple[OperatorRelease, ...] = Field(description="GPU Operator releases")
    gpus: tuple[GpuModel, ...] = Field(description="GPU models")
    instance_families: tuple[InstanceFamily, ...] = Field(description="EC2 GPU instance families")
    node_images: tuple[NodeImageRow, ...] = Field(description="EKS node images")
    eks_versions: tuple[EksVersion, ...] = Field(description="EKS versions and support dates")
    kubelet_skew: tuple[KubeletSkewRow, ...] = Field(description="Kubelet skew rule", min_length=1, max_length=1)
    ngc_images: tuple[NgcImage, ...] = Field(description="NGC releases and their CUDA")
    cuda_image_repositories: tuple[CudaImageRepository, ...] = Field(description="nvidia/cuda repositories")


# --------------------------------------------------------------------------------------------------------
# Query results
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InstanceType:
    """One EC2 instance type joined with its GPU row."""

    name: str
    family: str
    size: str
    gpu_model: str
    architecture: str
    compute_capability: str
    gpus: int
    min_driver: str | None
    max_branch: int | None
    max_cuda_major: int | None
    min_cuda: str
    data_center: bool
    open_kernel_modules: str
    cpu_arch: str
    source: str
    confirmed: bool


@dataclass(frozen=True)
class ImageCuda:
    """The CUDA runtime an image reference reveals, and its forward-compatibility facts."""

    image: str
    cuda: str
    forward_compat: bool
    admitted_branches: tuple[int, ...] | None
    source: str


@dataclass(frozen=True)
class NodeImage:
    """The node image for an OS and EKS version: SSM parameter, whether published, baked driver branch."""

    os: str
    kubernetes: str
    arch: str
    ssm_parameter: str
    published: bool
    published_versions: tuple[str, ...]
    driver_branch: int | None
    source: str


# --------------------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------------------


def _describe_error(error: dict[str, Any], raw: dict[str, Any]) -> str:
    loc = tuple(error.get("loc", ()))
    where = ".".join(str(part) for part in loc)
    row_hint = ""
    if len(loc) >= 2 and isinstance(loc[0], str) and isinstance(loc[1], int):
        rows = raw.get(loc[0])
        if isinstance(rows, list) and loc[1] < len(rows) and isinstance(rows[loc[1]], dict):
            row = rows[loc[1]]
            key = next(
                (row[k] for k in ("version", "cuda", "branch", "family", "model", "os", "os_tag") if k in row), None
            )
            if key is not None:
                row_hint = f" (row {key!r})"
    return f"{where}{row_hint}: {error.get('msg', 'invalid')}"


def parse_matrix(text: str, origin: str = "matrix.yaml") -> MatrixData:
    """Validate matrix YAML text; raise MatrixError naming the file, the row and the key on bad data."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise MatrixError(f"{origin}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise MatrixError(f"{origin}: expected a mapping at the top level, got {type(raw).__name__}")
    try:
        return MatrixData.model_validate(raw)
    except ValidationError as exc:
        details = "; ".join(_describe_error(dict(err), raw) for err in exc.errors()[:10])
        raise MatrixError(f"{origin}: {exc.error_count()} invalid value(s): {details}") from exc


def load_matrix_file(path: Path) -> Matrix:
    """Load and validate a matrix file (uncached; tests use it with temporary files)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MatrixError(f"{path}: cannot read the compatibility matrix: {exc}") from exc
    return Matrix(parse_matrix(text, str(path)))


@functools.cache
def load_matrix() -> Matrix:
    """The packaged matrix, validated once per process. Raises MatrixError on bad data."""
    return load_matrix_file(MATRIX_PATH)


# --------------------------------------------------------------------------------------------------------
# The matrix
# --------------------------------------------------------------------------------------------------------

_NVIDIA_CUDA_TAG = re.compile(r"^(?P<cuda>\d+\.\d+\.\d+)(?:-|$)")
_NGC_TAG = re.compile(r"^(?P<release>\d{2}\.\d{2})(?:-|$)")
_KERNEL_RE = re.compile(r"^(?P<line>\d+\.\d+)\.\d+-\d+-(?P<flavour>[a-z][a-z0-9-]*)$")


def _fmt_versions(versions: Iterable[str]) -> str:
    return ", ".join(versions)


def _sm(gpu: GpuModel) -> str:
    return f"sm_{gpu.compute_capability.replace('.', '')}"


class Matrix:
    """Queries over the validated matrix. Construct through `load_matrix()`."""

    def __init__(self, data: MatrixData) -> None:
        self.data = data
        self._branches = {row.branch: row for row in data.driver_branches}
        self._operators = {row.version: row for row in data.operators}
        self._gpus = {row.model: row for row in data.gpus}
        self._families = {row.family: row for row in data.instance_families}
        self._images = {row.os_tag: row for row in data.driver_images}
        self._unpublished = {row.version: row for row in data.unpublished_drivers}
        self._eks = {row.version: row for row in data.eks_versions}
        self._skew = data.kubelet_skew[0]
        self._cuda_rows = sorted(
            ((parse_cuda_version(row.cuda), row) for row in data.cuda_releases), key=lambda item: item[0]
        )

    # ---------------------------------------------------------------- drivers
    def parse_driver(self, version: str) -> DriverVersion:
        """Parse `580.173.02` or a branch `580`; ValueError on anything else."""
        return parse_driver_version(version)

    def branch(self, branch: int) -> DriverBranch | None:
        """The driver branch row (type, EOL, native CUDA, source) or None when unknown."""
        return self._branches.get(branch)

    def known_driver_versions(self, branch: int | None = None) -> list[str]:
        """Every driver version with a published image on any OS (optionally one branch), newest first."""
        versions = {v for row in self.data.driver_images for v in row.versions}
        for op in self.data.operators:
            versions.update(op.drivers)
        parsed = sorted((parse_driver_version(v) for v in versions), reverse=True)
        return [str(v) for v in parsed if branch is None or v.branch == branch]

    def weakest_release(self, driver: str) -> str:
        """A full driver version as is; a bare branch ("580", as baked images state it) as its first known release.

        The exact release a baked image ships depends on the image build, so compatibility is judged
        against the weakest release the branch could be; the branch number alone would read as
        580.0.0, below every real R580 driver. Raises ValueError on a string that is no driver version.
        """
        parsed = parse_driver_version(driver)
        if not parsed.is_branch_only:
            return driver
        known = self.known_driver_versions(parsed.branch)
        return known[-1] if known else driver

    def published_versions(self, os: str) -> list[str]:
        """Driver versions with a conventional image for an OS label (or image OS tag), newest first."""
        row = self._images.get(_OS_TAG.get(os, os))
        if row is None:
            return []
        return [str(v) for v in sorted((parse_driver_version(x) for x in row.versions), reverse=True)]

    def _nearest_versions(
        self, wanted: DriverVersion, candidates: Iterable[str], today: date | None = None
    ) -> tuple[str, ...]:
        """Same branch first (newest first), then live branches before end-of-life ones, nearest branch first."""
        parsed = sorted({parse_driver_version(c) for c in candidates}, reverse=True)
        same = [v for v in parsed if v.branch == wanted.branch]

        def eol(version: DriverVersion) -> bool:
            row = self.branch(version.branch)
            return row is None or (row.listed_end_of_life if today is None else row.is_end_of_life(today))

        others = sorted(
            (v for v in parsed if v.branch != wanted.branch),
            key=lambda v: (eol(v), abs(v.branch - wanted.branch), -v.branch, tuple(-k for k in v.key)),
        )
        return tuple(str(v) for v in (same + others)[:_NEAREST])

    def driver_image_ref(
        self, version: str, os: OsName, *, precompiled: bool = False, kernel: str | None = None
    ) -> str:
        """The driver container reference the operator pulls, e.g. nvcr.io/nvidia/driver:535.309.01-ubuntu22.04.

        Precompiled: `<branch>-<kernel>-<os_tag>`; without a kernel the placeholder `<kernel>` stands in.
        Raises ValueError for an OS without operator-built driver containers.
        """
        tag = _OS_TAG.get(os)
        if tag is None:
            raise ValueError(
                f"OS {os!r} has no GPU Operator driver container: its node image bakes the driver; "
                "use ubuntu-22.04 or ubuntu-24.04 for operator-installed drivers"
            )
        parsed = parse_driver_version(version)
        if precompiled:
            return f"{_DRIVER_REPOSITORY}:{parsed.branch}-{kernel or '<kernel>'}-{tag}"
        return f"{_DRIVER_REPOSITORY}:{parsed.text}-{tag}"

    def _precompiled_ci_branches(self, os_tag: str, today: date) -> PrecompiledBuild | None:
        rows = [r for r in self.data.precompiled_builds if r.os_tag == os_tag and r.since <= today]
        return max(rows, key=lambda r: r.since) if rows else None

    def driver_image(
        self,
        version: str,
        os: OsName,
        *,
        precompiled: bool = False,
        operator: str | None = None,
        kernel: str | None = None,
        today: date | None = None,
    ) -> list[Finding]:
        """Is there a published driver container for this version (or branch, precompiled) on this OS?"""
        rule = "driver-image-published"
        parsed = parse_driver_version(version)
        if os in _BAKED_DRIVER_OS:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"OS {os} ships the NVIDIA driver in its node image; the GPU Operator has no driver container "
                    f"for it (driver {version} cannot be installed by the operator). Set driver.enabled=false and "
                    "toolkit.enabled=false for these nodes, or use ubuntu-22.04/ubuntu-24.04 for operator drivers.",
                    self.data.node_images[0].source,
                )
            ]
        tag = _OS_TAG[os]
        if precompiled:
            return self._precompiled_image(
                parsed, os, tag, operator=operator, kernel=kernel, today=today or date.today()
            )
        ref = self.driver_image_ref(version, os)
        images = self._images.get(tag)
        source = images.source if images else self.data.driver_images[0].source
        if parsed.is_branch_only:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"driver {version} is a branch, but conventional driver images are tagged with a full version "
                    f"(<version>-{tag}); pin a full version, or set usePrecompiled for branch-tagged images.",
                    source,
                    self._nearest_versions(parsed, self.published_versions(os)),
                )
            ]
        if images is not None and parsed.text in images.versions:
            return [Finding("ok", rule, f"{ref} is published", source)]
        nearest = self._nearest_versions(parsed, self.published_versions(os), today)
        unpublished = self._unpublished.get(parsed.text)
        if unpublished is not None:
            why = f"{unpublished.reason}; the container would sit in ImagePullBackOff"
            source = unpublished.source
        elif any(parsed.text in row.versions for row in self.data.driver_images):
            other = [row.os_tag for row in self.data.driver_images if parsed.text in row.versions]
            why = (
                f"NVIDIA builds {parsed.text} only for {', '.join(other)}, not {tag}; "
                "the container would sit in ImagePullBackOff"
            )
            if not any(parse_driver_version(v).branch == parsed.branch for v in (images.versions if images else ())):
                why += f"; R{parsed.branch} was never built for {tag}"
        else:
            why = "not in NVIDIA's driver-container build history; the container would sit in ImagePullBackOff"
        return [
            Finding(
                "mandatory",
                rule,
                f"driver {parsed.text} has no published image {ref} ({why}); nearest published for {tag}: "
                f"{_fmt_versions(nearest) or 'none'}.",
                source,
                nearest,
            )
        ]

    def _precompiled_image(
        self, parsed: DriverVersion, os: str, tag: str, *, operator: str | None, kernel: str | None, today: date
    ) -> list[Finding]:
        rule = "driver-image-published"
        findings: list[Finding] = []
        op = self.operator(operator) if operator else None
        ci = self._precompiled_ci_branches(tag, today)
        if op is not None:
            allowed = op.precompiled.get(os, ())
            if parsed.branch not in allowed:
                choices = tuple(str(b) for b in sorted(allowed, reverse=True))
                findings.append(
                    Finding(
                        "mandatory",
                        rule,
                        f"precompiled driver R{parsed.branch} is not built for {os} under GPU Operator {op.version} "
                        f"({op.version} builds precompiled drivers for "
                        f"{', '.join('R' + c for c in choices) or 'no branch'} on {os}); set driver.version to one of "
                        f"{', '.join(choices) or 'none'} or use a conventional (non-precompiled) driver.",
                        op.source,
                        choices,
                    )
                )
        elif ci is not None and parsed.branch not in ci.branches:
            choices = tuple(str(b) for b in sorted(ci.branches, reverse=True))
            findings.append(
                Finding(
                    "mandatory",
                    rule,
                    f"precompiled driver R{parsed.branch} is not built for {tag} (NVIDIA CI builds "
                    f"{', '.join('R' + c for c in choices)} since {ci.since.isoformat()}); choose one of "
                    f"{', '.join(choices)}.",
                    ci.source,
                    choices,
                )
            )
        if not findings and ci is not None and parsed.branch not in ci.branches:
            findings.append(
                Finding(
                    "advisory",
                    rule,
                    f"NVIDIA CI stopped building precompiled R{parsed.branch} images for {tag} (since "
                    f"{ci.since.isoformat()} it builds {', '.join('R' + str(b) for b in ci.branches)}); new kernel "
                    "updates get no image. Move to one of those branches.",
                    ci.source,
                    tuple(str(b) for b in sorted(ci.branches, reverse=True)),
                )
            )
        if kernel is not None:
            findings.extend(self._kernel_findings(kernel, tag))
        if not findings:
            findings.append(
                Finding(
                    "ok",
                    rule,
                    f"precompiled R{parsed.branch} images are built for {tag}",
                    ci.source if ci else self.data.precompiled_builds[0].source,
                )
            )
        return findings

    def _kernel_findings(self, kernel: str, tag: str) -> list[Finding]:
        rule = "driver-image-published"
        row = next((r for r in self.data.precompiled_kernels if r.os_tag == tag), None)
        if row is None:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"no precompiled driver kernels are recorded for {tag}",
                    self.data.precompiled_kernels[0].source,
                )
            ]
        match = _KERNEL_RE.match(kernel)
        if match is None:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"kernel {kernel!r} is not an Ubuntu kernel release (expected e.g. 6.8.0-1024-aws, as `uname -r` "
                    "prints it); precompiled images are tagged per kernel.",
                    row.source,
                )
            ]
        problems = []
        if match.group("line") not in row.kernel_lines:
            problems.append(f"kernel line {match.group('line')} (built: {', '.join(row.kernel_lines)})")
        if match.group("flavour") not in row.flavours:
            problems.append(f"flavour {match.group('flavour')} (built: {', '.join(row.flavours)})")
        if problems:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"precompiled driver images for {tag} are not built for kernel {kernel}: "
                    f"{'; '.join(problems)}. Use an LTS kernel with a built flavour, or a conventional driver.",
                    row.source,
                    row.kernel_lines,
                )
            ]
        return []

    def branch_lifecycle(self, version_or_branch: str, today: date) -> list[Finding]:
        """EOL check: advisory once NVIDIA's end of life has passed (or the branch is listed as EOL)."""
        rule = "driver-branch-eol"
        parsed = parse_driver_version(version_or_branch)
        row = self.branch(parsed.branch)
        if row is None:
            return [
                Finding(
                    "mandatory",
                    "driver-branch-known",
                    f"driver branch R{parsed.branch} (from {version_or_branch}) is not a known NVIDIA data-center "
                    f"branch; choose one of {', '.join('R' + str(b) for b in self._live_branches(today))}.",
                    self.data.driver_branches[0].source,
                    tuple(str(b) for b in self._live_branches(today)),
                )
            ]
        if not row.is_end_of_life(today):
            until = f" until {row.end_of_life_label}" if row.eol else ""
            return [Finding("ok", rule, f"R{row.branch} ({row.type}) is supported{until}", row.source)]
        live = self._live_branches(today)
        when = f"reached end of life in {row.end_of_life_label}" if row.eol else "is listed by NVIDIA as end of life"
        return [
            Finding(
                "advisory",
                rule,
                f"R{row.branch} {when}: driver {version_or_branch} gets no more bug or security fixes. "
                f"Move to a supported branch: {', '.join('R' + str(b) for b in live)}.",
                row.source,
                tuple(str(b) for b in live),
            )
        ]

    def _live_branches(self, today: date) -> list[int]:
        """Branches past no end of life that have known releases: LTSB first, then PB, then NFB."""
        released = {parse_driver_version(v).branch for v in self.known_driver_versions()}
        live = [r for r in self.data.driver_branches if not r.is_end_of_life(today) and r.branch in released]
        order = {"LTSB": 0, "PB": 1, "NFB": 2}
        return [row.branch for row in sorted(live, key=lambda r: (order[r.type], -r.branch))]

    # ---------------------------------------------------------------- GPU Operator
    def operator(self, version: str) -> OperatorRelease | None:
        """The GPU Operator release row for `v26.7.0` (leading v optional), or None."""
        text = version.strip()
        return self._operators.get(text if text.startswith("v") else f"v{text}")

    def operators(self) -> list[str]:
        """Known GPU Operator releases, oldest first."""
        return [row.version for row in self.data.operators]

    def _unknown_operator(self, version: str) -> Finding:
        return Finding(
            "mandatory",
            "operator-known",
            f"GPU Operator {version} is not in the compatibility matrix; choose one of "
            f"{', '.join(reversed(self.operators()))}.",
            self.data.operators[-1].source,
            tuple(reversed(self.operators()))[:_NEAREST],
        )

    def operator_branch_support(
        self, operator: str, os: OsName, driver: str, *, precompiled: bool = False
    ) -> list[Finding]:
        """Does this operator release support the driver's branch (and version) on this OS?"""
        rule = "driver-branch-supported"
        op = self.operator(operator)
        if op is None:
            return [self._unknown_operator(operator)]
        parsed = parse_driver_version(driver)
        if os in _BAKED_DRIVER_OS:
            return [
                Finding(
                    "advisory",
                    rule,
                    f"GPU Operator {op.version} does not list {os} as a supported OS; its node image ships driver "
                    f"R{parsed.branch} itself. Run the operator with driver.enabled=false and toolkit.enabled=false "
                    "(and devicePlugin disabled on Bottlerocket) for these nodes.",
                    op.source,
                )
            ]
        branches = op.branches.get(os)
        if not branches:
            supported_os = ", ".join(op.branches)
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"GPU Operator {op.version} does not support {os} (supported: {supported_os}); use one of those "
                    "or a newer operator release.",
                    op.source,
                    tuple(op.branches),
                )
            ]
        os_drivers = [d for d in op.drivers if parse_driver_version(d).branch in branches]
        if parsed.branch not in branches:
            extra = ""
            if parsed.branch == 535 and os == "ubuntu-24.04":
                extra = " NVIDIA never built R535 for Ubuntu 24.04; Ubuntu 24.04 needs R570/R580 or newer."
            elif any(parsed.branch in r.branches.get(os, ()) for r in self.data.operators):
                last = [r.version for r in self.data.operators if parsed.branch in r.branches.get(os, ())][-1]
                extra = f" The last release listing R{parsed.branch} on {os} is {last}."
            nearest = self._nearest_versions(parsed, os_drivers)
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"GPU Operator {op.version} does not support driver branch R{parsed.branch} (driver {driver}) "
                    f"on {os}; it supports {', '.join('R' + str(b) for b in branches)} there.{extra} "
                    f"Nearest supported drivers: {_fmt_versions(nearest)}.",
                    op.source,
                    nearest,
                )
            ]
        if precompiled or parsed.is_branch_only:
            return [Finding("ok", rule, f"GPU Operator {op.version} supports R{parsed.branch} on {os}", op.source)]
        if parsed.text not in op.drivers:
            nearest = self._nearest_versions(parsed, os_drivers)
            return [
                Finding(
                    "advisory",
                    rule,
                    f"driver {driver} is in a supported branch (R{parsed.branch}) but not in GPU Operator "
                    f"{op.version}'s component matrix; NVIDIA tested: {_fmt_versions(nearest)}.",
                    op.source,
                    nearest,
                )
            ]
        return [
            Finding(
                "ok", rule, f"GPU Operator {op.version} lists driver {driver} (R{parsed.branch}) for {os}", op.source
            )
        ]

    def operator_kubernetes(self, operator: str, kubernetes: str, os: OsName | None = None) -> list[Finding]:
        """Does this operator release support the Kubernetes version (on this OS, or on EKS when os is None)?"""
        rule = "operator-kubernetes-supported"
        op = self.operator(operator)
        if op is None:
            return [self._unknown_operator(operator)]
        wanted = parse_kube_minor(kubernetes)
        if os is not None and os in _BAKED_DRIVER_OS:
            span = op.eks
            where = f"Amazon EKS (GPU Operator {op.version} lists no {os} nodes)"
        elif os is not None:
            if os not in op.kubernetes:
                return [
                    Finding(
                        "mandatory",
                        rule,
                        f"GPU Operator {op.version} does not support {os}; supported: {', '.join(op.kubernetes)}.",
                        op.source,
                        tuple(op.kubernetes),
                    )
                ]
            span = op.kubernetes[os]
            where = os
        else:
            span = op.eks
            where = "Amazon EKS"
        low, high = parse_kube_minor(span[0]), parse_kube_minor(span[1])
        if low <= wanted <= high:
            return [
                Finding("ok", rule, f"GPU Operator {op.version} supports Kubernetes {wanted} on {where}", op.source)
            ]
        fitting = [
            r.version
            for r in reversed(self.data.operators)
            if (span_r := (r.kubernetes.get(os) if os in r.kubernetes else r.eks) if os else r.eks)
            and parse_kube_minor(span_r[0]) <= wanted <= parse_kube_minor(span_r[1])
        ]
        return [
            Finding(
                "mandatory",
                rule,
                f"GPU Operator {op.version} supports Kubernetes {span[0]}-{span[1]} on {where}, not {wanted}; "
                f"use Kubernetes {span[0]}-{span[1]} or an operator release that supports {wanted}: "
                f"{', '.join(fitting[:_NEAREST]) or 'none known'}.",
                op.source,
                tuple(fitting[:_NEAREST]),
            )
        ]

    # ---------------------------------------------------------------- instances / architecture
    def instance_type(self, name: str) -> InstanceType | None:
        """The GPU instance type `g5.xlarge` joined with its GPU row, or None (unknown or not a GPU type)."""
        family, _, size = name.strip().partition(".")
        row = self._families.get(family)
        if row is None or size not in row.sizes:
            return None
        gpu = self._gpus[row.gpu_model]
        return InstanceType(
            name=f"{family}.{size}",
            family=family,
            size=size,
            gpu_model=gpu.model,
            architecture=gpu.architecture,
            compute_capability=gpu.compute_capability,
            gpus=row.sizes[size],
            min_driver=gpu.min_driver,
            max_branch=gpu.max_branch,
            max_cuda_major=gpu.max_cuda_major,
            min_cuda=gpu.min_cuda,
            data_center=gpu.data_center,
            open_kernel_modules=gpu.open_kernel_modules,
            cpu_arch=row.cpu_arch,
            source=row.source,
            confirmed=row.confirmed and gpu.confirmed,
        )

    def is_gpu_instance(self, name: str) -> bool:
        """True when `name` is a known GPU instance type (data, not a name prefix guess)."""
        return self.instance_type(name) is not None

    def instance_types(self) -> list[str]:
        """Every known GPU instance type name."""
        return [f"{row.family}.{size}" for row in self.data.instance_families for size in row.sizes]

    def _unknown_instance(self, name: str) -> Finding:
        family = name.partition(".")[0]
        row = self._families.get(family)
        if row is not None:
            choices = tuple(f"{family}.{size}" for size in row.sizes)
            text = f"instance type {name} is not a size of the {family} family; sizes: {', '.join(choices)}."
        else:
            choices = tuple(sorted(self._families))
            text = f"instance type {name} is not a known GPU instance type; known GPU families: {', '.join(choices)}."
        return Finding("mandatory", "instance-type-known", text, self.data.instance_families[0].source, choices)

    def architecture_support(self, instance_type: str, driver: str) -> list[Finding]:
        """Does the driver support the instance's GPU (minimum driver, last branch)?"""
        rule = "gpu-architecture-supported"
        inst = self.instance_type(instance_type)
        if inst is None:
            return [self._unknown_instance(instance_type)]
        gpu = self._gpus[inst.gpu_model]
        parsed = parse_driver_version(driver)
        findings: list[Finding] = []
        if gpu.max_branch is not None and parsed.branch > gpu.max_branch:
            nearest = tuple(
                v for v in self.known_driver_versions() if parse_driver_version(v).branch <= gpu.max_branch
            )[:_NEAREST]
            findings.append(
                Finding(
                    "mandatory",
                    rule,
                    f"{inst.name} has {inst.gpus} x {gpu.model} ({gpu.architecture}, {_sm(gpu)}); "
                    f"the last driver branch supporting {gpu.architecture} is R{gpu.max_branch}, so driver {driver} "
                    f"(R{parsed.branch}) does not drive it. Use R{gpu.max_branch} or older: {_fmt_versions(nearest)}.",
                    gpu.source,
                    nearest,
                )
            )
        if gpu.min_driver is not None:
            floor = parse_driver_version(gpu.min_driver)
            below = parsed < floor if not parsed.is_branch_only else parsed.branch < floor.branch
            if below:
                nearest = tuple(v for v in self.known_driver_versions() if parse_driver_version(v) >= floor)
                nearest = tuple(sorted(nearest, key=parse_driver_version)[:_NEAREST])
                findings.append(
                    Finding(
                        "mandatory",
                        rule,
                        f"{inst.name} has {gpu.model} ({gpu.architecture}), which needs driver {gpu.min_driver} or "
                        f"later; driver {driver} is older. Nearest valid: {_fmt_versions(nearest)}.",
                        gpu.source,
                        nearest,
                    )
                )
        if not findings:
            findings.append(
                Finding(
                    "ok", rule, f"driver {driver} supports {gpu.model} ({gpu.architecture}) on {inst.name}", gpu.source
                )
            )
        return findings

    # ---------------------------------------------------------------- CUDA
    def _cuda_row(self, cuda: str) -> CudaRelease | None:
        wanted = parse_cuda_version(cuda)
        rows = [row for version, row in self._cuda_rows if version.minor_key == wanted.minor_key and version <= wanted]
        return rows[-1] if rows else None

    def cuda_min_driver(self, cuda: str) -> str | None:
        """Minimum Linux driver for a CUDA runtime ("12.2.2" -> 535.104.05, "12.8" -> 570.26); None if unknown."""
        row = self._cuda_row(cuda)
        return row.min_driver if row else None

    def _mvc(self, major: int) -> MvcRow | None:
        return next((row for row in self.data.mvc if row.major == major), None)

    def forward_compat_branches(self, cuda: str) -> tuple[int, ...] | None:
        """Branches a CUDA x.y image's cuda-compat package admits, or None when not recorded."""
        wanted = parse_cuda_version(cuda)
        row = next(
            (r for r in self.data.forward_compat if parse_cuda_version(r.cuda).minor_key == wanted.minor_key), None
        )
        return row.admitted_branches if row else None

    def _forward_compat_source(self, cuda: str) -> str:
        wanted = parse_cuda_version(cuda)
        row = next(
            (r for r in self.data.forward_compat if parse_cuda_version(r.cuda).minor_key == wanted.minor_key), None
        )
        return row.source if row else self.data.mvc[0].source

    def cuda_driver(
        self,
        cuda: str,
        driver: str,
        *,
        forward_compat_image: bool,
        admitted_branches: tuple[int, ...] | None,
        data_center_gpu: bool,
    ) -> list[Finding]:
        """Can a CUDA runtime run on this driver? ok / advisory (MVC or forward compat) / mandatory."""
        rule = "cuda-driver-compatible"
        wanted = parse_cuda_version(cuda)
        parsed = parse_driver_version(driver)
        row = self._cuda_row(cuda)
        mvc = self._mvc(wanted.major)
        branch = self.branch(parsed.branch)
        # A bare branch (baked images) is judged by its first known release: the weakest driver it could be.
        driver_key = parse_driver_version(self.weakest_release(driver))
        if row is not None:
            minimum = parse_driver_version(row.min_driver)
            if driver_key >= minimum or (parsed.is_branch_only and parsed.branch > minimum.branch):
                return [
                    Finding(
                        "ok",
                        rule,
                        f"CUDA {wanted.short} needs driver {row.min_driver}+; {driver} satisfies it",
                        row.source,
                    )
                ]
        upgrade = self._upgrade_choices(row.min_driver if row else (mvc.floor if mvc else None))
        driver_major = branch.max_cuda_major if branch else None
        same_major = driver_major is not None and driver_major >= wanted.major
        if mvc is not None and same_major and driver_key >= parse_driver_version(mvc.floor):
            caveats = "; ".join(c.text for c in self.data.mvc_caveats)
            need = row.min_driver if row else "unknown (release not in the matrix)"
            return [
                Finding(
                    "advisory",
                    rule,
                    f"CUDA {wanted.short} runs on driver {driver} only through minor version compatibility "
                    f"(CUDA {wanted.major}.x floor {mvc.floor}; full support needs {need}). Not covered: {caveats}. "
                    f"Upgrade the driver to {need} or later for PTX JIT workloads: {_fmt_versions(upgrade)}.",
                    mvc.source,
                    upgrade,
                )
            ]
        fc_source = self._forward_compat_source(cuda)
        problems: list[str] = []
        if not forward_compat_image:
            problems.append("the image does not carry the cuda-compat forward-compatibility package")
        if not data_center_gpu:
            problems.append("forward compatibility works only on data-center GPUs")
        if forward_compat_image and admitted_branches is None:
            problems.append(f"the branches CUDA {wanted.major}.{wanted.minor} images admit are not recorded")
        elif forward_compat_image and admitted_branches is not None and parsed.branch not in admitted_branches:
            problems.append(
                f"the image's NVIDIA_REQUIRE_CUDA admits {', '.join('R' + str(b) for b in admitted_branches)}, "
                f"not R{parsed.branch}"
            )
        if not problems:
            return [
                Finding(
                    "advisory",
                    rule,
                    f"CUDA {wanted.short} on driver {driver} (R{parsed.branch}, CUDA {driver_major or '?'}.x native) "
                    f"runs only through forward compatibility (cuda-compat in the image, data-center GPU, branch "
                    f"admitted). Upgrade to {row.min_driver if row else 'a native driver'} or later to drop it: "
                    f"{_fmt_versions(upgrade)}.",
                    fc_source,
                    upgrade,
                )
            ]
        return [
            Finding(
                "mandatory",
                rule,
                f"CUDA {wanted.short} cannot run on driver {driver} (R{parsed.branch} runs CUDA "
                f"{driver_major if driver_major is not None else '?'}.x natively): {'; '.join(problems)}. The "
                f"container toolkit refuses to start it (unsatisfied condition: cuda>={wanted.major}.{wanted.minor}). "
                f"Use driver {row.min_driver if row else (mvc.floor if mvc else 'newer')} or later: "
                f"{_fmt_versions(upgrade)}.",
                row.source if row else fc_source,
                upgrade,
            )
        ]

    def _upgrade_choices(self, minimum: str | None) -> tuple[str, ...]:
        if minimum is None:
            return ()
        floor = parse_driver_version(minimum)
        fitting = sorted((parse_driver_version(v) for v in self.known_driver_versions()), reverse=True)
        fitting = [v for v in fitting if v >= floor]
        # One per branch (newest of each), LTSB first: what an operator would actually pick.
        per_branch: dict[int, DriverVersion] = {}
        for version in fitting:
            row = self.branch(version.branch)
            if row is None or row.listed_end_of_life:
                continue
            per_branch.setdefault(version.branch, version)
        order = {"LTSB": 0, "PB": 1, "NFB": 2}
        ranked = sorted(
            per_branch.values(),
            key=lambda v: (order[b.type] if (b := self.branch(v.branch)) else 3, -v.branch),
        )
        return tuple(str(v) for v in ranked[:_NEAREST])

    def cuda_architecture(self, cuda: str, instance_type: str) -> list[Finding]:
        """Does the CUDA release know the instance's GPU architecture (sm_89 needs 11.8, sm_100/120 12.8)?"""
        rule = "cuda-architecture-compatible"
        inst = self.instance_type(instance_type)
        if inst is None:
            return [self._unknown_instance(instance_type)]
        gpu = self._gpus[inst.gpu_model]
        wanted = parse_cuda_version(cuda)
        sm = _sm(gpu)
        if gpu.max_cuda_major is not None and wanted.major > gpu.max_cuda_major:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"CUDA {wanted.short} dropped {gpu.architecture} ({sm}): the last CUDA for {gpu.model} on "
                    f"{inst.name} is {gpu.max_cuda_major}.x. Use a CUDA {gpu.max_cuda_major}.x image, or a newer GPU.",
                    gpu.source,
                    (f"{gpu.max_cuda_major}.x",),
                )
            ]
        first = parse_cuda_version(gpu.min_cuda)
        if wanted < first:
            return [
                Finding(
                    "advisory",
                    rule,
                    f"CUDA {wanted.short} predates {gpu.architecture} ({sm}, {gpu.model} on {inst.name}), which "
                    f"needs CUDA {gpu.min_cuda}+; kernels run only if PTX is JIT-compiled. Use CUDA {gpu.min_cuda} "
                    "or later.",
                    gpu.source,
                    (gpu.min_cuda,),
                )
            ]
        return [Finding("ok", rule, f"CUDA {wanted.short} supports {sm} ({gpu.model})", gpu.source)]

    def image_cuda(self, image: str) -> ImageCuda | None:
        """The CUDA runtime an image reference reveals (nvidia/cuda tags, NGC release tags), or None."""
        reference = image.strip().split("@", 1)[0]
        repository, sep, tag = reference.rpartition(":")
        if not sep or "/" in tag:
            return None
        for repo in self.data.cuda_image_repositories:
            if repository in (repo.repository, *repo.aliases):
                match = _NVIDIA_CUDA_TAG.match(tag)
                if match is None:
                    return None
                cuda = match.group("cuda")
                admitted = self.forward_compat_branches(cuda) if repo.forward_compat else None
                return ImageCuda(image, cuda, repo.forward_compat, admitted, repo.source)
        match = _NGC_TAG.match(tag)
        if match is None:
            return None
        for row in self.data.ngc_images:
            if row.repository == repository and row.release == match.group("release"):
                # NGC framework containers carry the cuda-compat package (their release notes list the
                # data-center branches they admit).
                return ImageCuda(image, row.cuda, True, self.forward_compat_branches(row.cuda), row.source)
        return None

    # ---------------------------------------------------------------- Kubernetes / EKS / node images
    def kubelet_skew(self, control_plane: str, kubelet: str) -> list[Finding]:
        """Kubelet not newer than the control plane and at most `max_minors_older` minors older."""
        rule = "kubelet-version-skew"
        plane = parse_kube_minor(control_plane)
        node = parse_kube_minor(kubelet)
        behind = node.minors_behind(plane)
        limit = self._skew.max_minors_older
        oldest = KubeMinor(plane.major, plane.minor - limit)
        allowed = tuple(str(KubeMinor(plane.major, plane.minor - i)) for i in range(limit + 1))
        if behind < 0 and not self._skew.newer_allowed:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"kubelet {node} is newer than the control plane {plane}; a kubelet must not be newer than "
                    f"kube-apiserver. Use kubelet {plane} (or {oldest}-{plane}), or upgrade the control plane first.",
                    self._skew.source,
                    allowed,
                )
            ]
        if behind > limit:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"kubelet {node} is {behind} minor versions older than the control plane {plane}; at most "
                    f"{limit} are allowed. Use kubelet {oldest}-{plane}.",
                    self._skew.source,
                    allowed,
                )
            ]
        return [
            Finding(
                "ok", rule, f"kubelet {node} under control plane {plane} is within the skew policy", self._skew.source
            )
        ]

    def eks_lifecycle(self, kubernetes: str, today: date) -> list[Finding]:
        """Standard support (ok), extended support (advisory) or past extended support (mandatory)."""
        rule = "kubernetes-version-lifecycle"
        wanted = parse_kube_minor(kubernetes)
        row = self._eks.get(str(wanted))
        standard = [r.version for r in self.data.eks_versions if r.end_standard is None or today <= r.end_standard]
        standard = [v for v in standard if (r := self._eks[v]).released is None or r.released <= today]
        choices = tuple(reversed(standard))
        if row is None:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"Kubernetes {wanted} is not an Amazon EKS version in the matrix; choose one of "
                    f"{', '.join(choices)}.",
                    self.data.eks_versions[-1].source,
                    choices,
                )
            ]
        caveat = "" if row.confirmed else " (support dates unconfirmed)"
        released = row.released or row.available_by
        if released is not None and today < released:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"Kubernetes {wanted} is not yet released on Amazon EKS (release {released.isoformat()}); "
                    f"choose one of {', '.join(choices)}.",
                    row.source,
                    choices,
                )
            ]
        if row.end_standard is None or today <= row.end_standard:
            until = f" until {row.end_standard.isoformat()}" if row.end_standard else ""
            return [Finding("ok", rule, f"EKS {wanted} is in standard support{until}{caveat}", row.source)]
        if row.end_extended is not None and today <= row.end_extended:
            return [
                Finding(
                    "advisory",
                    rule,
                    f"EKS {wanted} left standard support on {row.end_standard.isoformat()} and is in extended support "
                    f"(extra cost) until {row.end_extended.isoformat()}{caveat}. Upgrade to {', '.join(choices)}.",
                    row.source,
                    choices,
                )
            ]
        ended = row.end_extended.isoformat() if row.end_extended else "an unrecorded date"
        return [
            Finding(
                "mandatory",
                rule,
                f"EKS {wanted} is not supported: extended support ended on {ended}{caveat}; EKS auto-upgrades such "
                f"control planes. Use {', '.join(choices)}.",
                row.source,
                choices,
            )
        ]

    def _node_image_row(self, os: str) -> NodeImageRow | None:
        return next((row for row in self.data.node_images if row.os == os), None)

    def node_image(
        self, os: OsName, kubernetes: str, arch: str = "x86_64", today: date | None = None
    ) -> NodeImage | None:
        """The node image SSM parameter for an OS, EKS version and CPU arch; None for an unknown OS/arch."""
        row = self._node_image_row(os)
        if row is None or arch not in row.arch_names:
            return None
        minor = str(parse_kube_minor(kubernetes))
        baked = self._baked_branch(row, today or date.today())
        return NodeImage(
            os=os,
            kubernetes=minor,
            arch=arch,
            ssm_parameter=row.ssm_parameter.format(kubernetes=minor, arch=row.arch_names[arch]),
            published=minor in row.published,
            published_versions=row.published,
            driver_branch=baked,
            source=row.source,
        )

    @staticmethod
    def _baked_branch(row: NodeImageRow, today: date) -> int | None:
        current = [b for b in row.baked_driver if b.since <= today]
        return max(current, key=lambda b: b.since).branch if current else None

    def baked_driver_branch(self, os: OsName, kubernetes: str, today: date) -> int | None:
        """Driver branch a Bottlerocket/AL2023 NVIDIA image ships on `today` (None for Ubuntu)."""
        row = self._node_image_row(os)
        if row is None or not row.baked_driver:
            return None
        parse_kube_minor(kubernetes)
        return self._baked_branch(row, today)

    def node_image_findings(
        self, os: OsName, kubernetes: str, arch: str = "x86_64", today: date | None = None
    ) -> list[Finding]:
        """Is a node image published for this OS and kubelet version? (rule node-image-published)"""
        rule = "node-image-published"
        image = self.node_image(os, kubernetes, arch, today)
        row = self._node_image_row(os)
        if image is None or row is None:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"no node image is recorded for OS {os} on {arch}; use one of {', '.join(OS_NAMES)}.",
                    self.data.node_images[0].source,
                    OS_NAMES,
                )
            ]
        if image.published:
            return [Finding("ok", rule, f"{image.ssm_parameter} is published", image.source)]
        alternatives = [
            f"{other.os} ({image.kubernetes})"
            for other in self.data.node_images
            if other.os != os and image.kubernetes in other.published
        ]
        return [
            Finding(
                "mandatory",
                rule,
                f"no {os} EKS node image is published for Kubernetes {image.kubernetes} ({image.ssm_parameter} does "
                f"not exist; published: {', '.join(row.published)}). Use kubelet {row.published[-1]} within the skew "
                f"policy, or {', '.join(alternatives) or 'another OS'}.",
                image.source,
                (row.published[-1], *alternatives),
            )
        ]

    # ---------------------------------------------------------------- aggregate
    def check(
        self,
        *,
        os: OsName,
        driver: str,
        operator: str | None,
        kubernetes: str | None = None,
        kubelet: str | None = None,
        instance_type: str | None = None,
        cuda: str | None = None,
        precompiled: bool = False,
        today: date | None = None,
    ) -> list[Finding]:
        """Every finding for one node pool configuration. `cuda` is a version or an image reference."""
        today = today or date.today()
        parsed = parse_driver_version(driver)
        findings: list[Finding] = []
        if os in _BAKED_DRIVER_OS:
            findings.extend(self._baked_driver_findings(os, parsed, today))
        else:
            findings.extend(self.driver_image(driver, os, precompiled=precompiled, operator=operator, today=today))
        if operator is not None:
            findings.extend(self.operator_branch_support(operator, os, driver, precompiled=precompiled))
            if kubernetes is not None:
                findings.extend(self.operator_kubernetes(operator, kubernetes, os))
        findings.extend(self.branch_lifecycle(driver, today))
        if kubernetes is not None:
            findings.extend(self.eks_lifecycle(kubernetes, today))
            if kubelet is not None:
                findings.extend(self.kubelet_skew(kubernetes, kubelet))
            findings.extend(self.node_image_findings(os, kubelet or kubernetes, today=today))
        inst = None
        if instance_type is not None:
            inst = self.instance_type(instance_type)
            findings.extend(self.architecture_support(instance_type, driver))
        if cuda is not None:
            findings.extend(self._cuda_findings(cuda, driver, inst))
        return findings

    def _baked_driver_findings(self, os: str, parsed: DriverVersion, today: date) -> list[Finding]:
        rule = "baked-driver-branch"
        row = self._node_image_row(os)
        if row is None:
            return []
        baked = self._baked_branch(row, today)
        if baked is None:
            return []
        source = max((b for b in row.baked_driver if b.since <= today), key=lambda b: b.since).source
        if parsed.branch != baked:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"{os} NVIDIA images ship driver branch R{baked} (as of {today.isoformat()}), "
                    f"not R{parsed.branch}; "
                    f"declare driver {baked} for this pool, or use Ubuntu with an operator-installed driver.",
                    source,
                    (str(baked),),
                )
            ]
        return [Finding("ok", rule, f"{os} NVIDIA images ship R{baked}", source)]

    def _cuda_findings(self, cuda: str, driver: str, inst: InstanceType | None) -> list[Finding]:
        image = self.image_cuda(cuda) if (":" in cuda or "/" in cuda) else None
        if image is None and (":" in cuda or "/" in cuda):
            return [
                Finding(
                    "mandatory",
                    "gpu-workload-cuda-declared",
                    f"the CUDA runtime of image {cuda} is unknown (not an nvidia/cuda tag nor an NGC release in the "
                    "matrix); declare it with the gpu-platform.io/cuda label, e.g. 12.8.",
                    self.data.ngc_images[0].source,
                )
            ]
        version = image.cuda if image else cuda
        findings = self.cuda_driver(
            version,
            driver,
            forward_compat_image=image.forward_compat if image else False,
            admitted_branches=image.admitted_branches if image else None,
            data_center_gpu=inst.data_center if inst else True,
        )
        if inst is not None:
            findings.extend(self.cuda_architecture(version, inst.name))
        return findings

    def drivers(
        self, *, os: OsName, operator: str, instance_type: str | None = None, today: date | None = None
    ) -> list[str]:
        """Driver versions that fit (no mandatory finding) the OS, operator and instance type, newest first."""
        today = today or date.today()
        op = self.operator(operator)
        if op is None:
            raise ValueError(
                f"GPU Operator {operator} is not in the compatibility matrix; choose one of "
                f"{', '.join(reversed(self.operators()))}"
            )
        if os in _BAKED_DRIVER_OS:
            row = self._node_image_row(os)
            baked = self._baked_branch(row, today) if row else None
            candidates = [str(baked)] if baked is not None else []
        else:
            candidates = list(op.drivers)
        fitting = []
        for version in candidates:
            findings: list[Finding] = []
            if os not in _BAKED_DRIVER_OS:
                findings += self.driver_image(version, os, operator=operator, today=today)
                findings += self.operator_branch_support(operator, os, version)
            if instance_type is not None:
                findings += self.architecture_support(instance_type, version)
            if worst_level(findings) != "mandatory":
                fitting.append(version)
        return [str(v) for v in sorted((parse_driver_version(v) for v in fitting), reverse=True)]
