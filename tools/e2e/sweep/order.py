"""The sweeper's deletion order, as data: what kinds of AWS resource a run can leave, in the order they go, and
the rules AWS documents for why one must go before another.

`SWEEP_ORDER` is the issue's fixed order (EKS add-ons, node groups and the cluster; instances and launch
templates; load balancers and target groups; NAT gateways and Elastic IPs; ENIs and security groups; subnets and
the VPC; EBS volumes and the run's snapshots; log groups; the OIDC provider; instance profiles, then IAM roles;
SQS and EventBridge; KMS keys), with the two VPC children the issue's list leaves implicit (internet gateways and
route tables: DeleteVpc refuses a VPC that still has them) placed before the VPC, and two kinds a failed destroy
can leave that the issue's list lacks: Auto Scaling groups (self-managed GPU pools), before their instances, and
customer-managed IAM policies, after the roles they are attached to.

`BLOCKS` lists (dependant, dependency) pairs: AWS refuses to delete the dependency while the dependant exists
(or, where `kind` says so, the dependency would be recreated or stranded). tests/e2e/test_order.py checks that
every dependant comes first in `SWEEP_ORDER`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SWEEP_ORDER: tuple[str, ...] = (
    "eks-addon",
    "eks-nodegroup",
    "eks-cluster",
    "autoscaling-group",
    "ec2-instance",
    "ec2-launch-template",
    "elb-load-balancer",
    "elb-target-group",
    "ec2-nat-gateway",
    "ec2-elastic-ip",
    "ec2-network-interface",
    "ec2-security-group",
    "ec2-subnet",
    "ec2-route-table",
    "ec2-internet-gateway",
    "ec2-vpc",
    "ec2-volume",
    "ec2-snapshot",
    "logs-log-group",
    "iam-oidc-provider",
    "iam-instance-profile",
    "iam-role",
    "iam-policy",
    "sqs-queue",
    "events-rule",
    "kms-key",
)

# The issue's list, in its order; SWEEP_ORDER must contain it as a subsequence.
ISSUE_ORDER: tuple[str, ...] = tuple(k for k in SWEEP_ORDER if k not in (
    "ec2-route-table", "ec2-internet-gateway", "autoscaling-group", "iam-policy"))


@dataclass(frozen=True)
class Block:
    dependant: str
    dependency: str
    rule: str
    source: str
    kind: Literal["refused", "stranded"] = "refused"


_EKS_DELETE_CLUSTER = "https://docs.aws.amazon.com/eks/latest/APIReference/API_DeleteCluster.html"
_EC2_DELETE_SG = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DeleteSecurityGroup.html"
_EC2_DELETE_SUBNET = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DeleteSubnet.html"
_EC2_DELETE_VPC = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DeleteVpc.html"
_EC2_DELETE_ENI = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DeleteNetworkInterface.html"
_EC2_DELETE_VOLUME = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DeleteVolume.html"
_EC2_RELEASE_ADDRESS = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_ReleaseAddress.html"
_EC2_DETACH_IGW = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DetachInternetGateway.html"
_EC2_DELETE_ROUTE_TABLE = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DeleteRouteTable.html"
_ELB_DELETE_TG = "https://docs.aws.amazon.com/elasticloadbalancing/latest/APIReference/API_DeleteTargetGroup.html"
_IAM_DELETE_ROLE = "https://docs.aws.amazon.com/IAM/latest/APIReference/API_DeleteRole.html"
_ASG_DELETE = "https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_DeleteAutoScalingGroup.html"
_EKS_DELETE_CLUSTER_GUIDE = "https://docs.aws.amazon.com/eks/latest/userguide/delete-cluster.html"
_KARPENTER_DELETE = "https://karpenter.sh/docs/getting-started/getting-started-with-karpenter/#delete-the-cluster"

BLOCKS: tuple[Block, ...] = (
    Block("eks-nodegroup", "eks-cluster", "DeleteCluster: managed node groups must be deleted first",
          _EKS_DELETE_CLUSTER),
    Block("eks-addon", "eks-cluster", "the add-ons run on the cluster; deleting them first lets their controllers "
          "remove what they created while the cluster still answers", _EKS_DELETE_CLUSTER_GUIDE, "stranded"),
    Block("eks-cluster", "ec2-security-group", "the control plane's ENIs use the cluster security group: "
          "DeleteSecurityGroup fails with DependencyViolation while a network interface uses it", _EC2_DELETE_SG),
    Block("eks-cluster", "ec2-subnet", "the control plane's ENIs live in the subnets: DeleteSubnet fails while "
          "network interfaces remain in it", _EC2_DELETE_SUBNET),
    Block("eks-cluster", "logs-log-group", "the control plane writes /aws/eks/<cluster>/cluster and recreates "
          "the group while it runs", _EKS_DELETE_CLUSTER_GUIDE, "stranded"),
    Block("eks-cluster", "iam-oidc-provider", "the cluster's service accounts federate through it",
          _EKS_DELETE_CLUSTER_GUIDE, "stranded"),
    Block("eks-cluster", "kms-key", "a cluster that encrypts secrets with the key cannot read them once it is "
          "scheduled for deletion", _EKS_DELETE_CLUSTER_GUIDE, "stranded"),
    Block("eks-nodegroup", "ec2-instance", "a managed node group replaces the instances it owns",
          _EKS_DELETE_CLUSTER, "stranded"),
    Block("ec2-instance", "ec2-network-interface", "a primary or attached ENI must be detached before "
          "DeleteNetworkInterface", _EC2_DELETE_ENI),
    Block("ec2-instance", "ec2-security-group", "DeleteSecurityGroup fails with DependencyViolation while an "
          "instance is associated with the group", _EC2_DELETE_SG),
    Block("ec2-instance", "ec2-subnet", "DeleteSubnet: terminate all running instances in the subnet first",
          _EC2_DELETE_SUBNET),
    Block("ec2-instance", "ec2-volume", "DeleteVolume: the volume must be available (not attached)",
          _EC2_DELETE_VOLUME),
    Block("ec2-instance", "ec2-internet-gateway", "DetachInternetGateway: the VPC must not contain running "
          "instances with public IPv4 addresses", _EC2_DETACH_IGW),
    Block("ec2-instance", "iam-instance-profile", "Karpenter's nodes run with the instance profile it created",
          _KARPENTER_DELETE, "stranded"),
    Block("ec2-instance", "ec2-launch-template", "Karpenter and the node groups launch replacements from their "
          "templates while instances are still being managed", _KARPENTER_DELETE, "stranded"),
    Block("elb-load-balancer", "elb-target-group", "DeleteTargetGroup: a target group used by a listener's "
          "actions cannot be deleted", _ELB_DELETE_TG),
    Block("elb-load-balancer", "ec2-security-group", "the load balancer's ENIs use its security groups",
          _EC2_DELETE_SG),
    Block("elb-load-balancer", "ec2-subnet", "the load balancer's ENIs live in the subnets", _EC2_DELETE_SUBNET),
    Block("elb-load-balancer", "ec2-internet-gateway", "DetachInternetGateway: an internet-facing load balancer's "
          "public addresses must be gone", _EC2_DETACH_IGW),
    Block("ec2-nat-gateway", "ec2-elastic-ip", "ReleaseAddress: an address in use by a NAT gateway's ENI cannot "
          "be released (DeleteNatGateway disassociates it)", _EC2_RELEASE_ADDRESS),
    Block("ec2-nat-gateway", "ec2-subnet", "the NAT gateway's ENI lives in its public subnet", _EC2_DELETE_SUBNET),
    Block("ec2-nat-gateway", "ec2-internet-gateway", "DetachInternetGateway: the NAT gateway's Elastic IP is a "
          "public address in the VPC", _EC2_DETACH_IGW),
    Block("ec2-elastic-ip", "ec2-internet-gateway", "DetachInternetGateway: no Elastic IP may stay associated in "
          "the VPC", _EC2_DETACH_IGW),
    Block("ec2-network-interface", "ec2-security-group", "DeleteSecurityGroup fails with DependencyViolation "
          "while a network interface uses the group", _EC2_DELETE_SG),
    Block("ec2-network-interface", "ec2-subnet", "DeleteSubnet fails while network interfaces remain in it",
          _EC2_DELETE_SUBNET),
    Block("ec2-security-group", "ec2-vpc", "DeleteVpc: delete all security groups (but the default) first",
          _EC2_DELETE_VPC),
    Block("ec2-subnet", "ec2-vpc", "DeleteVpc: delete the subnets first", _EC2_DELETE_VPC),
    Block("ec2-subnet", "ec2-route-table", "DeleteRouteTable: disassociate the subnets first",
          _EC2_DELETE_ROUTE_TABLE),
    Block("ec2-route-table", "ec2-vpc", "DeleteVpc: delete all route tables (but the main one) first",
          _EC2_DELETE_VPC),
    Block("ec2-internet-gateway", "ec2-vpc", "DeleteVpc: detach or delete all gateways first", _EC2_DELETE_VPC),
    Block("iam-instance-profile", "iam-role", "DeleteRole: remove the role from its instance profiles first",
          _IAM_DELETE_ROLE),
    Block("eks-nodegroup", "iam-role", "a node group's instances run with its node role",
          _EKS_DELETE_CLUSTER_GUIDE, "stranded"),
    Block("eks-cluster", "iam-role", "the control plane acts with its cluster role until it is gone",
          _EKS_DELETE_CLUSTER_GUIDE, "stranded"),
    Block("autoscaling-group", "ec2-instance", "an Auto Scaling group replaces the instances it manages when they "
          "are terminated; ForceDelete terminates them with the group", _ASG_DELETE, "stranded"),
    Block("autoscaling-group", "ec2-launch-template", "the group launches from its template until it is gone",
          _ASG_DELETE, "stranded"),
    Block("eks-nodegroup", "autoscaling-group", "a managed node group owns its Auto Scaling group and deletes it "
          "itself", _EKS_DELETE_CLUSTER, "stranded"),
    Block("iam-role", "iam-policy", "DeletePolicy: detach the policy from every role first (deleting the roles "
          "detaches it)", "https://docs.aws.amazon.com/IAM/latest/APIReference/API_DeletePolicy.html"),
)


def position(kind: str) -> int:
    return SWEEP_ORDER.index(kind)


def violations(order: tuple[str, ...] = SWEEP_ORDER, blocks: tuple[Block, ...] = BLOCKS) -> list[str]:
    """Every (dependant, dependency) pair that `order` deletes the wrong way round, or names a kind it lacks."""
    found: list[str] = []
    for block in blocks:
        if block.dependant not in order or block.dependency not in order:
            found.append(f"{block.dependant} -> {block.dependency}: not in the order")
        elif order.index(block.dependant) > order.index(block.dependency):
            found.append(f"{block.dependant} must go before {block.dependency}: {block.rule} ({block.source})")
    return found
