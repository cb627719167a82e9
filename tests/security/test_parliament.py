"""parliament (duo-labs) over every IAM policy document the program produces: nothing above LOW but the allow-list.

parliament is pinned in requirements-dev.txt; the module skips, saying so, where it is not installed.
Severity comes from parliament's own config.yaml (`parliament.enhance_finding`).
Source: https://github.com/duo-labs/parliament (README: "Custom config file", finding severities).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.security.documents import STACKS, PolicyDocument, policy_documents

parliament = pytest.importorskip("parliament", reason="parliament is pinned in requirements-dev.txt")

SEVERITIES = ("MUTE", "INFO", "LOW", "MEDIUM", "HIGH", "CRITICAL")


@dataclass(frozen=True)
class Allowed:
    """A finding kept on purpose: which issue, on which kind of document, and why."""

    issue: str
    detail: str
    trust_policies_only: bool
    reason: str


# The documented allow-list (README "Scanners" repeats it).
ALLOW = (
    Allowed("MALFORMED", "Statement contains neither Resource nor NotResource", True,
            "parliament 1.6.4 reads every document as an identity policy; a role trust policy names a Principal "
            "and has no Resource by the IAM grammar (https://docs.aws.amazon.com/IAM/latest/UserGuide/"
            "reference_policies_elements_principal.html)"),
)


def findings(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(issue, severity, detail) of every parliament finding on one document, community auditors included."""
    policy = parliament.analyze_policy_string(json.dumps(document), ignore_private_auditors=True,
                                              include_community_auditors=True)
    return [(f.issue, parliament.enhance_finding(f).severity, str(f.detail)) for f in policy.findings]


def _allowed(document: PolicyDocument, issue: str, detail: str) -> bool:
    return any(a.issue == issue and a.detail == detail
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
