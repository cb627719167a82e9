"""The preview's cost section: the estimate of the stack being previewed, as data (the `--json` document's `cost`) and
as markdown (summary.md, the pull-request comment). It never fails the preview: a stack it cannot price gets a
section that says why (`error`), and the preview goes on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import date
from typing import Any

from components.config.loader import parse_stack_config
from policies.gpu_guard.pricing.estimate import FIGURES
from policies.gpu_guard.pricing.estimate import estimate as price
from policies.gpu_guard.pricing.render import cost_section
from policies.gpu_guard.pricing.table import PriceTableError, load
from tools.cost.from_config import PREFIX, stack_from_config

BUDGET_POLICY = "cost-budget"


def _decoded(values: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    raw: dict[str, Any] = {}
    for key, value in values.items():
        if key.startswith(PREFIX):
            try:
                raw[key.removeprefix(PREFIX)] = json.loads(value) if isinstance(value, str) else value
            except json.JSONDecodeError:
                raw[key.removeprefix(PREFIX)] = value
    region = values.get("aws:region")
    return raw, region if isinstance(region, str) else None


def preview_cost(values: Mapping[str, Any], stack: str, today: date,
                 policy_config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`cost_section` of the stack whose config `values` (Pulumi.<stack>.yaml's `config:`, values as the engine holds
    them) the preview ran, judged on `today`; `spotDiscount` from the policy config's `cost-budget`."""
    raw, region = _decoded(values)
    if region is None:
        return {"stack": stack, "error": "aws:region is not set in the stack file: nothing to price"}
    config, problems = parse_stack_config(raw)
    if config is None:
        return {"stack": stack, "error": f"the stack config is invalid ({len(problems)} problem(s)): not priced"}
    budget = (policy_config or {}).get(BUDGET_POLICY) or {}
    discount = budget.get("spotDiscount") if isinstance(budget, Mapping) else None
    try:
        est = price(stack_from_config(stack, config, region), load(), today,
                    spot_discount=float(discount) if discount is not None else None)
    except (PriceTableError, ValueError) as error:
        return {"stack": stack, "error": str(error)}
    return cost_section(est)


def _cell(total: Mapping[str, Any]) -> str:
    return f"{'at least ' if not total['complete'] else ''}${total['usd']:,.2f}"


def terminal_line(section: Mapping[str, Any]) -> str:
    """One line for the preview's terminal summary."""
    if "error" in section:
        return f"Cost: not estimated: {section['error']}"
    totals = section["totals"]
    lacking = len({item for figure in FIGURES for item in totals[figure]["not_estimated"]})
    return (f"Cost a month ({section['region']} prices): at rest {_cell(totals['at_rest'])}, expected "
            f"{_cell(totals['expected'])}, ceiling {_cell(totals['ceiling'])}"
            + (f"; {lacking} line(s) not estimated" if lacking else "")
            + f" (every line: gpu-platform cost --stack {section['stack']})")


def markdown(section: Mapping[str, Any] | None) -> str:
    """The section's summary for summary.md: the three totals, what they lack, the command that shows each line."""
    if not section:
        return ""
    title = "## Cost estimate"
    if "error" in section:
        return f"{title}\n\nNot estimated: {section['error']}.\n"
    totals = section["totals"]

    def cell(figure: str) -> str:
        return _cell(totals[figure])

    lacking = sorted({item for figure in FIGURES for item in totals[figure]["not_estimated"]})
    lines = [title, "", f"{section['region']} prices, judged {section['judged']}, a month of "
             f"{section['hours_per_month']} h (`gpu-platform cost --stack {section['stack']}` shows every line and "
             "its arithmetic; docs/cost.md):", "", "| at rest | expected | ceiling |", "|---:|---:|---:|",
             f"| {' | '.join(cell(f) for f in FIGURES)} |", ""]
    if lacking:
        lines += [f"Not estimated (a total over them is a lower bound): {'; '.join(lacking)}.", ""]
    if section.get("stale_prices"):
        lines += [f"{len(section['stale_prices'])} price(s) older than 180 days: re-read them (docs/cost.md).", ""]
    return "\n".join(lines)
