"""parliament (duo-labs) over every IAM policy document the program produces: nothing above LOW but the allow-list.

parliament is pinned in requirements-dev.txt; the module skips, saying so, where it is not installed.
Severity comes from parliament's own config.yaml (`parliament.enhance_finding`).
Source: https://github.com/duo-labs/parliament (README: "Custom config file", finding severities).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.security.documents import STACKS, PolicyDocument, policy_documents

parliament = pytest.importorskip("parliament", reason="parliament is pinned in requirements-dev.txt")

SEVERITIES = ("MUTE", "INFO", "LOW", "MEDIUM", "HIGH", "CRITICAL")

# The community auditors' own findings (PERMISSIONS_MANAGEMENT_ACTIONS, ...) get their severities from the file
# parliament's CLI loads with --include-community-auditors (parliament/cli.py; community_auditors/config_override.yaml).
parliament.override_config(str(Path(parliament.__file__).parent / "community_auditors" / "config_override.yaml"))


@dataclass(frozen=True)
class Allowed:
    """A finding kept on purpose: which issue, on which kind of document, and why."""

    issue: str
    detail: str  # the finding's detail, exactly; "" with `document` set: any detail on that document
    trust_policies_only: bool
    reason: str
    document: str = ""  # the document's name (PolicyDocument.where without the stack), when the entry is for one


# The documented allow-list (docs/testing.md, "Scanners", repeats it).
ALLOW = (
    Allowed("MALFORMED", "Statement contains neither Resource nor NotResource", True,
            "parliament 1.6.4 reads every document as an identity policy; a role trust policy names a Principal "
            "and has no Resource by the IAM grammar (https://docs.aws.amazon.com/IAM/latest/UserGuide/"
            "reference_policies_elements_principal.html)"),
    Allowed("RESOURCE_MISMATCH", "", False,
            "Karpenter's controller policy splits ec2:RunInstances / ec2:CreateFleet over several statements by "
            "resource type (instances, volumes, network interfaces and launch templates scoped by the cluster's tag "
            "in one; images, subnets and security groups in another), as the upstream template does "
            "(https://karpenter.sh/docs/reference/cloudformation/); IAM authorises each resource of the request "
            "against the statements that match it, so no single statement must list them all. parliament reads "
            "each statement alone", document="karpenter-controller-node-lifecycle policy"),
    Allowed("RESOURCE_MISMATCH", "", False,
            "ssm:GetParameter on the public AWS parameters arn:<partition>:ssm:<region>::parameter/aws/service/*, "
            "which have no account field (as upstream's AllowSSMReadActions); parliament's pattern wants one",
            document="karpenter-controller-resource-discovery policy"),
    Allowed("PERMISSIONS_MANAGEMENT_ACTIONS", "", False,
            "iam:PassRole on the one node role Karpenter launches instances with, only to ec2.amazonaws.com "
            "(iam:PassedToService), as upstream's AllowPassingInstanceRole; without it no node can start",
            document="karpenter-controller-integration policy"),
    Allowed("UNKNOWN_CONDITION_FOR_ACTION",
            "Unknown condition elasticloadbalancing:CreateAction for action elasticloadbalancing:AddTags", False,
            "the AWS Load Balancer Controller's upstream policy (kept statement for statement, "
            "tests/components/test_addons.py) scopes AddTags to tagging on create with this key, which the "
            "service authorization reference lists for AddTags and parliament 1.6.4's database lacks "
            "(https://docs.aws.amazon.com/service-authorization/latest/reference/list_awselasticloadbalancingv2.html)"),
)


def findings(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(issue, severity, detail) of every parliament finding on one document, community auditors included."""
    policy = parliament.analyze_policy_string(json.dumps(document), ignore_private_auditors=True,
                                              include_community_auditors=True)
    return [(f.issue, parliament.enhance_finding(f).severity, str(f.detail)) for f in policy.findings]


def _allowed(document: PolicyDocument, issue: str, detail: str) -> bool:
    return any(a.issue == issue
               and (a.detail == detail if not a.document else document.where.endswith(f": {a.document}"))
               and (document.is_trust_or_resource_policy or not a.trust_policies_only) for a in ALLOW)


def above_low(document: PolicyDocument) -> list[tuple[str, str, str]]:
    return [f for f in findings(document.document)
            if SEVERITIES.index(f[1]) > SEVERITIES.index("LOW") and not _allowed(document, f[0], f[2])]


@pytest.mark.parametrize("stack", STACKS)
def test_no_iam_document_has_a_finding_above_low_outside_the_allow_list(stack: str):
    documents = policy_documents(stack)
    assert documents, "the program produced no IAM document to scan"
    assert {d.where: above_low(d) for d in documents} == {d.where: [] for d in documents}


def test_the_allow_list_only_covers_trust_policies():
    identity = PolicyDocument("t", "r", "policy", {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:GetObject"}]})
    assert [f[0] for f in above_low(identity)] == ["MALFORMED"]


@pytest.mark.parametrize(("statement", "issue"), [
    ({"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::bucket"}, "RESOURCE_MISMATCH"),
    ({"Effect": "Allow", "Action": "ec2:DescribeInstances", "Resource": "*", "Condition": {
        "StringEquals": {"ec2:ResourceTag/x": "y"}}}, "UNKNOWN_CONDITION_FOR_ACTION"),
])
def test_parliament_flags_what_it_must(statement: dict[str, Any], issue: str):
    document = PolicyDocument("t", "r", "policy", {"Version": "2012-10-17", "Statement": [statement]})
    assert issue in [f[0] for f in above_low(document)]


def test_an_allow_list_entry_for_one_document_covers_no_other():
    other = PolicyDocument("dev", "some-controller", "policy", {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "iam:PassRole", "Resource": "arn:aws:iam::111122223333:role/x"}]})
    assert "PERMISSIONS_MANAGEMENT_ACTIONS" in [f[0] for f in above_low(other)]


# What the scan must include: the node role, Karpenter's controller and node roles, its queue policy, and every
# add-on role (EBS CSI in both stacks, the AWS Load Balancer Controller where a service has an Ingress). KEDA calls
# no AWS API (Prometheus scaler) and has no document; the EBS CSI role's permissions are the AWS-managed policy.
EXPECTED_DOCUMENTS = {
    "dev": {"gpu-dev-node-role assumeRolePolicy", "karpenter-node-role assumeRolePolicy",
            "karpenter-controller-role assumeRolePolicy", "karpenter-controller-node-lifecycle policy",
            "karpenter-controller-resource-discovery policy", "karpenter-controller-integration policy",
            "karpenter-interruption-queue-policy policy", "ebs-storage-ebs-csi-identity-role assumeRolePolicy"},
}
EXPECTED_DOCUMENTS["prod"] = {d.replace("gpu-dev-", "gpu-prod-") for d in EXPECTED_DOCUMENTS["dev"]} | {
    "aws-load-balancer-controller-identity-role assumeRolePolicy",
    "aws-load-balancer-controller-identity-policy policy"}


@pytest.mark.parametrize("stack", STACKS)
def test_the_scan_covers_every_controller_and_add_on_document(stack: str):
    assert {d.where.partition(": ")[2] for d in policy_documents(stack)} == EXPECTED_DOCUMENTS[stack]
