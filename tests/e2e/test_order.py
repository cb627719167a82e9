"""The deletion order as data: every dependant before what it depends on (AWS's documented rules, each cited),
the issue's fixed order kept, and every kind of the order swept by a finder and a deleter."""

from __future__ import annotations

from tools.e2e.sweep.kinds import KINDS
from tools.e2e.sweep.order import BLOCKS, ISSUE_ORDER, SWEEP_ORDER, Block, violations


def test_every_dependant_goes_before_what_it_depends_on() -> None:
    assert violations() == []


def test_the_check_catches_an_order_that_deletes_a_dependency_first() -> None:
    swapped = list(SWEEP_ORDER)
    i, j = swapped.index("ec2-network-interface"), swapped.index("ec2-security-group")
    swapped[i], swapped[j] = swapped[j], swapped[i]
    found = violations(tuple(swapped))
    assert any(v.startswith("ec2-network-interface must go before ec2-security-group") for v in found)
    assert violations(SWEEP_ORDER, (Block("x", "ec2-vpc", "r", "s"),)) == ["x -> ec2-vpc: not in the order"]


def test_the_issue_order_is_kept_as_a_subsequence() -> None:
    assert [k for k in SWEEP_ORDER if k in ISSUE_ORDER] == list(ISSUE_ORDER)
    groups = [("eks-addon", "eks-nodegroup", "eks-cluster"), ("ec2-instance", "ec2-launch-template"),
              ("elb-load-balancer", "elb-target-group"), ("ec2-nat-gateway", "ec2-elastic-ip"),
              ("ec2-network-interface", "ec2-security-group"), ("ec2-subnet", "ec2-vpc"),
              ("ec2-volume", "ec2-snapshot"), ("logs-log-group",), ("iam-oidc-provider",),
              ("iam-instance-profile", "iam-role"), ("sqs-queue", "events-rule"), ("kms-key",)]
    assert [k for group in groups for k in group] == list(ISSUE_ORDER)


def test_every_rule_cites_aws_or_the_controller_documentation() -> None:
    for block in BLOCKS:
        assert block.source.startswith("https://"), block
        assert block.rule, block
    refused = {(b.dependant, b.dependency) for b in BLOCKS if b.kind == "refused"}
    # The refusals the issue names: a security group with attached ENIs, a role with instance profiles.
    assert ("ec2-network-interface", "ec2-security-group") in refused
    assert ("iam-instance-profile", "iam-role") in refused
    assert ("elb-load-balancer", "elb-target-group") in refused
    assert ("ec2-subnet", "ec2-vpc") in refused


def test_every_kind_of_the_order_has_a_finder_and_a_deleter() -> None:
    assert set(KINDS) == set(SWEEP_ORDER)
    assert len(SWEEP_ORDER) == len(set(SWEEP_ORDER))
