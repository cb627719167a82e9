"""scaled-workload-wakes: a KEDA ScaledObject that can scale its workload to zero has a trigger that can wake it.

Judged on the ScaledObject's own inputs, before it is created, so a first preview gives the verdict too; the
config check of an inference service (components/config/serving.py) gives the same one before any resource
exists. Any user's ScaledObject is judged, whatever its target or triggers: the rule and its sources are in
`policies/gpu_guard/wakes.py` (which series count as the workload's own, and why KEDA never activates on them
at zero replicas).

Sources:
- KEDA v2.20.2 ScaledObject spec (minReplicaCount default 0, idleReplicaCount, triggers):
  https://keda.sh/docs/2.20/reference/scaledobject-spec/
- KEDA Prometheus scaler (`ignoreNullValues`, `activationThreshold`): https://keda.sh/docs/2.20/scalers/prometheus/

Its advisory twin `scaled-workload-wakes-fallback` reports the opposite waste: a ScaledObject that can reach zero,
has a `fallback`, and has a trigger that errors at zero (a Prometheus query of the workload's own series with
`ignoreNullValues: "false"`): KEDA's fallback wakes it minutes after each scale-in, so it never sleeps
(policies/gpu_guard/wakes.py cites the KEDA lines). Advisory, not mandatory: it serves correctly and only costs
money (GPU hours), and a team may keep the fallback on purpose.
"""

from __future__ import annotations

from pulumi_policy import ResourceValidationArgs

from ..base import EnforcementLevel, ReportViolation, resource_policy
from ..props import get
from ..wakes import SLEEP_FIX, WAKE_FIX, never_sleeps, wake_problem

SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != SCALED_OBJECT:
        return
    spec = get(args.props, "spec", default={}) or {}
    name = get(args.props, "metadata", "name", default=args.name)
    namespace = get(args.props, "metadata", "namespace", default="default")
    problem = wake_problem(spec)
    if problem is not None:
        target, why = problem
        # The same words as wakes.wake_message, which the config check uses (tests/policies/test_wakes.py).
        report(f"ScaledObject '{namespace}/{name}' scales {target} to zero but nothing can wake it: {why}. Once at "
               f"zero it never serves again. Fix: {WAKE_FIX}.", args.urn)


resource_policy(
    "scaled-workload-wakes",
    "A KEDA ScaledObject that can scale to zero has at least one trigger whose input exists while the workload "
    "has no pods (not only series the workload emits itself).",
    _validate,
    enforcement=EnforcementLevel.MANDATORY,
)


def _validate_fallback(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != SCALED_OBJECT:
        return
    spec = get(args.props, "spec", default={}) or {}
    name = get(args.props, "metadata", "name", default=args.name)
    namespace = get(args.props, "metadata", "namespace", default="default")
    problem = never_sleeps(spec)
    if problem is not None:
        target, why = problem
        threshold = (spec.get("fallback") or {}).get("failureThreshold", "failureThreshold")
        report(f"ScaledObject '{namespace}/{name}' never sleeps: KEDA's fallback wakes it. It scales {target} to zero, "
               f"but {why}; after {threshold} failed polls KEDA (v2.19+) serves fallback.replicas as an active "
               f"trigger and scales it from zero again, so its replicas run around the clock. Fix: {SLEEP_FIX}.",
               args.urn)


resource_policy(
    "scaled-workload-wakes-fallback",
    "Advisory twin of scaled-workload-wakes: a KEDA ScaledObject that can scale to zero does not carry a fallback "
    "that its own triggers' errors at zero replicas activate (KEDA then wakes it again: it never sleeps).",
    _validate_fallback,
    enforcement=EnforcementLevel.ADVISORY,
    companion_of="scaled-workload-wakes",
)
