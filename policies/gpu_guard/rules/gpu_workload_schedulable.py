"""gpu-workload-schedulable: GPU requests can be scheduled, and only GPU requests land on GPU nodes.

A container that requests `nvidia.com/gpu` must tolerate the GPU taint (`nvidia.com/gpu=true:
NoSchedule`) and reach, through its tolerations, nodeSelector and required node affinity (exactly as
the scheduler matches them), at least one GPU pool with an instance type that has at least that many
GPUs (the reachable instance types, narrowed by instance-type/family selectors; counts from the
matrix). "Insufficient nvidia.com/gpu" then never happens by construction. A pool that lists no
instance types (a Karpenter pool selecting by family or category) cannot be counted and is taken as
able to fit the request. A GPU workload in a stack that holds no GPU pool it can reach is a violation:
it would stay Pending.

A pod that tolerates the GPU taint and can reach a GPU pool must request a GPU: otherwise it
occupies a GPU node it does not use. DaemonSets are exempt: a node agent (monitoring, logging)
legitimately tolerates the GPU taint without a GPU; the GPU Operator's own DaemonSets live inside its
Helm release and are not separate resources here.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs

from ..base import stack_policy
from ..inventory import GPU_TAINT_KEY, POOL_LABEL, Reach, Taint, Workload, build_inventory, tolerates
from ..matrix import InstanceType, Matrix, load_matrix
from ._matrix_common import gpu_pools

NAME = "gpu-workload-schedulable"

# The GPU node taint of the label contract (CONFIG.md section 2).
# Source: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
GPU_TAINT = Taint(GPU_TAINT_KEY, "true", "NoSchedule")


def _fits(matrix: Matrix, reach: Reach, gpus: int) -> bool:
    if not reach.pool.instance_types:
        return True
    for name in reach.instance_types:
        known = matrix.instance_type(name)
        if known is not None and known.gpus >= gpus:
            return True
    return False


def _gpus_of(known: InstanceType) -> str:
    """`1`, or for a fractional-GPU size what it is instead: no whole GPU, so no nvidia.com/gpu."""
    if known.fraction is None:
        return str(known.gpus)
    return f"0: a fractional {known.gpu_model}, {known.fraction} of one GPU on the {known.driver_kind.upper()} driver"


def _capacity(matrix: Matrix, reaches: list[Reach]) -> str:
    parts = []
    for reach in reaches:
        sizes = [f"{t} ({_gpus_of(known)})" for t in reach.instance_types if (known := matrix.instance_type(t))]
        parts.append(f"{reach.pool.name!r}: {', '.join(sizes) or 'no GPU instance type'}")
    return "; ".join(parts)


def _judge_gpu_workload(matrix: Matrix, workload: Workload, reaches: list[Reach], report: ReportViolation) -> None:
    where = f"{workload.kind} {workload.name!r} requests {workload.gpus} nvidia.com/gpu"
    if not tolerates(workload.tolerations, GPU_TAINT):
        report(f"{where} but does not tolerate the GPU taint {GPU_TAINT}; add the toleration "
               "{key: nvidia.com/gpu, operator: Equal, value: \"true\", effect: NoSchedule}.", workload.urn)
        return
    if not reaches:
        report(f"{where} but can reach no GPU pool: its nodeSelector/affinity matches no GPU pool's labels; "
               f"select a pool with {POOL_LABEL}=<pool name>.", workload.urn)
        return
    if not any(_fits(matrix, reach, workload.gpus) for reach in reaches):
        report(f"{where} but no instance type it can reach has that many GPUs ({_capacity(matrix, reaches)}); "
               "lower the request or reach a pool with a larger size: it would stay Pending with "
               "\"Insufficient nvidia.com/gpu\".", workload.urn)


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    pools = gpu_pools(inv, matrix)
    for workload in inv.workloads:
        reaches = inv.reach(workload, pools)
        if workload.gpus > 0:
            _judge_gpu_workload(matrix, workload, reaches, report)
        elif workload.kind != "DaemonSet" and reaches and tolerates(workload.tolerations, GPU_TAINT):
            names = ", ".join(repr(r.pool.name) for r in reaches)
            report(f"{workload.kind} {workload.name!r} tolerates the GPU taint {GPU_TAINT} and can land on GPU "
                   f"pool(s) {names} but requests no nvidia.com/gpu; remove the toleration (or request a GPU).",
                   workload.urn)


stack_policy(
    name=NAME,
    description="A container that requests nvidia.com/gpu tolerates the GPU taint and can reach a GPU pool with that "
                "many GPUs; a pod that tolerates the GPU taint requests a GPU.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
)
