"""The rows of matrix.yaml as pydantic models: every row has `source` and `reviewed`."""

from __future__ import annotations

import calendar
import re
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..versions import parse_cuda_version, parse_driver_version


class Override(BaseModel):
    """A field of a row that deliberately differs from what `tools.matrix refresh` reads upstream.

    `upstream` records the value the upstream reading gave when the override was written: when upstream
    changes again, the difference is reported again instead of staying hidden.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str = Field(description="Name of the row's field that differs, e.g. kubernetes")
    upstream: Any = Field(description="What the upstream reading says for that field")
    reason: str = Field(description="Why the row keeps its own value")
    source: str = Field(description="URL of the source that supports the row's value", pattern=r"^https?://\S+$")


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(description="URL of the public source the row was taken from", pattern=r"^https?://\S+$")
    reviewed: date = Field(description="Date the row was last checked against its source")
    confirmed: bool = Field(default=True, description="False when the fact could not be verified")
    note: str | None = Field(default=None, description="Caveat, discrepancy or reason it is unconfirmed")
    override: tuple[Override, ...] = Field(default=(), description="Fields kept against the upstream reading")


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
    recommended_driver: str | None = Field(
        default=None, description="Driver the component matrix marks recommended (R), when it marks one"
    )
    toolkit: str = Field(description="NVIDIA Container Toolkit shipped")
    drivers: tuple[str, ...] = Field(description="Drivers in the component matrix")
    branches: dict[str, tuple[int, ...]] = Field(description="Driver branches supported per OS label")
    kubernetes: dict[str, tuple[str, str]] = Field(description="Kubernetes [min, max] per OS label")
    eks: tuple[str, str] = Field(description="Amazon EKS [min, max] from the Cloud Service Providers table")
    precompiled: dict[str, tuple[int, ...]] = Field(description="Precompiled driver branches per OS label")
    status: Literal["supported", "deprecated", "end-of-support"] = Field(description="Lifecycle as of review")

    _strict = field_validator("default_driver", "recommended_driver", "toolkit", mode="before")(_strict_str)

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
    sizes: dict[str, int] = Field(description="GPU count per size, e.g. {xlarge: 1, 12xlarge: 4}; 0 for a "
                                              "fractional GPU (no nvidia.com/gpu is advertised)")
    gpu_fraction: dict[str, str] = Field(
        default_factory=dict, description="Fractional-GPU sizes: the share of one GPU each gets, e.g. {xlarge: 1/8}"
    )
    driver_kind: Literal["tesla", "grid"] = Field(
        default="tesla", description="The driver flavour the instances need: tesla (data-center) or grid (vGPU guest)"
    )
    unsupported_branches: tuple[int, ...] = Field(
        default=(), description="Driver branches documented not to support the family"
    )
    known_branches: tuple[int, ...] | None = Field(
        default=None, description="GRID families: the only driver branches a source shows driving them (None: any "
        "branch the GPU row allows)"
    )
    grid_driver_source: str | None = Field(
        default=None, description="GRID families: where the GRID driver that drives them is documented"
    )
    ebs_mbps: dict[str, tuple[int, int]] = Field(
        default_factory=dict,
        description="EBS-optimized bandwidth per size, [baseline, maximum] in Mbps as AWS's 'Amazon EBS-optimized "
        "instance types' table lists it; a size whose maximum exceeds its baseline bursts for EBS_BURST_SECONDS",
    )
    ebs_source: str | None = Field(default=None, description="Source of ebs_mbps")
    ebs_confirmed: bool = Field(default=False, description="ebs_mbps read, baseline and maximum, in a primary source")
    ebs_note: str | None = Field(default=None, description="How ebs_mbps was read")

    @model_validator(mode="after")
    def _ebs_ok(self) -> InstanceFamily:
        for size, (baseline, maximum) in self.ebs_mbps.items():
            if size not in self.sizes:
                raise ValueError(f"ebs_mbps names size {size!r}, not a size of {self.family} ({', '.join(self.sizes)})")
            if not 0 < baseline <= maximum:
                raise ValueError(f"ebs_mbps[{size}] = [{baseline}, {maximum}]: need 0 < baseline <= maximum (Mbps)")
        if self.ebs_mbps and self.ebs_source is None:
            raise ValueError(f"{self.family}: ebs_mbps needs ebs_source")
        return self


class OtherAcceleratorFamily(_Row):
    """An EC2 accelerated-computing family whose accelerator is no NVIDIA GPU: no NVIDIA driver drives it."""

    family: str = Field(description="Family, e.g. g4ad")
    accelerator: str = Field(description="The accelerator as AWS names it, e.g. AMD Radeon Pro V520")
    vendor: str = Field(description="Who makes it, e.g. AMD")
    sizes: dict[str, int] = Field(description="Accelerators per size")


class InstanceCapacity(_Row):
    """vCPUs and memory of each size of an EC2 GPU instance family (EC2 DescribeInstanceTypes' figures)."""

    family: str = Field(description="Family, a row of instance_families")
    vcpus: dict[str, int] = Field(description="Default vCPUs per size")
    memory_mib: dict[str, int] = Field(description="Memory per size, MiB (before Karpenter's VM overhead)")


class BakedDriver(_Row):
    """The driver branch a node image ships from a date on."""

    since: date = Field(description="Date from which images ship this branch")
    branch: int = Field(description="Driver branch")
    kubernetes: tuple[str, ...] = Field(
        default=(), description="EKS versions whose images switched on that date; empty: every version"
    )

    @field_validator("kubernetes", mode="before")
    @classmethod
    def _kubernetes_ok(cls, value: Any) -> Any:
        if isinstance(value, list):
            for item in value:
                _strict_str(item)
        return value


class NodeImageRow(_Row):
    """An EKS node image family: SSM parameter format, published EKS versions, baked driver branch."""

    os: str = Field(description="OS label value")
    product: str = Field(description="Image product, e.g. eks (free Canonical) or aws-k8s-nvidia")
    ssm_parameter: str = Field(description="SSM parameter name format with {kubernetes} and {arch}")
    arch_names: dict[str, str] = Field(description="x86_64/arm64 -> spelling in the SSM path")
    published: tuple[str, ...] = Field(description="EKS versions with a published image")
    published_unconfirmed: tuple[str, ...] = Field(
        default=(), description="Of `published`, the versions no primary source read shows (the note says why)"
    )
    baked_driver: tuple[BakedDriver, ...] = Field(default=(), description="Driver branch shipped, by date")


class ImageRelease(_Row):
    """What one release of a node image line (AL2023 NVIDIA AMI, Bottlerocket NVIDIA variants) ships.

    A row is a step: it holds from its release until the next recorded release of the same `os`, so rows
    are written only where the published variants or the drivers change. `drivers` maps a Kubernetes
    minor (or `*`: every version the release publishes, not recorded one by one) to the driver versions
    or bare branches the image carries, the one a node loads by default first.
    """

    os: Literal["al2023", "bottlerocket"] = Field(description="Node image line (OS label value)")
    release: str = Field(description="Release tag: v20260917 (AL2023) or v1.68.0 (Bottlerocket)")
    released: date | None = Field(default=None, description="Publication date, when a source gives it")
    drivers: dict[str, tuple[str, ...]] = Field(
        description="Kubernetes minor (or *) -> driver versions or branches baked in, the default first"
    )
    resolution: Literal[
        "single", "al2023-open-supported-devices", "bottlerocket-branch-setting", "undocumented",
    ] = Field(
        default="single",
        description="How a node picks among several drivers: single (one driver), al2023-open-supported-devices "
        "(amazon-eks-ami resolve-nvidia-driver.sh), bottlerocket-branch-setting (ghostdog: the "
        "settings.kernel.drivers.nvidia.branch pin, else the GPU), undocumented (no primary source says)",
    )
    branch_setting: dict[str, str] = Field(
        default_factory=dict,
        description="bottlerocket-branch-setting: each value of settings.kernel.drivers.nvidia.branch -> the driver "
        "it activates, e.g. {lts: 580.178.04, pb: 595.91.07}",
    )
    second_tree_gpus: tuple[str, ...] = Field(
        default=(), description="GPU models (rows of gpus) that resolve to the second driver (the PB tree)"
    )
    first_tree_families: tuple[str, ...] = Field(
        default=(), description="Instance families forced onto the first driver whatever their GPU"
    )
    kubernetes: tuple[str, ...] | None = Field(
        default=None,
        description="A `*` row: the Kubernetes minors the release publishes, when known (else node_images.published)",
    )
    kubernetes_unconfirmed: tuple[str, ...] = Field(
        default=(), description="Minors of `kubernetes` no source read confirms: whether they are published is unknown"
    )

    @field_validator("release", mode="before")
    @classmethod
    def _release_ok(cls, value: Any) -> Any:
        _strict_str(value)
        if isinstance(value, str) and not re.fullmatch(r"v(\d{8}|\d+\.\d+\.\d+)", value):
            raise ValueError(f"release {value!r} must look like v20260917 (AL2023) or v1.68.0 (Bottlerocket)")
        return value

    @field_validator("drivers", mode="before")
    @classmethod
    def _drivers_ok(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for key, versions in value.items():
                _strict_str(key)
                if key != "*" and not re.fullmatch(r"1\.\d+", str(key)):
                    raise ValueError(f"drivers key {key!r} must be a Kubernetes minor such as '1.35', or '*'")
                if not isinstance(versions, list) or not versions:
                    raise ValueError(f"drivers[{key!r}] must be a non-empty list of driver versions or branches")
                for item in versions:
                    _strict_str(item)
                    _check_driver(item)
        return value


class EksVersion(_Row):
    """An Amazon EKS Kubernetes version and its support dates."""

    version: str = Field(description="Kubernetes minor, e.g. 1.34")
    released: date | None = Field(description="Amazon EKS release date")
    available_by: date | None = Field(default=None, description="Date by which it was seen available")
    end_standard: date | None = Field(description="End of standard support")
    end_extended: date | None = Field(description="End of extended support")

    _strict = field_validator("version", mode="before")(_strict_str)


class PendingEksVersion(_Row):
    """A Kubernetes minor released upstream that Amazon EKS does not offer yet (no primary source shows it)."""

    version: str = Field(description="Kubernetes minor, e.g. 1.37")
    upstream_released: date = Field(description="Upstream Kubernetes release date")

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


class ServingImage(_Row):
    """One published tag family of a serving image (vLLM's OpenAI server): the CUDA it is built on and the GPU
    architectures its kernels are compiled for (TORCH_CUDA_ARCH_LIST), per CPU architecture of the image."""

    repository: str = Field(description="Image repository, e.g. vllm/vllm-openai")
    release: str = Field(description="Release tag as the image is tagged, e.g. v0.34.0 (vLLM), 3.3.7 (TGI)")
    variant: str = Field(description="Tag suffix of the variant: empty for the default image, e.g. cu129")
    cuda: str = Field(description="CUDA toolkit the image is built with (the release build's CUDA_VERSION)")
    arch_x86_64: str = Field(description="TORCH_CUDA_ARCH_LIST of the x86_64 image (space-separated, +PTX kept)")
    arch_arm64: str = Field(description="TORCH_CUDA_ARCH_LIST of the aarch64 image; empty: no aarch64 image")
    released: date = Field(description="Release date (the PyPI upload of that release)")
    base: str = Field(description="Repository of the runtime stage's base image (its NVIDIA_REQUIRE_CUDA, cuda-compat)")

    _strict = field_validator("cuda", mode="before")(_strict_str)

    @field_validator("release")
    @classmethod
    def _release_tag(cls, value: str) -> str:
        if not re.fullmatch(r"v?\d+\.\d+\.\d+(\.\d+)?", value):
            raise ValueError(f"release {value!r} is not a tag like v0.34.0 or 3.3.7")
        return value

    @field_validator("arch_x86_64", "arch_arm64")
    @classmethod
    def _arch_list(cls, value: str) -> str:
        for entry in value.split():
            if not re.fullmatch(r"\d+\.\d+a?(\+PTX)?", entry):
                raise ValueError(f"arch list entry {entry!r} is not a compute capability like 8.0 or 12.0+PTX")
        return value


class GpuMemory(_Row):
    """Memory of one GPU of a model: as AWS lists it (GiB, for display) and as EC2 reports it (MiB, usable)."""

    model: str = Field(description="GPU model (a row of `gpus`)")
    memory_gib: int = Field(gt=0, description="GiB of memory per GPU")
    usable_mib: int = Field(gt=0, description="MiB per GPU as EC2 reports it (GpuInfo MemoryInfo SizeInMiB)")
    usable_source: str = Field(description="Where usable_mib was read")
    families: tuple[str, ...] = Field(default=(), description="Instance families this row is for, where one GPU model "
                                                               "comes in two sizes (p4d/p4de, p3/p3dn); empty: all")
    cuda_total_mib: int | None = Field(default=None, gt=0,
                                       description="MiB per GPU as cudaMemGetInfo reports its total (what vLLM "
                                                   "multiplies by the utilization)")
    cuda_total_max_mib: int | None = Field(default=None, gt=0,
                                           description="The highest measured, or an estimate's upper bound (EC2's "
                                                       "figure); unset: cuda_total_mib")
    cuda_source: str | None = Field(default=None, description="Where cuda_total_mib was measured, or how estimated")


class ImageRequireCuda(_Row):
    """The driver branches one `nvidia/cuda` tag's NVIDIA_REQUIRE_CUDA admits besides `cuda>=x.y` (its image
    environment): a `brand=...,driver>=N,driver<N+1` clause per branch. NGC framework images differ (forward_compat)."""

    repository: str = Field(description="Canonical repository name (a row of cuda_image_repositories)")
    cuda: str = Field(description="The tag's CUDA version, e.g. 12.8.1")
    admitted_branches: tuple[int, ...] = Field(description="Branches of the driver>=N,driver<N+1 clauses")

    _strict = field_validator("cuda", mode="before")(_strict_str)


class ToolkitRequireCheck(_Row):
    """Whether the NVIDIA Container Toolkit checks NVIDIA_REQUIRE_* in one GPU injection mode."""

    mode: Literal["legacy", "cdi", "jit-cdi"] = Field(
        description="legacy: runtime hook + nvidia-container-cli; cdi: CDI specs; jit-cdi: CDI specs the runtime "
                    "generates per container")
    checks: bool = Field(description="Whether an unsatisfied NVIDIA_REQUIRE_CUDA stops the container")


class OperatorCdiDefault(_Row):
    """The first GPU Operator release whose chart enables CDI by default (`cdi.enabled: true` in values.yaml)."""

    since: str = Field(description="Operator release, e.g. v25.10.0")


class ToolkitAutoMode(_Row):
    """What the toolkit's runtime mode `auto` resolves to on a GPU (NVML) node, from a toolkit release on. The
    GPU Operator sets the mode (`cdi`) only when CDI is enabled; otherwise the toolkit keeps `auto`."""

    since: str = Field(description="First NVIDIA Container Toolkit release with this resolution, e.g. v1.18.0")
    mode: Literal["legacy", "jit-cdi"] = Field(description="The mode `auto` resolves to from that release on")


class UnconfirmedRelease(_Row):
    """A release named by second-hand evidence that no primary source read confirms (kept out of the matrix)."""

    version: str = Field(description="Release, e.g. v26.7.1")


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
    other_accelerator_families: tuple[OtherAcceleratorFamily, ...] = Field(
        default=(), description="EC2 accelerated-computing families with no NVIDIA GPU (AMD, Habana)"
    )
    instance_capacity: tuple[InstanceCapacity, ...] = Field(
        default=(), description="vCPUs and memory of the GPU instance sizes"
    )
    node_images: tuple[NodeImageRow, ...] = Field(description="EKS node images")
    image_releases: tuple[ImageRelease, ...] = Field(default=(), description="What each node image release ships")
    eks_versions: tuple[EksVersion, ...] = Field(description="EKS versions and support dates")
    eks_pending: tuple[PendingEksVersion, ...] = Field(
        default=(), description="Kubernetes minors released upstream, not (yet) an Amazon EKS version"
    )
    kubelet_skew: tuple[KubeletSkewRow, ...] = Field(description="Kubelet skew rule", min_length=1, max_length=1)
    ngc_images: tuple[NgcImage, ...] = Field(description="NGC releases and their CUDA")
    cuda_image_repositories: tuple[CudaImageRepository, ...] = Field(description="nvidia/cuda repositories")
    image_require_cuda: tuple[ImageRequireCuda, ...] = Field(
        default=(), description="NVIDIA_REQUIRE_CUDA driver clauses per nvidia/cuda tag"
    )
    serving_images: tuple[ServingImage, ...] = Field(
        default=(), description="Serving images (vLLM): CUDA and compiled GPU architectures per release and variant"
    )
    gpu_memory: tuple[GpuMemory, ...] = Field(default=(), description="Memory per GPU of a model")
    operators_unconfirmed: tuple[UnconfirmedRelease, ...] = Field(
        default=(), description="GPU Operator releases named second-hand, not confirmed by NVIDIA's notes or tags"
    )
    operator_cdi_default: tuple[OperatorCdiDefault, ...] = Field(
        default=(), description="First operator release that enables CDI by default", max_length=1
    )
    toolkit_require_check: tuple[ToolkitRequireCheck, ...] = Field(
        default=(), description="Whether the container toolkit checks NVIDIA_REQUIRE_CUDA, per injection mode"
    )
    toolkit_auto_mode: tuple[ToolkitAutoMode, ...] = Field(
        default=(), description="What the toolkit's `auto` runtime mode resolves to, by toolkit release"
    )


def sm_name(gpu: GpuModel) -> str:
    """`sm_90` for compute capability 9.0."""
    return f"sm_{gpu.compute_capability.replace('.', '')}"
