"""One day per run: `--today` reaches the program's fail-fast lifecycle check and the pack alike.

The EKS version sits inside pulumi-eks's `eks:index:Cluster`, a remote component whose inputs the offline
gate never analyzes (the engine does not either), so `kubernetes-version-lifecycle` cannot see it offline.
The program's own config check judges it instead, on the same day the pack judges driver end of life:
`policies.gpu_guard.calendar` is the one place that turns "no day given" into the real date.
"""

from __future__ import annotations

import json
from datetime import date

import pytest

from policies.gpu_guard.calendar import TODAY_ENV, judging_day, parse_day, program_day
from policies.gpu_guard.matrix import load_matrix
from tests.conftest import SHIPPED_DAY, RunPreview
from tests.shared import REPO

PROD = ("--stack", "prod", "--policy-config", "policies/config/prod.json")


def _end_standard(version: str) -> date:
    row = next(r for r in load_matrix().data.eks_versions if r.version == version)
    assert row.end_standard is not None
    return row.end_standard


def test_prod_on_the_last_day_of_standard_support_passes(run_preview: RunPreview) -> None:
    last = _end_standard("1.35")
    run = run_preview(*PROD, "--today", last.isoformat())
    assert run.returncode == 0, run.stderr


def test_prod_the_day_after_standard_support_is_refused_by_the_program(run_preview: RunPreview) -> None:
    day_after = date.fromordinal(_end_standard("1.35").toordinal() + 1)
    run = run_preview(*PROD, "--today", day_after.isoformat())
    assert run.returncode == 2, run.stdout
    assert 'cluster.kubernetesVersion = "1.35": EKS 1.35 left standard support on' in run.stderr
    assert "The upgrade policy is STANDARD" in run.stderr


def test_the_policy_config_today_reaches_the_program_too(run_preview: RunPreview, tmp_path) -> None:
    day_after = date.fromordinal(_end_standard("1.35").toordinal() + 1)
    config = tmp_path / "prod-later.json"
    config.write_text(json.dumps({"gpu-driver-branch-lifecycle": {"enforcementLevel": "mandatory",
                                                                  "today": day_after.isoformat()}}))
    run = run_preview("--stack", "prod", "--policy-config", str(config))
    assert run.returncode == 2, run.stdout
    assert "left standard support" in run.stderr


def test_judging_day_takes_a_date_an_iso_string_or_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    assert judging_day(date(2027, 1, 2)) == date(2027, 1, 2)
    assert judging_day("2027-01-02") == date(2027, 1, 2)
    assert judging_day(None) == date.today()
    assert judging_day("") == date.today()
    with pytest.raises(ValueError, match=r"today='2027-13-01' is not an ISO date; set it as YYYY-MM-DD"):
        judging_day("2027-13-01")
    with pytest.raises(ValueError, match=r"^when='x' is not an ISO date"):
        parse_day("x", "when")


def test_the_program_reads_its_day_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TODAY_ENV, "2030-05-06")
    assert program_day() == date(2030, 5, 6)
    monkeypatch.setenv(TODAY_ENV, "06/05/2030")
    with pytest.raises(ValueError, match=f"{TODAY_ENV}='06/05/2030' is not an ISO date"):
        program_day()
    monkeypatch.delenv(TODAY_ENV)
    assert program_day() == date.today()


def test_the_tests_judge_the_shipped_stacks_at_the_gates_day() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert f"GATE_TODAY := {SHIPPED_DAY}\n" in makefile, "tests/conftest.py SHIPPED_DAY and Makefile GATE_TODAY differ"
