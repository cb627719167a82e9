"""serving-disruption-protected-resource: the pools' part of `serving-disruption-protected`, judged per resource.

A Karpenter NodePool disruption budget never allows 100 % of its nodes at once, and an EKS managed node
group's update never takes all of its nodes (`maxUnavailablePercentage: 100`, or `maxUnavailable` at or
above `maxSize` of a group that can have more than one node: EKS's smallest setting is 1, so a one-node
group cannot do better). Judged on the resource's own inputs, before it is created, so a first preview
gives the same verdict (a NodePool's inputs reach resource policies even when its provider is unknown).
Whether each GPU serving workload has a PodDisruptionBudget and spreads across zones needs the whole
stack: `serving-disruption-protected`.

Sources:
- Karpenter disruption budgets (`nodes`: a count or a percentage; default 10 %):
  https://karpenter.sh/docs/concepts/disruption/#disruption-budgets
- EKS node group updateConfig (maxUnavailable >= 1, maxUnavailablePercentage 1-100):
  https://docs.aws.amazon.com/eks/latest/APIReference/API_NodegroupUpdateConfig.html
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import ResourceValidationArgs

from ..base import EnforcementLevel, ReportViolation, resource_part
from ..inventory import NODE_GROUP, NODE_POOL
from ..props import as_list, get, to_int

OF = "serving-disruption-protected"


def percent_of(value: Any) -> int | None:
    """`"100%"` -> 100; None when the value is not a percentage."""
    text = str(value)
    return to_int(text[:-1]) if text.endswith("%") else None


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type == NODE_POOL:
        name = get(args.props, "metadata", "name", default=args.name)
        for i, budget in enumerate(as_list(get(args.props, "spec", "disruption", "budgets"))):
            percent = percent_of(get(budget, "nodes"))
            if percent is not None and percent >= 100:
                report(f"NodePool '{name}' disruption budget {i} allows {get(budget, 'nodes')} of its nodes to be "
                       "disrupted at once: every GPU replica on the pool can go together. Fix: nodes: \"10%\" "
                       "(Karpenter's default) or a small count.", args.urn)
    elif args.resource_type == NODE_GROUP:
        name = get(args.props, "nodeGroupName", default=args.name)
        update = get(args.props, "updateConfig")
        percent = to_int(get(update, "maxUnavailablePercentage"))
        count = to_int(get(update, "maxUnavailable"))
        largest = to_int(get(args.props, "scalingConfig", "maxSize"))
        if percent is not None and percent >= 100:
            report(f"Node group '{name}' updates with maxUnavailablePercentage {percent}: an update replaces every "
                   "node at once. Fix: updateConfig.maxUnavailable: 1.", args.urn)
        elif count is not None and largest is not None and largest > 1 and count >= largest:
            report(f"Node group '{name}' updates with maxUnavailable {count} of at most {largest} nodes: an update "
                   "can replace every node at once. Fix: updateConfig.maxUnavailable: 1.", args.urn)

resource_part(
    OF,
    "NodePool disruption budgets and node group update settings never take all of a pool's nodes at once; "
    "judged on the resource alone, before it is created.",
    _validate,
    enforcement=EnforcementLevel.ADVISORY,
    prod=EnforcementLevel.MANDATORY,
)
