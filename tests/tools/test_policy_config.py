"""Policy config as the engine reads it: formats validated, one answer to "what day is it", `today` sent.

The engine validates each policy's properties with gojsonschema, which checks formats such as
`"format": "date"` (pulumi/pulumi pkg/resource/analyzer/config.go lines 210-228).
"""

from __future__ import annotations

from datetime import date

import pytest

from policies.gpu_guard.base import all_policies
from tests.policies.test_seed_scenarios import stack
from tests.shared import REPO
from tests.tools.test_gate_seed_scenarios import recorded
from tools.engine.gate import ConfigError, run_gate
from tools.engine.policy_config import resolve_today

LIFECYCLE = "gpu-driver-branch-lifecycle"
TAKES_TODAY = sorted(p.name for p in all_policies()
                     if p.config_schema is not None and "today" in p.config_schema.properties)


def test_cli_today_wins_over_the_config_file() -> None:
    assert resolve_today(date(2026, 11, 30), {LIFECYCLE: {"today": "2027-01-01"}}) == date(2026, 11, 30)


def test_the_config_files_today_answers_when_no_cli_date_is_given() -> None:
    assert resolve_today(None, {LIFECYCLE: {"today": "2027-01-01"}, "all": "mandatory"}) == date(2027, 1, 1)


def test_two_different_days_in_one_config_file_are_refused_naming_both() -> None:
    with pytest.raises(ConfigError, match=r"`a.today` = '2027-01-01', `b.today` = '2027-02-01'"):
        resolve_today(None, {"a": {"today": "2027-01-01"}, "b": {"today": "2027-02-01"}}, "prod.json")


def test_without_cli_or_config_date_it_is_the_real_date() -> None:
    assert resolve_today(None, None) == date.today()


def test_a_today_that_is_not_a_date_is_refused_by_the_schema_format_as_the_engine_does() -> None:
    with pytest.raises(ConfigError) as caught:
        run_gate([], pack_dir=REPO / "policies", stack="dev", project="gpu-platform",
                 policy_config={LIFECYCLE: {"today": "2026-13-45"}})

    assert caught.value.key == f"{LIFECYCLE}.today"
    assert "is not a 'date'" in str(caught.value)


def test_today_reaches_every_policy_that_takes_it() -> None:
    # A pack whose policies take `today` hear it from the gate even when the config file sets none.
    assert LIFECYCLE in TAKES_TODAY and "kubernetes-version-lifecycle" in TAKES_TODAY
    result = run_gate(recorded(stack()), pack_dir=REPO / "policies", stack="seed", project="gpu-platform",
                      today=date(2026, 5, 1))
    eol = [v.message for v in result.violations if v.policy == LIFECYCLE]

    assert eol == [], eol  # R535 ended in June 2026: on 2026-05-01 there is nothing to say
    later = run_gate(recorded(stack()), pack_dir=REPO / "policies", stack="seed", project="gpu-platform",
                     today=date(2026, 11, 30))
    assert [v for v in later.violations if v.policy == LIFECYCLE and "judged on 2026-11-30" in v.message]
