"""The e2e role's committed policies are the generator's output, parliament finds nothing above LOW in the
permissions policy, every AWS call the driver and the sweeper make is allowed, and the deny protects every
snapshot that does not carry the run tag."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tools.e2e import iam_policy
from tools.e2e.runid import RUN_TAG

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
    assert iam_policy.CLEANUP_ROLE_POLICY.read_text() == iam_policy.render(iam_policy.cleanup_role_policy())
    assert iam_policy.CLEANUP_TRUST_POLICY.read_text() == iam_policy.render(
        iam_policy.trust_policy(environment=iam_policy.CLEANUP_ENVIRONMENT))


def test_parliament_finds_nothing_above_low() -> None:
    policy = parliament.analyze_policy_string(json.dumps(iam_policy.role_policy()))
    found = [(f.issue, parliament.enhance_finding(f).severity) for f in policy.findings]
    # One known limit of parliament 1.6.4: it wants the alias and the key ARN of kms:CreateAlias in one statement;
    # IAM authorizes each resource by the statements that match it, so the key side lives in KmsOnlyTheRunsKeys
    # (conditioned on the run tag, which an alias cannot carry) and the alias side in KmsAliases.
    alias_side = [f for f in policy.findings if f.issue == "RESOURCE_MISMATCH"
                  and {d["action"] for d in f.detail} <= {"kms:CreateAlias", "kms:DeleteAlias", "kms:UpdateAlias"}]
    found = [(f.issue, parliament.enhance_finding(f).severity) for f in policy.findings if f not in alias_side]
    assert [f for f in found if f[1] not in ("MUTE", "INFO", "LOW")] == [], found
    # RESOURCE_STAR (LOW): the run creates resources whose names it does not know before `up`.
    assert {issue for issue, _ in found} <= {"RESOURCE_STAR"}


def _calls(root: Path = REPO / "tools" / "e2e") -> set[str]:
    """`client("svc").operation(` and `ctx.clients("svc").operation` calls, and `ec2.x(` on a variable bound to a
    client, in the modules under `root` (tools/e2e): as IAM actions."""
    actions: set[str] = set()
    for path in sorted(root.rglob("*.py")):
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


@pytest.mark.parametrize("environment", [iam_policy.RUN_ENVIRONMENT, iam_policy.CLEANUP_ENVIRONMENT])
def test_the_trust_is_github_oidc_for_e2e_yml_on_main_in_one_environment(environment: str) -> None:
    """The subject under docs/ci-cd.md's template (repo, context, job_workflow_ref): the environment alone matched
    the default template only, which that page tells users to replace, so the role was either unusable or loosened
    to a wildcard; and it pinned no workflow and no branch."""
    statement = iam_policy.trust_policy("123456789012", "acme/gpu-platform", environment)["Statement"][0]
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    condition = statement["Condition"]["StringEquals"]
    assert condition["token.actions.githubusercontent.com:sub"] == (
        f"repo:acme/gpu-platform:environment:{environment}:job_workflow_ref:acme/gpu-platform/.github/workflows/"
        "e2e.yml@refs/heads/main")
    assert condition["token.actions.githubusercontent.com:aud"] == "sts.amazonaws.com"
    assert set(statement["Condition"]) == {"StringEquals"}  # no StringLike wildcard beside it


def test_the_subject_follows_the_template_the_ci_docs_set() -> None:
    """docs/ci-cd.md's `include_claim_keys` gives the claims in this order; a subject of another shape never
    matches the token GitHub issues."""
    docs = (REPO / "docs" / "ci-cd.md").read_text()
    assert '"include_claim_keys": ["repo", "context", "job_workflow_ref"]' in docs
    sub = iam_policy.subject("prod-like", "o/r")
    assert re.fullmatch(r"repo:o/r:environment:prod-like:job_workflow_ref:o/r/\.github/workflows/e2e\.yml"
                        r"@refs/heads/main", sub)


def _allowed(policy: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(a, s) for s in policy["Statement"] if s["Effect"] == "Allow" for a in s["Action"]]


def test_the_cleanup_role_can_only_read_and_delete() -> None:
    verbs = iam_policy.READ_VERBS + iam_policy.DELETE_VERBS
    other = sorted({a for a, _ in _allowed(iam_policy.cleanup_role_policy())
                    if not a.split(":", 1)[1].startswith(verbs)})
    # sts:GetCallerIdentity and tag:GetResources are reads by their verb too
    assert other == []


def test_every_removal_of_the_cleanup_role_is_scoped_to_the_run() -> None:
    for action, statement in _allowed(iam_policy.cleanup_role_policy()):
        if not action.split(":", 1)[1].startswith(iam_policy.DELETE_VERBS):
            continue
        scoped = statement.get("Condition") or statement["Resource"] != "*"
        assert scoped, f"{action} is allowed on every resource"
        text = json.dumps(statement.get("Condition") or statement["Resource"])
        assert iam_policy.RUN_ID_GLOB in text, f"{action}: {text}"


def test_a_removal_left_open_is_found() -> None:
    policy = iam_policy.cleanup_role_policy()
    policy["Statement"].append({"Sid": "Open", "Effect": "Allow", "Action": ["ec2:DeleteVpc"], "Resource": "*"})
    with pytest.raises(AssertionError, match="ec2:DeleteVpc is allowed on every resource"):
        for action, statement in _allowed(policy):
            if action.split(":", 1)[1].startswith(iam_policy.DELETE_VERBS):
                assert statement.get("Condition") or statement["Resource"] != "*", (
                    f"{action} is allowed on every resource")


def test_every_call_of_the_sweep_is_allowed_to_the_cleanup_role() -> None:
    # IAM action names are case-insensitive (boto3's `open_id_connect` is IAM's `OpenIDConnect`).
    calls = {c.lower() for c in _calls(REPO / "tools" / "e2e" / "sweep")}
    removals = {c for c in calls if c.split(":", 1)[1].startswith(tuple(v.lower() for v in iam_policy.DELETE_VERBS))}
    assert removals == {a.lower() for a in iam_policy.SWEEP_DELETES}, "SWEEP_DELETES is not the sweeper's removals"
    allowed = {a.lower() for a, _ in _allowed(iam_policy.cleanup_role_policy())}
    assert sorted(calls - allowed) == []


def test_parliament_finds_nothing_above_low_in_the_cleanup_role() -> None:
    policy = parliament.analyze_policy_string(json.dumps(iam_policy.cleanup_role_policy()))
    found = [(f.issue, parliament.enhance_finding(f).severity) for f in policy.findings]
    assert [f for f in found if f[1] not in ("MUTE", "INFO", "LOW")] == [], found


def test_iam_star_is_narrowed_by_denies_that_no_call_of_the_run_needs() -> None:
    denies = {s["Sid"]: s for s in iam_policy.role_policy()["Statement"] if s["Effect"] == "Deny"}
    users = denies["NoUsersKeysOrPasswords"]
    assert {"iam:CreateUser", "iam:CreateAccessKey", "iam:CreateLoginProfile", "iam:AttachUserPolicy",
            "iam:PutUserPolicy"} <= set(users["Action"])
    admin = denies["NoAdministratorPolicies"]
    assert "iam:AttachRolePolicy" in admin["Action"]
    assert "arn:*:iam::aws:policy/AdministratorAccess" in admin["Condition"]["ArnLike"]["iam:PolicyARN"]
    itself = denies["NotThisRoleItself"]
    assert itself["Resource"] == ["arn:*:iam::*:role/gpu-platform-e2e", "arn:*:iam::*:role/gpu-platform-e2e-cleanup"]
    assert "iam:UpdateAssumeRolePolicy" in itself["Action"] and "iam:PutRolePolicy" in itself["Action"]
    # the driver and the sweeper call nothing an unconditional deny refuses
    refused = [re.compile("^" + re.escape(a).replace(r"\*", ".*") + "$", re.I) for a in users["Action"]]
    assert sorted(c for c in _calls() if any(p.match(c) for p in refused)) == []
    docs = (REPO / "docs" / "e2e.md").read_text()
    assert "--role-name gpu-platform-e2e" in docs


def test_the_run_role_grants_iam_kms_and_ssm_only_on_the_runs_own_or_public_resources() -> None:
    """It had `iam:*`, `kms:*` and `ssm:GetParameter*` on `*`: with those it could make itself a new administrator
    role, use any key, and read every parameter of the account (issue 54). Now IAM and KMS changes need the run
    tag on the resource (or in the create request), and SSM reads only AWS's public parameters."""
    for statement in iam_policy.role_policy()["Statement"]:
        if statement["Effect"] != "Allow":
            continue
        for action in statement["Action"]:
            service, name = action.split(":", 1)
            if service == "ssm":
                assert statement["Resource"] == "arn:aws:ssm:*:*:parameter/aws/service/*", action
            if service in ("iam", "kms") and not name.startswith(("Get", "List", "Describe")):
                condition = json.dumps(statement.get("Condition", {}))
                tagged = f"/{RUN_TAG}" in condition
                service_linked = action == "iam:CreateServiceLinkedRole" and "iam:AWSServiceName" in condition
                alias_side = action in ("kms:CreateAlias", "kms:DeleteAlias", "kms:UpdateAlias") and \
                    statement["Resource"] == "arn:aws:kms:*:*:alias/*"
                listing = action in ("kms:ListAliases", "kms:ListKeys")
                assert tagged or service_linked or alias_side or listing, f"{action} on {statement['Resource']}"
    passing = next(s for s in iam_policy.role_policy()["Statement"] if s["Action"] == ["iam:PassRole"])
    assert passing["Condition"]["StringEquals"]["iam:PassedToService"] == list(iam_policy.PASSED_TO)
