"""Every failing fixture's violations, word for word and with their level: tests/policies/golden/<policy>.yaml.

The fixtures pin the part of a message that says what is wrong; the golden files pin the whole text a
user reads (the resource named, the value found, the fix) so a changed word is a reviewed change. A
deliberate change: `GOLDEN_UPDATE=1 pytest tests/policies/test_golden_messages.py`, then read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from policies.gpu_guard.base import all_meta, all_policies, companions_of
from tests.policies.harness import FIXTURES, load_cases, run_with_caveats

GOLDEN = Path(__file__).parent / "golden"
POLICIES = {p.name: p for p in all_policies()}
MAIN = sorted(name for name, meta in all_meta().items() if meta.companion_of is None and (FIXTURES / name).is_dir())


def rendered(policy: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for case in load_cases(policy):
        if not case.name.startswith("fail_"):
            continue
        outcome = run_with_caveats(POLICIES[policy], companions_of(policy), case.resources, case.config)
        out[case.name] = sorted(f"{v.level} {v.policy}: {v.message}" for v in outcome.violations)
    return out


def test_every_policy_with_fixtures_has_a_golden_file():
    assert len(MAIN) >= 24
    missing = [p for p in MAIN if not (GOLDEN / f"{p}.yaml").is_file()]
    assert not missing or os.environ.get("GOLDEN_UPDATE") == "1", f"no golden file for {missing}"


@pytest.mark.parametrize("policy", MAIN)
def test_failing_fixtures_report_exactly_the_golden_messages(policy):
    path = GOLDEN / f"{policy}.yaml"
    actual = rendered(policy)
    assert actual, f"{policy} has no failing fixture"
    if os.environ.get("GOLDEN_UPDATE") == "1":
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(yaml.safe_dump(actual, width=10_000, allow_unicode=True, sort_keys=True), encoding="utf-8")
    expected = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert actual == expected, f"{policy}: messages differ from {path} (GOLDEN_UPDATE=1 to accept a deliberate change)"
