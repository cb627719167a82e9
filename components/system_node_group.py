"""SystemNodeGroup: the untainted EKS managed node group that runs CoreDNS and every controller."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from components import labels, nodes
from components.config import SystemNodeGroupConfig


class SystemNodeGroup(pulumi.ComponentResource):
    """An EKS managed node group on the current EKS-optimized AL2023 standard image, with no taint.

    Every controller (GPU Operator, NFD master, Karpenter, KEDA, load balancer controller) selects
    its nodes through `node_selector` (`gpu-platform.io/role=system`), so none of them sits Pending
    behind the GPU taint. Nodes spread over the given private subnets (one per zone).

    Requires: an EKS cluster (name, Kubernetes version), a node IAM role, private subnets.
    Conflicts: none; GPU pools must not reuse its name. A replacement deletes the group first.
    Sources:
    - AL2023 standard AMI type: https://docs.aws.amazon.com/eks/latest/APIReference/API_Nodegroup.html
    - Launch template with managed node groups: https://docs.aws.amazon.com/eks/latest/userguide/launch-templates.html
    - IMDSv2 / hop limit 1: https://docs.aws.amazon.com/eks/latest/best-practices/identity-and-access-management.html
    """

    node_group: aws.eks.NodeGroup
    node_group_name: pulumi.Output[str]
    node_group_arn: pulumi.Output[str]
    launch_template_id: pulumi.Output[str]
    labels: dict[str, str]
    node_selector: dict[str, str]

    def __init__(
        self,
        name: str,
        config: SystemNodeGroupConfig,
        *,
        cluster_name: pulumi.Input[str],
        kubernetes_version: pulumi.Input[str],
        node_role_arn: pulumi.Input[str],
        subnet_ids: pulumi.Input[Sequence[str]],
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-platform:components:SystemNodeGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.labels = labels.system_node_labels()
        self.node_selector = labels.system_node_selector()

        template = aws.ec2.LaunchTemplate(
            f"{name}-launch-template",
            description="gpu-platform system nodes: IMDSv2, encrypted gp3 root",
            metadata_options=nodes.metadata_options(),
            block_device_mappings=[nodes.root_volume(nodes.AL2023_ROOT_DEVICE, config.disk_size_gib)],
            tag_specifications=nodes.instance_tags(f"{name}-node"),
            update_default_version=True,
            opts=child,
        )
        group = aws.eks.NodeGroup(
            f"{name}-node-group",
            cluster_name=cluster_name,
            node_group_name=config.name,
            node_role_arn=node_role_arn,
            subnet_ids=subnet_ids,
            version=kubernetes_version,
            ami_type=config.ami_type,
            capacity_type="ON_DEMAND",
            instance_types=list(config.instance_types),
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=config.min_size, desired_size=config.desired_size, max_size=config.max_size
            ),
            update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=template.id, version=template.latest_version.apply(str)
            ),
            labels=self.labels,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=list(depends_on),
                # desiredSize is applied on every update: no autoscaler in this stack changes it (the GPU groups'
                # reasoning, components/gpu_node_group.py; docs/day-two.md, "Node group sizes").
                # A change of instance types, AMI type, capacity type, subnets or role replaces the group, and
                # EKS node group names are unique per cluster: create-before-replace would fail with
                # ResourceInUseException. Deleting first (as the GPU groups do) keeps the name known at
                # preview, where the policy pack reads it; the price is that the system nodes are gone while
                # the new group comes up.
                # Source: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html
                # Source: https://www.pulumi.com/docs/iac/concepts/options/deletebeforereplace/
                delete_before_replace=True,
            ),
        )
        self.node_group = group
        self.node_group_name = group.node_group_name
        self.node_group_arn = group.arn
        self.launch_template_id = template.id
        self.register_outputs(
            {
                "nodeGroupName": self.node_group_name,
                "nodeGroupArn": self.node_group_arn,
                "launchTemplateId": self.launch_template_id,
                "labels": self.labels,
            }
        )
