"""The CI roles' generated IAM policies (tools/ci_roles, docs/iam/): derived from the program, up to date, and the
preview role reads no data.

NO_DATA_READS is this test's own list, kept apart from the generator's tables: each action returns configuration or
metadata of a resource (Service Authorization Reference, the action's description), never its content. A new call
the generator allows must be added here by a person who checked that.
"""

from __future__ import annotations

import datetime
import fnmatch
import json
import types
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SHIPPED_DAY
from tests.shared import REPO
from tools.ci_roles import calls, documents
from tools.ci_roles import derive as derive_module
from tools.ci_roles.derive import DerivationError, ProgramUse, data_source_calls, derive

parliament = pytest.importorskip("parliament", reason="parliament is pinned in requirements-dev.txt")
parliament.override_config(str(Path(parliament.__file__).parent / "community_auditors" / "config_override.yaml"))

IAM = REPO / "docs" / "iam"
NO_DATA_READS = {
    "autoscaling:DescribeAutoScalingGroups",  # groups' configuration
    "ec2:DescribeAvailabilityZones", "ec2:DescribeImages", "ec2:DescribeInstanceTypeOfferings",
    "ec2:DescribeInstanceTypes", "ec2:DescribeRouteTables", "ec2:DescribeSubnets", "ec2:DescribeVpcAttribute",
    "ec2:DescribeVpcs",
    "eks:DescribeAccessEntry", "eks:DescribeAddonVersions", "eks:DescribeCluster", "eks:DescribeNodegroup",
    "eks:ListClusters", "eks:ListNodegroups",
    "iam:GetRole", "iam:ListRoles",  # a role's trust policy and tags
    "logs:DescribeLogGroups",  # groups' names, retention, key; not their events
    "sts:GetCallerIdentity",
    "ssm:GetParameter",  # only arn:aws:ssm:*::parameter/aws/service/*, the public AMI parameters (asserted below)
}
MUST_DENY = ("s3:GetObject", "s3:GetObjectVersion", "secretsmanager:GetSecretValue", "kms:Decrypt",
             "sqs:ReceiveMessage", "dynamodb:GetItem", "dynamodb:Query", "dynamodb:Scan", "logs:GetLogEvents",
             "ec2:DescribeInstanceAttribute",
             # issue 54: reads of ViewOnlyAccess v46 whose answers are customer data
             "lambda:ListFunctions", "ecs:DescribeTaskDefinition", "autoscaling:DescribeLaunchConfigurations",
             "ec2:DescribeSpotInstanceRequests", "ec2:DescribeSpotFleetRequests", "cloudformation:DescribeStacks",
             "cloudtrail:LookupEvents", "cognito-idp:ListUsers", "sns:GetSubscriptionAttributes",
             "sns:ListSubscriptions", "sagemaker:DescribeEndpointConfig", "lex:GetUtterancesView")
# Accepted parliament findings, with why (nothing above LOW otherwise, as tests/security/test_parliament.py).
ACCEPTED = {
    ("preview", "RESOURCE_MISMATCH"): "ssm:GetParameter on the public parameters, which have no account field",
    ("deploy", "RESOURCE_MISMATCH"): "the same statement in the deploy role",
    ("deploy", "PERMISSIONS_MANAGEMENT_ACTIONS"): "the deploy role creates the program's IAM roles and policies",
    ("deploy", "PRIVILEGE_ESCALATION"): "a role that creates roles and attaches policies can escalate; it is "
                                        "reached only from main behind prod's reviewers (docs/ci-cd.md)",
}


def _load(name: str) -> dict[str, Any]:
    return dict(json.loads((IAM / name).read_text(encoding="utf-8")))


def _statements(document: dict[str, Any], effect: str) -> list[dict[str, Any]]:
    return [s for s in document["Statement"] if s["Effect"] == effect]


def _actions(statement: dict[str, Any]) -> list[str]:
    action = statement["Action"]
    return [action] if isinstance(action, str) else list(action)


def test_every_action_the_preview_role_allows_reads_no_data() -> None:
    preview = _load("preview-role-policy.json")
    allowed = {a for s in _statements(preview, "Allow") for a in _actions(s)}
    assert allowed - NO_DATA_READS == set()
    assert not any("*" in a for a in allowed), "no wildcard: the exact calls only"
    parameters = [s for s in _statements(preview, "Allow") if "ssm:GetParameter" in _actions(s)]
    assert [s["Resource"] for s in parameters] == ["arn:aws:ssm:*::parameter/aws/service/*"]


def test_the_preview_role_carries_no_managed_policy() -> None:
    """ViewOnlyAccess allowed List/Describe/Get in every service, some of which answer with customer data (Lambda
    environment variables, task definitions, launch configurations' user data, CloudFormation outputs, CloudTrail
    events): a pull request could read them (issue 54). The role is the generated policy alone."""
    derivation = json.loads((IAM / "derivation.json").read_text(encoding="utf-8"))
    assert derivation["previewRole"]["managedPolicyArns"] == []
    docs = (REPO / "docs" / "ci-cd.md").read_text(encoding="utf-8")
    assert "`ViewOnlyAccess` + `preview-role-policy.json`" not in docs


def test_the_preview_role_denies_reads_of_data_and_the_accounts_own_parameters() -> None:
    preview = _load("preview-role-policy.json")
    denied = [(a, s["Resource"]) for s in _statements(preview, "Deny") for a in _actions(s)]
    for action in MUST_DENY:
        assert any(fnmatch.fnmatchcase(action, pattern) and resource == "*" for pattern, resource in denied), action
    parameters = {a for a, resource in denied if resource == "arn:aws:ssm:*:111122223333:parameter/*"}
    assert parameters == {"ssm:GetParameter", "ssm:GetParameters", "ssm:GetParametersByPath",
                          "ssm:GetParameterHistory"}
    # The public parameters have no account field, so the account's Deny leaves them allowed.
    assert not fnmatch.fnmatchcase("arn:aws:ssm:eu-west-1::parameter/aws/service/eks/optimized-ami/x",
                                   "arn:aws:ssm:*:111122223333:parameter/*")
    assert not any(fnmatch.fnmatchcase(allowed, denied_action) for s in _statements(preview, "Allow")
                   for allowed in _actions(s) if allowed != "ssm:GetParameter" for denied_action, _ in denied)


def test_the_deploy_role_holds_what_the_program_creates() -> None:
    deploy = {p.name: _load(p.name) for p in sorted(IAM.glob("deploy-role-policy-*.json"))}
    allowed = {a for doc in deploy.values() for s in _statements(doc, "Allow") for a in _actions(s)}
    # What the issue found missing from the old prose list: KMS, CloudWatch Logs, SQS, EventBridge, EBS fast
    # snapshot restore; then a sample of every service.
    for action in ("kms:CreateKey", "kms:PutKeyPolicy", "logs:CreateLogGroup", "logs:PutRetentionPolicy",
                   "sqs:CreateQueue", "sqs:SetQueueAttributes", "events:PutRule", "events:PutTargets",
                   "ec2:EnableFastSnapshotRestores", "eks:CreateCluster", "eks:CreateAccessEntry", "iam:CreateRole",
                   "ec2:CreateNatGateway", "iam:PassRole"):
        assert action in allowed, action
    passes = [s for doc in deploy.values() for s in _statements(doc, "Allow") if "iam:PassRole" in _actions(s)]
    assert passes == [{"Sid": "PassProgramRolesToTheirServices", "Effect": "Allow", "Action": ["iam:PassRole"],
                       "Resource": "arn:aws:iam::111122223333:role/*",
                       "Condition": {"StringEquals": {"iam:PassedToService": list(calls.PASSED_TO)}}}]
    for name, doc in deploy.items():
        assert documents.policy_size(doc) <= documents.MANAGED_POLICY_LIMIT, name


@pytest.mark.parametrize("name", sorted(p.name for p in IAM.glob("*policy*.json")))
def test_parliament_finds_nothing_above_low_but_the_accepted(name: str) -> None:
    role = name.split("-", 1)[0]
    policy = parliament.analyze_policy_string((IAM / name).read_text(encoding="utf-8"), ignore_private_auditors=True,
                                              include_community_auditors=True)
    severities = ("MUTE", "INFO", "LOW")
    found = [(f.issue, parliament.enhance_finding(f).severity) for f in policy.findings]
    assert [(issue, s) for issue, s in found if s not in severities and (role, issue) not in ACCEPTED] == []


@pytest.fixture(scope="module")
def derived() -> ProgramUse:
    # The shipped stacks run at the day the other stack tests pin: a year ahead, EKS 1.35 is past standard support
    # and the stack file is refused, which says nothing about the resource types the program registers.
    return derive(REPO, datetime.date.fromisoformat(SHIPPED_DAY))


def test_the_derivation_runs_every_stack_at_the_day_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, str, object]] = []

    def recording(project: object, stack: str, config: object, phase: str, today: object = None) -> object:
        seen.append((stack, phase, today))
        return types.SimpleNamespace(resources=[])

    monkeypatch.setattr(derive_module, "run_program", recording)
    day = datetime.date(2027, 12, 7)
    assert derive_module.resource_types(REPO, day) == {}
    assert seen and {today for _, _, today in seen} == {day}
    assert {phase for _, phase, _ in seen} == set(derive_module.PHASES)


def test_the_generated_files_are_what_the_program_derives_now(derived: ProgramUse) -> None:
    files = documents.render(derived)
    assert sorted(files) == sorted(p.name for p in IAM.glob("*.json"))
    for name, text in files.items():
        assert (IAM / name).read_text(encoding="utf-8") == text, f"{name}: out of date; run python -m tools.ci_roles"


def test_the_derivation_reads_calls_no_offline_run_reaches(derived: ProgramUse) -> None:
    # components/image_roll.py asks for a node group's and an Auto Scaling group's tags only on an existing stack.
    assert "aws:eks/getNodeGroup:getNodeGroup" in derived.data_sources
    assert "aws:autoscaling/getGroup:getGroup" in derived.data_sources
    assert "aws:sqs/queue:Queue" in derived.resource_types


def test_an_unknown_data_source_or_resource_type_stops_the_generator_naming_it(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("import pulumi_aws as cloud\n\ncloud.s3.get_bucket_object(bucket='b', key='k')\n")
    use = ProgramUse(data_source_calls([tmp_path / "x.py"], tmp_path), {"aws:s3/bucket:Bucket": ("dev",)})
    assert use.data_sources == {"aws:s3/getBucketObject:getBucketObject": ("x.py:3",)}
    with pytest.raises(DerivationError, match=r"aws:s3/getBucketObject:getBucketObject \(at x.py:3\)"):
        documents.preview_calls(use)
    with pytest.raises(DerivationError, match=r"aws:s3/bucket:Bucket \(stacks dev\)"):
        documents.deploy_actions(use)


def test_a_from_import_of_the_provider_is_one_error(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("from pulumi_aws import ssm\n")
    with pytest.raises(DerivationError, match=r"x\.py: `from pulumi_aws\.\.\. import`"):
        data_source_calls([tmp_path / "x.py"], tmp_path)


def test_a_bad_account_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert documents.main(["--account", "12345", "--check"]) == 2
    assert "not a 12-digit AWS account id" in capsys.readouterr().err


def test_another_account_needs_out_and_never_overwrites_the_tracked_docs_iam(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 56: `--account <yours>` wrote over the tracked docs/iam/ unless --out was given."""
    before = {p.name: p.read_bytes() for p in (REPO / "docs" / "iam").glob("*.json")}
    assert documents.main(["--account", "210987654321"]) == 2
    assert "add --out DIR" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in (REPO / "docs" / "iam").glob("*.json")} == before

