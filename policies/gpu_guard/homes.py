"""Where cluster controllers can run besides node groups: EKS Auto Mode's built-in pools and Fargate profiles.

Not a policy. `system-node-group-present` asks whether every controller (CoreDNS, the GPU Operator, NFD,
Karpenter, KEDA, the load-balancer controller) has a home that is neither a GPU node nor gone when GPU
pools scale to zero. Besides an untainted, non-GPU node group, a cluster may give them:

- EKS Auto Mode's built-in NodePools (`computeConfig.nodePools` of an `aws:eks/cluster:Cluster` with
  `computeConfig.enabled`): `system`, tainted `CriticalAddonsOnly:NoSchedule` (CoreDNS and many EKS add-ons
  tolerate it), and `general-purpose`, untainted; both on-demand C, M and R families of generation 5 or newer.
  They are AWS's NodePools: no resource of the stack declares them, so they are modelled here.
  Source: https://docs.aws.amazon.com/eks/latest/userguide/set-builtin-node-pools.html
  and https://docs.aws.amazon.com/eks/latest/userguide/automode.html
- A Fargate profile (`aws:eks/fargateProfile:FargateProfile`): a pod runs on Fargate when its namespace
  and labels match one of the profile's selectors (every label of the selector, `*` and `?` wildcards).
  Karpenter documents Fargate as a home for its controller (it must not run on nodes it manages).
  Source: https://docs.aws.amazon.com/eks/latest/userguide/fargate-profile.html (selectors, wildcards)
  and https://karpenter.sh/docs/getting-started/migrating-from-cas/ (Karpenter on a Fargate profile)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from .node_labels import nodepool_domain
from .props import Deferred, as_list, as_str_map, deferred_get, get
from .views import Pool, Taint

FARGATE_PROFILE = "aws:eks/fargateProfile:FargateProfile"
EKS_CLUSTER = "aws:eks/cluster:Cluster"

# The built-in pools: (name, taints, requirements). Source: set-builtin-node-pools.html (above).
_BUILTIN_REQUIREMENTS = [
    {"key": "eks.amazonaws.com/instance-category", "operator": "In", "values": ["c", "m", "r"]},
    {"key": "eks.amazonaws.com/instance-generation", "operator": "Gt", "values": ["4"]},
    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
]
BUILTIN_POOLS: Mapping[str, tuple[tuple[Taint, ...], list[dict[str, Any]]]] = {
    "system": ((Taint("CriticalAddonsOnly", "", "NoSchedule"),),
               [*_BUILTIN_REQUIREMENTS, {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]}]),
    "general-purpose": ((), [*_BUILTIN_REQUIREMENTS, {"key": "kubernetes.io/arch", "operator": "In",
                                                      "values": ["amd64"]}]),
}
# pulumi-eks's `Cluster` is a remote component: the engine analyzes the `aws:eks/cluster:Cluster` it registers as
# its child (tools/engine/view.py), so reading that resource covers it too.


def auto_mode_pools(resources: Iterable[Any]) -> list[Pool]:
    """The built-in NodePools of every EKS Auto Mode cluster of the stack."""
    pools: list[Pool] = []
    for r in resources:
        if r.resource_type != EKS_CLUSTER or get(r.props, "computeConfig", "enabled") is not True:
            continue
        names = [str(n) for n in as_list(get(r.props, "computeConfig", "nodePools"))]
        for name in names:
            if name not in BUILTIN_POOLS:
                continue
            taints, requirements = BUILTIN_POOLS[name]
            domain, _ = nodepool_domain({}, requirements, name, auto_mode=True)
            pools.append(Pool(urn=r.urn, name=name, kind="auto-mode-builtin", labels={}, label_domain=domain,
                              taints=taints, instance_types=(), min_size=0, auto_mode=True))
    return pools


def auto_mode_cluster(resources: Iterable[Any]) -> bool:
    """Does the stack hold an EKS Auto Mode cluster (which runs Karpenter, the NVIDIA plugin and interruption
    handling itself)?"""
    return any(r.resource_type == EKS_CLUSTER and get(r.props, "computeConfig", "enabled") is True for r in resources)


@dataclass(frozen=True)
class FargateProfile:
    urn: str
    name: str
    selectors: tuple[tuple[str, Mapping[str, str]], ...]  # (namespace pattern, label patterns)

    def runs(self, namespace: str | None, labels: Mapping[str, str]) -> bool:
        """Would a pod in `namespace` with `labels` run on this profile?"""
        if namespace is None:
            return False
        return any(fnmatchcase(namespace, ns) and all(k in labels and fnmatchcase(labels[k], v)
                                                      for k, v in wanted.items())
                   for ns, wanted in self.selectors)

    def describe(self) -> str:
        return f"Fargate profile '{self.name}' (" + "; ".join(
            f"namespace {ns}" + (f" labels {dict(wanted)}" if wanted else "") for ns, wanted in self.selectors) + ")"


def fargate_profiles(resources: Iterable[Any]) -> list[FargateProfile]:
    out = []
    for r in resources:
        if r.resource_type != FARGATE_PROFILE:
            continue
        selectors = tuple((str(get(s, "namespace", default="")), as_str_map(get(s, "labels")))
                          for s in as_list(get(r.props, "selectors")))
        name = deferred_get(r.props, "fargateProfileName", default=r.name)
        out.append(FargateProfile(r.urn, r.name if isinstance(name, Deferred) else str(name), selectors))
    return out
