"""EC2 GPU instance types and the GPU architecture a driver must support."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from ..versions import parse_driver_version
from .findings import (
    BAKED_DRIVER_OS,
    DRIVER_REPOSITORY,
    NEAREST,
    Finding,
    fmt_versions,
    pick,
)
from .operators import OperatorQueries
from .results import InstanceType
from .rows import (
    sm_name,
)


class InstanceQueries(OperatorQueries):
    """Queries about EC2 GPU instance types and their GPUs."""

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
            fraction=row.gpu_fraction.get(size),
            driver_kind=row.driver_kind,
            unsupported_branches=row.unsupported_branches,
            known_branches=row.known_branches,
            grid_driver_source=row.grid_driver_source,
            ebs_mbps=row.ebs_mbps.get(size),
            ebs_source=row.ebs_source if size in row.ebs_mbps else None,
            ebs_confirmed=row.ebs_confirmed,
        )

    def instance_capacity(self, name: str) -> tuple[int, int] | None:
        """(vCPUs, memory MiB) of instance type `g5.xlarge`, or None where the matrix has no such row."""
        family, _, size = name.strip().partition(".")
        row = self._capacity.get(family)
        if row is None or size not in row.vcpus or size not in row.memory_mib:
            return None
        return row.vcpus[size], row.memory_mib[size]

    def is_gpu_instance(self, name: str) -> bool:
        """True when `name` is a known GPU instance type (data, not a name prefix guess)."""
        return self.instance_type(name) is not None

    def instance_types(self) -> list[str]:
        """Every known GPU instance type name."""
        return [f"{row.family}.{size}" for row in self.data.instance_families for size in row.sizes]

    def knows_family(self, name: str) -> bool:
        """Whether the family of instance type `name` is one the matrix records: an NVIDIA GPU family of
        `instance_families` or a family of `other_accelerator_families` (g4ad's AMD GPU). A pool on a family it
        does not know is judged by no GPU fact (`gpu-instance-type-known` says so)."""
        family = name.strip().partition(".")[0]
        return family in self._families or family in self._other_families

    def other_accelerator(self, name: str) -> str | None:
        """`AMD Radeon Pro V520 (AMD)` for an instance type of a family with no NVIDIA GPU (g4ad), else None."""
        row = self._other_families.get(name.strip().partition(".")[0])
        return f"{row.accelerator} ({row.vendor})" if row is not None else None

    def _unknown_instance(self, name: str) -> Finding:
        family = name.partition(".")[0]
        row = self._families.get(family)
        other = self._other_families.get(family)
        if other is not None:
            nvidia = ", ".join(sorted(self._families))
            text = (f"instance type {name} carries {other.vendor} accelerators ({other.accelerator}), no NVIDIA GPU: "
                    "no NVIDIA driver, device plugin or CUDA runs on it, so a GPU pool built for NVIDIA must not "
                    f"launch it. Use an NVIDIA GPU family: {nvidia}.")
            return Finding("mandatory", "instance-type-nvidia", text, other.source, tuple(sorted(self._families)))
        if row is not None:
            choices = tuple(f"{family}.{size}" for size in row.sizes)
            text = f"instance type {name} is not a size of the {family} family; sizes: {', '.join(choices)}."
        else:
            choices = tuple(sorted(self._families))
            text = f"instance type {name} is not a known GPU instance type; known GPU families: {', '.join(choices)}."
        return Finding("mandatory", "instance-type-known", text, self.data.instance_families[0].source, choices)

    def drives(self, inst: InstanceType, version: str, today: date | None = None) -> bool:
        """Can `version` (full or a bare branch) be suggested for `inst`: a branch the GPU and the family allow,
        one a source shows driving a GRID family, and (with `today`) not past NVIDIA's end of life."""
        parsed = parse_driver_version(version)
        gpu = self._gpus[inst.gpu_model]
        if gpu.max_branch is not None and parsed.branch > gpu.max_branch:
            return False
        if parsed.branch in inst.unsupported_branches:
            return False
        if inst.known_branches is not None and parsed.branch not in inst.known_branches:
            return False
        if gpu.min_driver is not None:
            floor = parse_driver_version(gpu.min_driver)
            if (parsed.branch < floor.branch) if parsed.is_branch_only else (parsed < floor):
                return False
        if today is not None:
            row = self.branch(parsed.branch)
            if row is None or row.is_end_of_life(today):
                return False
        return True

    def _fitting(
        self, inst: InstanceType, candidates: Sequence[str] | None, today: date | None, *, oldest_first: bool = False,
    ) -> tuple[str, ...]:
        """The suggestions for `inst` among `candidates` (default: every known driver version), newest first."""
        pool = list(candidates) if candidates is not None else self.known_driver_versions()
        fitting = sorted({v for v in pool if self.drives(inst, v, today)}, key=parse_driver_version,
                         reverse=not oldest_first)
        return tuple(fitting[:NEAREST])

    def architecture_support(
        self, instance_type: str, driver: str, *, candidates: Sequence[str] | None = None, today: date | None = None,
    ) -> list[Finding]:
        """Does the driver support the instance's GPU (minimum driver, last branch, the family's branches)?

        `candidates`: what the pool could choose instead (an Ubuntu OS's published driver images, a baked image's
        branches); `today`: leave end-of-life branches out of the suggestions. Both None: every known version."""
        rule = "gpu-architecture-supported"
        inst = self.instance_type(instance_type)
        if inst is None:
            return [self._unknown_instance(instance_type)]
        gpu = self._gpus[inst.gpu_model]
        parsed = parse_driver_version(driver)
        findings: list[Finding] = []
        if gpu.max_branch is not None and parsed.branch > gpu.max_branch:
            nearest = self._fitting(inst, candidates, today)
            findings.append(
                Finding(
                    "mandatory",
                    rule,
                    f"{inst.name} has {inst.gpus} x {gpu.model} ({gpu.architecture}, {sm_name(gpu)}); "
                    f"the last driver branch supporting {gpu.architecture} is R{gpu.max_branch}, so driver {driver} "
                    f"(R{parsed.branch}) does not drive it. "
                    + pick(nearest, f"Use R{gpu.max_branch} or older:",
                           f"Use R{gpu.max_branch} or older; no such driver is one this pool can take (in support, "
                           "published for its OS and operator release), so move the pool to a newer GPU family"),
                    gpu.source,
                    nearest,
                )
            )
        if parsed.branch in inst.unsupported_branches:
            nearest = self._fitting(inst, candidates, today)
            findings.append(
                Finding(
                    "mandatory",
                    rule,
                    f"{inst.name}, {_gpu_share(inst)} on the {inst.driver_kind.upper()} driver: driver "
                    f"R{parsed.branch} does not support the {inst.family} family, so driver {driver} cannot drive "
                    f"it. Use another branch: {fmt_versions(nearest) or 'none the pool can choose'}.",
                    inst.source,
                    nearest,
                )
            )
        if gpu.min_driver is not None:
            floor = parse_driver_version(gpu.min_driver)
            below = parsed < floor if not parsed.is_branch_only else parsed.branch < floor.branch
            if below:
                nearest = self._fitting(inst, candidates, today, oldest_first=True)
                findings.append(
                    Finding(
                        "mandatory",
                        rule,
                        f"{inst.name} has {gpu.model} ({gpu.architecture}), which needs driver {gpu.min_driver} or "
                        f"later; driver {driver} is older. "
                        + pick(nearest, "Nearest valid:", f"No driver at {gpu.min_driver} or later is one this pool "
                               "can take (in support, published for its OS and operator release); change the "
                               "operator release or the node OS first"),
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

    def shown_branch_findings(
        self, inst: InstanceType, driver: str, *, candidates: Sequence[str] | None = None, today: date | None = None,
    ) -> list[Finding]:
        """A GRID family on a branch no source shows driving it (R610 on g6f): advisory, since nothing read says it
        fails either; the suggestions are the pool's choices on the branches a source shows."""
        parsed = parse_driver_version(driver)
        if inst.known_branches is None or parsed.branch in inst.known_branches \
                or parsed.branch in inst.unsupported_branches:
            return []
        nearest = self._fitting(inst, candidates, today)
        known = ", ".join(f"R{b}" for b in inst.known_branches)
        return [
            Finding(
                "advisory",
                "gpu-architecture-supported",
                f"{inst.name}, {_gpu_share(inst)} on the {inst.driver_kind.upper()} driver: no source read shows "
                f"driver R{parsed.branch} driving the {inst.family} family (shown: {known}). "
                f"Use {fmt_versions(nearest) or known}.",
                inst.source,
                nearest,
            )
        ]

    @staticmethod
    def fractional_gpu_finding(inst: InstanceType, pool_kind: str | None = None) -> Finding:
        """What a fractional-GPU instance is, and what it means for each kind of pool.

        EC2 reports the share as one logical GPU (LogicalGpuCount 1, Count 0) and the node's device plugin
        advertises one nvidia.com/gpu: a node group schedules a pod requesting one. Karpenter v1.14.1 reads Count
        (0): a NodePool never launches the type for a GPU request, may launch it for a pod without one (which gets
        no device), and its nvidia.com/gpu limit does not bound it (karpenter-provider-aws issue #8368).
        `pool_kind`: "karpenter-nodepool" (mandatory: the pool cannot serve GPU pods), a node group kind
        (advisory: what the node offers), None (advisory: both).
        """
        what = (
            f"{inst.name} is {_gpu_share(inst)}, served by the {inst.driver_kind.upper()} driver. EC2 reports one "
            "logical GPU (LogicalGpuCount 1, Count 0) and the node's device plugin advertises one nvidia.com/gpu"
        )
        node_group = (
            "in a managed or self-managed node group a pod requesting nvidia.com/gpu: 1 schedules on it and gets the "
            "share (request one GPU, not more)"
        )
        karpenter = (
            "Karpenter v1.14.1 reads Count (0): a Karpenter NodePool never launches it for a pod requesting "
            "nvidia.com/gpu, may launch it for a pod that requests none (such a pod gets no GPU device), and its "
            "nvidia.com/gpu limit does not bound it; keep g6f and gr6f out of Karpenter NodePools"
        )
        if pool_kind == "karpenter-nodepool":
            return Finding("mandatory", "gpu-instance-fractional", f"{what}, but {karpenter}.", inst.source)
        if pool_kind is not None:
            return Finding("advisory", "gpu-instance-fractional", f"{what}: {node_group}.", inst.source)
        return Finding("advisory", "gpu-instance-fractional", f"{what}: {node_group}. {karpenter}.", inst.source)

    def driver_kind_findings(self, inst: InstanceType, os: str, driver: str) -> list[Finding]:
        """A GRID-only family under an operator-installed driver: the operator's nvcr.io/nvidia/driver image is the
        data-center (Tesla) driver, which does not drive the vGPU; name the GRID path that does."""
        if inst.driver_kind != "grid" or os in BAKED_DRIVER_OS:
            return []
        known = " or ".join(f"R{b}" for b in inst.known_branches or ())
        return [
            Finding(
                "mandatory",
                "gpu-driver-kind",
                f"{inst.name} is {_gpu_share(inst)} and needs NVIDIA's GRID (vGPU guest) driver; the GPU Operator "
                f"installs {DRIVER_REPOSITORY}:{driver}-<os>, the data-center (Tesla) driver, which does not drive "
                f"it. Run {inst.family} on the AL2023 NVIDIA AMI (os: al2023; its loader picks nvidia-open-grid for "
                f"these GPUs{', ' + known if known else ''}), or on an image with AWS's GRID driver installed "
                f"({inst.grid_driver_source or 'AWS install-nvidia-driver'}), not with an operator-installed driver.",
                inst.grid_driver_source or inst.source,
            )
        ]


def _gpu_share(inst: InstanceType) -> str:
    """"a fractional L4 (1/8 of one GPU)" or "1 x L4"."""
    if inst.fraction is not None:
        return f"a fractional {inst.gpu_model} ({inst.fraction} of one GPU)"
    return f"{inst.gpus} x {inst.gpu_model}"
