# Copyright 2016-2025, Pulumi Corporation.  All rights reserved.
#
# A Python port of pulumi/examples aws-ts-eks-gpu-dra/index.ts (Apache-2.0; see SOURCE for the commit, the licence
# and what the port changes).

import json

import pulumi
import pulumi_aws as aws
import pulumi_awsx as awsx
import pulumi_eks as eks
import pulumi_kubernetes as k8s

config = pulumi.Config()
cluster_name = config.get("clusterName") or "gpu-dra-cluster"

# VPC with required EKS subnet tags
vpc = awsx.ec2.Vpc(
    "gpu-vpc",
    enable_dns_hostnames=True,
    cidr_block="10.0.0.0/16",
    subnet_specs=[
        awsx.ec2.SubnetSpecArgs(
            type=awsx.ec2.SubnetType.PUBLIC,
            tags={f"kubernetes.io/cluster/{cluster_name}": "shared", "kubernetes.io/role/elb": "1"},
        ),
        awsx.ec2.SubnetSpecArgs(
            type=awsx.ec2.SubnetType.PRIVATE,
            tags={f"kubernetes.io/cluster/{cluster_name}": "shared", "kubernetes.io/role/internal-elb": "1"},
        ),
    ],
    subnet_strategy=awsx.ec2.SubnetAllocationStrategy.AUTO,
)

# EKS cluster without Auto Mode: a managed node group for system workloads and a GPU node group
cluster = eks.Cluster(
    "gpu-cluster",
    name=cluster_name,
    vpc_id=vpc.vpc_id,
    public_subnet_ids=vpc.public_subnet_ids,
    private_subnet_ids=vpc.private_subnet_ids,
    authentication_mode=eks.AuthenticationMode.API,
    skip_default_node_group=True,
    version="1.34",
)

# IAM role for the managed node groups
node_role = aws.iam.Role(
    "system-node-role",
    assume_role_policy=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{
            "Action": "sts:AssumeRole",
            "Effect": "Allow",
            "Principal": {"Service": "ec2.amazonaws.com"},
        }],
    }),
)

for index, policy_arn in enumerate([
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
]):
    aws.iam.RolePolicyAttachment(f"system-node-policy-{index}", role=node_role.name, policy_arn=policy_arn)

# System node group: m6i.large for system workloads
system_node_group = eks.ManagedNodeGroup(
    "system-nodes",
    cluster=cluster,
    node_group_name="system-nodes",
    node_role=node_role,
    instance_types=["m6i.large"],
    capacity_type="ON_DEMAND",
    scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=2, min_size=1, max_size=4),
    labels={"node-role": "system"},
    taints=[],
    opts=pulumi.ResourceOptions(depends_on=[cluster]),
)

# GPU node group: p4d.24xlarge (A100 40GB, MIG profiles 1g.5gb, 2g.10gb, 3g.20gb, 4g.40gb, 7g.40gb)
gpu_node_group = eks.ManagedNodeGroup(
    "gpu-nodes",
    cluster=cluster,
    node_group_name="gpu-nodes",
    node_role=node_role,
    instance_types=["p4d.24xlarge"],
    capacity_type="ON_DEMAND",
    scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=1, min_size=0, max_size=2),
    disk_size=100,
    ami_type="AL2023_x86_64_NVIDIA",
    labels={
        "node-role": "gpu",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/mig.config": "all-balanced",
    },
    taints=[aws.eks.NodeGroupTaintArgs(key="nvidia.com/gpu", value="true", effect="NO_SCHEDULE")],
    opts=pulumi.ResourceOptions(depends_on=[cluster]),
)

# CoreDNS, the EKS Pod Identity Agent and the EBS CSI driver add-ons
core_dns_addon = aws.eks.Addon(
    "coredns",
    cluster_name=cluster.eks_cluster.name,
    addon_name="coredns",
    addon_version="v1.13.1-eksbuild.1",
    resolve_conflicts_on_create="OVERWRITE",
    resolve_conflicts_on_update="OVERWRITE",
    opts=pulumi.ResourceOptions(depends_on=[system_node_group]),
)
pod_identity_addon = aws.eks.Addon(
    "eks-pod-identity-agent",
    cluster_name=cluster.eks_cluster.name,
    addon_name="eks-pod-identity-agent",
    addon_version="v1.3.10-eksbuild.2",
    resolve_conflicts_on_create="OVERWRITE",
    resolve_conflicts_on_update="OVERWRITE",
    opts=pulumi.ResourceOptions(depends_on=[system_node_group]),
)
ebs_csi_role = aws.iam.Role(
    "ebs-csi-role",
    name=f"AmazonEKS_EBS_CSI_DriverRole-{cluster_name}",
    assume_role_policy=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Service": "pods.eks.amazonaws.com"},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
        }],
    }),
)
aws.iam.RolePolicyAttachment(
    "ebs-csi-policy-attachment",
    role=ebs_csi_role.name,
    policy_arn="arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy",
)
ebs_csi_pod_identity = aws.eks.PodIdentityAssociation(
    "ebs-csi-pod-identity",
    cluster_name=cluster.eks_cluster.name,
    namespace="kube-system",
    service_account="ebs-csi-controller-sa",
    role_arn=ebs_csi_role.arn,
    opts=pulumi.ResourceOptions(depends_on=[pod_identity_addon]),
)
ebs_csi_addon = aws.eks.Addon(
    "aws-ebs-csi-driver",
    cluster_name=cluster.eks_cluster.name,
    addon_name="aws-ebs-csi-driver",
    addon_version="v1.54.0-eksbuild.1",
    resolve_conflicts_on_create="OVERWRITE",
    resolve_conflicts_on_update="OVERWRITE",
    opts=pulumi.ResourceOptions(depends_on=[system_node_group, ebs_csi_pod_identity]),
)

# Kubernetes provider for deploying resources
k8s_provider = k8s.Provider("k8s-provider", kubeconfig=cluster.kubeconfig_json, enable_server_side_apply=True)

# Default gp3 StorageClass for EBS volumes
k8s.storage.v1.StorageClass(
    "gp3-storage-class",
    metadata=k8s.meta.v1.ObjectMetaArgs(
        name="gp3",
        annotations={"storageclass.kubernetes.io/is-default-class": "true"},
    ),
    provisioner="ebs.csi.aws.com",
    volume_binding_mode="WaitForFirstConsumer",
    reclaim_policy="Delete",
    allow_volume_expansion=True,
    parameters={"type": "gp3", "encrypted": "true"},
    opts=pulumi.ResourceOptions(provider=k8s_provider, depends_on=[ebs_csi_addon]),
)

# NVIDIA GPU Operator with DRA configuration: the AMI's driver and toolkit, no device plugin
gpu_operator_namespace = k8s.core.v1.Namespace(
    "gpu-operator-ns", metadata=k8s.meta.v1.ObjectMetaArgs(name="gpu-operator"),
    opts=pulumi.ResourceOptions(provider=k8s_provider))
gpu_operator = k8s.helm.v3.Release(
    "gpu-operator",
    chart="gpu-operator",
    namespace=gpu_operator_namespace.metadata.name,
    repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo="https://helm.ngc.nvidia.com/nvidia"),
    version="v25.10.1",
    skip_await=True,
    values={
        "driver": {"enabled": False},
        "toolkit": {"enabled": False},
        "devicePlugin": {"enabled": False},
        "operator": {"defaultRuntime": "containerd"},
        "nfd": {"enabled": True},
        "mig": {"strategy": "mixed"},
        "migManager": {"enabled": True, "env": [{"name": "WITH_REBOOT", "value": "true"}]},
        "dcgmExporter": {"enabled": True, "serviceMonitor": {"enabled": True}},
    },
    opts=pulumi.ResourceOptions(provider=k8s_provider, depends_on=[gpu_node_group]),
)

# NVIDIA DRA driver for GPU allocation (its chart creates the gpu.nvidia.com and mig.nvidia.com DeviceClasses)
dra_driver_namespace = k8s.core.v1.Namespace(
    "dra-driver-ns", metadata=k8s.meta.v1.ObjectMetaArgs(name="nvidia-dra-driver"),
    opts=pulumi.ResourceOptions(provider=k8s_provider))
dra_driver = k8s.helm.v3.Release(
    "nvidia-dra-driver",
    chart="nvidia-dra-driver-gpu",
    namespace=dra_driver_namespace.metadata.name,
    repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo="https://helm.ngc.nvidia.com/nvidia"),
    version="v25.8.1",
    skip_await=True,
    values={
        "nvidiaDriverRoot": "/",
        "gpuResourcesEnabledOverride": True,
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
        "kubeletPlugin": {
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
        "controller": {
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "node-role", "operator": "In", "values": ["system"]}]},
            ]}}},
        },
    },
    opts=pulumi.ResourceOptions(provider=k8s_provider, depends_on=[gpu_operator]),
)

# Monitoring: the Prometheus stack for GPU metrics
monitoring_namespace = k8s.core.v1.Namespace(
    "monitoring-ns", metadata=k8s.meta.v1.ObjectMetaArgs(name="monitoring"),
    opts=pulumi.ResourceOptions(provider=k8s_provider))
k8s.helm.v3.Release(
    "kube-prometheus-stack",
    chart="kube-prometheus-stack",
    namespace=monitoring_namespace.metadata.name,
    repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo="https://prometheus-community.github.io/helm-charts"),
    version="81.2.1",
    skip_await=True,
    values={
        "prometheus": {"prometheusSpec": {
            "serviceMonitorSelectorNilUsesHelmValues": False,
            "podMonitorSelectorNilUsesHelmValues": False,
            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1000m", "memory": "2Gi"}},
        }},
        "grafana": {
            "enabled": True,
            "adminPassword": "gpu-monitoring-demo",
            "service": {"type": "LoadBalancer"},
            "dashboardProviders": {"dashboardproviders.yaml": {"apiVersion": 1, "providers": [{
                "name": "default", "orgId": 1, "folder": "", "type": "file", "disableDeletion": False,
                "editable": True, "options": {"path": "/var/lib/grafana/dashboards/default"},
            }]}},
            "dashboards": {"default": {"nvidia-dcgm-mig": {"gnetId": 16640, "revision": 1,
                                                           "datasource": "Prometheus"}}},
        },
        "alertmanager": {"enabled": False},
    },
    opts=pulumi.ResourceOptions(provider=k8s_provider, depends_on=[gpu_operator]),
)

k8s.core.v1.Namespace("ml-inference", metadata=k8s.meta.v1.ObjectMetaArgs(name="ml-inference"),
                      opts=pulumi.ResourceOptions(provider=k8s_provider))
mig_test_namespace = k8s.core.v1.Namespace(
    "mig-test-ns", metadata=k8s.meta.v1.ObjectMetaArgs(name="mig-test"),
    opts=pulumi.ResourceOptions(provider=k8s_provider))

# The training and inference scripts (the example's PyTorch scripts; their text does not matter to the gate)
scripts = k8s.core.v1.ConfigMap(
    "fashion-mnist-scripts",
    metadata=k8s.meta.v1.ObjectMetaArgs(name="fashion-mnist-scripts", namespace=mig_test_namespace.metadata.name),
    data={
        "large-training-script.py": "print('Starting Large Training Workload (3g.20gb MIG)')\n",
        "medium-training-script.py": "print('Starting Medium Training Workload (2g.10gb MIG)')\n",
        "small-inference-script.py": "print('Starting Small Inference Workload (1g.5gb MIG)')\n",
    },
    opts=pulumi.ResourceOptions(provider=k8s_provider, depends_on=[mig_test_namespace]),
)


def mig_claim_template(name: str, request: str, profile: str) -> k8s.apiextensions.CustomResource:
    """A ResourceClaimTemplate for one MIG device of `profile` (resource.k8s.io/v1)."""
    return k8s.apiextensions.CustomResource(
        name,
        api_version="resource.k8s.io/v1",
        kind="ResourceClaimTemplate",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=name, namespace=mig_test_namespace.metadata.name),
        spec={"spec": {"devices": {"requests": [{
            "name": request,
            "exactly": {
                "deviceClassName": "mig.nvidia.com",
                "count": 1,
                "selectors": [{"cel": {"expression": 'device.attributes["gpu.nvidia.com"].type == "mig" && '
                                                    f'device.attributes["gpu.nvidia.com"].profile == "{profile}"'}}],
            },
        }]}}},
        opts=pulumi.ResourceOptions(provider=k8s_provider, depends_on=[dra_driver]),
    )


def mig_pod(name: str, pod_name: str, container: str, script: str, claim: str,
            template: k8s.apiextensions.CustomResource) -> k8s.core.v1.Pod:
    """A pod that claims one MIG device through `spec.resourceClaims` and its container's `resources.claims`."""
    return k8s.core.v1.Pod(
        name,
        metadata=k8s.meta.v1.ObjectMetaArgs(name=pod_name, namespace=mig_test_namespace.metadata.name),
        spec=k8s.core.v1.PodSpecArgs(
            restart_policy="Never",
            tolerations=[k8s.core.v1.TolerationArgs(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")],
            node_selector={"node-role": "gpu", "nvidia.com/gpu.present": "true"},
            containers=[k8s.core.v1.ContainerArgs(
                name=container,
                image="nvcr.io/nvidia/pytorch:25.12-py3",
                command=["python", f"/scripts/{script}"],
                volume_mounts=[k8s.core.v1.VolumeMountArgs(name="scripts", mount_path="/scripts", read_only=True)],
                resources=k8s.core.v1.ResourceRequirementsArgs(claims=[k8s.core.v1.ResourceClaimArgs(name=claim)]),
            )],
            resource_claims=[k8s.core.v1.PodResourceClaimArgs(name=claim,
                                                              resource_claim_template_name=f"{claim}-template")],
            volumes=[k8s.core.v1.VolumeArgs(name="scripts", config_map=k8s.core.v1.ConfigMapVolumeSourceArgs(
                name=scripts.metadata.name))],
        ),
        opts=pulumi.ResourceOptions(provider=k8s_provider, depends_on=[template, scripts]),
    )


mig_large = mig_claim_template("mig-large-template", "mig-large", "3g.20gb")
mig_medium = mig_claim_template("mig-medium-template", "mig-medium", "2g.10gb")
mig_small = mig_claim_template("mig-small-template", "mig-small", "1g.5gb")
mig_pod("mig-large-training", "mig-large-training-pod", "training", "large-training-script.py", "mig-large", mig_large)
mig_pod("mig-medium-training", "mig-medium-training-pod", "training", "medium-training-script.py", "mig-medium",
        mig_medium)
mig_pod("mig-small-inference", "mig-small-inference-pod", "inference", "small-inference-script.py", "mig-small",
        mig_small)

pulumi.export("kubeconfig", pulumi.Output.secret(cluster.kubeconfig))
pulumi.export("clusterNameOutput", cluster.eks_cluster.name)
pulumi.export("grafanaPassword", "gpu-monitoring-demo")
pulumi.export("vpcId", vpc.vpc_id)
pulumi.export("privateSubnetIds", vpc.private_subnet_ids)
pulumi.export("publicSubnetIds", vpc.public_subnet_ids)
