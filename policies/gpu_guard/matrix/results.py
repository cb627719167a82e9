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
