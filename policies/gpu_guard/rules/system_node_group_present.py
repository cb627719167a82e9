"""system-node-group-present: the cluster controllers have a home that is neither a GPU node nor gone at zero.

GPU nodes carry the GPU taint and may scale to zero, so CoreDNS, the GPU Operator, the NFD master,
Karpenter, KEDA and the load-balancer controller need nodes of their own. Homes, as Kubernetes, Karpenter
and EKS would place them:

- a managed node group or self-managed ASG that is untainted, not GPU, and keeps at least `minNodes` nodes
  (`minSize`) in at least `minZones` zones (the "system node groups");
- for every controller but Karpenter, also an untainted (or tolerated), non-GPU Karpenter NodePool, and
  EKS Auto Mode's built-in `system` (tainted `CriticalAddonsOnly`) and `general-purpose` pools (`homes.py`);
- a Fargate profile whose selectors match the controller's namespace and pod labels.

Karpenter itself must never run on nodes it manages: its homes are the system node groups and Fargate
profiles (its chart's required affinity `karpenter.sh/nodepool DoesNotExist` says the same). Each
controller's placement (Helm values merged over the chart defaults, matched as the scheduler matches them)
must reach one of its homes and none of the GPU pools. With no home of any kind, CoreDNS has none either.

`minNodes` / `minZones` judge the system node groups when there are any; a stack whose controllers live on
NodePools, Auto Mode pools or Fargate has no node count to judge. Zones are counted as the distinct
`subnetIds` of the node groups (`vpcZoneIdentifiers` for an ASG): each subnet lies in exactly one
Availability Zone, and a stack gives each AZ one node subnet. The zone count is only read when
`minZones` > 1 (subnet ids are often unknown during preview).

First preview: NodePools and Helm releases reach this policy with no properties (`props.properties_pending`).
A home that may be one of them is not known yet: the verdict waits (its `-pending` twin says so), it never
reports "none".

Sources:
- Run controllers on a small managed node group, never on Karpenter-managed nodes (EKS Best Practices):
  https://docs.aws.amazon.com/eks/latest/best-practices/karpenter.html
- Karpenter on a Fargate profile: https://karpenter.sh/docs/getting-started/migrating-from-cas/
- Fargate profile selectors: https://docs.aws.amazon.com/eks/latest/userguide/fargate-profile.html
- EKS Auto Mode built-in pools: https://docs.aws.amazon.com/eks/latest/userguide/set-builtin-node-pools.html
- Karpenter's pod labels: aws/karpenter-provider-aws v1.14.1 charts/karpenter/templates/_helpers.tpl
  (`karpenter.selectorLabels`: app.kubernetes.io/name, app.kubernetes.io/instance = the release name) and
  deployment.yaml (`podLabels`)
- Subnets are in one Availability Zone: https://docs.aws.amazon.com/vpc/latest/userguide/configure-subnets.html
- Helm value merging (maps merge, lists replace): https://helm.sh/docs/chart_template_guide/values_files/
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import PolicyConfigSchema

from ..base import Elsewhere, EnforcementLevel, ReportViolation, other_stacks, stack_policy
from ..homes import FargateProfile, auto_mode_pools, fargate_profiles
from ..inventory import (
    EKS_CLUSTER_TYPES,
    NODE_POOL,
    SUBNET,
    HelmRelease,
    Inventory,
    Pool,
    Workload,
    as_list,
    as_str_map,
    build_inventory,
    deferred_get,
    get,
    reachable,
)
from ..props import Deferred
from .gpu_nodes_tainted import gpu_reason

DEFAULT_MIN_NODES = 1
DEFAULT_MIN_ZONES = 1
_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True)
class _Placement:
    """Where one controller Deployment may go: chart, component, values path and the chart's defaults."""

    chart: str
    component: str
    paths: tuple[tuple[str, ...], ...]  # values paths, first non-empty wins (KEDA: component, then global)
    default_node_selector: Mapping[str, str]
    default_affinity: Mapping[str, Any]


# Chart defaults that decide placement. Karpenter's required affinity keeps it off Karpenter nodes.
# Source: https://github.com/aws/karpenter-provider-aws/blob/release-v1.14.1/charts/karpenter/values.yaml
_KARPENTER_AFFINITY: Mapping[str, Any] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [{"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"}]}]}}}
_LINUX = {"kubernetes.io/os": "linux"}
# Source: https://github.com/NVIDIA/gpu-operator/blob/v26.7.0/deployments/gpu-operator/values.yaml
#         (operator.nodeSelector; node-feature-discovery.master / gc take the NFD subchart defaults)
# Source: https://github.com/kedacore/charts/blob/v2.20.2/keda/values.yaml (operator / metricsServer / webhooks)
# Source: https://github.com/kubernetes-sigs/aws-load-balancer-controller/blob/v3.5.0/helm/aws-load-balancer-controller/values.yaml
PLACEMENTS = (
    _Placement("gpu-operator", "GPU Operator", (("operator",),), _LINUX, {}),
    _Placement("gpu-operator", "NFD master", (("node-feature-discovery", "master"),), {}, {}),
    _Placement("gpu-operator", "NFD garbage collector", (("node-feature-discovery", "gc"),), {}, {}),
    _Placement("karpenter", "Karpenter controller", ((),), _LINUX, _KARPENTER_AFFINITY),
    _Placement("keda", "KEDA operator", (("operator",), ()), {}, {}),
    _Placement("keda", "KEDA metrics server", (("metricsServer",), ()), {}, {}),
    _Placement("keda", "KEDA admission webhooks", (("webhooks",), ()), {}, {}),
    _Placement("aws-load-balancer-controller", "AWS Load Balancer Controller", ((),), {}, {}),
)

CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "minNodes": {"type": "integer", "minimum": 1, "default": DEFAULT_MIN_NODES,
                     "description": "Nodes the system node groups keep at minimum (sum of minSize)."},
        "minZones": {"type": "integer", "minimum": 1, "default": DEFAULT_MIN_ZONES,
                     "description": "Availability Zones the system node groups span (distinct subnetIds)."},
    },
)


def _merge(default: Any, value: Any) -> Any:
    """Helm's merge of user values over chart defaults: maps merge key by key, anything else replaces."""
    if isinstance(default, Mapping) and isinstance(value, Mapping):
        out = {k: default[k] for k in default}
        for key in value:
            out[key] = _merge(default.get(key), value[key]) if key in default else value[key]
        return {k: v for k, v in out.items() if v is not None}
    return default if value is None else value


def _controller(release: HelmRelease, placement: _Placement) -> Workload:
    def pick(field: str) -> Any:
        for path in placement.paths:
            value = get(release.values, *path, field)
            if value:
                return value
        return None

    selector = _merge(dict(placement.default_node_selector), pick("nodeSelector"))
    affinity = _merge(dict(placement.default_affinity), pick("affinity"))
    terms = get(affinity, "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    labels: dict[str, str] = {}
    if placement.chart == "karpenter":
        labels = {"app.kubernetes.io/name": "karpenter", "app.kubernetes.io/instance": release.name,
                  **as_str_map(pick("podLabels"))}
    return Workload(
        urn=release.urn, name=f"{placement.component} (release '{release.name}')", kind="Deployment", labels=labels,
        node_selector=as_str_map(selector), required_terms=tuple(as_list(terms)) if terms is not None else None,
        tolerations=tuple(as_list(pick("tolerations"))), containers=(),
    )


def _exclusion(pool: Pool) -> str | None:
    """Why `pool` is not a system node group (None when it is one)."""
    reason = gpu_reason(pool)
    if reason:
        return f"GPU pool ({reason})"
    if pool.kind in _KARPENTER_KINDS:
        return "Karpenter NodePool (controllers must not run on nodes Karpenter manages)"
    blocking = [str(t) for t in pool.taints if t.effect in _BLOCKING_EFFECTS]
    if blocking:
        return f"tainted {blocking}"
    if (pool.min_size or 0) < 1:
        return f"minSize {pool.min_size}"
    return None


_KARPENTER_KINDS = ("karpenter-nodepool", "auto-mode-builtin")


def _nodepool_home(pool: Pool) -> bool:
    """A Karpenter NodePool (or Auto Mode built-in pool) where controllers other than Karpenter may run: not GPU.
    Whether its taints let a controller on is the scheduler's question (`reachable`)."""
    return pool.kind in _KARPENTER_KINDS and not gpu_reason(pool)


def _release_namespace(release: HelmRelease, resource: Any) -> str | None:
    value = deferred_get(getattr(resource, "props", {}), "namespace")
    if isinstance(value, Deferred):
        return None
    return release.namespace or "default"


def _homes_of(controller: Workload, placement: _Placement, system: list[Pool], nodepools: list[Pool], *,
              profiles: list[FargateProfile], namespace: str | None) -> list[str]:
    """The homes this controller reaches: system node groups, NodePools (not for Karpenter), Fargate profiles."""
    found = [f"node group '{p.name}'" for p in system if reachable(controller, p)]
    if placement.chart != "karpenter":
        found += [f"NodePool '{p.name}'" for p in nodepools if reachable(controller, p)]
    found += [f.describe() for f in profiles if f.runs(namespace, controller.labels)]
    return found


def _zones(pool: Pool) -> tuple[str, set[str]]:
    """What the pool's placement is counted in ("zone(s)" or "subnet(s)"), and the distinct values."""
    key = "subnetIds" if pool.kind == "managed-node-group" else "vpcZoneIdentifiers"
    subnets = [r for r in pool.depends_on(key) if r.resource_type == SUBNET]
    if subnets:
        # Linked through the property's dependencies (URNs), not ids: the subnets' ids are unknown until they
        # exist, their zones are inputs the program knows at preview. The zone ID first: the program places
        # subnets by zone ID, and the zone name is then an output, unknown in a first preview.
        return "zone(s)", {str(get(s.props, "availabilityZoneId", default="")
                               or get(s.props, "availabilityZone", default="") or s.urn) for s in subnets}
    zones = {str(s) for s in as_list(get(pool.props, key))}
    if not zones and pool.kind == "self-managed":
        return "zone(s)", {str(z) for z in as_list(get(pool.props, "availabilityZones"))}
    return "subnet(s)", zones


def _config_int(config: Mapping[str, Any], key: str, default: int) -> int:
    value = config.get(key, default) if isinstance(config, Mapping) else default
    return int(value)  # the engine hands numbers over as floats (protobuf Struct)


def _terms(terms: tuple[Any, ...] | None) -> str:
    if not terms:
        return "none"
    return " OR ".join(
        " AND ".join(f"{get(e, 'key')} {get(e, 'operator')} {[str(v) for v in as_list(get(e, 'values'))]}"
                     for e in as_list(get(t, "matchExpressions")))
        for t in terms
    )


def _describe(pools: list[Pool]) -> str:
    return "; ".join(f"'{p.name}' labels {p.labels or {}}" for p in pools)


def _no_home(resources: list[Any]) -> bool:
    """The stack holds pools or a cluster but no home for its controllers (the condition of "Node groups: none")."""
    inventory = build_inventory(resources)
    if not inventory.pools and not any(r.resource_type in EKS_CLUSTER_TYPES for r in resources):
        return False
    pools = [*inventory.pools, *auto_mode_pools(resources)]
    system = [p for p in pools if not _exclusion(p)]
    homes = [p for p in pools if _nodepool_home(p)
             and (not any(t.effect in _BLOCKING_EFFECTS for t in p.taints) or p.kind == "auto-mode-builtin")]
    return not system and not homes and not fargate_profiles(resources)


def validate(args: Any, report_violation: ReportViolation) -> None:
    resources = list(args.resources)
    inventory: Inventory = build_inventory(resources)
    clusters = [r for r in resources if r.resource_type in EKS_CLUSTER_TYPES]
    if not inventory.pools and not clusters:
        return
    config = args.get_config()
    min_nodes = _config_int(config, "minNodes", DEFAULT_MIN_NODES)
    min_zones = _config_int(config, "minZones", DEFAULT_MIN_ZONES)
    anchor = clusters[0].urn if clusters else inventory.pools[0].urn
    pools = [*inventory.pools, *auto_mode_pools(resources)]
    excluded = [(p, why) for p in pools if (why := _exclusion(p))]
    system = [p for p in pools if not any(p is q for q, _ in excluded)]
    nodepools = [p for p in pools if _nodepool_home(p)]
    profiles = fargate_profiles(resources)
    pending_pools = inventory.pending_of((NODE_POOL,))
    untainted_nodepools = [p for p in nodepools if not any(t.effect in _BLOCKING_EFFECTS for t in p.taints)
                           or p.kind == "auto-mode-builtin"]
    if not system and not untainted_nodepools and not profiles:
        if pending_pools or other_stacks(resources):
            # A NodePool not known yet, or a referenced stack's node groups, may be the home: the -pending twin
            # says what this waits on.
            return
        found = "; ".join(f"'{p.name}': {why}" for p, why in excluded) or "none"
        report_violation(
            "No untainted, non-GPU node group with minSize >= 1 exists (nor an untainted non-GPU NodePool, an EKS "
            "Auto Mode built-in pool or a Fargate profile), so CoreDNS and the GPU Operator, NFD, Karpenter, KEDA and "
            "load-balancer controllers sit Pending behind the GPU taint (or vanish when GPU nodes scale to zero). "
            f"Node groups: {found}. Fix: add a system managed node group (e.g. m7i.large, no taints, minSize "
            f"{max(min_nodes, 2)}, subnets in {max(min_zones, 2)} zones).",
            anchor,
        )
        return
    if system:
        _judge_size(system, min_nodes, min_zones, report_violation)
    gpu_pools = [p for p in pools if gpu_reason(p)]
    by_urn = {r.urn: r for r in resources}
    for release in inventory.releases:
        for placement in PLACEMENTS:
            if placement.chart != release.chart:
                continue
            controller = _controller(release, placement)
            namespace = _release_namespace(release, by_urn.get(release.urn))
            if not _homes_of(controller, placement, system, nodepools, profiles=profiles, namespace=namespace):
                if pending_pools and placement.chart != "karpenter":
                    continue  # a NodePool not known yet may be its home
                extra, where, others, fix = _homeless(placement, system, nodepools, profiles, namespace)
                report_violation(
                    f"{controller.name} cannot be scheduled on any system node group{extra}: nodeSelector "
                    f"{controller.node_selector or {}}, required node affinity {_terms(controller.required_terms)}"
                    f"{where}{others}. Fix: {fix}.",
                    release.urn,
                )
            on_gpu = [p.name for p in gpu_pools if reachable(controller, p)]
            if on_gpu:
                report_violation(
                    f"{controller.name} tolerates its way onto GPU pools {on_gpu}; it would hold GPU nodes up (or "
                    "vanish with them). Fix: drop the nvidia.com/gpu toleration or pin it with a nodeSelector on the "
                    f"system node group's labels ({_describe(system)}).",
                    release.urn,
                )


def _judge_size(system: list[Pool], min_nodes: int, min_zones: int, report_violation: ReportViolation) -> None:
    total = sum(p.min_size or 0 for p in system)
    if total < min_nodes:
        report_violation(
            f"The system node groups ({', '.join(p.name for p in system)}) keep {total} node(s) at minimum; this stack "
            f"requires at least {min_nodes} (policy config minNodes). Fix: raise scalingConfig.minSize to {min_nodes}.",
            system[0].urn,
        )
    if min_zones > 1:
        placements = [_zones(p) for p in system]
        zones = set().union(*(values for _, values in placements))
        unit = "zone(s)" if all(u == "zone(s)" for u, _ in placements) else "subnet(s)"
        if len(zones) < min_zones:
            report_violation(
                f"The system node groups ({', '.join(p.name for p in system)}) span {len(zones)} {unit} "
                f"{sorted(zones)}, i.e. at most {len(zones)} Availability Zone(s); this stack requires {min_zones} "
                f"(policy config minZones). Fix: give the system node group subnets in {min_zones} zones.",
                system[0].urn,
            )


def _homeless(placement: _Placement, system: list[Pool], nodepools: list[Pool], profiles: list[FargateProfile],
              namespace: str | None) -> tuple[str, str, str, str]:
    """The parts of the "cannot be scheduled" message: (other homes?, system groups, other homes, fix)."""
    others = []
    if placement.chart != "karpenter" and nodepools:
        others.append("NodePools: " + "; ".join(
            f"'{p.name}' taints {[str(t) for t in p.taints] or 'none'}" for p in nodepools))
    if profiles:
        others.append(f"namespace {namespace or 'not known'} matches no " + "; ".join(f.describe() for f in profiles))
    where = f"; system node groups: {_describe(system)}" if system else "; no system node group"
    fix = ("point its nodeSelector at a label the system node group carries, or leave it unset" if system else
           "add a system managed node group" + ("" if placement.chart == "karpenter" else " or an untainted NodePool")
           + ", or a Fargate profile that selects its namespace"
           + (", or tolerate a NodePool's taint" if placement.chart != "karpenter" and any(p.taints for p in nodepools)
              else ""))
    return (" or other home" if others else ""), where, "".join("; " + o for o in others), fix


POLICY = stack_policy(
    "system-node-group-present",
    "The cluster controllers have a home off the GPU nodes: an untainted, non-GPU node group with minSize >= minNodes "
    "across minZones zones, or (except Karpenter) an untainted non-GPU NodePool or EKS Auto Mode built-in pool, or a "
    "Fargate profile selecting them; the operator, NFD master, Karpenter, KEDA and load-balancer controllers reach "
    "one and no GPU pool.",
    validate,
    enforcement=EnforcementLevel.MANDATORY,
    config_schema=CONFIG_SCHEMA,
    elsewhere=Elsewhere("the system node group its controllers need", _no_home),
)
