"""Serving images (vLLM's OpenAI server, Hugging Face TGI): the CUDA a tag is built on, the GPU architectures it
is compiled for, and the GPU memory of an instance type.

The rows are `serving_images` of matrix.yaml (one per release tag and published variant, each with its source at
that tag) and `gpu_memory` (GiB per GPU). The rules:

- A tag `<release>[-x86_64|-aarch64][-<variant>]` of a recorded repository names one row (vLLM tags carry a `v`,
  TGI's do not); any other tag (an -efa
  or -ubuntu2404 image, a nightly, `latest`) reveals nothing, and the service declares its CUDA.
- The image's NVIDIA_REQUIRE_CUDA and cuda-compat are its runtime base's (`nvidia/cuda:<cuda>-base`), so the CUDA
  verdict is the one an nvidia/cuda tag of that version gets.
- A GPU of compute capability M.m runs the image's kernels when its arch list holds M.n with n <= m (a cubin runs on
  the same major at the same or a higher minor) or an entry P.q+PTX with P.q <= M.m (the driver JIT-compiles PTX);
  an arch-specific `a` target runs only on exactly that capability. Source: CUDA C++ Programming Guide, "Binary
  Compatibility" and "PTX Compatibility":
  https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility
  Without a matching kernel CUDA fails with "no kernel image is available for execution on the device".
- The x86_64 and aarch64 images are built with different lists; the instance type's CPU architecture picks one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .cuda import CudaQueries
from .findings import Finding
from .results import ImageCuda, InstanceType
from .rows import ServingImage

_TAG = re.compile(r"^(?P<release>v?\d+\.\d+\.\d+(?:\.\d+)?)(?:-(?P<cpu>x86_64|aarch64))?(?:-(?P<variant>cu\d{3}))?$")
_ENTRY = re.compile(r"^(?P<major>\d+)\.(?P<minor>\d+)(?P<specific>a?)(?P<ptx>\+PTX)?$")
ARCH_SOURCE = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility"
RULE = "serving-image-architecture"


@dataclass(frozen=True)
class ServingTag:
    """A serving image reference resolved to its matrix row, and the CPU architecture its tag pins (if any)."""

    image: str
    row: ServingImage
    cpu: str | None  # x86_64 / arm64 when the tag names one, None for the multi-arch tag

    def arch_list(self, cpu_arch: str) -> tuple[str, ...]:
        """The TORCH_CUDA_ARCH_LIST of the image a node of this CPU architecture pulls."""
        arch = self.cpu or cpu_arch
        return tuple((self.row.arch_arm64 if arch == "arm64" else self.row.arch_x86_64).split())


def runs_on(arch_list: tuple[str, ...], compute_capability: str) -> bool:
    """Whether kernels compiled for `arch_list` run on a GPU of this compute capability (module docstring)."""
    major, minor = (int(p) for p in compute_capability.split("."))
    for entry in arch_list:
        match = _ENTRY.match(entry)
        if match is None:
            continue
        e_major, e_minor = int(match.group("major")), int(match.group("minor"))
        if match.group("specific"):
            if (e_major, e_minor) == (major, minor):
                return True
            continue
        if e_major == major and e_minor <= minor:
            return True
        if match.group("ptx") and (e_major, e_minor) <= (major, minor):
            return True
    return False


class ServingImageQueries(CudaQueries):
    """Queries about serving images (vLLM) and the GPU memory of instance types."""

    def serving_tag(self, image: str) -> ServingTag | None:
        """The matrix row of a serving image reference, or None when the repository or tag is not recorded."""
        reference = image.strip().split("@", 1)[0]
        repository, sep, tag = reference.rpartition(":")
        if not sep or "/" in tag:
            return None
        repository = repository.removeprefix("docker.io/").removeprefix("index.docker.io/")
        match = _TAG.match(tag)
        if match is None:
            return None
        release, variant = match.group("release"), match.group("variant") or ""
        for row in self.data.serving_images:
            if row.repository == repository and row.release == release and row.variant == variant:
                cpu = {"x86_64": "x86_64", "aarch64": "arm64"}.get(match.group("cpu") or "")
                return ServingTag(image, row, cpu)
        return None

    def serving_releases(self, repository: str) -> list[ServingImage]:
        """Recorded rows of one serving repository, newest release first."""
        rows = [r for r in self.data.serving_images if r.repository == repository]
        return sorted(rows, key=lambda r: (tuple(int(p) for p in r.release[1:].split(".")), r.variant), reverse=True)

    def image_cuda(self, image: str) -> ImageCuda | None:
        """The CUDA runtime an image reference reveals: a recorded serving image, else nvidia/cuda and NGC tags."""
        tag = self.serving_tag(image)
        if tag is None:
            return super().image_cuda(image)
        base = next((r for r in self.data.cuda_image_repositories if r.repository == tag.row.base), None)
        forward_compat = base.forward_compat if base is not None else False
        admitted = self.require_cuda_branches(tag.row.base, tag.row.cuda)
        if admitted is None and forward_compat:
            admitted = self.forward_compat_branches(tag.row.cuda)
        return ImageCuda(image, tag.row.cuda, forward_compat, admitted, tag.row.source)

    def image_architecture(self, image: str, instance_type: str) -> list[Finding]:
        """Is the serving image compiled for the GPU of this instance type? [] when the image or type is unknown."""
        tag = self.serving_tag(image)
        inst = self.instance_type(instance_type)
        if tag is None or inst is None:
            return []
        arch_list = tag.arch_list(inst.cpu_arch)
        gpu = f"the {inst.gpu_model} of {inst.name} (compute capability {inst.compute_capability}, {inst.cpu_arch})"
        if not arch_list:
            return [Finding(
                "mandatory", RULE,
                f"{image} publishes no {inst.cpu_arch} image (only {'x86_64' if inst.cpu_arch == 'arm64' else 'arm64'}"
                f" at {tag.row.release}), so {inst.name} cannot run it: the node fails with exec format error. Keep "
                f"{inst.name} out of the service's pools (nodePools)", tag.row.source)]
        listed = " ".join(arch_list)
        if runs_on(arch_list, inst.compute_capability):
            return [Finding("ok", RULE, f"{image} is compiled for {listed}, which runs on {gpu}", tag.row.source)]
        return [Finding(
            "mandatory", RULE,
            f"{image} is compiled for {listed} only (TORCH_CUDA_ARCH_LIST of its {inst.cpu_arch} image at "
            f"{tag.row.release}), and no entry runs on {gpu}: a kernel runs on the same major compute capability at "
            f"an equal or higher minor, or from +PTX; vLLM fails with \"no kernel image is available for execution "
            f"on the device\". Keep {inst.name} out of the service's pools (nodePools), or use an image built for "
            f"sm_{inst.compute_capability.replace('.', '')}",
            tag.row.source)]

    def gpu_memory_gib(self, inst: InstanceType) -> tuple[float, str] | None:
        """(usable GiB per GPU, its source) of an instance type's GPU: the total EC2 reports, which vLLM multiplies
        by --gpu-memory-utilization (matrix.yaml gpu_memory); None where the matrix does not record it."""
        rows = [r for r in self.data.gpu_memory if r.model == inst.gpu_model]
        row = next((r for r in rows if inst.family in r.families), None) or next(
            (r for r in rows if not r.families), None)
        return (row.usable_mib / 1024, row.usable_source) if row is not None else None
