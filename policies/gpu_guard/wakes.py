"""Whether a KEDA ScaledObject that can scale to zero can also wake up: the rule of `scaled-workload-wakes`.

Pure functions of the ScaledObject's spec (plain dicts), shared by the policy
(rules/scaled_workload_wakes.py) and the config check (components/config/serving.py), so both give
the same answer with the same words, before any resource exists.

How KEDA v2.20.2 decides (github.com/kedacore/keda @ v2.20.2):
- Scale to zero: `minReplicaCount` absent means 0 (pkg/scaling/executor/scale_scaledobjects.go:57-61);
  `idleReplicaCount` (only 0 is valid) also idles the target at zero while no trigger is active (:70-72, :97).
- From zero, only an *active* trigger scales the target up (scale_scaledobjects.go:63-73). A trigger whose
  `fallback` is active counts as active: after `fallback.failureThreshold` failed polls GetMetricsWithFallback
  returns the fallback metric with fallbackActive=true and no error (pkg/fallback/fallback.go:142-170), and the
  polling loop sets `isActiveOrFallback := fallbackActive || isMetricActive` (pkg/scaling/scale_handler.go:1003,
  :1023, read at :847), so the executor scales the target from zero (commit e414cb457, "apply fallback in polling
  loop to enable scaling from zero", released in v2.19.0). Only the `scalingModifiers` fallback behavior returns
  fallbackActive=false (fallback.go:145-153).
- A Prometheus trigger is active when its value exceeds `activationThreshold`
  (pkg/scalers/prometheus_scaler.go:319); an empty result reads as 0 while `ignoreNullValues` is true, its
  default (:56, :267-271), and is an error otherwise (:272). Either way an empty query never activates it by its
  value; but as an error it counts toward `fallback`, which then wakes the target (above): a ScaledObject with a
  `fallback` and such a trigger never sleeps (`never_sleeps`, the advisory scaled-workload-wakes-fallback).
- cpu and memory triggers read the target's own pods; KEDA's webhook refuses them alone with minReplicaCount 0
  (apis/keda/v1alpha1/scaledobject_webhook.go:497-511).

Which series the workload emits itself (the explicit rule):
- Triton's metric families are all named `nv_*` and are exported only by the server's own metrics port
  (triton-inference-server/server @ v2.62.0 docs/user_guide/metrics.md:33-47, the tables from :97): with no
  Triton pod there is no `nv_*` series at all. So a selector of an `nv_*` metric is the workload's own.
- vLLM's metric families are all named `vllm:*` (vllm-project/vllm @ v0.34.0 vllm/v1/metrics/loggers.py:528-1104,
  every `name="vllm:..."`) and are served only by the server's own `/metrics` on its API port
  (vllm/entrypoints/serve/instrumentator/metrics.py:66-77): with no vLLM pod there is no `vllm:` series. So a
  selector of a `vllm:` metric is the workload's own.
- DCGM series (`DCGM_FI_*`, from dcgm-exporter on each GPU node) are the workload's own when the selector keeps
  only its pods (a `pod` / `exported_pod` matcher naming the target): dcgm-exporter labels a GPU with the pod that
  holds it, and no pod of the target holds one at zero. A DCGM selector without such a matcher reads node GPUs.
- Any selector whose `pod` / `exported_pod` matcher keeps only the target's pods (`<target>-...`, how a
  Deployment names its pods) reads series scraped from those pods: the workload's own.
- Every other selector (an ingress or load-balancer metric, a queue exporter, a cloud metric) can be non-empty
  while the workload has no pods, so a trigger that reads one can wake it. Other trigger types (cron, queues,
  the KEDA HTTP add-on's `external-push`, aws-cloudwatch, ...) read inputs outside the workload.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

SELF_TRIGGER_TYPES = ("cpu", "memory")
TRITON_PREFIX = "nv_"
VLLM_PREFIX = "vllm:"
DCGM_PREFIX = "DCGM_FI_"
POD_LABELS = ("pod", "exported_pod")
WAKE_FIX = ("add a trigger whose input exists while the workload has no pods: a cron window, a queue, the KEDA "
            "HTTP add-on, or a load-balancer metric (aws-cloudwatch on the ALB's RequestCount), or keep "
            "minReplicaCount at 1 or more")

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<number>\d[\w.]*)
  | (?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)
  | (?P<op>=~|!~|!=|==|<=|>=|=)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)
# Words that are PromQL syntax, never metric names (operators, modifiers, grouping).
# Source: https://prometheus.io/docs/prometheus/latest/querying/operators/ and .../querying/basics/
_KEYWORDS = frozenset({"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
                       "offset", "bool", "atan2", "inf", "nan", "start", "end"})
_GROUPING = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
# Aggregation operators, which may take `by (...)` / `without (...)` before their parentheses.
_AGGREGATIONS = frozenset({"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
                           "bottomk", "topk", "quantile", "limitk", "limit_ratio"})


def _tokens(query: str) -> list[tuple[str, str]]:
    return [(m.lastgroup or "", m.group()) for m in _TOKEN.finditer(query) if m.lastgroup != "space"]


def _matchers(tokens: list[tuple[str, str]], start: int) -> tuple[dict[str, tuple[str, str]], int]:
    """`{a="x", b=~"y"}` from the `{` at `start`: label -> (operator, value), and the index after `}`."""
    found: dict[str, tuple[str, str]] = {}
    i = start + 1
    while i < len(tokens) and tokens[i][1] != "}":
        if (tokens[i][0] == "name" and i + 2 < len(tokens) and tokens[i + 1][0] == "op"
                and tokens[i + 2][0] == "string"):
            found[tokens[i][1]] = (tokens[i + 1][1], tokens[i + 2][1][1:-1])
            i += 3
        else:
            i += 1
    return found, i + 1


def selectors(query: str) -> list[tuple[str, dict[str, tuple[str, str]]]]:
    """Every vector selector of a PromQL query: (metric name, its label matchers)."""
    tokens = _tokens(query)
    out: list[tuple[str, dict[str, tuple[str, str]]]] = []
    i = 0
    while i < len(tokens):
        kind, value = tokens[i]
        following = tokens[i + 1][1] if i + 1 < len(tokens) else ""
        if kind == "name" and value.lower() in _GROUPING and following == "(":
            i = next((j for j in range(i + 1, len(tokens)) if tokens[j][1] == ")"), len(tokens)) + 1
        elif kind == "name" and (following == "(" or value.lower() in _AGGREGATIONS):
            i += 1  # a function or an aggregation
        elif kind == "name" and value.lower() not in _KEYWORDS:
            labels: dict[str, tuple[str, str]] = {}
            i += 1
            if following == "{":
                labels, i = _matchers(tokens, i)
            out.append((value, labels))
        elif value == "{":
            labels, i = _matchers(tokens, i)
            name = labels.pop("__name__", ("=", ""))[1]
            out.append((name, labels))
        elif value == "[":
            i = next((j for j in range(i + 1, len(tokens)) if tokens[j][1] == "]"), len(tokens)) + 1
        else:
            i += 1
    return out


def keeps_only_pods_of(labels: Mapping[str, tuple[str, str]], target: str) -> bool:
    """A `pod` / `exported_pod` matcher that keeps only pods named `<target>-...` (a Deployment's pod names)."""
    for label in POD_LABELS:
        op, value = labels.get(label, ("", ""))
        if op == "=" and value.startswith(f"{target}-"):
            return True
        if op == "=~" and value.startswith(f"{target}-") and "|" not in value:
            return True
    return False


def own_selector(metric: str, labels: Mapping[str, tuple[str, str]], target: str) -> str | None:
    """Why the selector reads only series the target's own pods emit; None when it does not."""
    if metric.startswith(TRITON_PREFIX):
        return f"{metric} is a Triton metric, exported only by the server's own pods"
    if metric.startswith(VLLM_PREFIX):
        return f"{metric} is a vLLM metric, exported only by the server's own pods"
    if keeps_only_pods_of(labels, target):
        source = "a DCGM series" if metric.startswith(DCGM_PREFIX) else "a series"
        return f"{metric} is {source} of the workload's own pods"
    return None


def trigger_cannot_wake(trigger: Mapping[str, Any], target: str) -> str | None:
    """Why `trigger` can never become active while `target` has no pods; None when it can."""
    kind = str(trigger.get("type", ""))
    if kind in SELF_TRIGGER_TYPES:
        return f"the {kind} trigger reads the workload's own pods"
    if kind != "prometheus":
        return None
    metadata = trigger.get("metadata") or {}
    query = str(metadata.get("query", ""))
    found = selectors(query)
    if not found:
        return None
    reasons = []
    for metric, labels in found:
        why = own_selector(metric, labels, target)
        if why is None:
            return None
        reasons.append(why)
    own = "; ".join(dict.fromkeys(reasons))
    return (f"the prometheus query {query!r} reads only the workload's own series ({own}): "
            "with no pod the result is empty, KEDA reads it as 0 (ignoreNullValues) or as an error, and neither "
            "passes activationThreshold")


def scales_to_zero(spec: Mapping[str, Any]) -> bool:
    """`minReplicaCount` 0 or absent (KEDA's default), or `idleReplicaCount` 0."""
    minimum = spec.get("minReplicaCount")
    return minimum in (None, 0) or spec.get("idleReplicaCount") == 0


def wake_problem(spec: Mapping[str, Any]) -> tuple[str, str] | None:
    """(the scaled workload, why none of the triggers can wake it) when it scales to zero and cannot wake."""
    if not scales_to_zero(spec):
        return None
    target_ref = spec.get("scaleTargetRef") or {}
    target = str(target_ref.get("name", ""))
    triggers: Sequence[Mapping[str, Any]] = spec.get("triggers") or []
    reasons = []
    for trigger in triggers:
        why = trigger_cannot_wake(trigger, target)
        if why is None:
            return None
        reasons.append(why)
    kind = str(target_ref.get("kind", "Deployment"))
    return f"{kind} '{target}'", "; ".join(reasons) if reasons else "it has no trigger"


def wake_message(subject: str, spec: Mapping[str, Any]) -> str | None:
    """The one-line verdict (subject, why, fix), or None when the workload can wake."""
    problem = wake_problem(spec)
    if problem is None:
        return None
    target, why = problem
    return (f"{subject} scales {target} to zero but nothing can wake it: {why}. Once at zero it never serves again. "
            f"Fix: {WAKE_FIX}.")


# KEDA reads `ignoreNullValues` with Go's strconv.ParseBool (its typed trigger metadata, pkg/scalers/scalersconfig).
_FALSE = frozenset({"0", "f", "F", "false", "FALSE", "False"})
SLEEP_FIX = ('set ignoreNullValues "true" on that trigger (an empty result then reads as 0, inactive), or remove '
             "fallback, or keep minReplicaCount at 1 or more")


def errors_at_zero(trigger: Mapping[str, Any], target: str) -> str | None:
    """Why `trigger` answers with an error while `target` has no pods: a Prometheus query of the workload's own
    series with `ignoreNullValues` false (the empty result is an error, prometheus_scaler.go:268-272)."""
    if trigger.get("type") != "prometheus":
        return None
    metadata = trigger.get("metadata") or {}
    if str(metadata.get("ignoreNullValues", "true")) not in _FALSE:
        return None
    if trigger_cannot_wake(trigger, target) is None:
        return None
    return (f"the prometheus query {str(metadata.get('query', ''))!r} reads only the workload's own series and "
            'has ignoreNullValues "false", so its empty result at zero replicas is an error')


def never_sleeps(spec: Mapping[str, Any]) -> tuple[str, str] | None:
    """(the scaled workload, why) when it can reach zero but KEDA's fallback wakes it again: a `fallback` and a
    trigger that errors at zero. None otherwise."""
    fallback = spec.get("fallback")
    if not scales_to_zero(spec) or not isinstance(fallback, Mapping):
        return None
    if fallback.get("behavior") == "scalingModifiers":
        return None
    target_ref = spec.get("scaleTargetRef") or {}
    target = str(target_ref.get("name", ""))
    triggers: Sequence[Mapping[str, Any]] = spec.get("triggers") or []
    for trigger in triggers:
        why = errors_at_zero(trigger, target)
        if why is not None:
            return f"{target_ref.get('kind', 'Deployment')} '{target}'", why
    return None

