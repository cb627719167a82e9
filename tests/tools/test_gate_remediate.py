"""The policy gate with remediate-level policies: a real pack (tests/tools/fixtures/remediate_pack).

The engine runs two passes per resource, Remediate first and then Analyze on the remediated inputs
(pulumi/pulumi pkg/resource/deploy/step_generator.go, "We do two passes: first we perform
remediations, and *then* we do analysis"), in preview too. A violation Analyze still reports at
REMEDIATE is reported as MANDATORY (pulumi_policy/policy.py, _PolicyAnalyzerServicer.Analyze: "if we
ran a remediation, but we are still somehow triggering a violation"); a remediation-only policy is not
applicable to Analyze; a stack may raise a policy to remediate (as strong as mandatory), never lower
one from it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.conftest import MakeResource
from tools.engine.gate import ConfigError, GateResult, run_gate
from tools.engine.records import RecordedResource

PACK = Path(__file__).resolve().parent / "fixtures" / "remediate_pack"


def _gate(resources: list[RecordedResource], config: dict[str, object] | None = None) -> GateResult:
    return run_gate(resources, pack_dir=PACK, stack="dev", project="sample", policy_config=config)


def _widget(make_resource: MakeResource, size: int, color: str = "blue") -> list[RecordedResource]:
    return [make_resource("w", "sample:index:Widget", {"size": size, "color": color, "tags": {"owner": "x"}})]


def test_a_remediate_policy_is_described_at_its_remediate_level(make_resource):
    result = _gate([])
    levels = {p.name: (p.default_enforcement, p.enforcement) for p in result.policies}
    assert levels == {"widget-size-clamp": ("remediate", "remediate"), "widget-owner-tag": ("remediate", "remediate"),
                      "widget-color": ("advisory", "advisory")}


def test_a_remediation_runs_before_analysis_as_in_the_engine(make_resource):
    result = _gate(_widget(make_resource, 20))
    assert result.violations == ()
    assert ("widget-size-clamp", "urn:pulumi:dev::sample::sample:index:Widget::w") in result.remediated


def test_a_compliant_widget_gives_nothing_and_the_remediation_only_policy_is_not_applicable(make_resource):
    result = _gate(_widget(make_resource, 3))
    assert result.violations == ()
    assert ("widget-owner-tag", "Policy does not implement validate") in result.not_applicable


def test_config_may_raise_an_advisory_policy_to_remediate_and_its_violation_then_blocks(make_resource):
    result = _gate(_widget(make_resource, 3, color="red"), {"widget-color": "remediate"})
    assert [(v.policy, v.enforcement) for v in result.violations] == [("widget-color", "mandatory")]
    assert {p.name: p.enforcement for p in result.policies}["widget-color"] == "remediate"
    advisory = _gate(_widget(make_resource, 3, color="red"))
    assert [(v.policy, v.enforcement) for v in advisory.violations] == [("widget-color", "advisory")]


def test_config_may_set_remediate_to_mandatory_which_is_as_strong(make_resource):
    result = _gate(_widget(make_resource, 20), {"widget-size-clamp": "mandatory"})
    assert [(v.policy, v.enforcement) for v in result.violations] == [("widget-size-clamp", "mandatory")]


@pytest.mark.parametrize("lowered", ["advisory", "disabled"])
def test_config_may_not_lower_a_remediate_policy(lowered):
    with pytest.raises(ConfigError, match=f"lowers policy `widget-size-clamp` from remediate to {lowered}"):
        _gate([], {"widget-size-clamp": lowered})
