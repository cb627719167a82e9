"""scaled-workload-wakes-nodes before any resource exists: a scaled inference service reaches a pool that adds nodes.

The same rule and words as the pack's policy (policies/gpu_guard/wake_nodes.py, rules/scaled_workload_wakes_nodes.py):
a service with autoscaling whose every pool is a node group (`gpuNodeGroups`) and that scales to zero
(`minReplicas: 0`) or above what the groups' `desiredSize` nodes hold (`maxReplicas`) is refused. The stack installs
no cluster-autoscaler, so its node groups keep `desiredSize` nodes (applied on every `pulumi up`,
components/gpu_node_group.py); its Karpenter pools add a node for each Pending replica, from zero.
"""

from __future__ import annotations

from typing import Any

from components.config.issues import Path
from components.config.models import StackConfig
from components.config.problems import Problem
from components.config.serving import InferenceServiceConfig
from policies.gpu_guard.wake_nodes import KARPENTER, NodeSource, held, node_problem


def node_sources(matrix: Any, stack: StackConfig, service: InferenceServiceConfig) -> list[NodeSource]:
    """The service's pools, as far as adding nodes goes."""
    sizes = {g.name: g.desired_size for g in stack.gpu_node_groups}
    out = []
    for pool in stack.gpu_pools():
        if service.node_pools and pool.name not in service.node_pools:
            continue
        counts = [known.logical_gpus // service.gpus_per_replica for t in pool.instance_types
                  if (known := matrix.instance_type(t)) is not None]
        karpenter = pool.kind == "karpenter"
        out.append(NodeSource(pool.name, KARPENTER if karpenter else pool.kind,
                              None if karpenter else sizes.get(pool.name), max(counts) if counts else None,
                              autoscaled=karpenter))
    return out


def wake_node_problems(matrix: Any, stack: StackConfig, service: InferenceServiceConfig, at: Path) -> list[Problem]:
    """The refusal of a scaled service whose pools never add the nodes its scaling asks for (none when they do)."""
    if service.autoscaling is None:
        return []
    sources = node_sources(matrix, stack, service)
    capacity = held(sources)
    within = f" and maxReplicas at most {capacity}" if capacity else ""
    karpenter = [p.name for p in stack.karpenter.pools] if stack.karpenter is not None else []
    add = (f"add a Karpenter pool to nodePools ({', '.join(karpenter)}): Karpenter adds a node for each Pending "
           "replica, from zero" if karpenter else
           "add a karpenter.pools entry and name it in nodePools: Karpenter adds a node for each Pending replica, "
           "from zero")
    fix = (f"{add}; or keep minReplicas at 1 or more{within}. The platform installs no cluster-autoscaler "
           "(docs/day-two.md, \"Node group sizes\"), so a node group keeps its desiredSize nodes")
    problem = node_problem(f"Deployment '{service.name}'", sources, scales_to_zero=service.min_replicas == 0,
                           max_replicas=service.max_replicas)
    if problem is None:
        return []
    return [Problem((*at, "nodePools"), list(service.node_pools),
                    f"inference service '{service.name}' (its ScaledObject) scales {problem}", fix=fix)]
