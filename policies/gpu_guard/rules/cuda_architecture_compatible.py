"""cuda-architecture-compatible: a workload's CUDA release knows the GPU architecture of every pool it can reach.

For each container that requests `nvidia.com/gpu` with a known CUDA runtime, every instance type
it can land on (the reachable pool's instance types narrowed by its selectors) is judged by
`Matrix.cuda_architecture`: sm_89 needs CUDA 11.8, sm_100/sm_120 need 12.8, Volta has no CUDA 13.
Advisory: findings are reported at the policy's level (no prefix). Unknown instance types are left
to `gpu-architecture-supported`, unknown CUDA to `gpu-workload-cuda-declared`.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs

from ..base import stack_policy
from ..inventory import build_inventory
from ..matrix import Finding, load_matrix
from ._dockerfile import Builds
from ._matrix_common import gpu_container_reaches, judged, report_findings

NAME = "cuda-architecture-compatible"


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    seen: set[str] = set()
    verdicts: dict[tuple[str, str], list[Finding]] = {}  # N workloads x P pools ask about few (CUDA, type) pairs
    for item in gpu_container_reaches(build_inventory(args.resources), matrix, Builds(args.resources)):
        workload, cuda = item.workload, item.cuda
        for reach in item.reaches:
            for instance_type in reach.instance_types or reach.pool.instance_types:
                if matrix.instance_type(instance_type) is None:
                    continue
                context = (f"{workload.kind} {workload.name!r} container {item.container!r} "
                           f"(CUDA {cuda.cuda} from {cuda.origin}) can run on {instance_type} in GPU pool "
                           f"{reach.pool.name!r}")
                key = (cuda.cuda, instance_type)
                if key not in verdicts:
                    verdicts[key] = judged(matrix.cuda_architecture, cuda.cuda, instance_type)
                report_findings(report, verdicts[key], context=context, urn=workload.urn, advisory_prefix=False,
                                seen=seen)


stack_policy(
    name=NAME,
    description="The workload's CUDA release knows the GPU architecture of every pool it can reach.",
    validate=_validate,
    enforcement=EnforcementLevel.ADVISORY,
)
