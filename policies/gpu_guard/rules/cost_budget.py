"""cost-budget: what the stack bills a month stays within the budget its policy config sets.

The budget is policy config (`policies/config/<stack>.json`, `cost-budget`): `expectedUsd` (the expected monthly
cost: every service at minReplicas plus its wake windows) and optionally `ceilingUsd` (every pool at its maximum).
Without either the policy judges nothing. The pack prices what it sees: the resources of the stack
(pricing/from_resources.py) at the price table shipped in the pack (pricing/prices.yaml), judged on the policy
config `today`; `spotDiscount` (0-1) prices Spot as on-demand x (1 - it), an assumption.

Level is certainty:
- refused at the policy's level (advisory by default, mandatory in prod.json): the lines priced from recorded prices
  alone (no Spot assumption, no line that is not estimated) already exceed the budget, a lower bound of the bill;
- the advisory twin `cost-budget-caveats` says when only the Spot assumption takes the figure over (with the
  margin), which budgeted figure could not be judged whole (its lines not estimated, the values the engine does not
  know yet: "cannot see, cannot pass"), and each price older than 180 days on the judged day, with its date.

Usage-billed lines (NAT and ALB traffic, log ingestion, volume initialization per restore) are outside the budget:
the docs say so (docs/cost.md).

Sources: every price in pricing/prices.yaml carries its own (e.g. https://aws.amazon.com/ec2/pricing/on-demand/,
Karpenter's generated table for us-east-1); the arithmetic is pricing/estimate.py's, documented in docs/cost.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import PolicyConfigSchema

from ..base import CAVEAT_MARK, EnforcementLevel, ReportViolation, in_our_project, stack_policy_with_caveats
from ..inventory import INVENTORY_KUBERNETES_TYPES
from ..pricing.estimate import Estimate, Line, estimate
from ..pricing.from_resources import INGRESS, SCALED_OBJECT, SNAPSHOT_CONTENT, STORAGE_CLASS, stack_from_resources
from ..pricing.table import PRICES_PATH, load
from ._matrix_common import TODAY_PROPERTY, config_today

NAME = "cost-budget"
BUDGETS = {"expected": "expectedUsd", "ceiling": "ceilingUsd"}
_SHOWN_LINES = 5

CONFIG_SCHEMA = PolicyConfigSchema(properties={
    "expectedUsd": {"type": "number", "minimum": 0,
                    "description": "Budget of the expected monthly cost, USD (minReplicas plus wake windows)."},
    "ceilingUsd": {"type": "number", "minimum": 0,
                   "description": "Budget of the monthly ceiling, USD (every pool at its maximum all month)."},
    "spotDiscount": {"type": "number", "minimum": 0, "exclusiveMaximum": 1,
                     "description": "Spot = on-demand x (1 - spotDiscount): an assumption (default: none, Spot at "
                                    "its on-demand price)."},
    "today": TODAY_PROPERTY,
})


def _usd(value: float) -> str:
    return f"USD {value:,.2f}"


def _budgets(config: Mapping[str, Any]) -> dict[str, float]:
    return {figure: float(config[key]) for figure, key in BUDGETS.items() if config.get(key) is not None}


def _largest(est: Estimate, figure: str, facts_only: bool, ours: bool = True) -> str:
    lines: list[Line] = sorted((line for line in est.counted() if (line.figure(figure).usd or 0) > 0
                                and (not facts_only or line.basis == "price")),
                               key=lambda line: -(line.figure(figure).usd or 0.0))
    shown = [f"{line.item} {_usd(line.figure(figure).usd or 0.0)}" + (f" ({line.key})" if ours else "")
             for line in lines[:_SHOWN_LINES]]
    more = len(lines) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def _judge(est: Estimate, figure: str, budget: float, report: ReportViolation, anchor: str) -> None:
    key = BUDGETS[figure]
    facts = est.total(figure, facts_only=True)
    total = est.total(figure)
    where = f"{est.region} prices of {PRICES_PATH.name}, judged {est.judged.isoformat()}"
    # another program's stack has no stack keys of ours: its lines are named by their resources only
    ours = in_our_project(anchor)
    fix = (f"Fix: lower what these lines bill (the keys named), or raise cost-budget.{key} in "
           "policies/config/<stack>.json." if ours else
           f"Fix: lower what these lines bill, or raise cost-budget.{key} in the stack's policy config.")
    if facts > budget:
        report(f"The {figure} monthly cost of this stack is at least {_usd(facts)} ({where}; recorded prices only), "
               f"{_usd(facts - budget)} above the budget cost-budget.{key} = {_usd(budget)}. The largest lines: "
               f"{_largest(est, figure, True, ours)}. {fix}", anchor)
        return
    if total > budget:
        report(f"{CAVEAT_MARK}The {figure} monthly cost of this stack is {_usd(total)} with its Spot lines at "
               f"{'on-demand x (1 - spotDiscount)' if est.spot_discount is not None else 'their on-demand price'} "
               f"(an assumption), {_usd(total - budget)} above the budget cost-budget.{key} = {_usd(budget)}; the "
               f"lines priced from recorded prices alone sum to {_usd(facts)}, within it. The largest lines: "
               f"{_largest(est, figure, False, ours)}. {fix}", anchor)
    missing = est.missing(figure)
    if missing:
        report(f"{CAVEAT_MARK}cost-budget could not judge the {figure} cost whole: not estimated: "
               + "; ".join(f"{line.item} ({line.figure(figure).how.removeprefix('not estimated: ')})"
                           for line in missing)
               + f". The lines it could price sum to {_usd(total)} of the budget cost-budget.{key} = "
               f"{_usd(budget)}; record the missing prices (docs/cost.md, 'Updating prices').", anchor)


def _validate(args: Any, report: ReportViolation) -> None:
    config = args.get_config() or {}
    budgets = _budgets(config)
    if not budgets:
        return
    resources = list(args.resources)
    anchor = next((r.urn for r in resources if r.resource_type in ("aws:eks/cluster:Cluster", "eks:index:Cluster")),
                  resources[0].urn if resources else "")
    read = stack_from_resources("this stack", resources)
    if read.stack is None:
        report(f"{CAVEAT_MARK}cost-budget could not price this stack: it could not read {'; '.join(read.unread)}. "
               "The budget is not judged.", anchor)
        return
    if read.unread:
        report(f"{CAVEAT_MARK}cost-budget could not read {len(read.unread)} value(s) the estimate needs (unknown in "
               f"this preview): {'; '.join(read.unread)}; the figures leave them out.", anchor)
    discount = config.get("spotDiscount")
    est = estimate(read.stack, load(), config_today(config),
                   spot_discount=float(discount) if discount is not None else None)
    for figure, budget in budgets.items():
        _judge(est, figure, budget, report, anchor)
    for price in est.stale_prices():
        report(f"{CAVEAT_MARK}A price cost-budget used is older than 180 days on {est.judged.isoformat()}: "
               f"{price.cite()}. Re-read it (gpu-platform cost refresh; docs/cost.md, 'Updating prices').", anchor)


stack_policy_with_caveats(
    NAME,
    "The stack's monthly cost, priced from what the pack sees at the price table shipped in the pack, stays within "
    "the budget of its policy config (expectedUsd, ceilingUsd); refused when the lines priced from recorded prices "
    "alone exceed it.",
    _validate,
    caveats_description="Advisory twin of cost-budget: the budget exceeded only with the Spot assumption, a budgeted "
                        "figure not judged whole (lines not estimated, values unknown in the preview), prices older "
                        "than 180 days.",
    enforcement=EnforcementLevel.ADVISORY,
    prod=EnforcementLevel.MANDATORY,
    config_schema=CONFIG_SCHEMA,
    reads=(*INVENTORY_KUBERNETES_TYPES, SCALED_OBJECT, STORAGE_CLASS, INGRESS, SNAPSHOT_CONTENT),
)
