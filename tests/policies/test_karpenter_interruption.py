"""karpenter-interruption-handling: event names match upstream; outputs are linked through property dependencies."""

from __future__ import annotations

from typing import Any

import yaml
from pulumi_policy import PolicyResource, PolicyResourceOptions, StackValidationArgs
from pulumi_policy.policy import PolicyCustomTimeouts
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

from policies.gpu_guard.rules import karpenter_interruption_handling as rule
from policies.gpu_guard.rules._event_pattern import ALL, NONE, match
from tests.shared import upstream


class _CfnLoader(yaml.SafeLoader):
    """Accepts CloudFormation short-form tags (`!Sub`, `!GetAtt`, ...) as plain values."""


def _any_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_mapping(node)  # type: ignore[arg-type]


_CfnLoader.add_multi_constructor("!", _any_tag)


def test_required_events_are_exactly_the_upstream_template_rules():
    template = yaml.load(upstream("iam", "karpenter-cloudformation.yaml").read_text(), Loader=_CfnLoader)
    events = set()
    for resource in template["Resources"].values():
        if resource["Type"] != "AWS::Events::Rule":
            continue
        pattern = resource["Properties"]["EventPattern"]
        events |= {(s, d) for s in pattern["source"] for d in pattern["detail-type"]}
    assert events == set(rule.REQUIRED_EVENTS)
    assert ("aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning") in events


def test_the_upstream_template_rules_match_exactly_their_events_as_eventbridge_matches():
    # Karpenter's own CloudFormation is the judge of the matcher: each of its rules passes its event, no other.
    template = yaml.load(upstream("iam", "karpenter-cloudformation.yaml").read_text(), Loader=_CfnLoader)
    patterns = [r["Properties"]["EventPattern"] for r in template["Resources"].values()
                if r["Type"] == "AWS::Events::Rule"]
    for source, detail_type in rule.REQUIRED_EVENTS:
        event = {"version": "0", "source": source, "detail-type": detail_type}
        verdicts = [match(p, event, rule.KNOWN_FIELDS) for p in patterns]
        assert verdicts.count(ALL) == 1 and verdicts.count(NONE) == len(patterns) - 1, (source, detail_type, verdicts)


def _resource(rtype: str, name: str, props: dict[str, Any]) -> PolicyResource:
    opts = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], None)
    return PolicyResource(rtype, unknown_checking_proxy(props), f"urn:pulumi:test::p::{rtype}::{name}", name, opts,
                          None, None, [], {})


def _run(resources: list[PolicyResource]) -> list[str]:
    messages: list[str] = []

    def report(message: str, urn: str | None = None) -> None:
        messages.append(message)

    rule.validate(StackValidationArgs(resources, {}), report)
    return messages


def _stack(link: bool) -> list[PolicyResource]:
    release = _resource("kubernetes:helm.sh/v3:Release", "karpenter",
                        {"chart": "karpenter", "values": {"settings": {"interruptionQueue": UNKNOWN_STRING_VALUE}}})
    queue = _resource(rule.QUEUE, "interruption", {"messageRetentionSeconds": 300})
    rules, targets = [], []
    for i, (source, detail) in enumerate(rule.REQUIRED_EVENTS):
        event_rule = _resource(rule.EVENT_RULE, f"rule-{i}",
                               {"eventPattern": f'{{"source": ["{source}"], "detail-type": ["{detail}"]}}'})
        target = _resource(rule.EVENT_TARGET, f"target-{i}",
                           {"rule": UNKNOWN_STRING_VALUE, "arn": UNKNOWN_STRING_VALUE})
        if link:
            target.property_dependencies = {"rule": [event_rule], "arn": [queue]}
        rules.append(event_rule)
        targets.append(target)
    if link:
        release.property_dependencies = {"values": [queue]}
    return [release, queue, *rules, *targets]


def test_outputs_unknown_in_preview_are_linked_through_property_dependencies():
    assert _run(_stack(link=True)) == []


def test_a_target_linked_to_another_queue_does_not_count():
    stack = _stack(link=True)
    other = _resource(rule.QUEUE, "other", {})
    target = next(r for r in stack if r.name == "target-1")
    target.property_dependencies = {**target.property_dependencies, "arn": [other]}
    messages = _run([*stack, other])
    assert len(messages) == 1
    assert "EC2 Spot Instance Interruption Warning" in messages[0]
