"""docs/cost.md's reference stacks, priced by hand, against the tool: the same quantities at the same prices, the same
USD to the cent, line by line and in total; and the hand arithmetic itself (quantity x price = the USD written)."""

from __future__ import annotations

import ast
import operator
import re
from datetime import date
from pathlib import Path

import pytest

from policies.gpu_guard.pricing.estimate import FIGURES, Estimate
from policies.gpu_guard.pricing.table import load
from tools.cost.__main__ import estimate_file

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "cost.md"
JUDGED = date(2026, 12, 7)
_MARK = re.compile(r"<!-- cost-reference: (\S+) (\S+) -->\n((?:\|.*\n)+)")
_CELL = re.compile(r"^(.+) = \$([0-9,]+\.\d\d)$")
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _eval(expression: str) -> float:
    """A quantity as the doc writes it: numbers, + - * / and parentheses."""
    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return float(_OPS[type(node.op)](walk(node.left), walk(node.right)))
        raise ValueError(f"docs/cost.md: {expression!r} is not arithmetic")
    return walk(ast.parse(expression, mode="eval").body)


def _usd(text: str) -> float:
    return float(text.replace(",", ""))


def references() -> list[tuple[str, str, list[list[str]]]]:
    found = []
    for stack, path, table in _MARK.findall(DOC.read_text(encoding="utf-8")):
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.splitlines()[2:]]
        found.append((stack, path, rows))
    return found


REFERENCES = references()


def test_the_three_reference_stacks_are_in_the_doc() -> None:
    assert [stack for stack, _, _ in REFERENCES] == ["dev", "prod", "llm70b"]


@pytest.mark.parametrize(("stack", "path", "rows"), REFERENCES, ids=[s for s, _, _ in REFERENCES])
def test_the_tool_prices_the_reference_stack_as_the_hand_does(stack: str, path: str, rows: list[list[str]]) -> None:
    est: Estimate = estimate_file(REPO / path, stack, JUDGED, None)
    table = load()
    lines = {line.ident: line for line in est.lines}
    *body, total = rows
    for ident_cell, price_cell, *cells in body:
        ident = ident_cell.strip("`")
        line = lines.pop(ident)
        price_text = price_cell.split("`")
        key = price_text[1]
        recorded = table.service(est.region, key) if "_" in key else table.instance(est.region, key)
        if price_text[0].strip():
            assert recorded is not None and recorded.usd == float(price_text[0]), (ident, key)
        for figure, cell in zip(FIGURES, cells, strict=True):
            if cell == "not estimated":
                assert line.figure(figure).usd is None, (ident, figure, line.figure(figure))
                continue
            match = _CELL.match(cell)
            assert match, (ident, cell)
            assert recorded is not None
            hand = round(_eval(match.group(1)) * recorded.usd, 2)
            assert hand == _usd(match.group(2)), f"{ident} {figure}: the hand arithmetic gives {hand}, written {cell}"
            assert line.figure(figure).usd == hand, (ident, figure, line.figure(figure).how)
    # Every line the tool counts in a total is in the hand table (usage lines and the snapshot are apart).
    assert [i for i, line in lines.items() if line.in_total and line.basis != "usage"] == []
    for figure, cell in zip(FIGURES, total[2:], strict=True):
        written = cell.strip("*")
        lower_bound = written.startswith("at least ")
        assert lower_bound == bool(est.missing(figure)), (figure, cell)
        assert _usd(written.removeprefix("at least ").lstrip("$")) == est.total(figure), (figure, cell)
        assert est.total(figure) == pytest.approx(sum(_usd(m.group(2)) for row in body
                                                      if (m := _CELL.match(row[2 + FIGURES.index(figure)]))))


def test_the_readme_says_what_dev_costs_as_the_tool_measures_it() -> None:
    est = estimate_file(REPO / "Pulumi.dev.yaml", "dev", JUDGED, None)
    first_screen = (REPO / "README.md").read_text(encoding="utf-8").split("## Quick start")[0]
    assert (f"USD {est.total('at_rest'):,.2f} a month at rest, USD {est.total('expected'):,.2f} expected"
            in " ".join(first_screen.split()))
    assert f"USD {est.total('ceiling'):,.2f} at the ceiling" in " ".join(first_screen.split())
