"""The fixture harness itself: a verdict matches only on message AND enforcement level."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from pulumi_policy import ReportViolation, StackValidationArgs

from policies.gpu_guard.base import all_policies, companions_of
from tests.policies.harness import (
    Case,
    Expected,
    Outcome,
    Violation,
    load_cases,
    match_case,
    run_policy,
    run_with_caveats,
)

POLICIES = {p.name: p for p in all_policies()}


def _case(policy: str, name: str) -> Case:
    return next(c for c in load_cases(policy) if c.name == name)


def test_a_fixture_whose_finding_is_demoted_to_advisory_fails():
    case = _case("alb-https-only", "fail_without_ssl_redirect")
    assert [e.level for e in case.expect] == ["mandatory"]
    demoted = run_policy(POLICIES["alb-https-only"], case.resources, {"enforcementLevel": "advisory"})
    assert [v.level for v in demoted.violations] == ["advisory"]
    problems, _ = match_case(demoted, case)
    assert problems and "no violation matches mandatory" in problems[0]


def test_the_caveats_twins_advisory_text_does_not_satisfy_an_expected_mandatory():
    case = _case("cuda-driver-compatible", "fail_cuda_12_8_on_r535_minor_version_compat")
    outcome = run_with_caveats(POLICIES["cuda-driver-compatible"], companions_of("cuda-driver-compatible"),
                               case.resources, case.config)
    assert {v.policy for v in outcome.violations} == {"cuda-driver-compatible-caveats"}
    assert match_case(outcome, case) == ([], list(outcome.violations))
    as_mandatory = dataclasses.replace(case, expect=tuple(Expected("mandatory", e.text) for e in case.expect))
    problems, matched = match_case(outcome, as_mandatory)
    assert not matched
    assert len(problems) == len(case.expect) + 1  # each expectation unmatched, and the advisories left over


def test_stack_policy_config_raises_the_level_and_the_policy_never_sees_enforcement_level(monkeypatch):
    case = _case("alb-https-only", "fail_without_ssl_redirect")
    raised = run_policy(POLICIES["alb-https-only"], case.resources, {"enforcementLevel": "mandatory"})
    assert [v.level for v in raised.violations] == ["mandatory"]

    cuda = _case("cuda-driver-compatible", "fail_cuda_12_8_on_r535_minor_version_compat")
    twin = companions_of("cuda-driver-compatible")[0]
    original = getattr(twin, "validate")  # noqa: B009 - Policy does not declare validate; its subclasses do
    seen: list[dict[str, Any]] = []

    def spying(args: StackValidationArgs, report: ReportViolation) -> None:
        seen.append(dict(args.get_config()))
        original(args, report)

    monkeypatch.setattr(twin, "validate", spying)
    outcome = run_with_caveats(POLICIES["cuda-driver-compatible"], [twin], cuda.resources,
                               {"enforcementLevel": "mandatory", "today": "2026-11-29"})
    assert seen == [{"today": "2026-11-29"}]  # the twin got the properties, not the policy's level
    assert {v.level for v in outcome.violations if v.policy == twin.name} == {"advisory"}


def test_an_unknown_enforcement_level_in_fixture_config_is_refused():
    with pytest.raises(ValueError, match="enforcementLevel='blocking' is not one of advisory, mandatory, remediate"):
        run_policy(POLICIES["alb-https-only"], [], {"enforcementLevel": "blocking"})


@pytest.mark.parametrize(("item", "error"), [
    ("Internet-facing ALB", "does not name its enforcement level"),
    ({"blocking": "Internet-facing ALB"}, "level 'blocking' is not one of"),
    ({"mandatory": ""}, "has no message text"),
    ({"advisory": "[advisory] Deployment"}, "drop the mark"),
])
def test_an_expectation_without_a_valid_level_is_refused_with_the_fix(tmp_path: Path, monkeypatch, item, error):
    import yaml  # noqa: PLC0415

    from tests.policies import harness  # noqa: PLC0415

    folder = tmp_path / "alb-https-only"
    folder.mkdir()
    source = harness.FIXTURES / "alb-https-only" / "baseline.yaml"
    (folder / "baseline.yaml").write_text(source.read_text())
    (folder / "fail_x.yaml").write_text(yaml.safe_dump({"expect": [item]}))
    monkeypatch.setattr(harness, "FIXTURES", tmp_path)
    with pytest.raises(ValueError, match=error):
        harness.load_cases("alb-https-only")


def test_an_unknown_fixture_still_checks_the_other_violations():
    case = _case("alb-waf-attached", "fail_unknown_waf_arn")
    assert case.expect_unknown
    outcome = Outcome(("x",), "can't be known", (Violation("alb-waf-attached", "mandatory", "x"),))
    problems, _ = match_case(outcome, case)
    assert problems == ["alb-waf-attached/fail_unknown_waf_arn: unexpected violations ['mandatory: x']"]
    assert match_case(Outcome((), "can't be known", ()), case) == ([], [])
    problems, _ = match_case(Outcome((), None, ()), case)
    assert problems == ["alb-waf-attached/fail_unknown_waf_arn: expected the policy to report it cannot judge"]
