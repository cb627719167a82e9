"""cost-budget in the offline preview of the shipped dev stack: the pack prices the program's resources and a budget
below the recorded-price lower bound blocks at the level the policy config gives it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_preview_process


def test_a_budget_below_the_dev_stack_blocks_its_preview(tmp_path: Path) -> None:
    config = tmp_path / "dev.json"
    config.write_text(json.dumps({"cost-budget": {"enforcementLevel": "mandatory", "expectedUsd": 250}}))
    run = run_preview_process("--stack", "dev", "--today", "2026-12-07", "--phase", "update", "--json",
                              "--policy-config", str(config))
    doc = json.loads(run.stdout)
    found = [v for v in doc["findings"] if v["policy"] == "cost-budget"]
    assert run.returncode == 1, run.stderr
    assert [v["level"] for v in found] == ["mandatory"]
    # The lines from recorded prices only (the Spot GPU group and pool are an assumption: left out of the bound).
    assert "expected monthly cost of this stack is at least USD 280.75" in found[0]["message"]
    assert "above the budget cost-budget.expectedUsd = USD 250.00" in found[0]["message"]
    assert doc["cost"]["totals"]["expected"]["facts_usd"] == 280.75
