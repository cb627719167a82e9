"""serving-disruption-protected: GPU serving survives voluntary disruption (advisory; prod mandatory).

A GPU serving workload (a Deployment or StatefulSet whose containers request `nvidia.com/gpu`) that can
run more than one replica (`spec.replicas`, or the `maxReplicaCount` of a KEDA ScaledObject / the
`maxReplicas` of an HPA that targets it) must have a PodDisruptionBudget in its namespace that selects
its pods and still holds one back (not `minAvailable: 0`, not `maxUnavailable` of 100 % or of every
replica), and must spread its replicas across zones (a topology spread constraint or a required pod
anti-affinity on `topology.kubernetes.io/zone`). Otherwise a node drain, a Karpenter consolidation or a
node group update can evict every replica at once, and a zone outage takes the whole service.

The pools' side is judged per resource, before it is created: `serving-disruption-protected-resource`.

In a first preview the Kubernetes objects reach this stack policy with no properties
(`props.properties_pending`): a workload, PDB or scaler not known yet makes the policy wait on the
workloads it could concern instead of calling a PDB missing, and `serving-disruption-protected-pending`
says once what it waits on.

Sources:
- PDB semantics (minAvailable / maxUnavailable, selector in the PDB's namespace):
  https://kubernetes.io/docs/concepts/workloads/pods/disruptions/#pod-disruption-budgets
- Topology spread: https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/
- KEDA ScaledObject scaleTargetRef / maxReplicaCount: https://keda.sh/docs/2.20/reference/scaledobject-spec/
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import StackValidationArgs

from ..base import EnforcementLevel, ReportViolation, stack_policy
from ..dra import CLAIM_TYPES, Claims, as_namespace, claimed, read_claim
from ..inventory import GPU_RESOURCE
from ..props import as_list, as_str_map, get, properties_pending, to_int
from .serving_disruption_protected_resource import percent_of

NAME = "serving-disruption-protected"
SERVING_KINDS = ("kubernetes:apps/v1:Deployment", "kubernetes:apps/v1:StatefulSet")
PDB = "kubernetes:policy/v1:PodDisruptionBudget"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
HPA = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"
ZONE_KEY = "topology.kubernetes.io/zone"
DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True)
class _Serving:
    urn: str
    kind: str
    name: str
    namespace: str
    pod_labels: dict[str, str]
    replicas: int
    spreads_across_zones: bool


def _pending(r: Any) -> bool:
    """Not known yet: no properties at all (`props.properties_pending`), or none but the computed outputs
    every created resource has (`id`, ...): a Kubernetes object always has `metadata` once it is known."""
    if properties_pending(r.resource_type, r.props):
        return True
    return r.resource_type.startswith("kubernetes:") and get(r.props, "metadata") is None


def _requests_gpu(pod_spec: Any, claims: Claims | None = None, namespace: str | None = None) -> bool:
    """nvidia.com/gpu, or a DRA claim of an NVIDIA GPU device class (`dra.py`) among `claims`."""
    for container in as_list(get(pod_spec, "containers")):
        for part in ("limits", "requests"):
            if (to_int(get(container, "resources", part, GPU_RESOURCE)) or 0) > 0:
                return True
        if claims is not None and claimed(pod_spec, container, claims, namespace).gpus > 0:
            return True
    return False


def _spreads_across_zones(pod_spec: Any) -> bool:
    if any(get(c, "topologyKey") == ZONE_KEY for c in as_list(get(pod_spec, "topologySpreadConstraints"))):
        return True
    anti = as_list(get(pod_spec, "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"))
    return any(get(term, "topologyKey") == ZONE_KEY for term in anti)


def _namespace(props: Any) -> str:
    return str(get(props, "metadata", "namespace", default=DEFAULT_NAMESPACE) or DEFAULT_NAMESPACE)


def _selector_matches(selector: Any, labels: Mapping[str, str]) -> bool:
    """A LabelSelector (matchLabels and matchExpressions) against pod labels; an empty selector selects all."""
    if not all(labels.get(k) == v for k, v in as_str_map(get(selector, "matchLabels")).items()):
        return False
    for expr in as_list(get(selector, "matchExpressions")):
        key, op = str(get(expr, "key")), str(get(expr, "operator"))
        values = {str(v) for v in as_list(get(expr, "values"))}
        present = key in labels
        if (op == "In" and labels.get(key) not in values) or (op == "NotIn" and labels.get(key) in values) \
                or (op == "Exists" and not present) or (op == "DoesNotExist" and present):
            return False
    return True


def _pdb_holds_one_back(spec: Any, replicas: int) -> str | None:
    """None when the budget protects at least one replica; else why it does not."""
    min_available, max_unavailable = get(spec, "minAvailable"), get(spec, "maxUnavailable")
    if min_available is not None:
        count = percent_of(min_available)
        if (count if count is not None else to_int(min_available)) == 0:
            return f"minAvailable {min_available!s} lets every replica go"
        return None
    if max_unavailable is not None:
        percent = percent_of(max_unavailable)
        if percent is not None and percent >= 100:
            return f"maxUnavailable {max_unavailable!s} lets every replica go"
        count = to_int(max_unavailable)
        if count is not None and count >= replicas:
            return f"maxUnavailable {max_unavailable!s} lets all {replicas} replicas go"
    return None


def _serving_workloads(resources: list[Any], scalers: dict[tuple[str, str, str], int]) -> list[_Serving]:
    out = []
    claims = Claims(claim for r in resources if r.resource_type in CLAIM_TYPES and not _pending(r)
                    and (claim := read_claim(r.resource_type, r.props, r.name)) is not None)
    for r in resources:
        if r.resource_type not in SERVING_KINDS or _pending(r):
            continue
        template = get(r.props, "spec", "template")
        if not _requests_gpu(get(template, "spec"), claims, as_namespace(r.props)):
            continue
        kind = r.resource_type.rsplit(":", 1)[-1]
        name = str(get(r.props, "metadata", "name", default=r.name))
        namespace = _namespace(r.props)
        replicas = max(to_int(get(r.props, "spec", "replicas")) or 1, scalers.get((namespace, kind, name), 0))
        out.append(_Serving(r.urn, kind, name, namespace, as_str_map(get(template, "metadata", "labels")),
                            replicas, _spreads_across_zones(get(template, "spec"))))
    return out


def _validate_stack(args: StackValidationArgs, report: ReportViolation) -> None:
    resources = list(args.resources)
    pending = {r.resource_type for r in resources if _pending(r)}
    if pending & {PDB, SCALED_OBJECT, HPA}:
        return  # a budget or scaler not known yet may be the one that protects (or scales) a workload
    scalers: dict[tuple[str, str, str], int] = {}
    for r in resources:
        if r.resource_type == SCALED_OBJECT:
            target, most = get(r.props, "spec", "scaleTargetRef"), get(r.props, "spec", "maxReplicaCount")
            most_replicas = to_int(most) if most is not None else 100  # KEDA's default maxReplicaCount
        elif r.resource_type == HPA:
            target, most_replicas = get(r.props, "spec", "scaleTargetRef"), to_int(get(r.props, "spec", "maxReplicas"))
        else:
            continue
        key = (_namespace(r.props), str(get(target, "kind", default="Deployment")), str(get(target, "name")))
        scalers[key] = max(scalers.get(key, 0), most_replicas or 0)
    budgets = [(_namespace(r.props), get(r.props, "spec")) for r in resources if r.resource_type == PDB]
    for workload in _serving_workloads(resources, scalers):
        if workload.replicas <= 1:
            continue
        what = (f"GPU serving {workload.kind} '{workload.namespace}/{workload.name}' "
                f"(up to {workload.replicas} replicas)")
        selecting = [spec for ns, spec in budgets
                     if ns == workload.namespace and _selector_matches(get(spec, "selector"), workload.pod_labels)]
        if not selecting:
            report(f"{what} has no PodDisruptionBudget selecting its pods: a node drain or consolidation can evict "
                   "every replica at once. Fix: a PodDisruptionBudget in its namespace with maxUnavailable: 1 "
                   "and the Deployment's selector.", workload.urn)
        else:
            for spec in selecting:
                why = _pdb_holds_one_back(spec, workload.replicas)
                if why is not None:
                    report(f"{what}: its PodDisruptionBudget {why}. Fix: maxUnavailable: 1 (or minAvailable >= 1).",
                           workload.urn)
        if not workload.spreads_across_zones:
            report(f"{what} does not spread across zones: one zone outage can take every replica. Fix: a "
                   f"topologySpreadConstraints entry with topologyKey {ZONE_KEY} and the pods' labels.", workload.urn)


stack_policy(
    NAME,
    "A GPU serving workload with more than one replica has a PodDisruptionBudget that selects it and spreads "
    "across zones.",
    _validate_stack,
    enforcement=EnforcementLevel.ADVISORY,
    prod=EnforcementLevel.MANDATORY,
    reads=(*SERVING_KINDS, PDB, SCALED_OBJECT, HPA),
)
