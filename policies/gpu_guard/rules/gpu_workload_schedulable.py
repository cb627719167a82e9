"""gpu-workload-schedulable: GPU requests can be scheduled, and only GPU requests land on GPU nodes.

A container that requests `nvidia.com/gpu` must reach, through its nodeSelector and required node
affinity, at least one GPU pool, tolerate that pool's blocking taints (the GPU taint in whatever
spelling the pool uses: `nvidia.com/gpu=true:NoSchedule`, a valueless `nvidia.com/gpu:NoSchedule`,
NoExecute; matched exactly as the scheduler matches them, `scheduling.tolerates_taint`), and find there
an instance type with at least that many GPUs (the reachable instance types, narrowed by instance-type/
family selectors; counts from the matrix). "Insufficient nvidia.com/gpu" then never happens by
construction. A pool that lists no instance types (a Karpenter pool selecting by family or category)
cannot be counted and is taken as able to fit the request. A GPU workload in a stack that holds no GPU
pool it can reach is a violation: it would stay Pending.

Selection follows every label the pool's nodes carry (`node_labels`): our label contract, the
NodePool's requirements and template labels, and the well-known labels Karpenter and EKS Auto Mode
put on every node (`node.kubernetes.io/instance-type`, `karpenter.k8s.aws/instance-family`,
`eks.amazonaws.com/instance-family`, `eks.amazonaws.com/instance-gpu-name`, `karpenter.sh/nodepool`...).

A pod that tolerates the GPU taint of a GPU pool it can reach must request a GPU: otherwise it
occupies a GPU node it does not use. DaemonSets are exempt: a node agent (monitoring, logging)
legitimately tolerates the GPU taint without a GPU; the GPU Operator's own DaemonSets live inside its
Helm release and are not separate resources here.

Sources:
- https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/ and k8s.io/api core/v1
  toleration.go `ToleratesTaint` (https://github.com/kubernetes/api/blob/v0.34.0/core/v1/toleration.go)
- https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs

from ..base import Elsewhere, other_stacks, stack_policy
from ..inventory import GPU_TAINT_KEY, Reach, Taint, Workload, build_inventory, tolerates
from ..matrix import InstanceType, Matrix, load_matrix
from ..scheduling import selected, untolerated
from ..views import Pool, is_gpu_taint
from .gpu_nodes_tainted import gpu_reason

NAME = "gpu-workload-schedulable"

# The GPU node taint of the label contract (CONFIG.md section 2): the toleration the resource part asks of workloads
# that declare our pools.
# Source: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
GPU_TAINT = Taint(GPU_TAINT_KEY, "true", "NoSchedule")
TOLERATION_FIX = "{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}"


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


def _judge_gpu_workload(matrix: Matrix, workload: Workload, pools: list[Pool], report: ReportViolation) -> None:
    where = f"{workload.kind} {workload.name!r} requests {workload.gpus} nvidia.com/gpu"
    chosen = [reach for pool in pools if (reach := selected(workload, pool)) is not None]
    if not chosen:
        report(f"{where} but can reach no GPU pool: its nodeSelector/affinity matches no GPU pool's labels "
               f"({_pool_names(pools)}); select one by a label its nodes carry (gpu-platform.io/pool, "
               "karpenter.sh/nodepool, an instance family or GPU name label).", workload.urn)
        return
    reaches = [r for r in chosen if not untolerated(workload.tolerations, r.pool)]
    if not reaches:
        blocking = sorted({str(t) for r in chosen for t in untolerated(workload.tolerations, r.pool)})
        report(f"{where} but does not tolerate the taints {blocking} of the GPU pools it selects "
               f"({', '.join(repr(r.pool.name) for r in chosen)}); add the toleration {TOLERATION_FIX} "
               "(it matches the GPU taint with any value or none).", workload.urn)
        return
    if not any(_fits(matrix, reach, workload.gpus) for reach in reaches):
        report(f"{where} but no instance type it can reach has that many GPUs ({_capacity(matrix, reaches)}); "
               "lower the request or reach a pool with a larger size: it would stay Pending with "
               "\"Insufficient nvidia.com/gpu\".", workload.urn)


def _pool_names(pools: list[Pool]) -> str:
    return "GPU pools: " + (", ".join(repr(p.name) for p in pools) if pools else "none")


def _tolerated_gpu_taint(workload: Workload, reach: Reach) -> bool:
    return any(is_gpu_taint(t) and tolerates(workload.tolerations, t) for t in reach.pool.taints)


def _no_gpu_pool(resources: list[Any]) -> bool:
    """This stack holds GPU workloads and no GPU pool (a split stack's application stack)."""
    matrix = load_matrix()
    inv = build_inventory(resources)
    return (any(w.gpus > 0 for w in inv.workloads)
            and not any(gpu_reason(p, matrix.is_gpu_instance) for p in inv.pools))


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    # Every pool gpu-nodes-tainted calls a GPU pool: instance types, families (karpenter.k8s.aws and EKS Auto Mode
    # eks.amazonaws.com labels), GPU AMI types, GPU label requirements, the label contract.
    pools = [p for p in inv.pools if gpu_reason(p, matrix.is_gpu_instance)]
    if not pools and other_stacks(args.resources):
        return  # the GPU pools may live in the stack this one references: the -pending twin says so
    for workload in inv.workloads:
        if workload.gpus > 0:
            _judge_gpu_workload(matrix, workload, pools, report)
            continue
        reaches = [r for r in inv.reach(workload, pools) if _tolerated_gpu_taint(workload, r)]
        if workload.kind != "DaemonSet" and reaches:
            names = ", ".join(repr(r.pool.name) for r in reaches)
            taints = ", ".join(sorted({str(t) for r in reaches for t in r.pool.taints if is_gpu_taint(t)}))
            report(f"{workload.kind} {workload.name!r} tolerates the GPU taint {taints} and can land on GPU "
                   f"pool(s) {names} but requests no nvidia.com/gpu; remove the toleration (or request a GPU).",
                   workload.urn)


stack_policy(
    name=NAME,
    description="A container that requests nvidia.com/gpu tolerates the GPU taint and can reach a GPU pool with that "
                "many GPUs; a pod that tolerates the GPU taint requests a GPU.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
    elsewhere=Elsewhere("the GPU pools its GPU workloads need", _no_gpu_pool),
)
