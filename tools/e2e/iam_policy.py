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

Trust: GitHub's OIDC provider, audience sts.amazonaws.com, and the subject of e2e.yml's jobs on the default branch
under the subject template docs/ci-cd.md sets (`subject()`): the environment, the workflow file and its ref, so no
other workflow or branch can assume it, whatever an environment's deployment rule admits
(https://docs.github.com/en/actions/security-for-github-actions/security-hardening-your-deployments/configuring-openid-connect-in-amazon-web-services).

The cleanup role (`cleanup_role_policy`, environment `e2e-cleanup`, no reviewer): the workflow's cleanup job and the
scheduled sweep. Reads, and removals conditioned on the run tag (or the run's cluster name where EKS and the CNI
tag with that instead): it cannot create or change anything, so it needs no reviewer to be safe.
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
CLEANUP_ROLE_POLICY = OUT / "e2e-cleanup-role-policy.json"
CLEANUP_TRUST_POLICY = OUT / "e2e-cleanup-trust-policy.json"
DERIVATION = Path(__file__).resolve().parents[2] / "docs" / "iam" / "derivation.json"

# The environments and the one workflow the two roles trust (.github/workflows/e2e.yml): the run in `e2e` (a required
# reviewer), its cleanup and the scheduled sweep in `e2e-cleanup` (no reviewer, so a cancelled or failed run is
# always cleaned up, and the sweep runs unattended; the role there can only read and delete the run's resources).
RUN_ENVIRONMENT = "e2e"
CLEANUP_ENVIRONMENT = "e2e-cleanup"
WORKFLOW = "e2e.yml"
CLEANUP_ROLE_NAME = "gpu-platform-e2e-cleanup"
# A run id (tools/e2e/runid.py RUN_ID_RE) starts so; the run's cluster, stack and tag value carry it.
RUN_ID_GLOB = "e2e-*"

DRIVER_ACTIONS = sorted({
    "sts:GetCallerIdentity",
    "servicequotas:GetServiceQuota", "servicequotas:GetAWSDefaultServiceQuota",
    "ebs:StartSnapshot", "ebs:PutSnapshotBlock", "ebs:CompleteSnapshot",
    "tag:GetResources",
})
SSM_ACTIONS = ("ssm:GetParameter", "ssm:GetParameters", "ssm:GetParameterHistory", "ssm:GetParametersByPath")
# AWS's and Canonical's public parameters (the same scope as the CI roles: tools/ci_roles/documents.py).
# (Their ARNs have an empty account; IAM's `*` matches the empty string.)
PUBLIC_PARAMETERS = "arn:aws:ssm:*:*:parameter/aws/service/*"


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


# Services whose resources the stack creates and deletes freely: their new resources get the run tag from
# `aws:defaultTags` (tools/e2e/stack.py), but their creates are not all tag-conditionable, and none of them can grant
# a principal more than the account already lets it do.
DEPLOY_SERVICES = ("eks", "ec2", "elasticloadbalancing", "autoscaling", "sqs", "events", "logs")
# IAM and KMS can: a role or a key policy is a grant. So they are scoped to what carries the run tag: created with
# it (`aws:RequestTag`), changed, passed and deleted only when the resource has it (`aws:ResourceTag`). Terraform's
# aws_iam_role, aws_iam_policy, aws_iam_instance_profile, aws_iam_openid_connect_provider and aws_kms_key send the
# tags in their Create call (hashicorp/terraform-provider-aws internal/service/iam/role.go `Tags: getTagsIn(ctx)`,
# kms/key.go likewise), so the condition holds for what `pulumi up` creates.
# Condition keys: https://docs.aws.amazon.com/IAM/latest/UserGuide/access_iam-tags.html (aws:RequestTag on
# iam:Create*, aws:ResourceTag on a tagged role, policy, instance profile, OIDC provider), and
# https://docs.aws.amazon.com/kms/latest/developerguide/tag-authorization.html (aws:RequestTag on kms:CreateKey,
# aws:ResourceTag on a key's operations).
IAM_CREATES = ("iam:CreateRole", "iam:CreatePolicy", "iam:CreateInstanceProfile", "iam:CreateOpenIDConnectProvider",
               "iam:TagRole", "iam:TagPolicy", "iam:TagInstanceProfile", "iam:TagOpenIDConnectProvider")
IAM_READS = ("iam:Get*", "iam:List*")
# The AWS services whose service-linked roles an EKS stack makes on first use
# (https://docs.aws.amazon.com/eks/latest/userguide/using-service-linked-roles.html, Auto Scaling's and Elastic Load
# Balancing's, EC2 Spot's: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/service-linked-roles-spot-instance-requests.html).
SERVICE_LINKED = ("eks.amazonaws.com", "eks-nodegroup.amazonaws.com", "autoscaling.amazonaws.com",
                  "elasticloadbalancing.amazonaws.com", "spot.amazonaws.com")
# Who the stack's roles are passed to: the cluster and node roles (EKS, EC2 instance profiles), pod identity.
PASSED_TO = ("eks.amazonaws.com", "ec2.amazonaws.com", "pods.eks.amazonaws.com")


def kms_key_actions() -> list[str]:
    """What `pulumi up`/`destroy` does to a key of the stack (tools/ci_roles/calls.py RESOURCE_ACTIONS of its KMS and
    EKS types), the key side of an alias included: each on the key resource, so conditioned on its run tag."""
    from tools.ci_roles.calls import RESOURCE_ACTIONS  # noqa: PLC0415  # the deploy role's table

    account_wide = {"kms:CreateKey", "kms:ListAliases", "kms:ListKeys"}
    return sorted({a for kind in stack_types() for a in RESOURCE_ACTIONS[kind]
                   if a.startswith("kms:") and a not in account_wide})


def _run_tag(kind: str) -> dict[str, Any]:
    return {"StringLike": {f"aws:{kind}/{RUN_TAG}": RUN_ID_GLOB}}


def role_policy() -> dict[str, Any]:
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "DeployAndDestroyTheStack", "Effect": "Allow",
             "Action": [f"{service}:*" for service in DEPLOY_SERVICES], "Resource": "*"},
            {"Sid": "TheDriverAndTheSweeper", "Effect": "Allow", "Action": DRIVER_ACTIONS, "Resource": "*"},
            # Only the public parameters AWS and Canonical publish (EKS, Bottlerocket and Ubuntu AMI ids): never the
            # account's own, which may hold secrets.
            {"Sid": "PublicAmiParametersOnly", "Effect": "Allow", "Action": list(SSM_ACTIONS),
             "Resource": PUBLIC_PARAMETERS},
            {"Sid": "IamReads", "Effect": "Allow", "Action": list(IAM_READS), "Resource": "*"},
            {"Sid": "IamCreatesCarryTheRunTag", "Effect": "Allow", "Action": list(IAM_CREATES), "Resource": "*",
             "Condition": _run_tag("RequestTag")},
            {"Sid": "IamChangesOnlyWhatCarriesTheRunTag", "Effect": "Allow", "Action": ["iam:*"], "Resource": "*",
             "Condition": _run_tag("ResourceTag")},
            {"Sid": "PassOnlyTheRunsRolesToTheClusterItsNodesAndPods", "Effect": "Allow", "Action": ["iam:PassRole"],
             "Resource": "*", "Condition": {**_run_tag("ResourceTag"),
                                            "StringEquals": {"iam:PassedToService": list(PASSED_TO)}}},
            {"Sid": "ServiceLinkedRolesOfTheStacksServices", "Effect": "Allow",
             "Action": ["iam:CreateServiceLinkedRole"], "Resource": "*",
             "Condition": {"StringEquals": {"iam:AWSServiceName": list(SERVICE_LINKED)}}},
            {"Sid": "KmsReads", "Effect": "Allow", "Action": ["kms:ListAliases", "kms:ListKeys"], "Resource": "*"},
            {"Sid": "KmsCreatesCarryTheRunTag", "Effect": "Allow", "Action": ["kms:CreateKey"],
             "Resource": "*", "Condition": _run_tag("RequestTag")},
            {"Sid": "KmsOnlyTheRunsKeys", "Effect": "Allow", "Action": kms_key_actions(),
             "Resource": "arn:aws:kms:*:*:key/*", "Condition": _run_tag("ResourceTag")},
            # An alias cannot carry a tag; creating or moving one also needs the key, which must be the run's.
            {"Sid": "KmsAliases", "Effect": "Allow", "Action": ["kms:CreateAlias", "kms:DeleteAlias",
                                                                 "kms:UpdateAlias"],
             "Resource": "arn:aws:kms:*:*:alias/*"},
            {"Sid": "NeverTouchASnapshotWithoutTheRunTag", "Effect": "Deny",
             "Action": ["ec2:DeleteSnapshot", "ec2:ModifySnapshotAttribute"],
             "Resource": "arn:aws:ec2:*::snapshot/*",
             "Condition": {"Null": {f"aws:ResourceTag/{RUN_TAG}": "true"}}},
            # Nothing of the run needs an IAM user, a long-lived key, a console password, an administrator policy,
            # or a change to this role.
            {"Sid": "NoUsersKeysOrPasswords", "Effect": "Deny", "Action": NO_USER_ACTIONS, "Resource": "*"},
            {"Sid": "NoAdministratorPolicies", "Effect": "Deny", "Action": ATTACH_ACTIONS, "Resource": "*",
             "Condition": {"ArnLike": {"iam:PolicyARN": [f"arn:*:iam::aws:policy/{name}"
                                                         for name in BROAD_MANAGED_POLICIES]}}},
            {"Sid": "NotThisRoleItself", "Effect": "Deny", "Action": SELF_ACTIONS,
             "Resource": [f"arn:*:iam::*:role/{ROLE_NAME}", f"arn:*:iam::*:role/{CLEANUP_ROLE_NAME}"]},
        ],
    }


def subject(environment: str, repository: str = "<OWNER>/<REPO>") -> str:
    """The OIDC subject of a job of `environment` in e2e.yml on the default branch, under the subject template
    docs/ci-cd.md sets (`include_claim_keys`: repo, context, job_workflow_ref; "Environments, secrets and the AWS
    role"):
    `repo:<OWNER>/<REPO>:environment:<ENV>:job_workflow_ref:<OWNER>/<REPO>/.github/workflows/e2e.yml@refs/heads/main`.
    With the template, GitHub joins the claims in that order
    (https://docs.github.com/en/actions/reference/security/oidc#customizing-the-subject-claims-for-an-organization-or-repository);
    a repository that emits immutable subjects adds `@<OWNER_ID>`/`@<REPO_ID>` after the names (docs/ci-cd.md)."""
    return (f"repo:{repository}:environment:{environment}:job_workflow_ref:{repository}/.github/workflows/"
            f"{WORKFLOW}@refs/heads/main")


def trust_policy(account_id: str = "<ACCOUNT_ID>", repository: str = "<OWNER>/<REPO>",
                 environment: str = RUN_ENVIRONMENT) -> dict[str, Any]:
    provider = "token.actions.githubusercontent.com"
    return {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Federated": f"arn:aws:iam::{account_id}:oidc-provider/{provider}"},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringEquals": {f"{provider}:aud": "sts.amazonaws.com",
                                           f"{provider}:sub": subject(environment, repository)}},
        }],
    }


# ---- the cleanup role: read, and delete only what is the run's ------------------------------------------------

# Verbs of the calls that remove something (or a link that holds it: a detach, a disassociation, a revoked rule).
DELETE_VERBS = ("Delete", "Detach", "Disassociate", "Remove", "Revoke", "Terminate", "Release", "ScheduleKeyDeletion",
                "Deregister", "CancelKeyDeletion")
READ_VERBS = ("Describe", "List", "Get")
# What the sweeper and the cleanup's reads call besides the stack's own types (tools/e2e/sweep/, driver.cleanup_run).
CLEANUP_READS = ("sts:GetCallerIdentity", "tag:GetResources", "eks:DescribeCluster", "eks:ListClusters",
                 "eks:ListAddons", "eks:DescribeAddon", "eks:ListNodegroups", "eks:DescribeNodegroup",
                 "ec2:DescribeInstances", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSecurityGroups",
                 "ec2:DescribeVolumes", "ec2:DescribeSnapshots", "ec2:DescribeTags",
                 "elasticloadbalancing:DescribeLoadBalancers", "elasticloadbalancing:DescribeTargetGroups",
                 "elasticloadbalancing:DescribeTags", "autoscaling:DescribeAutoScalingGroups",
                 "iam:ListRoles", "iam:ListPolicies", "iam:ListInstanceProfiles", "iam:ListInstanceProfilesForRole",
                 "iam:ListAttachedRolePolicies", "iam:ListRolePolicies", "iam:ListRoleTags", "iam:ListPolicyTags",
                 "iam:ListPolicyVersions", "iam:ListEntitiesForPolicy", "iam:ListOpenIDConnectProviders",
                 "iam:ListOpenIDConnectProviderTags", "iam:GetInstanceProfile", "logs:DescribeLogGroups",
                 "logs:ListTagsLogGroup", "logs:ListTagsForResource", "sqs:ListQueues", "sqs:ListQueueTags",
                 "events:ListRules", "events:ListTargetsByRule", "events:ListTagsForResource", "kms:ListKeys",
                 "kms:DescribeKey", "kms:ListResourceTags")
# The sweeper's removals of what the stack does not tag (tools/e2e/sweep/kinds.py): the VPC CNI's ENIs and EKS's
# cluster security group, which carry the cluster's name in tags of their own, and EKS's control-plane log group,
# named after the cluster. They are scoped by those tags and names, never left open.
# - VPC CNI ENI tag `cluster.k8s.amazonaws.com/name`: aws/amazon-vpc-cni-k8s pkg/awsutils/awsutils.go
#   (`eniClusterTagKey`), https://github.com/aws/amazon-vpc-cni-k8s/blob/v1.20.4/pkg/awsutils/awsutils.go
# - the cluster security group's tag `aws:eks:cluster-name`:
#   https://docs.aws.amazon.com/eks/latest/userguide/sec-group-reqs.html
# - the control-plane log group `/aws/eks/<cluster>/cluster`:
#   https://docs.aws.amazon.com/eks/latest/userguide/control-plane-logs.html
# - `aws:ResourceTag/<key>` on EC2, EKS, ELB, Auto Scaling, IAM, SQS, EventBridge, CloudWatch Logs and KMS
#   resources: each service's page of the Service Authorization Reference
#   (https://docs.aws.amazon.com/service-authorization/latest/reference/reference_policies_actions-resources-contextkeys.html).
UNTAGGED_BY_NAME: tuple[tuple[str, tuple[str, ...], dict[str, Any]], ...] = (
    ("TheCniEnisOfTheRunsCluster", ("ec2:DeleteNetworkInterface", "ec2:DetachNetworkInterface"),
     {"StringLike": {"aws:ResourceTag/cluster.k8s.amazonaws.com/name": RUN_ID_GLOB}}),
    ("TheClusterSecurityGroupEksMade", ("ec2:DeleteSecurityGroup", "ec2:RevokeSecurityGroupIngress",
                                        "ec2:RevokeSecurityGroupEgress"),
     {"StringLike": {"aws:ResourceTag/aws:eks:cluster-name": RUN_ID_GLOB}}),
)


def stack_types() -> list[str]:
    """The AWS resource types the shipped stacks register (docs/iam/derivation.json, tools.ci_roles's output)."""
    data = json.loads(DERIVATION.read_text(encoding="utf-8"))
    return sorted(data["deployRole"]["resourceTypes"])


def _verb(action: str) -> str:
    return action.split(":", 1)[1]


def cleanup_actions() -> tuple[list[str], list[str]]:
    """(reads, deletes): every read and every removal `pulumi destroy` of the stack's types makes
    (tools/ci_roles/calls.py RESOURCE_ACTIONS) and the sweeper makes (tools/e2e/sweep/)."""
    from tools.ci_roles.calls import RESOURCE_ACTIONS  # noqa: PLC0415  # the deploy role's table

    actions: set[str] = set(CLEANUP_READS) | set(SWEEP_DELETES)
    for kind in stack_types():
        actions.update(RESOURCE_ACTIONS[kind])
    reads = sorted(a for a in actions if _verb(a).startswith(READ_VERBS))
    deletes = sorted(a for a in actions if _verb(a).startswith(DELETE_VERBS))
    return reads, deletes


# The removals the sweeper calls (tools/e2e/sweep/kinds.py; tests/e2e/test_iam_policy.py checks the list is whole).
SWEEP_DELETES = (
    "autoscaling:DeleteAutoScalingGroup", "ec2:DeleteInternetGateway", "ec2:DeleteLaunchTemplate",
    "ec2:DeleteNatGateway", "ec2:DeleteNetworkInterface", "ec2:DeleteRouteTable", "ec2:DeleteSecurityGroup",
    "ec2:DeleteSnapshot", "ec2:DeleteSubnet", "ec2:DeleteVolume", "ec2:DeleteVpc", "ec2:DetachInternetGateway",
    "ec2:DetachNetworkInterface", "ec2:DisassociateAddress", "ec2:DisassociateRouteTable", "ec2:ReleaseAddress",
    "ec2:RevokeSecurityGroupEgress", "ec2:RevokeSecurityGroupIngress", "ec2:TerminateInstances",
    "eks:DeleteAddon", "eks:DeleteCluster", "eks:DeleteNodegroup", "elasticloadbalancing:DeleteLoadBalancer",
    "elasticloadbalancing:DeleteTargetGroup", "events:DeleteRule", "events:RemoveTargets",
    "iam:DeleteInstanceProfile", "iam:DeleteOpenIDConnectProvider", "iam:DeletePolicy", "iam:DeletePolicyVersion",
    "iam:DeleteRole", "iam:DeleteRolePolicy", "iam:DetachGroupPolicy", "iam:DetachRolePolicy",
    "iam:DetachUserPolicy", "iam:RemoveRoleFromInstanceProfile", "kms:ScheduleKeyDeletion", "logs:DeleteLogGroup",
    "sqs:DeleteQueue",
)


def cleanup_role_policy() -> dict[str, Any]:
    """The role of the `e2e-cleanup` environment: reads on `*`, removals only of resources that carry the run tag
    (a run id, `e2e-*`), or, for what EKS and the VPC CNI make untagged, that carry the run's cluster name. It can
    create, change, attach or pass nothing, so an unreviewed job with it can at worst delete an e2e run's resources."""
    reads, deletes = cleanup_actions()
    statements: list[dict[str, Any]] = [
        {"Sid": "ReadWhatTheCleanupFinds", "Effect": "Allow", "Action": reads, "Resource": "*"},
        {"Sid": "DeleteOnlyWhatCarriesTheRunTag", "Effect": "Allow", "Action": deletes, "Resource": "*",
         "Condition": {"StringLike": {f"aws:ResourceTag/{RUN_TAG}": RUN_ID_GLOB}}},
    ]
    statements += [{"Sid": sid, "Effect": "Allow", "Action": list(actions), "Resource": "*", "Condition": condition}
                   for sid, actions, condition in UNTAGGED_BY_NAME]
    statements.append({"Sid": "TheControlPlaneLogGroupOfTheRunsCluster", "Effect": "Allow",
                       "Action": ["logs:DeleteLogGroup"],
                       "Resource": f"arn:aws:logs:*:*:log-group:/aws/eks/{RUN_ID_GLOB}/cluster:*"})
    statements.append({"Sid": "NeverTouchASnapshotWithoutTheRunTag", "Effect": "Deny",
                       "Action": ["ec2:DeleteSnapshot", "ec2:ModifySnapshotAttribute"],
                       "Resource": "arn:aws:ec2:*::snapshot/*",
                       "Condition": {"Null": {f"aws:ResourceTag/{RUN_TAG}": "true"}}})
    return {"Version": "2012-10-17", "Statement": statements}


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
        CLEANUP_ROLE_POLICY.write_text(render(cleanup_role_policy()), encoding="utf-8")
        CLEANUP_TRUST_POLICY.write_text(render(trust_policy(environment=CLEANUP_ENVIRONMENT)), encoding="utf-8")
    else:
        print(render(role_policy()), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
