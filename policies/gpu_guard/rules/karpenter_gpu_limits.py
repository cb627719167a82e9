"""karpenter-gpu-limits: every GPU NodePool caps `nvidia.com/gpu` in `spec.limits`.

Karpenter has no global limit; limits are per NodePool. Without a GPU cap a burst of pending GPU
pods (or a runaway autoscaler) launches GPU instances without bound.

Sources:
- "Limits per NodePool" (EKS Best Practices, Karpenter): https://docs.aws.amazon.com/eks/latest/best-practices/karpenter.html
- NodePool `spec.limits` (resource name -> quantity): https://karpenter.sh/docs/concepts/nodepools/#speclimits
"""

from __future__ import annotations

import re
from typing import Any

from ..base import EnforcementLevel, ReportViolation, resource_policy
from ..inventory import GPU_RESOURCE, get
from .gpu_nodes_tainted import gpu_reason, pool_of

# A Kubernetes resource quantity, as the NodePool CRD's `spec.limits` pattern states it.
# Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/crds/karpenter.sh_nodepools.yaml
#         (spec.limits.additionalProperties.pattern)
_QUANTITY = re.compile(
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


def validate(args: Any, report_violation: ReportViolation) -> None:
    if not (args.resource_type.startswith("kubernetes:karpenter.sh/") and args.resource_type.endswith(":NodePool")):
        return
    pool = pool_of(args.resource_type, args.props, args.urn, args.name)
    if pool is None:
        return
    reason = gpu_reason(pool)
    if reason is None:
        return
    fix = f'set spec.limits: {{{GPU_RESOURCE}: "8"}} (the most GPUs this NodePool may run at once)'
    limit = get(args.props, "spec", "limits", GPU_RESOURCE)
    if limit is None:
        limits = get(args.props, "spec", "limits")
        report_violation(
            f"GPU NodePool '{args.name}' ({reason}) must cap {GPU_RESOURCE} in spec.limits; "
            f"spec.limits is {dict(limits) if limits is not None else 'unset'}, so Karpenter may launch GPU "
            f"instances without bound. Fix: {fix}.",
            args.urn,
        )
        return
    text = str(limit)
    if isinstance(limit, bool) or not _QUANTITY.match(text) or text.startswith("-"):
        report_violation(
            f"GPU NodePool '{args.name}' caps {GPU_RESOURCE} with {limit!r}, which is not a non-negative "
            f"resource quantity. Fix: {fix}.",
            args.urn,
        )


POLICY = resource_policy(
    "karpenter-gpu-limits",
    "Every GPU NodePool caps nvidia.com/gpu in spec.limits.",
    validate,
    enforcement=EnforcementLevel.MANDATORY,
)
