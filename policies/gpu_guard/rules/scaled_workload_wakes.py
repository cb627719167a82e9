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
"""

from __future__ import annotations

from pulumi_policy import ResourceValidationArgs

from ..base import EnforcementLevel, ReportViolation, resource_policy
from ..props import get
from ..wakes import WAKE_FIX, wake_problem

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
