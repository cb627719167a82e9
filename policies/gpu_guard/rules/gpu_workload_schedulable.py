"""gpu-workload-schedulable: GPU requests can be scheduled, and only GPU requests land on GPU nodes.

A container that requests `nvidia.com/gpu` must reach, through its nodeSelector and required node
affinity, at least one GPU pool, tolerate that pool's blocking taints (the GPU taint in whatever
spelling the pool uses: `nvidia.com/gpu=true:NoSchedule`, a valueless `nvidia.com/gpu:NoSchedule`,
NoExecute; matched exactly as the scheduler matches them, `scheduling.tolerates_taint`), and find there
an instance type with at least that many GPUs (the reachable instance types, narrowed by instance-type/
family selectors; counts from the matrix). "Insufficient nvidia.com/gpu" then never happens by
construction. A pool that lists no instance types (a Karpenter pool selecting by family or category)
cannot be counted and is taken as able to fit the request. A GPU workload in a stack that holds no GPU
pool it can reach is a violation: it would stay Pending. Unless the cluster is not in the stack either (no EKS
cluster, no GPU pool: workloads deployed on the ambient kubeconfig's cluster, or a provider built from another
stack's kubeconfig): its pools are elsewhere, so "no GPU pool" is then an advisory, in the twin
`gpu-workload-schedulable-caveats` (/work/shared/POLICIES.md "Cannot see, cannot block").

Selection follows every label the pool's nodes carry (`node_labels`): our label contract, the
NodePool's requirements and template labels, and the well-known labels Karpenter and EKS Auto Mode
put on every node (`node.kubernetes.io/instance-type`, `karpenter.k8s.aws/instance-family`,
`eks.amazonaws.com/instance-family`, `eks.amazonaws.com/instance-gpu-name`, `karpenter.sh/nodepool`...).

A pod that tolerates the GPU taint of a GPU pool it can reach must request a GPU: otherwise it
occupies a GPU node it does not use. A GPU request is `nvidia.com/gpu` or a DRA claim of an NVIDIA GPU device class
(`gpu.nvidia.com`, `mig.nvidia.com`, ...: `dra.py`), which needs the same taint toleration and GPU pool; a DRA claim
the stack does not hold is not known, so "requests no GPU" is then an advisory in the `-caveats` twin.
DaemonSets are exempt: a node agent (monitoring, logging)
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

from ..base import CAVEAT_MARK, Elsewhere, other_stacks, stack_policy_with_caveats
from ..inventory import EKS_CLUSTER_TYPES, GPU_TAINT_KEY, Reach, Taint, Workload, build_inventory, tolerates
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


def _schedulable_gpus(known: InstanceType, pool: Pool) -> int:
    """nvidia.com/gpu a node of this type offers a pod of this pool. A fractional size (g6f, gr6f) is one logical
    GPU the device plugin advertises, so a node group schedules one; Karpenter v1.14.1 counts it as 0 (it reads
    EC2's Count) and never launches it for a GPU request (karpenter-provider-aws issue #8368)."""
    if known.fraction is not None and pool.kind == "karpenter-nodepool":
        return 0
    return known.logical_gpus


def _fits(matrix: Matrix, reach: Reach, gpus: int) -> bool:
    if not reach.pool.instance_types:
        return True
    for name in reach.instance_types:
        known = matrix.instance_type(name)
        if known is not None and _schedulable_gpus(known, reach.pool) >= gpus:
            return True
    return False


def _gpus_of(known: InstanceType, pool: Pool) -> str:
    """`1`, or for a fractional-GPU size what it is: one logical GPU in a node group, none for Karpenter."""
    if known.fraction is None:
        return str(known.gpus)
    share = f"a fractional {known.gpu_model}, {known.fraction} of one GPU on the {known.driver_kind.upper()} driver"
    if pool.kind == "karpenter-nodepool":
        return f"0 for Karpenter, which counts EC2's GPU Count 0: {share}"
    return f"1: {share}"


def _capacity(matrix: Matrix, reaches: list[Reach]) -> str:
    parts = []
    for reach in reaches:
        sizes = [f"{t} ({_gpus_of(known, reach.pool)})" for t in reach.instance_types
                 if (known := matrix.instance_type(t))]
        parts.append(f"{reach.pool.name!r}: {', '.join(sizes) or 'no GPU instance type'}")
    return "; ".join(parts)


def _judge_gpu_workload(matrix: Matrix, workload: Workload, pools: list[Pool], report: ReportViolation, *,
                        cluster_elsewhere: bool = False) -> None:
    where = f"{workload.kind} {workload.name!r} {workload.gpu_request()}"
    chosen = [reach for pool in pools if (reach := selected(workload, pool)) is not None]
    if not chosen and cluster_elsewhere:
        report(f"{CAVEAT_MARK}{where}, but this stack holds neither its cluster nor any GPU pool (the Kubernetes "
               "provider points at a cluster built elsewhere: the ambient kubeconfig, or another stack's), so the "
               "GPU pools it would run on are not in this stack; not judged. The pack judges it where the pools "
               "are in the stack: deploy the workload with the cluster's node groups or NodePools, or GPU pods stay "
               "Pending if no GPU pool there tolerates and fits them.", workload.urn)
        return
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
    resources = list(args.resources)
    inv = build_inventory(resources)
    # Every pool gpu-nodes-tainted calls a GPU pool: instance types, families (karpenter.k8s.aws and EKS Auto Mode
    # eks.amazonaws.com labels), GPU AMI types, GPU label requirements, the label contract.
    pools = [p for p in inv.pools if gpu_reason(p, matrix.is_gpu_instance)]
    if not pools and other_stacks(resources):
        return  # the GPU pools may live in the stack this one references: the -pending twin says so
    cluster_elsewhere = not pools and not any(r.resource_type in EKS_CLUSTER_TYPES for r in resources)
    for workload in inv.workloads:
        if workload.gpus > 0:
            _judge_gpu_workload(matrix, workload, pools, report, cluster_elsewhere=cluster_elsewhere)
            continue
        reaches = [r for r in inv.reach(workload, pools) if _tolerated_gpu_taint(workload, r)]
        if workload.kind != "DaemonSet" and reaches:
            names = ", ".join(repr(r.pool.name) for r in reaches)
            taints = ", ".join(sorted({str(t) for r in reaches for t in r.pool.taints if is_gpu_taint(t)}))
            unresolved = workload.unresolved_claims
            if unresolved:  # cannot see, cannot block: the DRA claims it names may request GPUs
                report(f"{CAVEAT_MARK}{workload.kind} {workload.name!r} tolerates the GPU taint {taints} and can "
                       f"land on GPU pool(s) {names}; it requests no nvidia.com/gpu, and the DRA claim(s) "
                       f"{', '.join(map(repr, unresolved))} it names are not in this stack (or their names are not "
                       "known), so whether they request a GPU is not judged. The pack judges it where the "
                       "ResourceClaim or ResourceClaimTemplate is in the stack.", workload.urn)
                continue
            report(f"{workload.kind} {workload.name!r} tolerates the GPU taint {taints} and can land on GPU "
                   f"pool(s) {names} but requests no nvidia.com/gpu and claims no NVIDIA GPU device class through DRA; "
                   "remove the toleration (or request a GPU).", workload.urn)
        elif workload.unresolved_claims:  # a PASS never hides it: whether these claims are GPUs is not known
            report(f"{CAVEAT_MARK}{workload.kind} {workload.name!r} names DRA claim(s) "
                   f"{', '.join(map(repr, workload.unresolved_claims))} that are not in this stack (or whose names are "
                   "not known): whether it claims a GPU, and so whether it must tolerate the GPU taint and reach a GPU "
                   "pool, is not judged. The pack judges it where the ResourceClaim or ResourceClaimTemplate is in "
                   "the stack.", workload.urn)


stack_policy_with_caveats(
    name=NAME,
    description="A container that requests GPUs (nvidia.com/gpu, or a DRA claim of an NVIDIA GPU device class) "
                "tolerates the GPU taint and can reach a GPU pool with that many GPUs; a pod that tolerates the GPU "
                "taint requests a GPU.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
    caveats_description="Caveats of gpu-workload-schedulable: a GPU workload in a stack that holds neither its "
                        "cluster nor any GPU pool, whose pools live in another stack.",
    elsewhere=Elsewhere("the GPU pools its GPU workloads need", _no_gpu_pool),
)
