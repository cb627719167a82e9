"""Least-privilege IAM for the Karpenter controller (EKS Pod Identity) and the node role of its nodes.

The controller's policies follow the getting-started template of Karpenter v1.14.1
(.upstream-cache/iam/karpenter-cloudformation.yaml, pinned in upstream.lock.json), narrowed where this platform
allows it:

- Instance profiles: the program creates the node instance profile and every EC2NodeClass names it
  (`spec.instanceProfile`), so the controller gets no `iam:CreateInstanceProfile`, `TagInstanceProfile`,
  `AddRoleToInstanceProfile`, `RemoveRoleFromInstanceProfile` or `DeleteInstanceProfile`; it passes only the
  node role. It keeps the template's two read grants, `iam:ListInstanceProfiles` on `*` and
  `iam:GetInstanceProfile` on `instance-profile/*`, because Karpenter calls them on paths this platform does not
  choose (aws/karpenter-provider-aws@v1.14.1):
  - the EC2NodeClass finalizer (pkg/controllers/nodeclass/controller.go:127-128, finalize at :214-249) lists
    the profiles under `/karpenter/<region>/<cluster>/<uid>/` (controller.go:175-189) and then deletes the
    legacy profile `<cluster>_<hash>` (controller.go:191-201, name from pkg/apis/v1/ec2nodeclass.go:612-613),
    whose Delete first calls GetInstanceProfile and ignores only NotFound
    (pkg/providers/instanceprofile/instanceprofile.go:188-195); skipped only with `isolatedVPC`
    (controller.go:203-211). Without List, or with Get on one profile only, the finalizer fails with
    AccessDenied, and `pulumi destroy`, or removing or renaming a pool, hangs on it.
  - the instance-profile garbage collector lists `/karpenter/<region>/<cluster>/` every 30 minutes
    (pkg/controllers/nodeclass/garbagecollection/controller.go:104-142).
  Both are reads; every write stays withheld, and the profiles under those paths (none, here) could not be
  changed by this role.
- Zonal shift: `settings.enableZonalShift` stays off, so no `arc-zonal-shift:GetManagedResource`.
- The interruption queue: only this cluster's queue.
- Every EC2 write keeps the template's conditions: launch templates, instances and fleets tagged
  `kubernetes.io/cluster/<cluster>=owned` with a `karpenter.sh/nodepool` tag; reads stay in the region.

Sources:
- Template: https://github.com/aws/karpenter-provider-aws/blob/release-v1.14.1/website/content/en/v1.14/getting-started/getting-started-with-karpenter/cloudformation.yaml
- Permission reference: https://karpenter.sh/docs/reference/cloudformation/
- Pod Identity trust policy (`pods.eks.amazonaws.com`, sts:AssumeRole + sts:TagSession):
  https://docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html
- EC2NodeClass `spec.instanceProfile` (Karpenter uses the profile as given):
  https://karpenter.sh/docs/concepts/nodeclasses/#specinstanceprofile
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

CONTROLLER_NAMESPACE = "kube-system"
# The chart's service account name is the release's full name, `karpenter` for a release named karpenter.
# Source: https://github.com/aws/karpenter-provider-aws/blob/release-v1.14.1/charts/karpenter/templates/_helpers.tpl
CONTROLLER_SERVICE_ACCOUNT = "karpenter"


@dataclass(frozen=True)
class Scope:
    """What every statement is scoped to."""

    partition: str
    region: str
    account: str
    cluster: str

    def ec2(self, resource: str, account: bool = True) -> str:
        return f"arn:{self.partition}:ec2:{self.region}:{'*' if account else ''}:{resource}"

    def iam(self, resource: str) -> str:
        return f"arn:{self.partition}:iam::{self.account}:{resource}"

    @property
    def cluster_arn(self) -> str:
        return f"arn:{self.partition}:eks:{self.region}:{self.account}:cluster/{self.cluster}"

    @property
    def owned(self) -> str:
        return f"kubernetes.io/cluster/{self.cluster}"


# Every action of the upstream controller policy that this platform leaves out, with the reason;
# tests/components/test_karpenter.py checks that each upstream action is granted or listed here.
_OWN_PROFILE = ("the program creates the node instance profile and every EC2NodeClass names it "
                "(spec.instanceProfile), so Karpenter never creates, tags, fills or deletes one")
WITHHELD_ACTIONS: dict[str, str] = {
    "iam:CreateInstanceProfile": _OWN_PROFILE,
    "iam:TagInstanceProfile": _OWN_PROFILE,
    "iam:AddRoleToInstanceProfile": _OWN_PROFILE,
    "iam:RemoveRoleFromInstanceProfile": _OWN_PROFILE,
    "iam:DeleteInstanceProfile": _OWN_PROFILE,
    "arc-zonal-shift:GetManagedResource": "settings.enableZonalShift stays off (chart default), so the controller "
                                          "never reads zonal-shift state",
}


def pod_identity_trust_policy() -> str:
    """Trust policy for a role that EKS Pod Identity hands to a service account."""
    return json.dumps({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Service": "pods.eks.amazonaws.com"},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
        }],
    }, sort_keys=True)


def _tagged_resources(scope: Scope) -> list[str]:
    kinds = ("fleet", "instance", "volume", "network-interface", "launch-template", "spot-instances-request")
    return [scope.ec2(f"{kind}/*") for kind in kinds]


def node_lifecycle_policy(scope: Scope) -> dict[str, Any]:
    """Launch, tag and terminate only this cluster's Karpenter instances and launch templates."""
    owned_nodepool = {
        "StringEquals": {f"aws:ResourceTag/{scope.owned}": "owned"},
        "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
    }
    request_tags = {
        f"aws:RequestTag/{scope.owned}": "owned",
        "aws:RequestTag/eks:eks-cluster-name": scope.cluster,
    }
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AllowScopedEC2InstanceAccessActions",
                "Effect": "Allow",
                "Resource": [
                    scope.ec2("image/*", account=False), scope.ec2("snapshot/*", account=False),
                    scope.ec2("security-group/*"), scope.ec2("subnet/*"),
                    scope.ec2("capacity-reservation/*"), scope.ec2("placement-group/*"),
                ],
                "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
            },
            {
                "Sid": "AllowScopedEC2LaunchTemplateAccessActions",
                "Effect": "Allow",
                "Resource": scope.ec2("launch-template/*"),
                "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
                "Condition": owned_nodepool,
            },
            {
                "Sid": "AllowScopedEC2InstanceActionsWithTags",
                "Effect": "Allow",
                "Resource": _tagged_resources(scope),
                "Action": ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
                "Condition": {"StringEquals": dict(request_tags),
                              "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"}},
            },
            {
                "Sid": "AllowScopedResourceCreationTagging",
                "Effect": "Allow",
                "Resource": _tagged_resources(scope),
                "Action": "ec2:CreateTags",
                "Condition": {
                    "StringEquals": {**request_tags,
                                     "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"]},
                    "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
                },
            },
            {
                "Sid": "AllowScopedResourceTagging",
                "Effect": "Allow",
                "Resource": scope.ec2("instance/*"),
                "Action": "ec2:CreateTags",
                "Condition": {
                    **owned_nodepool,
                    "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": scope.cluster},
                    "ForAllValues:StringEquals": {"aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim",
                                                                  "Name"]},
                },
            },
            {
                "Sid": "AllowScopedDeletion",
                "Effect": "Allow",
                "Resource": [scope.ec2("instance/*"), scope.ec2("launch-template/*")],
                "Action": ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
                "Condition": owned_nodepool,
            },
        ],
    }


def integration_policy(scope: Scope, node_role_arn: str, queue_arn: str) -> dict[str, Any]:
    """Pass the node role, list and read instance profiles, find the API server, read the interruption queue."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AllowPassingInstanceRole",
                "Effect": "Allow",
                "Resource": node_role_arn,
                "Action": "iam:PassRole",
                "Condition": {"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}},
            },
            {
                "Sid": "AllowUnscopedInstanceProfileListAction",
                "Effect": "Allow",
                "Resource": "*",
                "Action": "iam:ListInstanceProfiles",
            },
            {
                "Sid": "AllowInstanceProfileReadActions",
                "Effect": "Allow",
                "Resource": scope.iam("instance-profile/*"),
                "Action": "iam:GetInstanceProfile",
            },
            {
                "Sid": "AllowAPIServerEndpointDiscovery",
                "Effect": "Allow",
                "Resource": scope.cluster_arn,
                "Action": "eks:DescribeCluster",
            },
            {
                "Sid": "AllowInterruptionQueueActions",
                "Effect": "Allow",
                "Resource": queue_arn,
                "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
            },
        ],
    }


def resource_discovery_policy(scope: Scope) -> dict[str, Any]:
    """Regional EC2 reads, the public SSM parameters of AMI aliases, and prices."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AllowRegionalReadActions",
                "Effect": "Allow",
                "Resource": "*",
                "Action": [
                    "ec2:DescribeCapacityReservations", "ec2:DescribeImages", "ec2:DescribeInstances",
                    "ec2:DescribeInstanceStatus", "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes",
                    "ec2:DescribeLaunchTemplates", "ec2:DescribePlacementGroups", "ec2:DescribeSecurityGroups",
                    "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets",
                ],
                "Condition": {"StringEquals": {"aws:RequestedRegion": scope.region}},
            },
            {
                "Sid": "AllowSSMReadActions",
                "Effect": "Allow",
                "Resource": f"arn:{scope.partition}:ssm:{scope.region}::parameter/aws/service/*",
                "Action": "ssm:GetParameter",
            },
            {
                "Sid": "AllowPricingReadActions",
                "Effect": "Allow",
                "Resource": "*",
                "Action": "pricing:GetProducts",
            },
        ],
    }
