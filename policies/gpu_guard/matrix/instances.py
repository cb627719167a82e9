"""EC2 GPU instance types and the GPU architecture a driver must support."""

from __future__ import annotations

from ..versions import parse_driver_version
from .findings import (
    NEAREST,
    Finding,
    fmt_versions,
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
            )[:NEAREST]
            findings.append(
                Finding(
                    "mandatory",
                    rule,
                    f"{inst.name} has {inst.gpus} x {gpu.model} ({gpu.architecture}, {sm_name(gpu)}); "
                    f"the last driver branch supporting {gpu.architecture} is R{gpu.max_branch}, so driver {driver} "
                    f"(R{parsed.branch}) does not drive it. Use R{gpu.max_branch} or older: {fmt_versions(nearest)}.",
                    gpu.source,
                    nearest,
                )
            )
        if parsed.branch in inst.unsupported_branches:
            nearest = tuple(
                v for v in self.known_driver_versions()
                if parse_driver_version(v).branch not in inst.unsupported_branches
                and (gpu.min_driver is None or parse_driver_version(v) >= parse_driver_version(gpu.min_driver))
            )[:NEAREST]
            findings.append(
                Finding(
                    "mandatory",
                    rule,
                    f"{inst.name}, {_gpu_share(inst)} on the {inst.driver_kind.upper()} driver: driver "
                    f"R{parsed.branch} does not support the {inst.family} family, so driver {driver} cannot drive "
                    f"it. Use another branch: {fmt_versions(nearest)}.",
                    inst.source,
                    nearest,
                )
            )
        if gpu.min_driver is not None:
            floor = parse_driver_version(gpu.min_driver)
            below = parsed < floor if not parsed.is_branch_only else parsed.branch < floor.branch
            if below:
                nearest = tuple(v for v in self.known_driver_versions() if parse_driver_version(v) >= floor)
                nearest = tuple(sorted(nearest, key=parse_driver_version)[:NEAREST])
                findings.append(
                    Finding(
                        "mandatory",
                        rule,
                        f"{inst.name} has {gpu.model} ({gpu.architecture}), which needs driver {gpu.min_driver} or "
                        f"later; driver {driver} is older. Nearest valid: {fmt_versions(nearest)}.",
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

    @staticmethod
    def fractional_gpu_finding(inst: InstanceType) -> Finding:
        """What a fractional-GPU instance is: a share of one GPU on the GRID driver, no nvidia.com/gpu."""
        return Finding(
            "advisory",
            "gpu-instance-fractional",
            f"{inst.name} is {_gpu_share(inst)}, served by the {inst.driver_kind.upper()} driver: Karpenter reports "
            "karpenter.k8s.aws/instance-gpu-count=0 and the node advertises no nvidia.com/gpu, so a pod requesting "
            "nvidia.com/gpu never schedules on it, and a NodePool limit on nvidia.com/gpu does not bound it. Run "
            "workloads that fit the GPU share and select the pool by its labels.",
            inst.source,
        )


def _gpu_share(inst: InstanceType) -> str:
    """"a fractional L4 (1/8 of one GPU)" or "1 x L4"."""
    if inst.fraction is not None:
        return f"a fractional {inst.gpu_model} ({inst.fraction} of one GPU)"
    return f"{inst.gpus} x {inst.gpu_model}"
