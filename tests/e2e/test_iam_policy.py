"""The e2e role's committed policies are the generator's output, parliament finds nothing above LOW in the
permissions policy, every AWS call the driver and the sweeper make is allowed, and the deny protects every
snapshot that does not carry the run tag."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from tools.e2e import iam_policy

REPO = Path(__file__).resolve().parents[2]
parliament = pytest.importorskip("parliament", reason="parliament is pinned in requirements-dev.txt")

# boto3 client names -> IAM service prefixes.
PREFIX = {"ec2": "ec2", "eks": "eks", "elbv2": "elasticloadbalancing", "iam": "iam", "logs": "logs", "sqs": "sqs",
          "events": "events", "kms": "kms", "ebs": "ebs", "ssm": "ssm", "sts": "sts",
          "service-quotas": "servicequotas", "resourcegroupstaggingapi": "tag", "autoscaling": "autoscaling"}

ALIASES = {"quotas": "service-quotas", "tagging": "resourcegroupstaggingapi", "elb": "elbv2"}


def test_the_committed_files_are_the_generators_output() -> None:
    assert iam_policy.ROLE_POLICY.read_text() == iam_policy.render(iam_policy.role_policy())
    assert iam_policy.TRUST_POLICY.read_text() == iam_policy.render(iam_policy.trust_policy())


def test_parliament_finds_nothing_above_low() -> None:
    policy = parliament.analyze_policy_string(json.dumps(iam_policy.role_policy()))
    found = [(f.issue, parliament.enhance_finding(f).severity) for f in policy.findings]
    assert [f for f in found if f[1] not in ("MUTE", "INFO", "LOW")] == []
    # RESOURCE_STAR (LOW): the run creates resources whose names it does not know before `up`.
    assert {issue for issue, _ in found} <= {"RESOURCE_STAR"}


def _calls() -> set[str]:
    """`client("svc").operation(` and `ctx.clients("svc").operation` calls, and `ec2.x(` on a variable bound to a
    client, in tools/e2e: as IAM actions."""
    actions: set[str] = set()
    for path in sorted((REPO / "tools" / "e2e").rglob("*.py")):
        tree = ast.parse(path.read_text())
        # A parameter named after its service (`ebs`, `ec2`, `quotas`, ...) is that service's client.
        bound: dict[str, str] = {a.arg: ALIASES.get(a.arg, a.arg) for a in ast.walk(tree) if isinstance(a, ast.arg)
                                 and ALIASES.get(a.arg, a.arg) in PREFIX}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.value.args
                    and isinstance(node.value.args[0], ast.Constant) and isinstance(node.value.args[0].value, str)
                    and node.value.args[0].value in PREFIX and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)):
                bound[node.targets[0].id] = node.value.args[0].value
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            owner = node.value
            service = None
            if isinstance(owner, ast.Name) and owner.id in bound:
                service = bound[owner.id]
            elif (isinstance(owner, ast.Call) and owner.args and isinstance(owner.args[0], ast.Constant)
                  and owner.args[0].value in PREFIX):
                service = str(owner.args[0].value)
            if service is None or node.attr in ("get_paginator", "can_paginate", "get_waiter", "exceptions"):
                continue
            action = "".join(part.capitalize() for part in node.attr.split("_"))
            actions.add(f"{PREFIX[service]}:{action}")
    return actions


def test_every_call_of_the_driver_and_the_sweeper_is_allowed() -> None:
    calls = _calls()
    assert "ec2:DeleteSecurityGroup" in calls and "ebs:PutSnapshotBlock" in calls and "iam:DeleteRole" in calls
    assert "autoscaling:DeleteAutoScalingGroup" in calls and "iam:DeletePolicyVersion" in calls
    allowed = [a for s in iam_policy.role_policy()["Statement"] if s["Effect"] == "Allow" for a in s["Action"]]
    patterns = [re.compile("^" + re.escape(a).replace(r"\*", ".*") + "$", re.I) for a in allowed]
    missing = sorted(c for c in calls if not any(p.match(c) for p in patterns))
    assert missing == []


def test_snapshots_without_the_run_tag_cannot_be_deleted() -> None:
    deny = [s for s in iam_policy.role_policy()["Statement"] if s["Effect"] == "Deny"]
    assert deny[0]["Action"] == ["ec2:DeleteSnapshot", "ec2:ModifySnapshotAttribute"]
    assert deny[0]["Condition"] == {"Null": {"aws:ResourceTag/gpu-platform.io/e2e-run": "true"}}


def test_the_trust_is_github_oidc_for_the_e2e_environment_only() -> None:
    statement = iam_policy.trust_policy("123456789012", "acme/gpu-platform")["Statement"][0]
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    condition = statement["Condition"]["StringEquals"]
    assert condition["token.actions.githubusercontent.com:sub"] == "repo:acme/gpu-platform:environment:e2e"
    assert condition["token.actions.githubusercontent.com:aud"] == "sts.amazonaws.com"


def test_iam_star_is_narrowed_by_denies_that_no_call_of_the_run_needs() -> None:
    denies = {s["Sid"]: s for s in iam_policy.role_policy()["Statement"] if s["Effect"] == "Deny"}
    users = denies["NoUsersKeysOrPasswords"]
    assert {"iam:CreateUser", "iam:CreateAccessKey", "iam:CreateLoginProfile", "iam:AttachUserPolicy",
            "iam:PutUserPolicy"} <= set(users["Action"])
    admin = denies["NoAdministratorPolicies"]
    assert "iam:AttachRolePolicy" in admin["Action"]
    assert "arn:*:iam::aws:policy/AdministratorAccess" in admin["Condition"]["ArnLike"]["iam:PolicyARN"]
    itself = denies["NotThisRoleItself"]
    assert itself["Resource"] == "arn:*:iam::*:role/gpu-platform-e2e"
    assert "iam:UpdateAssumeRolePolicy" in itself["Action"] and "iam:PutRolePolicy" in itself["Action"]
    # the driver and the sweeper call nothing an unconditional deny refuses
    refused = [re.compile("^" + re.escape(a).replace(r"\*", ".*") + "$", re.I) for a in users["Action"]]
    assert sorted(c for c in _calls() if any(p.match(c) for p in refused)) == []
    docs = (REPO / "docs" / "e2e.md").read_text()
    assert "--role-name gpu-platform-e2e" in docs
