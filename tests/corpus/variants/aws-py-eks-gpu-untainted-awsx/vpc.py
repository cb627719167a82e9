# VARIANT (tests/corpus/variants/aws-py-eks-gpu-untainted-awsx/SOURCE): the network is one awsx.ec2.Vpc instead of
# the program's aws.ec2 VPC, internet gateway, route table and subnets; the security group is the program's.
import pulumi_awsx as awsx
from pulumi_aws import ec2

vpc = awsx.ec2.Vpc(
    "eks-vpc",
    cidr_block="10.100.0.0/16",
    enable_dns_hostnames=True,
    enable_dns_support=True,
    tags={
        "Name": "pulumi-eks-vpc",
    },
)

subnet_ids = vpc.public_subnet_ids

## Security Group

eks_security_group = ec2.SecurityGroup(
    "eks-cluster-sg",
    vpc_id=vpc.vpc_id,
    description="Allow all HTTP(s) traffic to EKS Cluster",
    tags={
        "Name": "pulumi-cluster-sg",
    },
    ingress=[
        ec2.SecurityGroupIngressArgs(
            cidr_blocks=["0.0.0.0/0"],
            from_port=443,
            to_port=443,
            protocol="tcp",
            description="Allow pods to communicate with the cluster API Server.",
        ),
        ec2.SecurityGroupIngressArgs(
            cidr_blocks=["0.0.0.0/0"],
            from_port=80,
            to_port=80,
            protocol="tcp",
            description="Allow internet access to pods",
        ),
    ],
)
