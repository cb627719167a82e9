import pulumi
import json
import pulumi_aws as aws
import pulumi_awsx as awsx
import pulumi_eks as eks
import pulumi_kubernetes as kubernetes

eks_vpc = awsx.ec2.Vpc("eks-vpc",
    enable_dns_hostnames=True,
    cidr_block="10.0.0.0/16")
eks_cluster = eks.Cluster("eks-cluster",
    vpc_id=eks_vpc.vpc_id,
    authentication_mode=eks.AuthenticationMode.API,
    public_subnet_ids=eks_vpc.public_subnet_ids,
    private_subnet_ids=eks_vpc.private_subnet_ids,
    skip_default_node_group=True)
k8_s_provider = kubernetes.Provider("k8sProvider", kubeconfig=eks_cluster.kubeconfig)
node_role = aws.iam.Role("node-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{
        "Action": "sts:AssumeRole",
        "Effect": "Allow",
        "Sid": "",
        "Principal": {
            "Service": "ec2.amazonaws.com",
        },
    }],
}))
worker_node_policy = aws.iam.RolePolicyAttachment("worker-node-policy",
    role=node_role.name,
    policy_arn="arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy")
cni_policy = aws.iam.RolePolicyAttachment("cni-policy",
    role=node_role.name,
    policy_arn="arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy")
registry_policy = aws.iam.RolePolicyAttachment("registry-policy",
    role=node_role.name,
    policy_arn="arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly")

# The node group for running system pods (e.g. coredns, etc.)
system_node_group = eks.ManagedNodeGroup("system-node-group",
    cluster=eks_cluster,
    node_role=node_role)

# The EFA device plugin for exposing EFA interfaces as extended resources
device_plugin = kubernetes.helm.v3.Release("device-plugin",
    version="0.5.7",
    repository_opts={
        "repo": "https://aws.github.io/eks-charts",
    },
    chart="aws-efa-k8s-device-plugin",
    namespace="kube-system",
    atomic=True,
    values={
        "tolerations": [{
            "key": "efa-enabled",
            "operator": "Exists",
            "effect": "NoExecute",
        }],
    },
    opts = pulumi.ResourceOptions(provider=k8_s_provider))

# The node group for running EFA enabled workloads
efa_node_group = eks.ManagedNodeGroup("efa-node-group",
    cluster=eks_cluster,
    node_role=node_role,
    instance_types=["g6.8xlarge"],
    gpu=True,
    scaling_config={
        "min_size": 2,
        "desired_size": 2,
        "max_size": 4,
    },
    enable_efa_support=True,
    placement_group_availability_zone="us-west-2b",

    # Taint the nodes so that only pods with the efa-enabled label can be scheduled on them
    taints=[{
        "key": "efa-enabled",
        "value": "true",
        "effect": "NO_EXECUTE",
    }],

    # Instances with GPUs usually have nvme instance store volumes, so we can mount them in RAID-0 for kubelet and containerd
    # These are faster than the regular EBS volumes
    nodeadm_extra_options=[{
        "content_type": "application/node.eks.aws",
        "content": """apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  instance:
    localStorage:
      strategy: RAID0
""",
    }])

