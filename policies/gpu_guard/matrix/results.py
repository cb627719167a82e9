"""Query results that join several rows (an instance type with its GPU, an image with its CUDA)."""

from __future__ import annotations

from dataclasses import dataclass


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
    fraction: str | None = None  # a fractional-GPU size: its share of one GPU ("1/8"); gpus is then 0
    driver_kind: str = "tesla"  # tesla (data-center driver) or grid (GRID vGPU guest driver)
    unsupported_branches: tuple[int, ...] = ()
    known_branches: tuple[int, ...] | None = None  # GRID families: the only branches a source shows driving them
    grid_driver_source: str | None = None
    ebs_mbps: tuple[int, int] | None = None  # [baseline, maximum] EBS-optimized bandwidth in Mbps; None: not read
    ebs_source: str | None = None
    ebs_confirmed: bool = False

    @property
    def logical_gpus(self) -> int:
        """GPUs the node's device plugin advertises: a fractional size is one logical GPU (LogicalGpuCount 1)."""
        return 1 if self.fraction is not None else self.gpus


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


@dataclass(frozen=True)
class ImageDriver:
    """The driver a node of one image release loads: the release step in force and how it resolved.

    `version` is the driver (full version or bare branch) this instance type gets, None when it cannot be
    told (no instance type while the release carries two drivers, or a selection no source documents);
    `drivers` is everything the release carries for that Kubernetes version, the default first.
    """

    os: str
    image_version: str | None  # the pinned release tag (v20260917, v1.68.0); None: the newest as of the judging day
    release: str | None  # the recorded release whose step applies; None: an older, date-based step
    exact: bool  # the pinned release is itself a recorded row (False: a nearer earlier step is used)
    kubernetes: str
    published: bool | None  # is the variant / AMI for this Kubernetes version in the release? None: unknown
    published_versions: tuple[str, ...]
    drivers: tuple[str, ...]
    version: str | None
    branch: int | None
    rule: str  # how `version` was chosen, in words, for messages
    source: str
    confirmed: bool
    resolution: str = "single"  # the row's rule among several drivers (rows.ImageRelease.resolution)
