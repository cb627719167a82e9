"""The estimate as data (`cost_section`: the preview's `--json` cost section and `gpu-platform cost --json`), as a
table (`table`: markdown, which a terminal prints as it is), and the difference of two (`diff`, `diff_summary`: the
pull-request comment's line "prod: +$1,240/month expected (+1 pool gpu-big; ceiling +$9,800)").

A figure not estimated is `null` in the data and "not estimated" in the table, never 0; a total over such a line
is marked a lower bound ("at least") and names the lines it lacks.
"""

from __future__ import annotations

from typing import Any

from .estimate import FIGURES, Estimate, Line

SCHEMA = "gpu-platform/cost/v1"
_TITLES = {"at_rest": "at rest", "expected": "expected", "ceiling": "ceiling"}


def usd(value: float | None) -> str:
    return "not estimated" if value is None else f"${value:,.2f}"


def _signed(value: float) -> str:
    return f"{'+' if value >= 0 else '-'}${abs(value):,.0f}"


def _total(est: Estimate, figure: str) -> dict[str, Any]:
    missing = est.missing(figure)
    return {"usd": est.total(figure), "facts_usd": est.total(figure, facts_only=True),
            "complete": not missing, "not_estimated": [line.item for line in missing]}


def cost_section(est: Estimate) -> dict[str, Any]:
    """The estimate as one JSON-ready document: totals, every line with its arithmetic, the prices' age."""
    return {
        "schema": SCHEMA,
        "stack": est.stack,
        "region": est.region,
        "judged": est.judged.isoformat(),
        "hours_per_month": est.hours_per_month,
        "spot_discount": est.spot_discount,
        "totals": {figure: _total(est, figure) for figure in FIGURES},
        "lines": [{"kind": line.kind, "subject": line.subject, "item": line.item, "basis": line.basis,
                   "in_total": line.in_total, "key": line.key,
                   **{figure: {"usd": line.figure(figure).usd, "how": line.figure(figure).how} for figure in FIGURES},
                   "prices": [{"usd": p.usd, "unit": p.unit, "source": p.source, "date": p.date.isoformat()}
                              for p in line.prices]}
                  for line in est.lines],
        "stale_prices": [{"usd": p.usd, "unit": p.unit, "source": p.source, "date": p.date.isoformat()}
                         for p in est.stale_prices()],
    }


def _total_cell(est: Estimate, figure: str) -> str:
    total = est.total(figure)
    return f"**{usd(total)}**" if not est.missing(figure) else f"**at least {usd(total)}**"


def table(est: Estimate) -> str:
    """The estimate as a markdown table, its arithmetic below it."""
    rows = ["| line | basis | at rest | expected | ceiling |", "|---|---|---:|---:|---:|"]
    for line in est.lines:
        cells = [usd(line.figure(f).usd) for f in FIGURES]
        name = line.item if line.in_total else f"_{line.item}_"
        rows.append(f"| {name} | {line.basis} | {' | '.join(cells)} |")
    rows.append(f"| **total a month** | | {' | '.join(_total_cell(est, f) for f in FIGURES)} |")
    out = [f"### Cost estimate: {est.stack} ({est.region}, judged {est.judged.isoformat()}, "
           f"{est.hours_per_month} h a month)", "", *rows, ""]
    for figure in FIGURES:
        missing = est.missing(figure)
        if missing:
            out.append(f"- {_TITLES[figure]}: a lower bound; not estimated: "
                       + "; ".join(f"{line.item} ({line.figure(figure).how.removeprefix('not estimated: ')})"
                                   for line in missing))
    usage = [line for line in est.lines if line.basis == "usage"]
    if usage:
        out.append("- billed by usage, not in the figures: "
                   + "; ".join(f"{line.item} ({line.expected.how.removeprefix('not estimated: ')})" for line in usage))
    if any(line.basis == "assumption" for line in est.lines):
        out.append("- assumption: Spot lines are priced at " + (
            f"on-demand x (1 - {est.spot_discount:g}), the discount you set" if est.spot_discount is not None
            else "their on-demand price, an upper bound (no Spot discount set: policies/config/<stack>.json "
                 "cost-budget.spotDiscount, or --spot-discount)"))
    for price in est.stale_prices():
        out.append(f"- advisory: a price is older than 180 days on {est.judged.isoformat()}: {price.cite()}")
    out += ["", "How each figure is computed (expected):", ""]
    out += [f"- {line.item}: {line.expected.how}" for line in est.lines if line.basis != "usage"]
    return "\n".join(out)


def _lines_by_ident(est: Estimate) -> dict[str, Line]:
    return {line.ident: line for line in est.lines}


def diff(base: Estimate, head: Estimate) -> dict[str, Any]:
    """head - base, per figure (None when either side is a lower bound), and the lines added or removed."""
    out: dict[str, Any] = {"stack": head.stack}
    for figure in FIGURES:
        complete = not base.missing(figure) and not head.missing(figure)
        out[figure] = round(head.total(figure) - base.total(figure), 2) if complete else None
    old, new = _lines_by_ident(base), _lines_by_ident(head)
    out["added"] = [new[i].item for i in new if i not in old and new[i].basis != "usage"]
    out["removed"] = [old[i].item for i in old if i not in new and old[i].basis != "usage"]
    return out


def diff_summary(base: Estimate, head: Estimate) -> str:
    """One line for the pull-request comment: "prod: +$1,240/month expected (+1 line: ...; ceiling +$9,800)"."""
    d = diff(base, head)
    expected = d["expected"]
    head_part = (f"{_signed(expected)}/month expected" if expected is not None
                 else "expected change not estimated (a line on one side is not estimated)")
    parts = [f"+{len(d['added'])} line(s): {', '.join(d['added'])}"] if d["added"] else []
    parts += [f"-{len(d['removed'])} line(s): {', '.join(d['removed'])}"] if d["removed"] else []
    parts.append(f"ceiling {_signed(d['ceiling'])}" if d["ceiling"] is not None else "ceiling not estimated")
    return f"{d['stack']}: {head_part} ({'; '.join(parts)})"
