"""Whether a scaled GPU workload can get the nodes its scaling asks for: the node half of `scaled-workload-wakes`.

Pure functions of plain values, shared by the pack's stack policy (rules/scaled_workload_wakes_nodes.py) and the
config check (components/config/wake_checks.py), so both give the same verdict in the same words.

A replica that KEDA adds is a Pending pod until a node with a free GPU exists. What adds such a node:
- a Karpenter NodePool: Karpenter launches a node for a Pending pod its NodePool can hold, from zero nodes
  (https://karpenter.sh/docs/concepts/nodepools/ ; kubernetes-sigs/karpenter provisioner);
- a node group that a cluster-autoscaler in the same stack manages. cluster-autoscaler (kubernetes/autoscaler @
  cluster-autoscaler-1.35.2, commit 2d42588803c71fe9b35dcd9e3669ac6bb550ca22) builds the node of a group at zero
  from its Auto Scaling group's `k8s.io/cluster-autoscaler/node-template/*` tags
  (cluster-autoscaler/cloudprovider/aws/aws_manager.go:299-304), and for an EKS managed node group also reads the
  group's labels and taints through `eks:DescribeNodegroup` (:307-324; the README's IAM policy lists that action,
  cloudprovider/aws/README.md:36-56, :110). EKS tags a managed group's Auto Scaling group for its auto-discovery
  (https://docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html).
Nothing else does: an EKS managed node group keeps `desiredSize` nodes ("the current number of nodes that the
managed node group should maintain"; the node count changes when that parameter does:
https://docs.aws.amazon.com/eks/latest/APIReference/API_NodegroupScalingConfig.html), and a self-managed Auto
Scaling group keeps `desiredCapacity`, whatever pods are Pending, unless an autoscaler changes them. The
gpu-platform stack installs no cluster-autoscaler: its node groups are fixed-size pools whose `desiredSize` the
stack applies (components/gpu_node_group.py, docs/day-two.md), and its Karpenter pools scale from zero.

So, for a workload whose every reachable GPU pool is a fixed-size node group (certain, from the stack):
- scaling it to zero either never wakes it (every group at desiredSize 0: no node ever comes) or saves nothing
  (the groups' nodes run, and bill, with no replica on them);
- replicas above what the groups' desiredSize nodes hold (floor(GPUs per node / GPUs per replica) each, on the
  largest instance type the group may launch) stay Pending.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

KARPENTER = "karpenter-nodepool"
CLUSTER_AUTOSCALER_CHART = "cluster-autoscaler"
# The image cluster-autoscaler publishes (registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.2; its chart's default
# image.repository, kubernetes/autoscaler charts/cluster-autoscaler/values.yaml).
CLUSTER_AUTOSCALER_IMAGE = "/cluster-autoscaler:"


@dataclass(frozen=True)
class NodeSource:
    """One GPU pool a scaled workload can land on, as far as adding nodes goes."""

    name: str
    kind: str  # "managed-node-group" | "self-managed" | "karpenter-nodepool"
    desired: int | None  # nodes a fixed-size group keeps (desiredSize / desiredCapacity); None: not known
    replicas_per_node: int | None  # replicas of the workload one node holds (largest type); None: not known
    autoscaled: bool  # something adds nodes for Pending pods: Karpenter, or a cluster-autoscaler in the stack

    def describe(self) -> str:
        size = "desiredSize not known" if self.desired is None else f"desiredSize {self.desired}"
        kind = "managed node group" if self.kind == "managed-node-group" else "self-managed group"
        return f"{self.name!r} ({kind}, {size})"


NODE_FIX = ("let it reach a pool that adds nodes: a Karpenter NodePool (Karpenter launches a node for a Pending "
            "replica, from zero), or a node group managed by a cluster-autoscaler that this stack installs "
            "(with eks:DescribeNodegroup, so it scales a managed group from zero); or keep minReplicaCount at 1 or "
            "more and maxReplicaCount within what the groups' desiredSize nodes hold")


def held(sources: Sequence[NodeSource]) -> int | None:
    """Replicas the fixed groups' desiredSize nodes hold together; None when a group's size or fit is not known."""
    total = 0
    for source in sources:
        if source.desired is None or source.replicas_per_node is None:
            return None
        total += source.desired * source.replicas_per_node
    return total


def node_problem(target: str, sources: Sequence[NodeSource], *, scales_to_zero: bool,
                 max_replicas: int | None) -> str | None:
    """Why `target` cannot get the nodes its scaling asks for (the clause after the subject); None when it can,
    or when it reaches no pool (gpu-workload-schedulable judges that) or any pool that adds nodes."""
    if not sources or any(s.autoscaled for s in sources):
        return None
    groups = ", ".join(s.describe() for s in sources)
    where = (f"every GPU pool it can land on is a node group of fixed size that nothing in this stack scales "
             f"({groups}; no Karpenter NodePool among them, no cluster-autoscaler in the stack)")
    reasons = []
    if scales_to_zero:
        running = sum(s.desired or 0 for s in sources)
        if running:
            reasons.append(f"scaling it to zero frees no node: the {running} node(s) of those groups run, and bill, "
                           "with no replica on them")
        elif all(s.desired == 0 for s in sources):
            reasons.append("at desiredSize 0 no node ever comes, so once at zero its replicas stay Pending forever")
    capacity = held(sources)
    if max_replicas is not None and capacity is not None and max_replicas > capacity:
        reasons.append(f"its desiredSize nodes hold {capacity} replica(s), so the replicas above {capacity} of its "
                       f"maxReplicaCount {max_replicas} stay Pending")
    if not reasons:
        return None
    return f"{target}: {where}; " + "; ".join(reasons)


def wake_nodes_message(subject: str, target: str, sources: Sequence[NodeSource], *, scales_to_zero: bool,
                       max_replicas: int | None, fix: str = NODE_FIX) -> str | None:
    """The one-line verdict (subject, why, fix), or None when the workload gets its nodes."""
    problem = node_problem(target, sources, scales_to_zero=scales_to_zero, max_replicas=max_replicas)
    if problem is None:
        return None
    return f"{subject} scales {problem}. Fix: {fix}."
