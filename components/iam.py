"""IAM pieces the node components share: the node role and the EKS cluster access policy ARNs.

Sources:
- Node IAM role and its managed policies (AmazonEKSWorkerNodePolicy, AmazonEC2ContainerRegistryPullOnly,
  AmazonEKS_CNI_Policy): https://docs.aws.amazon.com/eks/latest/userguide/create-node-role.html
- Access policies (AmazonEKSViewPolicy, AmazonEKSClusterAdminPolicy) and their ARN form
  `arn:<partition>:eks::aws:cluster-access-policy/<name>`:
  https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html
"""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

# The VPC CNI (aws-node) runs with the node role unless it gets its own Pod Identity/IRSA role; EKS
# best practices recommend moving it off the node role, which a later issue does. Until then the
# node role carries it so that pods get IP addresses.
# Source: https://docs.aws.amazon.com/eks/latest/best-practices/identity-and-access-management.html
NODE_POLICIES: tuple[str, ...] = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEC2ContainerRegistryPullOnly",
    "AmazonEKS_CNI_Policy",
)

VIEW_POLICY = "AmazonEKSViewPolicy"
CLUSTER_ADMIN_POLICY = "AmazonEKSClusterAdminPolicy"


def partition() -> str:
    """The AWS partition of the provider (`aws`, `aws-cn`, `aws-us-gov`)."""
    return aws.get_partition().partition


def managed_policy_arn(name: str) -> str:
    return f"arn:{partition()}:iam::aws:policy/{name}"


def access_policy_arn(name: str) -> str:
    return f"arn:{partition()}:eks::aws:cluster-access-policy/{name}"


def assume_role_policy(service: str) -> str:
    """Trust policy letting an AWS service principal (`ec2.amazonaws.com`) assume the role."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}
            ],
        }
    )


def node_role(
    name: str, parent: pulumi.Resource, *, extra_policies: tuple[str, ...] = (),
) -> tuple[aws.iam.Role, list[aws.iam.RolePolicyAttachment]]:
    """An EC2 node role with exactly the policies nodes need (and `extra_policies`), as children of `parent`."""
    role = aws.iam.Role(
        f"{name}-node-role",
        assume_role_policy=assume_role_policy("ec2.amazonaws.com"),
        description="EKS worker nodes (gpu-platform)",
        opts=pulumi.ResourceOptions(parent=parent),
    )
    attachments = [
        aws.iam.RolePolicyAttachment(
            f"{name}-node-{policy}",
            role=role.name,
            policy_arn=managed_policy_arn(policy),
            opts=pulumi.ResourceOptions(parent=parent),
        )
        for policy in (*NODE_POLICIES, *extra_policies)
    ]
    return role, attachments
