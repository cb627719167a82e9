"""scaled-workload-wakes-nodes: a KEDA-scaled GPU workload reaches a pool that adds the nodes its scaling asks for.

The node half of `scaled-workload-wakes` (whose resource policy judges the ScaledObject's triggers alone): a
ScaledObject that scales its target to zero, or above what fixed node groups hold, needs a GPU pool that adds a
node for a Pending replica. Judged over the whole stack, so any user's objects are judged: the ScaledObject's
`scaleTargetRef` names a workload of the stack (kind and name), the workload reaches GPU pools through its
tolerations, nodeSelector and required affinity (`scheduling.py`, as gpu-workload-schedulable matches them), and
each pool is judged for what adds its nodes (`policies/gpu_guard/wake_nodes.py`, the rule and its sources):

- a Karpenter NodePool adds nodes, from zero;
- a node group (managed or self-managed) adds nodes only when a cluster-autoscaler runs in this stack: a Helm
  release of the `cluster-autoscaler` chart, or a workload running its image (registry.k8s.io/autoscaling/
  cluster-autoscaler). Source: https://github.com/kubernetes/autoscaler/blob/cluster-autoscaler-1.35.2/cluster-autoscaler/cloudprovider/aws/README.md
  (auto-discovery of tagged groups; `eks:DescribeNodegroup` for a managed group's labels and taints at zero).

Mandatory: with only fixed-size groups, a scale-to-zero workload never wakes (desiredSize 0) or never stops paying
(desiredSize >= 1), and replicas above what the groups' desiredSize nodes hold stay Pending: both certain from the
stack. A target that is not in this stack, or that reaches no GPU pool (gpu-workload-schedulable refuses that), is
not judged here. A group whose size is not known yet is not counted toward "what the groups hold".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs

from ..base import stack_policy
from ..inventory import INVENTORY_KUBERNETES_TYPES, Pool, Reach, Workload, build_inventory
from ..matrix import Matrix, load_matrix
from ..props import get, properties_pending, to_int
from ..wake_nodes import (
    CLUSTER_AUTOSCALER_CHART,
    CLUSTER_AUTOSCALER_IMAGE,
    KARPENTER,
    NODE_FIX,
    NodeSource,
    node_problem,
)
from ..wakes import scales_to_zero
from .gpu_nodes_tainted import gpu_reason

NAME = "scaled-workload-wakes-nodes"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"


def cluster_autoscaler_runs(inv: Any) -> bool:
    """A cluster-autoscaler in this stack: its Helm chart, or a workload running its image."""
    if any(r.chart == CLUSTER_AUTOSCALER_CHART for r in inv.releases):
        return True
    return any(CLUSTER_AUTOSCALER_IMAGE in c.image for w in inv.workloads for c in w.containers)


def _replicas_per_node(matrix: Matrix, reach: Reach, gpus: int) -> int | None:
    counts = [known.logical_gpus // gpus for t in reach.instance_types if (known := matrix.instance_type(t))]
    return max(counts) if counts else None


def node_sources(matrix: Matrix, reaches: Iterable[Reach], gpus: int, autoscaler: bool) -> list[NodeSource]:
    out = []
    for reach in reaches:
        pool: Pool = reach.pool
        karpenter = pool.kind == KARPENTER
        out.append(NodeSource(pool.name, pool.kind, None if karpenter else pool.desired_size,
                              _replicas_per_node(matrix, reach, gpus), karpenter or autoscaler))
    return out


def _targets(workloads: Iterable[Workload], kind: str, name: str) -> list[Workload]:
    return [w for w in workloads if w.kind == kind and w.name == name]


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    scaled = [r for r in args.resources
              if r.resource_type == SCALED_OBJECT and not properties_pending(r.resource_type, r.props)]
    if not scaled:
        return
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    pools = [p for p in inv.pools if gpu_reason(p, matrix.is_gpu_instance)]
    autoscaler = cluster_autoscaler_runs(inv)
    for r in scaled:
        spec = get(r.props, "spec", default={}) or {}
        ref = get(spec, "scaleTargetRef", default={}) or {}
        kind, target = str(get(ref, "kind", default="Deployment")), str(get(ref, "name", default=""))
        # KEDA's default maxReplicaCount is 100: https://keda.sh/docs/2.20/reference/scaledobject-spec/
        maximum = to_int(get(spec, "maxReplicaCount", default=100))
        name = get(r.props, "metadata", "name", default=r.name)
        namespace = get(r.props, "metadata", "namespace", default="default")
        for workload in _targets(inv.workloads, kind, target):
            if workload.gpus <= 0:
                continue
            sources = node_sources(matrix, inv.reach(workload, pools), workload.gpus, autoscaler)
            problem = node_problem(f"{kind} '{target}'", sources, scales_to_zero=scales_to_zero(spec),
                                   max_replicas=maximum)
            if problem is not None:
                # The same words as wake_nodes.wake_nodes_message, which the config check uses.
                report(f"ScaledObject '{namespace}/{name}' scales {problem}. Fix: {NODE_FIX}.", r.urn)


stack_policy(
    NAME,
    "A KEDA-scaled GPU workload that scales to zero, or above what fixed-size node groups hold, reaches a GPU pool "
    "that adds nodes for its Pending replicas: a Karpenter NodePool, or a node group managed by a cluster-autoscaler "
    "in the stack.",
    _validate,
    enforcement=EnforcementLevel.MANDATORY,
    reads=(SCALED_OBJECT, *INVENTORY_KUBERNETES_TYPES),
)
