"""KarpenterController: the Karpenter v1 controller of one cluster, its CRDs, IAM and interruption queue."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components import iam as node_iam
from components import labels
from components.cluster import KARPENTER_DISCOVERY_TAG, Cluster
from components.config import KarpenterConfig
from components.deploy_checks import SPOT_SERVICE, SPOT_SERVICE_LINKED_ROLE
from components.karpenter import iam
from components.karpenter.interruption import InterruptionQueue, interruption_queue

# The official charts, from Karpenter's public ECR registry; the CRDs come from their own chart so that a
# chart upgrade also upgrades them (Helm never upgrades a chart's crds/ folder).
# Source: https://karpenter.sh/docs/getting-started/getting-started-with-karpenter/ (helm upgrade --install
# karpenter oci://public.ecr.aws/karpenter/karpenter --namespace kube-system)
# Source: https://karpenter.sh/docs/upgrading/upgrading/#crd-upgrades (karpenter-crd chart)
CHART = "oci://public.ecr.aws/karpenter/karpenter"
CRD_CHART = "oci://public.ecr.aws/karpenter/karpenter-crd"
RELEASE_NAME = "karpenter"
CRD_RELEASE_NAME = "karpenter-crd"

# Requests equal to limits, as the getting-started install sets them (controller.resources.*: 1 CPU, 1Gi),
# so the controller is never the pod evicted under memory pressure on a system node.
# Source: https://karpenter.sh/docs/getting-started/getting-started-with-karpenter/ (helm install flags)
CONTROLLER_RESOURCES = {"cpu": "1", "memory": "1Gi"}

# EC2 creates AWSServiceRoleForEC2Spot on an account's first Spot request only when the caller may create it;
# Karpenter's controller may not, so in an account that never ran Spot the first launch fails with
# `AuthFailure.ServiceLinkedRoleCreationNotPermitted` and the pods stay Pending. Upstream creates it once per
# account before installing (`aws iam create-service-linked-role --aws-service-name spot.amazonaws.com`).
# Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/website/content/en/docs/troubleshooting.md#L25-L37
# Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/website/content/en/docs/getting-started/getting-started-with-karpenter/_index.md#L93-L96
# Name and path: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/service-linked-roles-spot-instance-requests.html
# (SPOT_SERVICE, SPOT_SERVICE_LINKED_ROLE: components/deploy_checks.py, whose check refuses `create` where the
# account already holds the role.)

# The node role's policies beyond every node's (components.iam.NODE_POLICIES): upstream's KarpenterNodeRole also
# carries AmazonSSMManagedInstanceCore, which Bottlerocket's control container needs to register with SSM (the
# way into a node without SSH). Source: .upstream-cache/iam/karpenter-cloudformation.yaml:22-26 (v1.14.1)
# Source: https://bottlerocket.dev/en/os/latest/#/concepts/host-containers/ (control container: SSM agent)
NODE_EXTRA_POLICIES: tuple[str, ...] = ("AmazonSSMManagedInstanceCore",)


def spot_service_linked_role_arn(partition: str, account: str) -> str:
    """The ARN of the account's Spot service-linked role (the id `pulumi import` takes for it)."""
    return f"arn:{partition}:iam::{account}:role/aws-service-role/{SPOT_SERVICE}/{SPOT_SERVICE_LINKED_ROLE}"


def spot_role_options(mode: str, arn: str, parent: pulumi.Resource) -> pulumi.ResourceOptions | None:
    """Resource options of the Spot service-linked role for `karpenter.spotServiceLinkedRole`; None: not managed.

    The role is account-wide (every Spot user of the account, other clusters included, relies on it), so the stack
    never deletes it (`retain_on_delete`). `adopt` imports the role an account already has: EC2 creates it on the
    first Spot request made with permission to, so an account that ever ran Spot has it and `create` fails there
    with IAM's "Service role name AWSServiceRoleForEC2Spot has been taken in this account". The description and
    tags AWS or an earlier tool gave the role are kept (ignored), so the import needs no change to it.
    """
    if mode == "none":
        return None
    if mode == "adopt":
        return pulumi.ResourceOptions(parent=parent, retain_on_delete=True, import_=arn,
                                      ignore_changes=["description", "tags", "tagsAll"])
    return pulumi.ResourceOptions(parent=parent, retain_on_delete=True)


def helm_values(config: KarpenterConfig, cluster_name: str, queue_name: str, region: str) -> dict[str, Any]:
    """Chart values; every key exists in the chart's values.yaml (tests/test_conformance.py checks it).

    The controller runs on the system node group (its nodeSelector), keeps the chart's affinity that
    keeps it off Karpenter's own nodes, and reads interruption events from `settings.interruptionQueue`.

    `AWS_REGION` is set in `controller.env` (the chart's own example there is AWS_REGION): when the SDK config
    has no region, Karpenter asks IMDS and exits if that fails (aws/karpenter-provider-aws@v1.14.1
    pkg/operator/operator.go:114-120, `lo.Must0` on the IMDS error). The system nodes keep IMDSv2 with hop
    limit 1, so a pod cannot reach IMDS, and EKS Pod Identity injects credentials, not necessarily the region:
    without the variable the controller crash-loops and the Helm release times out.
    Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/operator/operator.go#L114-L120
    Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/charts/karpenter/values.yaml (controller.env)
    """
    return {
        "replicas": config.controller_replicas,
        "nodeSelector": {"kubernetes.io/os": "linux", **labels.system_node_selector()},
        "settings": {"clusterName": cluster_name, "interruptionQueue": queue_name},
        "controller": {"resources": {"requests": dict(CONTROLLER_RESOURCES), "limits": dict(CONTROLLER_RESOURCES)},
                       "env": [{"name": "AWS_REGION", "value": region}]},
    }


class KarpenterController(pulumi.ComponentResource):
    """The Karpenter v1 controller of one cluster, with its CRDs, IAM, node role and interruption queue.

    Helm releases `karpenter-crd` (the CRDs) and `karpenter` (the controller, `skipCrds`) of the official
    charts at `karpenter.version` in `kube-system`, the controller on the system nodes with
    `controllerReplicas` replicas. Controller IAM through EKS Pod Identity (a role trusted by
    `pods.eks.amazonaws.com`, least-privilege policies scoped to this cluster's tags, its node role, its
    instance profile and its queue: components.karpenter.iam). The node role of Karpenter's nodes (worker,
    CNI and ECR pull policies), its instance profile, and its `EC2_LINUX` access entry. The encrypted SQS
    interruption queue and one EventBridge rule per interruption event (components.karpenter.interruption).
    The cluster security group, which EKS creates without it, gets the `karpenter.sh/discovery` tag, so
    that EC2NodeClasses select subnets and security groups by the same tag (not on an adopted cluster,
    whose pools select them by id).

    Requires: Cluster (the system node group, the Pod Identity agent add-on, the Kubernetes provider).
    Conflicts: another Karpenter installation in the cluster; `settings.enableZonalShift` (not granted).
    Sources:
    - Getting started (charts, IAM, queue): https://karpenter.sh/docs/getting-started/getting-started-with-karpenter/
    - Access entries for Karpenter nodes (EC2_LINUX): https://docs.aws.amazon.com/eks/latest/userguide/access-entries.html
    - Pod Identity: https://docs.aws.amazon.com/eks/latest/userguide/pod-identities.html
    - Chart values: https://github.com/aws/karpenter-provider-aws/blob/release-v1.14.1/charts/karpenter/values.yaml
    """

    node_role: aws.iam.Role
    node_role_name: pulumi.Output[str]
    instance_profile_name: str
    queue_name: str
    interruption: InterruptionQueue
    values: dict[str, Any]
    crd_release: k8s.helm.v3.Release
    release: k8s.helm.v3.Release
    security_group_tag: aws.ec2.Tag | None
    spot_service_linked_role: aws.iam.ServiceLinkedRole | None

    def __init__(
        self,
        name: str,
        config: KarpenterConfig,
        cluster: Cluster,
        cluster_name: str,
        *,
        existing_cluster: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-platform:components:KarpenterController", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        region = aws.get_region().region
        scope = iam.Scope(partition=node_iam.partition(), region=region,
                          account=aws.get_caller_identity().account_id, cluster=cluster_name)

        # Nodes: their own role (a principal has one access entry; the managed node groups' role has the one
        # EKS created), an instance profile named for cluster and region (IAM names are global to the account),
        # and the EC2_LINUX access entry that lets them join. The entry's name follows its principal.
        self.node_role, attachments = node_iam.node_role(name, self, extra_policies=NODE_EXTRA_POLICIES)
        self.node_role_name = self.node_role.name
        self.instance_profile_name = f"{cluster_name[:60]}-{region}-karpenter-node"[:128]
        profile = aws.iam.InstanceProfile(f"{name}-node-instance-profile", name=self.instance_profile_name,
                                          role=self.node_role.name, opts=child)
        access_entry = aws.eks.AccessEntry(
            f"{name}-node-role-access-entry",
            cluster_name=cluster.cluster_name,
            principal_arn=self.node_role.arn,
            type="EC2_LINUX",
            opts=pulumi.ResourceOptions(parent=self, depends_on=[cluster.system_node_group]),
        )
        # An adopted cluster's security group is not this stack's to tag: its pools select it by id.
        self.security_group_tag = None if existing_cluster else aws.ec2.Tag(
            f"{name}-cluster-security-group-discovery",
            resource_id=cluster.cluster_security_group_id,
            key=KARPENTER_DISCOVERY_TAG,
            value=cluster_name,
            opts=child,
        )

        # The Spot service-linked role, when any pool can launch Spot (karpenter.spotServiceLinkedRole).
        spot_options = spot_role_options(
            config.spot_service_linked_role, spot_service_linked_role_arn(scope.partition, scope.account), self,
        ) if config.runs_spot else None
        self.spot_service_linked_role = None if spot_options is None else aws.iam.ServiceLinkedRole(
            f"{name}-spot-service-linked-role", aws_service_name=SPOT_SERVICE, opts=spot_options)

        self.interruption = interruption_queue(name, cluster_name, self)
        self.queue_name = self.interruption.name

        controller_role = aws.iam.Role(
            f"{name}-controller-role",
            assume_role_policy=iam.pod_identity_trust_policy(),
            description=f"Karpenter controller of EKS cluster {cluster_name} (EKS Pod Identity)",
            opts=child,
        )
        documents: dict[str, pulumi.Input[str]] = {
            "node-lifecycle": json.dumps(iam.node_lifecycle_policy(scope), sort_keys=True),
            "integration": pulumi.Output.all(self.node_role.arn, self.interruption.queue.arn).apply(
                lambda a: json.dumps(iam.integration_policy(scope, a[0], a[1]), sort_keys=True)),
            "resource-discovery": json.dumps(iam.resource_discovery_policy(scope), sort_keys=True),
        }
        policy_attachments: list[pulumi.Resource] = []
        for concern, document in documents.items():
            policy = aws.iam.Policy(f"{name}-controller-{concern}", policy=document,
                                    description=f"Karpenter controller ({concern}) of EKS cluster {cluster_name}",
                                    opts=child)
            policy_attachments.append(aws.iam.RolePolicyAttachment(
                f"{name}-controller-{concern}", role=controller_role.name, policy_arn=policy.arn, opts=child))
        association = aws.eks.PodIdentityAssociation(
            f"{name}-pod-identity",
            cluster_name=cluster.cluster_name,
            namespace=iam.CONTROLLER_NAMESPACE,
            service_account=iam.CONTROLLER_SERVICE_ACCOUNT,
            role_arn=controller_role.arn,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(cluster.workload_dependencies)),
        )

        k8s_opts = pulumi.ResourceOptions(parent=self, provider=cluster.provider,
                                          depends_on=list(cluster.workload_dependencies))
        self.crd_release = k8s.helm.v3.Release(
            f"{name}-crd",
            name=CRD_RELEASE_NAME,
            chart=CRD_CHART,
            version=config.version,
            namespace=iam.CONTROLLER_NAMESPACE,
            opts=k8s_opts,
        )
        self.values = helm_values(config, cluster_name, self.queue_name, region)
        self.release = k8s.helm.v3.Release(
            f"{name}-controller",
            name=RELEASE_NAME,
            chart=CHART,
            version=config.version,
            namespace=iam.CONTROLLER_NAMESPACE,
            skip_crds=True,
            values=self.values,
            opts=pulumi.ResourceOptions(
                parent=self, provider=cluster.provider,
                depends_on=[*cluster.workload_dependencies, self.crd_release, association, *policy_attachments,
                            self.interruption.queue, access_entry, profile, *attachments,
                            *([self.spot_service_linked_role] if self.spot_service_linked_role else [])],
            ),
        )
        self.register_outputs({
            "nodeRoleName": self.node_role_name,
            "instanceProfileName": self.instance_profile_name,
            "interruptionQueue": self.queue_name,
            "controllerRoleArn": controller_role.arn,
            "chartVersion": config.version,
        })
