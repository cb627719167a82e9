"""GpuManagedNodeGroup: a GPU pool on Canonical's Ubuntu EKS image whose driver the GPU Operator installs."""

from __future__ import annotations

import base64
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pulumi
import pulumi_aws as aws
import yaml

from components import iam, image_roll, labels, nodes
from components.cluster import Cluster, cluster_dns_ip
from components.config import GpuNodeGroupConfig, GpuPool, StackConfig, load_stack_config
from components.image_roll import KUBELET_VERSION_TAG
from components.labels import Taint
from policies.gpu_guard.matrix import load_matrix

# Tags cluster-autoscaler reads to build a node template for a self-managed group that scales from zero (the stack
# installs no cluster-autoscaler; they serve one a user runs, with a node-group key of their own: docs/day-two.md);
# the policy pack reads the same tags for labels and taints.
# Source: https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/cloudprovider/aws/README.md
ASG_LABEL_TAG = "k8s.io/cluster-autoscaler/node-template/label/"
ASG_TAINT_TAG = "k8s.io/cluster-autoscaler/node-template/taint/"

_CAPACITY = {"on-demand": "ON_DEMAND", "spot": "SPOT"}


def bootstrap_user_data(
    cluster_name: str,
    endpoint: str,
    ca_data: str,
    *,
    dns_cluster_ip: str,
    node_labels: Mapping[str, str],
    taints: Sequence[Taint],
) -> str:
    """The shell script a Canonical Ubuntu EKS node runs at first boot to join the cluster.

    With a custom AMI (`amiType: CUSTOM`) EKS adds no bootstrap of its own, so this user data must
    join the node, and it carries the labels and taints: the kubelet registers with them, so no pod
    lands on a GPU node before its taint exists. Canonical's EKS images ship `/etc/eks/bootstrap.sh`
    (the script of the Amazon EKS AMI) and document calling it with the cluster name.
    Source: https://documentation.ubuntu.com/aws/en/latest/aws-how-to/kubernetes/deploy-ubuntu-cluster-with-eks-ami/
    Source: https://github.com/eksctl-io/eksctl/blob/main/pkg/nodebootstrap/README.md
    (eksctl's Ubuntu bootstrapper delegates to /etc/eks/bootstrap.sh on the image)
    Source: https://docs.aws.amazon.com/eks/latest/userguide/launch-templates.html (custom AMI: supply the bootstrap)
    With the CA and the endpoint given, bootstrap.sh does not call DescribeCluster and would guess the
    cluster DNS address from the VPC range (10.100.0.10 or 172.20.0.10); `--dns-cluster-ip` passes the
    address of the cluster's own service range, as AWS's custom-AMI example does.
    Source: https://github.com/awslabs/amazon-eks-ami/blob/main/templates/al2/runtime/bootstrap.sh (--dns-cluster-ip)
    Source: https://docs.aws.amazon.com/eks/latest/userguide/launch-templates.html (user data with --dns-cluster-ip)
    """
    label_arg = ",".join(f"{k}={v}" for k, v in sorted(node_labels.items()))
    kubelet_args = f"--node-labels={label_arg}"
    if taints:
        kubelet_args += " --register-with-taints=" + ",".join(t.kubelet_flag_value() for t in taints)
    command = " \\\n  ".join(
        [
            f"/etc/eks/bootstrap.sh {shlex.quote(cluster_name)}",
            f"--b64-cluster-ca {shlex.quote(ca_data)}",
            f"--apiserver-endpoint {shlex.quote(endpoint)}",
            f"--dns-cluster-ip {shlex.quote(dns_cluster_ip)}",
            f"--kubelet-extra-args {shlex.quote(kubelet_args)}",
        ]
    )
    return f"#!/bin/bash\nset -o errexit -o nounset -o pipefail\n{command}\n"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class GpuManagedNodeGroup(pulumi.ComponentResource):
    """A GPU node pool on Canonical's Ubuntu EKS image (no NVIDIA driver), tainted and labelled.

    The image is the Canonical Ubuntu EKS AMI for the pool's OS and kubelet version: `imageId` when the
    stack pins one (nodes roll only when it changes), else the one Canonical's public SSM parameter
    (`.../ebs-gp2/ami-id` for 22.04, `.../ebs-gp3/ami-id` for 24.04 and 26.04, from the compatibility matrix)
    names at the first deploy, held afterwards (the launch template ignores later image changes) until the
    pool's kubelet version changes, when the pool rolls to that version's current image
    (components/image_roll.py).
    Nodes carry the `nvidia.com/gpu=true:NoSchedule` taint and the label contract (pool, OS, full
    driver version, driver-source=operator); the GPU Operator installs the driver.
    Launch template: IMDSv2 required with hop limit 1, encrypted gp3 root volume of `diskSizeGiB`,
    bootstrap user data. Managed (`aws.eks.NodeGroup`, amiType CUSTOM) by default; with
    `selfManaged: true` an Auto Scaling group with its own node role, instance profile and an
    EC2_LINUX access entry, labels and taints also as cluster-autoscaler node-template tags.

    Requires: Cluster (endpoint, CA, subnets, node role, cluster security group); GpuOperatorRelease
    for the driver.
    Conflicts: pools whose image bakes a driver (Bottlerocket/AL2023 NVIDIA) belong to Karpenter pools.
    Sources:
    - Canonical SSM parameters: https://documentation.ubuntu.com/aws/en/latest/aws-how-to/instances/find-ubuntu-images/
    - Custom AMI in a managed node group: https://docs.aws.amazon.com/eks/latest/userguide/launch-templates.html
    - Self-managed nodes and EC2_LINUX access entries:
      https://docs.aws.amazon.com/eks/latest/userguide/access-entries.html
    """

    node_group_name: pulumi.Output[str]
    launch_template_id: pulumi.Output[str]
    node_role_arn: pulumi.Output[str]
    ami_id: pulumi.Output[str]
    ssm_parameter: str
    labels: dict[str, str]
    taints: tuple[Taint, ...]
    user_data: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        config: GpuNodeGroupConfig,
        pool: GpuPool,
        cluster: Cluster,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-platform:components:GpuManagedNodeGroup", name, None, opts)
        matrix = load_matrix()
        arch = matrix.instance_type(config.instance_types[0])
        cpu_arch = arch.cpu_arch if arch is not None else "x86_64"
        image = matrix.node_image(config.os, pool.kubelet_version, cpu_arch)
        if image is None:
            raise ValueError(f"no node image recorded for {config.os} on {cpu_arch} in the compatibility matrix")
        self.ssm_parameter = image.ssm_parameter
        pinned = config.image_id is not None
        if config.image_id is not None:
            ami_id = config.image_id
        else:
            # The parameter names Canonical's current image, which changes whenever Canonical publishes;
            # the launch template ignores later changes (below), so nodes keep their first image.
            ami_id = aws.ssm.get_parameter(name=image.ssm_parameter).value
            pulumi.log.warn(
                f"GPU pool {pool.name!r}: no imageId in the stack, so it holds the image of its first deploy "
                f"({ami_id} now, from {image.ssm_parameter}); pin it with gpuNodeGroups[].imageId to roll "
                "nodes to a new image when you choose", self)
        self.ami_id = pulumi.Output.from_input(ami_id)
        # Roll the nodes only when the stack changes the image or the pool's kubelet version, never because
        # Canonical published one (components/image_roll.py).
        rolling = not pinned and image_roll.rolls(
            image_roll.deployed_kubelet_version(cluster.eks_name, config.name, pool.name,
                                                self_managed=config.self_managed),
            pool.kubelet_version)
        if rolling:
            pulumi.log.warn(
                f"GPU pool {pool.name!r}: kubelet version changes to {pool.kubelet_version}, so its nodes roll to "
                f"{ami_id} (the current image of {image.ssm_parameter}), which later runs hold", self)
        template_ignore = [] if pinned or rolling else ["imageId"]
        self.labels = labels.gpu_pool_labels(pool.name, pool.os, pool.driver_version)
        self.taints = (labels.GPU_TAINT,)
        capacity = _CAPACITY[config.capacity_type]

        node_labels = dict(self.labels)
        if not config.self_managed:
            # Labels EKS sets itself when it generates the bootstrap; with a custom AMI the user data sets them.
            # Source: https://docs.aws.amazon.com/eks/latest/userguide/launch-templates.html
            node_labels.update({
                "eks.amazonaws.com/nodegroup": config.name,
                "eks.amazonaws.com/capacityType": capacity,
            })
            if pinned:  # an unpinned image must not reach the user data, which would roll the nodes
                node_labels["eks.amazonaws.com/nodegroup-image"] = ami_id
        self.user_data = pulumi.Output.all(
            cluster.cluster_name, cluster.endpoint, cluster.certificate_authority_data, cluster.service_ipv4_cidr
        ).apply(lambda a: bootstrap_user_data(
            a[0], a[1], a[2], dns_cluster_ip=cluster_dns_ip(a[3]), node_labels=node_labels, taints=self.taints))
        tags = {KUBELET_VERSION_TAG: pool.kubelet_version, labels.POOL_LABEL: pool.name}

        if config.self_managed:
            self._self_managed(name, config, pool, cluster, ami_id=ami_id, tags=tags, ignore=template_ignore)
        else:
            template = aws.ec2.LaunchTemplate(
                f"{name}-launch-template",
                description=f"gpu-platform GPU pool {pool.name}: {pool.os}, IMDSv2, encrypted gp3 root",
                image_id=ami_id,
                user_data=self.user_data.apply(_b64),
                metadata_options=nodes.metadata_options(),
                block_device_mappings=[nodes.root_volume(nodes.UBUNTU_ROOT_DEVICE, config.disk_size_gib)],
                tag_specifications=nodes.instance_tags(f"{pool.name}-gpu-node", tags),
                update_default_version=True,
                opts=pulumi.ResourceOptions(parent=self, ignore_changes=template_ignore),
            )
            group = aws.eks.NodeGroup(
                f"{name}-node-group",
                cluster_name=cluster.cluster_name,
                node_group_name=config.name,
                node_role_arn=cluster.node_role_arn,
                subnet_ids=cluster.private_subnet_ids,
                ami_type="CUSTOM",
                capacity_type=capacity,
                instance_types=list(config.instance_types),
                scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                    min_size=config.min_size, desired_size=config.desired_size, max_size=config.max_size
                ),
                update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
                launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                    id=template.id, version=template.latest_version.apply(str)
                ),
                labels=self.labels,
                taints=[
                    aws.eks.NodeGroupTaintArgs(key=t.key, value=t.value, effect=t.eks_effect) for t in self.taints
                ],
                tags=tags,
                # desiredSize is applied on every update, never ignored: no autoscaler in this stack owns it
                # (EKS keeps that many nodes: https://docs.aws.amazon.com/eks/latest/APIReference/
                # API_NodegroupScalingConfig.html), so the stack file's value is the node count, and setting it
                # to 0 stops paying for the pool (docs/day-two.md, "Node group sizes").
                opts=pulumi.ResourceOptions(
                    parent=self,
                    depends_on=[cluster.system_node_group],
                    delete_before_replace=True,
                ),
            )
            self.node_group_name = group.node_group_name
            self.launch_template_id = template.id
            self.node_role_arn = cluster.node_role_arn
        self.register_outputs(
            {
                "nodeGroupName": self.node_group_name,
                "launchTemplateId": self.launch_template_id,
                "nodeRoleArn": self.node_role_arn,
                "amiId": self.ami_id,
                "ssmParameter": self.ssm_parameter,
                "labels": self.labels,
            }
        )

    def _self_managed(
        self,
        name: str,
        config: GpuNodeGroupConfig,
        pool: GpuPool,
        cluster: Cluster,
        *,
        ami_id: str,
        tags: dict[str, str],
        ignore: list[str],
    ) -> None:
        child = pulumi.ResourceOptions(parent=self)
        # Its own role: EKS already created an EC2_LINUX access entry for the shared node role of the
        # managed node groups, and a principal has one access entry.
        role, attachments = iam.node_role(name, self)
        profile = aws.iam.InstanceProfile(f"{name}-instance-profile", role=role.name, opts=child)
        access_entry = aws.eks.AccessEntry(
            f"{name}-access-entry",
            cluster_name=cluster.cluster_name,
            principal_arn=role.arn,
            type="EC2_LINUX",
            # The cluster must exist; the system node group waits for the control plane.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[cluster.system_node_group]),
        )
        template = aws.ec2.LaunchTemplate(
            f"{name}-launch-template",
            description=f"gpu-platform self-managed GPU pool {pool.name}: {pool.os}, IMDSv2, encrypted gp3 root",
            image_id=ami_id,
            user_data=self.user_data.apply(_b64),
            iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=profile.arn),
            # The cluster security group lets nodes and the control plane talk (EKS adds it to managed nodes).
            # Source: https://docs.aws.amazon.com/eks/latest/userguide/sec-group-reqs.html
            vpc_security_group_ids=[cluster.cluster_security_group_id],
            metadata_options=nodes.metadata_options(),
            block_device_mappings=[nodes.root_volume(nodes.UBUNTU_ROOT_DEVICE, config.disk_size_gib)],
            tag_specifications=nodes.instance_tags(f"{pool.name}-gpu-node", tags),
            update_default_version=True,
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=ignore),
        )
        on_demand = 100 if config.capacity_type == "on-demand" else 0
        asg_tags: list[aws.autoscaling.GroupTagArgs] = [
            aws.autoscaling.GroupTagArgs(key="Name", value=f"{pool.name}-gpu-node", propagate_at_launch=True),
            # Source: https://docs.aws.amazon.com/eks/latest/userguide/launch-workers.html (cluster ownership tag)
            aws.autoscaling.GroupTagArgs(
                key=cluster.cluster_name.apply(lambda n: f"kubernetes.io/cluster/{n}"),
                value="owned", propagate_at_launch=True,
            ),
            aws.autoscaling.GroupTagArgs(key="k8s.io/cluster-autoscaler/enabled", value="true",
                                         propagate_at_launch=False),
            aws.autoscaling.GroupTagArgs(
                key=cluster.cluster_name.apply(lambda n: f"k8s.io/cluster-autoscaler/{n}"),
                value="owned", propagate_at_launch=False,
            ),
            *[aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=True) for k, v in tags.items()],
            *[aws.autoscaling.GroupTagArgs(key=f"{ASG_LABEL_TAG}{k}", value=v, propagate_at_launch=False)
              for k, v in sorted(self.labels.items())],
            *[aws.autoscaling.GroupTagArgs(key=f"{ASG_TAINT_TAG}{t.key}", value=f"{t.value}:{t.effect}",
                                           propagate_at_launch=False) for t in self.taints],
        ]
        group = aws.autoscaling.Group(
            f"{name}-asg",
            min_size=config.min_size,
            max_size=config.max_size,
            desired_capacity=config.desired_size,
            vpc_zone_identifiers=cluster.private_subnet_ids,
            mixed_instances_policy=aws.autoscaling.GroupMixedInstancesPolicyArgs(
                launch_template=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateArgs(
                    launch_template_specification=(
                        aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateLaunchTemplateSpecificationArgs(
                            launch_template_id=template.id, version=template.latest_version.apply(str)
                        )
                    ),
                    overrides=[
                        aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateOverrideArgs(instance_type=t)
                        for t in config.instance_types
                    ],
                ),
                instances_distribution=aws.autoscaling.GroupMixedInstancesPolicyInstancesDistributionArgs(
                    on_demand_base_capacity=0,
                    on_demand_percentage_above_base_capacity=on_demand,
                    # Source: https://docs.aws.amazon.com/autoscaling/ec2/userguide/allocation-strategies.html
                    spot_allocation_strategy="price-capacity-optimized",
                ),
            ),
            tags=asg_tags,
            # A new launch template version (a new image, pinned or rolled on a kubelet version change)
            # replaces the running instances, as a managed node group's update does.
            # Source: https://docs.aws.amazon.com/autoscaling/ec2/userguide/asg-instance-refresh.html
            instance_refresh=aws.autoscaling.GroupInstanceRefreshArgs(strategy="Rolling"),
            # desiredCapacity is applied, as a managed group's desiredSize is (above).
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[access_entry, *attachments, cluster.system_node_group],
            ),
        )
        self.node_group_name = group.name
        self.launch_template_id = template.id
        self.node_role_arn = role.arn


@dataclass(frozen=True)
class ImagePin:
    """A GPU pool's node image: the SSM parameter that names Canonical's current image, and the pinned id."""

    pool: str
    os: str
    kubelet_version: str
    ssm_parameter: str
    image_id: str | None
    alias: str | None = None  # a Karpenter Bottlerocket / AL2023 pool: the EC2NodeClass alias, family@release

    def describe(self) -> str:
        if self.alias is not None:
            return (f"{self.pool}: {self.os}, kubelet {self.kubelet_version}, pinned to the alias {self.alias} "
                    f"(Karpenter EC2NodeClass); current image: {self.ssm_parameter}")
        pin = f"pinned to {self.image_id}" if self.image_id else "not pinned (holds the image of its first deploy)"
        return f"{self.pool}: {self.os}, kubelet {self.kubelet_version}, {pin}; current image: {self.ssm_parameter}"


def image_pins(config: StackConfig) -> list[ImagePin]:
    """The node image of every GPU node group and Karpenter pool of a stack (for `python -m tools.matrix`)."""
    matrix = load_matrix()
    pools = {p.name: p for p in config.gpu_pools()}
    pins: list[ImagePin] = []
    entries: list[tuple[str, str, tuple[str, ...], str | None, str | None]] = [
        (g.name, g.os, tuple(g.instance_types), g.image_id, None) for g in config.gpu_node_groups]
    if config.karpenter is not None:
        entries += [(k.name, k.os, tuple(k.instance_types), k.image_id, k.ami_alias) for k in config.karpenter.pools]
    for name, os, instance_types, image_id, alias in entries:
        pool = pools[name]
        known = matrix.instance_type(instance_types[0])
        image = matrix.node_image(os, pool.kubelet_version, known.cpu_arch if known else "x86_64")  # type: ignore[arg-type]
        parameter = image.ssm_parameter if image is not None else "(no image in the compatibility matrix)"
        pins.append(ImagePin(name, os, pool.kubelet_version, parameter, image_id, alias))
    return pins


def stack_image_pins(stack_file: Path) -> list[str]:
    """One line per GPU node group of a `Pulumi.<stack>.yaml`: its pinned image, or that it holds its first one."""
    config = yaml.safe_load(stack_file.read_text()).get("config") or {}
    stack = load_stack_config(config, stack_file=stack_file.name, check_matrix=False)
    return [pin.describe() for pin in image_pins(stack)] or [f"{stack_file.name} has no GPU node group"]
