"""Where the scheduler can place a pod: taints and tolerations, node selectors and required affinity.

Not a policy. The same matching the kube-scheduler does (TaintToleration, NodeAffinity), over a pool's
label domain (each label's possible values; `None` for "some value we cannot tell", a `Deferred`
for a value the engine does not know yet, which makes the verdict wait when a selector reads it).

Sources:
- Taints and tolerations matching: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
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




def tolerates(tolerations: Iterable[Any], taint: Taint) -> bool:
    """Kubernetes toleration matching, as the scheduler's TaintToleration plugin does it."""
    for tol in tolerations:
        effect = str(get(tol, "effect", default="") or "")
        if effect and effect != taint.effect:
            continue
        key = str(get(tol, "key", default="") or "")
        operator = str(get(tol, "operator", default="Equal") or "Equal")
        if operator == "Exists":
            if not key or key == taint.key:
                return True
        elif key == taint.key and str(get(tol, "value", default="") or "") == taint.value:
            return True
    return False


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


def narrow(domain: Mapping[str, frozenset[str] | Deferred | None], instance_types: tuple[str, ...],
            exprs: Iterable[Any]) -> tuple[str, ...]:
    """The instance types of the pool that also satisfy instance-type/family expressions."""
    kept = list(instance_types)
    for expr in exprs:
        key = str(get(expr, "key", default=""))
        if key not in (INSTANCE_TYPE_LABEL, INSTANCE_FAMILY_LABEL):
            continue
        values = {str(v) for v in as_list(get(expr, "values"))}
        operator = str(get(expr, "operator", default=""))
        def attr(t: str, k: str = key) -> str:
            return t if k == INSTANCE_TYPE_LABEL else t.split(".", 1)[0]
        if operator == "In":
            kept = [t for t in kept if attr(t) in values]
        elif operator == "NotIn":
            kept = [t for t in kept if attr(t) not in values]
    return tuple(kept)


@dataclass(frozen=True)
class Reach:
    pool: Pool
    instance_types: tuple[str, ...]  # the pool's instance types this workload can land on


def reachable(workload: Workload, pool: Pool) -> Reach | None:
    """Can the scheduler place `workload` on some node of `pool`? If so, on which instance types."""
    for taint in pool.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not tolerates(workload.tolerations, taint):
            return None
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
