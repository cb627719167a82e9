"""Where the scheduler can place a pod: taints and tolerations, node selectors and required affinity.

Not a policy. The same matching the kube-scheduler does (TaintToleration, NodeAffinity), over a pool's
label domain (each label's possible values; `None` for "some value we cannot tell", a `Deferred`
for a value the engine does not know yet, which makes the verdict wait when a selector reads it).

Sources:
- Taints and tolerations matching: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
  and the scheduler's own matcher, `Toleration.ToleratesTaint` in kubernetes/api core/v1/toleration.go
  (https://github.com/kubernetes/api/blob/v0.34.0/core/v1/toleration.go): an empty effect matches every
  effect, an empty key (with `Exists`) every key, `Exists` any value, `Equal` (or no operator) the exact
  value, an empty value included; any other operator matches nothing.
- nodeSelector / required node affinity operators:
  https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .props import Deferred, as_list, get, to_int
from .views import Pool, Taint, Workload

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
INSTANCE_FAMILY_LABEL = "karpenter.k8s.aws/instance-family"
# EKS Auto Mode labels its nodes in the eks.amazonaws.com domain where self-managed Karpenter uses karpenter.k8s.aws.
# Source: https://docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html (EKS Auto Mode supported labels)
AUTO_INSTANCE_FAMILY_LABEL = "eks.amazonaws.com/instance-family"
FAMILY_LABELS = (INSTANCE_FAMILY_LABEL, AUTO_INSTANCE_FAMILY_LABEL)

# What keeps a pod off a node: NoSchedule and NoExecute (PreferNoSchedule only steers).
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def tolerates_taint(tol: Any, taint: Taint) -> bool:
    """One toleration against one taint, exactly as `Toleration.ToleratesTaint` (k8s.io/api core/v1 toleration.go)."""
    effect = str(get(tol, "effect", default="") or "")
    if effect and effect != taint.effect:
        return False
    key = str(get(tol, "key", default="") or "")
    if key and key != taint.key:
        return False
    operator = str(get(tol, "operator", default="") or "")
    if operator in ("", "Equal"):
        return str(get(tol, "value", default="") or "") == taint.value
    return operator == "Exists"


def tolerates(tolerations: Iterable[Any], taint: Taint) -> bool:
    """Kubernetes toleration matching, as the scheduler's TaintToleration plugin does it: any toleration will do."""
    return any(tolerates_taint(tol, taint) for tol in tolerations)


def blocking_taints(pool: Pool) -> tuple[Taint, ...]:
    """The taints of a pool's nodes that keep off every pod that does not tolerate them."""
    return tuple(t for t in pool.taints if t.effect in BLOCKING_EFFECTS)


def untolerated(tolerations: Iterable[Any], pool: Pool) -> list[Taint]:
    """The blocking taints of `pool` that these tolerations do not tolerate (empty: the taints let the pod on)."""
    tols = list(tolerations)
    return [t for t in blocking_taints(pool) if not tolerates(tols, t)]


def expression_matches(domain: Mapping[str, frozenset[str] | Deferred | None], expr: Any) -> bool:
    key = str(get(expr, "key", default=""))
    operator = str(get(expr, "operator", default=""))
    values = {str(v) for v in as_list(get(expr, "values"))}
    present = key in domain
    possible = domain.get(key)
    if isinstance(possible, Deferred):
        possible = possible.value()  # a selector on a value the engine does not know yet: the verdict waits
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if not present:
        return operator == "NotIn"
    if possible is None:  # label exists with a value we cannot tell: it may match
        return True
    if operator == "In":
        return bool(possible & values)
    if operator == "NotIn":
        return bool(possible - values)
    if operator in ("Gt", "Lt"):
        bound = to_int(next(iter(values), None))
        numbers = [n for n in (to_int(v) for v in possible) if n is not None]
        if bound is None:
            return False
        return any(n > bound for n in numbers) if operator == "Gt" else any(n < bound for n in numbers)
    return False


GPU_NAME_LABELS = ("karpenter.k8s.aws/instance-gpu-name", "eks.amazonaws.com/instance-gpu-name")


def _gpu_name(instance_type: str) -> str:
    """The lower-case GPU model Karpenter / Auto Mode label an instance type's nodes with (matrix data), or ""."""
    from .matrix import load_matrix  # noqa: PLC0415 - the matrix loads once, on first use

    known = load_matrix().instance_type(instance_type)
    return known.gpu_model.lower() if known is not None else ""


def _instance_attr(key: str, instance_type: str) -> str | None:
    if key == INSTANCE_TYPE_LABEL:
        return instance_type
    if key in FAMILY_LABELS:
        return instance_type.split(".", 1)[0]
    if key in GPU_NAME_LABELS:
        return _gpu_name(instance_type)
    return None


def narrow(domain: Mapping[str, frozenset[str] | Deferred | None], instance_types: tuple[str, ...],
            exprs: Iterable[Any]) -> tuple[str, ...]:
    """The instance types of the pool that also satisfy instance-type / family / GPU-name expressions."""
    kept = list(instance_types)
    for expr in exprs:
        key = str(get(expr, "key", default=""))
        if _instance_attr(key, "") is None:
            continue
        values = {str(v) for v in as_list(get(expr, "values"))}
        operator = str(get(expr, "operator", default=""))
        if operator == "In":
            kept = [t for t in kept if _instance_attr(key, t) in values]
        elif operator == "NotIn":
            kept = [t for t in kept if _instance_attr(key, t) not in values]
    return tuple(kept)


@dataclass(frozen=True)
class Reach:
    pool: Pool
    instance_types: tuple[str, ...]  # the pool's instance types this workload can land on


def reachable(workload: Workload, pool: Pool) -> Reach | None:
    """Can the scheduler place `workload` on some node of `pool`? If so, on which instance types."""
    if untolerated(workload.tolerations, pool):
        return None
    return selected(workload, pool)


def selected(workload: Workload, pool: Pool) -> Reach | None:
    """Do `workload`'s nodeSelector and required node affinity select `pool`'s nodes (taints aside)?"""
    selector_exprs = [{"key": k, "operator": "In", "values": [v]} for k, v in workload.node_selector.items()]
    if not all(expression_matches(pool.label_domain, e) for e in selector_exprs):
        return None
    if workload.required_terms is None:
        return Reach(pool, narrow(pool.label_domain, pool.instance_types, selector_exprs))
    types: list[str] = []
    matched = False
    for term in workload.required_terms:
        exprs = as_list(get(term, "matchExpressions"))
        if not exprs and not as_list(get(term, "matchFields")):
            continue  # an empty term matches no node
        if all(expression_matches(pool.label_domain, e) for e in exprs):
            matched = True
            types.extend(narrow(pool.label_domain, pool.instance_types, [*selector_exprs, *exprs]))
    if not matched:
        return None
    return Reach(pool, tuple(dict.fromkeys(types)))
