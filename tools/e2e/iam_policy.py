"""The IAM role the e2e run assumes (GitHub OIDC, environment `e2e`): its permissions policy and trust policy,
generated into tools/e2e/iam/ (`python -m tools.e2e.iam_policy --write`; tests/e2e/test_iam_policy.py checks
that the committed files are this module's output and lints them with parliament).

Three parts:
- what `pulumi up` and `pulumi destroy` of the stack call: the services the program creates (EKS, EC2 and its
  VPC, IAM roles, policies, instance profiles and the OIDC provider, SQS and EventBridge for Karpenter's
  interruption queue, CloudWatch Logs, SSM's public parameters, KMS grants). Service-level actions here: the
  deploy role's own policy (issue 47, a generator of its own) should replace this part once it exists;
- what the driver adds: STS identity, Service Quotas, the EBS direct APIs that write the model snapshot, SSM
  parameter history, the resource-groups tagging API, and the sweeper's describe and delete calls;
- a deny: no snapshot without the run tag can be deleted or shared, so the user's model snapshot
  (E2E_SNAPSHOT_ID, never tagged) is safe from any sweep, whatever its code does
  (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-resourcetag,
  `Null` condition: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html#Conditions_Null).

- denies that narrow `iam:*`: no IAM user, access key or console password; no AdministratorAccess,
  PowerUserAccess or IAMFullAccess attached to anything; no change to this role itself.

Still broad, and why: service-level wildcards for the nine services `pulumi up`/`destroy` uses, on `Resource: *`
(the stack names its resources after the run id, known only at run time; the deploy role's generator of issue 47
is where per-action lists belong). No permissions boundary: a boundary condition on `iam:CreateRole` would refuse
the roles pulumi-eks and the components create, which set none.

Trust: GitHub's OIDC provider, audience sts.amazonaws.com, subject `repo:<OWNER>/<REPO>:environment:e2e`
(https://docs.github.com/en/actions/security-for-github-actions/security-hardening-your-deployments/configuring-openid-connect-in-amazon-web-services).
A job of an environment gets that subject whatever its branch, so the `e2e` environment must admit the default
branch only (its "Deployment branches" rule, docs/e2e.md): that rule, not the subject, keeps other branches out.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tools.e2e.runid import RUN_TAG

OUT = Path(__file__).resolve().parent / "iam"
ROLE_POLICY = OUT / "e2e-role-policy.json"
TRUST_POLICY = OUT / "e2e-trust-policy.json"

DEPLOY_SERVICES = ("eks", "ec2", "elasticloadbalancing", "autoscaling", "iam", "sqs", "events", "logs", "kms")

DRIVER_ACTIONS = sorted({
    "sts:GetCallerIdentity",
    "servicequotas:GetServiceQuota", "servicequotas:GetAWSDefaultServiceQuota",
    "ebs:StartSnapshot", "ebs:PutSnapshotBlock", "ebs:CompleteSnapshot",
    "ssm:GetParameter", "ssm:GetParameters", "ssm:GetParameterHistory", "ssm:GetParametersByPath",
    "tag:GetResources",
})


# The role's name in docs/e2e.md's `aws iam create-role`; the deny below protects the role from itself.
ROLE_NAME = "gpu-platform-e2e"
NO_USER_ACTIONS = sorted({
    "iam:CreateUser", "iam:CreateAccessKey", "iam:CreateLoginProfile", "iam:UpdateLoginProfile",
    "iam:AttachUserPolicy", "iam:PutUserPolicy", "iam:AddUserToGroup", "iam:CreateServiceSpecificCredential",
})
# `iam:PolicyARN` is a condition key of the Attach*Policy actions
# (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsidentityandaccessmanagementiam.html).
ATTACH_ACTIONS = sorted({"iam:AttachRolePolicy", "iam:AttachGroupPolicy", "iam:AttachUserPolicy"})
BROAD_MANAGED_POLICIES = ("AdministratorAccess", "PowerUserAccess", "IAMFullAccess")
SELF_ACTIONS = sorted({
    "iam:UpdateAssumeRolePolicy", "iam:AttachRolePolicy", "iam:DetachRolePolicy", "iam:PutRolePolicy",
    "iam:DeleteRolePolicy", "iam:PutRolePermissionsBoundary", "iam:DeleteRolePermissionsBoundary",
    "iam:UpdateRole", "iam:DeleteRole",
})


def role_policy() -> dict[str, Any]:
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "DeployAndDestroyTheStack", "Effect": "Allow",
             "Action": [f"{service}:*" for service in DEPLOY_SERVICES], "Resource": "*"},
            {"Sid": "TheDriverAndTheSweeper", "Effect": "Allow", "Action": DRIVER_ACTIONS, "Resource": "*"},
            {"Sid": "NeverTouchASnapshotWithoutTheRunTag", "Effect": "Deny",
             "Action": ["ec2:DeleteSnapshot", "ec2:ModifySnapshotAttribute"],
             "Resource": "arn:aws:ec2:*::snapshot/*",
             "Condition": {"Null": {f"aws:ResourceTag/{RUN_TAG}": "true"}}},
            # iam:* is there for the stack's roles, policies and instance profiles; nothing of the run needs an
            # IAM user, a long-lived key, a console password, an administrator policy, or a change to this role.
            {"Sid": "NoUsersKeysOrPasswords", "Effect": "Deny", "Action": NO_USER_ACTIONS, "Resource": "*"},
            {"Sid": "NoAdministratorPolicies", "Effect": "Deny", "Action": ATTACH_ACTIONS, "Resource": "*",
             "Condition": {"ArnLike": {"iam:PolicyARN": [f"arn:*:iam::aws:policy/{name}"
                                                         for name in BROAD_MANAGED_POLICIES]}}},
            {"Sid": "NotThisRoleItself", "Effect": "Deny", "Action": SELF_ACTIONS,
             "Resource": f"arn:*:iam::*:role/{ROLE_NAME}"},
        ],
    }


def trust_policy(account_id: str = "<ACCOUNT_ID>", repository: str = "<OWNER>/<REPO>") -> dict[str, Any]:
    provider = "token.actions.githubusercontent.com"
    return {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Federated": f"arn:aws:iam::{account_id}:oidc-provider/{provider}"},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringEquals": {f"{provider}:aud": "sts.amazonaws.com",
                                           f"{provider}:sub": f"repo:{repository}:environment:e2e"}},
        }],
    }


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.e2e.iam_policy")
    parser.add_argument("--write", action="store_true", help="write tools/e2e/iam/*.json")
    args = parser.parse_args(argv)
    if args.write:
        OUT.mkdir(exist_ok=True)
        ROLE_POLICY.write_text(render(role_policy()), encoding="utf-8")
        TRUST_POLICY.write_text(render(trust_policy()), encoding="utf-8")
    else:
        print(render(role_policy()), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
