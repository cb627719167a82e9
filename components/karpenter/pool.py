"""KarpenterGpuPool: one GPU pool as a Karpenter v1 EC2NodeClass and its one NodePool (Spot first, and on-demand
after it when the pool falls back)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components import labels, nodes
from components.cluster import KARPENTER_DISCOVERY_TAG, Cluster, cluster_dns_ip
from components.config import GpuPool, KarpenterPoolConfig
from components.gpu_node_group import bootstrap_user_data
from components.karpenter.controller import KarpenterController
from components.labels import Taint
from policies.gpu_guard.matrix import load_matrix

NODEPOOL_API = "karpenter.sh/v1"
NODECLASS_API = "karpenter.k8s.aws/v1"

# A pool is ONE NodePool, whatever its capacity types: Karpenter's `limits` are per NodePool, so a Spot NodePool
# beside an on-demand fallback NodePool would each get the whole maxGpus (prod: 8 + 8 GPUs where the config says
# 8). A NodePool allowing both capacity types already prefers Spot and falls back to on-demand when no Spot
# offering can launch, within milliseconds after EC2 reports insufficient capacity (cached 3 minutes per type and
# zone): the fallback the pool wants, under one limit. Weighted NodePools (scheduling.md "Fallback") are for
# defaults across differently constrained NodePools, not for splitting one budget.
# Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/website/content/en/docs/concepts/nodepools.md#L276-L278
# Source (spec.limits, per NodePool):
# https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/website/content/en/docs/concepts/nodepools.md#L414-L418
POOL_WEIGHT = 100
CAPACITY_PREFERENCE = ("spot", "on-demand")

# At most one node of a NodePool is disrupted at a time (consolidation, drift, emptiness): a serving pool
# never loses all its nodes at once. Expiration and interruption are not held by budgets.
# Source: https://karpenter.sh/docs/concepts/disruption/#nodepool-disruption-budgets
DISRUPTION_BUDGETS: tuple[dict[str, str], ...] = ({"nodes": "1"},)
CONSOLIDATION_POLICY = "WhenEmptyOrUnderutilized"

# Karpenter v1 requires a node to register with this taint and removes it once it has synced the NodeClaim's
# labels and taints; for amiFamily Custom (no user data generated) the bootstrap must add it.
# Source: https://karpenter.sh/docs/concepts/nodeclasses/#specamifamily (Custom: no user data is generated)
# Source: https://github.com/kubernetes-sigs/karpenter/blob/main/pkg/controllers/nodeclaim/lifecycle/registration.go
# ("karpenter.sh/unregistered taint must be present on Karpenter-managed nodes")
UNREGISTERED_TAINT = Taint(key="karpenter.sh/unregistered", value="", effect="NoExecute")

# EC2 CPU architectures as the kubernetes.io/arch label spells them.
# Source: https://kubernetes.io/docs/reference/labels-annotations-taints/#kubernetes-io-arch
KUBERNETES_ARCH = {"x86_64": "amd64", "arm64": "arm64"}

# Block devices. Bottlerocket boots from a small OS volume (/dev/xvda) and keeps images and container data on
# /dev/xvdb; Karpenter's default for the family is 4Gi + 20Gi, so the pool sizes the data volume. AL2023 has
# one root volume (/dev/xvda), Canonical's Ubuntu images boot from /dev/sda1.
# Source: https://karpenter.sh/docs/concepts/nodeclasses/#specblockdevicemappings
BOTTLEROCKET_OS_VOLUME_GIB = 4
BOTTLEROCKET_DATA_DEVICE = "/dev/xvdb"



# Deleting a NodePool or EC2NodeClass (destroy, a pool removed or renamed) waits on Karpenter's finalizers while
# it drains and terminates the pool's nodes; pulumi-kubernetes gives a delete 10 minutes unless customTimeouts
# says otherwise (pulumi/pulumi-kubernetes@94977969 provider/pkg/await/await.go:933-1020, `timeout :=
# 10 * time.Minute`, overridden by the delete timeout). A drain under a PodDisruptionBudget of `maxUnavailable: 1`
# evicts one replica at a time, each taking up to its terminationGracePeriodSeconds (components/inference:
# preStop 15 s + drainSeconds + 15 s): prod's 8 replicas at drainSeconds 120 are 8 x 150 s = 20 min, plus the
# instance's termination and the NodeClaim finalizer (a few minutes): 30 minutes. A drain held longer (a PDB
# that allows no eviction) ends at the NodePool's terminationGracePeriod; the delete then times out with the
# resource still in the state, and the next `pulumi destroy` or `up` waits for it again.
DELETE_TIMEOUTS = pulumi.CustomTimeouts(delete="30m")

def _volume(device: str, size_gib: int) -> dict[str, Any]:
    return {"deviceName": device, "ebs": {"volumeSize": f"{size_gib}Gi", "volumeType": "gp3", "encrypted": True,
                                          "deleteOnTermination": True}}


def block_device_mappings(os: str, size_gib: int) -> list[dict[str, Any]]:
    """Encrypted gp3 volumes (EBS default KMS key) sized from `diskSizeGiB`: the data volume on Bottlerocket."""
    if os == "bottlerocket":
        return [_volume(nodes.AL2023_ROOT_DEVICE, BOTTLEROCKET_OS_VOLUME_GIB),
                _volume(BOTTLEROCKET_DATA_DEVICE, size_gib)]
    if os == "al2023":
        return [_volume(nodes.AL2023_ROOT_DEVICE, size_gib)]
    return [_volume(nodes.UBUNTU_ROOT_DEVICE, size_gib)]


def metadata_options() -> dict[str, Any]:
    """IMDSv2 only, hop limit 1: the host reaches IMDS, pods do not (no node-role credentials in pods).

    Source: https://docs.aws.amazon.com/eks/latest/best-practices/identity-and-access-management.html
    """
    return {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled", "httpPutResponseHopLimit": 1,
            "httpTokens": "required"}


def capacity_types(config: KarpenterPoolConfig) -> list[str]:
    """The pool NodePool's `karpenter.sh/capacity-type` values: the configured ones, plus on-demand when the pool
    falls back to it, in Karpenter's own order of preference (listing order itself carries none)."""
    wanted = set(config.capacity_types) | ({"on-demand"} if config.on_demand_fallback else set())
    return [kind for kind in CAPACITY_PREFERENCE if kind in wanted]


def nodepool_spec(config: KarpenterPoolConfig, pool: GpuPool, *, arch: str) -> dict[str, Any]:
    """The NodePool spec of a pool: its labels and GPU taint, the instance types, the pool's GPU limit, disruption.

    One NodePool carries every instance type of the pool. Their order in the config is no preference: Karpenter
    picks among the types that fit (price-capacity-optimized for Spot, lowest price for on-demand) and moves to
    another when one has no capacity. Separate weighted NodePools per type would honour an order, but each
    NodePool has its own `limits`, so the pool could run maxGpus GPUs per instance type, and single-type Spot
    requests lose the diversification that lowers interruptions.
    Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/website/content/en/docs/concepts/nodepools.md#L414-L418
    Source: https://aws.amazon.com/blogs/compute/introducing-price-capacity-optimized-allocation-strategy-for-ec2-spot-instances/

    `terminationGracePeriod` bounds a drain: without it a PodDisruptionBudget that never allows an eviction holds
    an expired or drifted node forever; with it Karpenter deletes the remaining pods once it has passed.
    Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/website/content/en/docs/concepts/nodepools.md#L203-L205
    """
    return {
        "weight": POOL_WEIGHT,
        "template": {
            "metadata": {"labels": labels.gpu_pool_labels(pool.name, pool.os, pool.driver_version)},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool.name},
                "requirements": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "In",
                     "values": list(config.instance_types)},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": capacity_types(config)},
                    {"key": "kubernetes.io/arch", "operator": "In", "values": [arch]},
                    {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                ],
                "taints": [{"key": labels.GPU_TAINT.key, "value": labels.GPU_TAINT.value,
                            "effect": labels.GPU_TAINT.effect}],
                "expireAfter": config.expire_after,
                "terminationGracePeriod": config.termination_grace_period,
            },
        },
        "limits": {labels.GPU_RESOURCE: str(config.max_gpus)},
        "disruption": {
            "consolidationPolicy": CONSOLIDATION_POLICY,
            "consolidateAfter": config.consolidate_after,
            "budgets": [dict(b) for b in DISRUPTION_BUDGETS],
        },
    }


def bottlerocket_branch_settings(branch: str) -> str:
    """Bottlerocket user data (TOML) that pins the NVIDIA driver tree a two-tree variant activates at boot.

    Karpenter merges a Bottlerocket EC2NodeClass's `userData` TOML with the settings it generates, and keeps every
    `settings.*` table untyped (`SettingsRaw map[string]any`; only `settings.kubernetes` is checked strictly):
    aws/karpenter-provider-aws@v1.14.1 pkg/providers/amifamily/bootstrap/bottlerocketsettings.go:38-41, 136-175.
    ghostdog's match-nvidia-branch reads `settings.kernel.drivers.nvidia.branch`
    (`lts` or `pb`) before looking at the GPU (bottlerocket-core-kit PR #1041); both trees are installed and one
    is overlaid at boot (bottlerocket-kernel-kit PR #536).
    """
    return f'[settings.kernel.drivers.nvidia]\nbranch = "{branch}"\n'


class KarpenterGpuPool(pulumi.ComponentResource):
    """A GPU pool that Karpenter scales from zero: an EC2NodeClass and one or two NodePools (Karpenter v1).

    EC2NodeClass `<pool>`: Bottlerocket / AL2023 NVIDIA images by alias pinned to `imageVersion`
    (`bottlerocket@v1.66.0`, never `@latest`), whose release bakes the driver; or Canonical's Ubuntu EKS
    image selected by id (Karpenter v1 has no Ubuntu family: amiFamily Custom) with the bootstrap user data
    those images expect (`/etc/eks/bootstrap.sh`, the label contract, the GPU taint and Karpenter's
    registration taint), its driver installed by the GPU Operator. Subnets and security groups are
    discovered by the `karpenter.sh/discovery` tag (new clusters; the controller tags the cluster security
    group) or selected by id (adopted clusters); IMDSv2 with hop limit 1; encrypted gp3 volumes of
    `diskSizeGiB` (Bottlerocket: its data volume); the controller's instance profile.
    NodePool `<pool>`: the instance types, the capacity types (`capacityTypes`, and on-demand after Spot with
    `onDemandFallback`: Karpenter prefers Spot and falls back within the same NodePool), the GPU taint, the label
    contract with the `nvidia.com/gpu.deploy.*=false` labels of a baked-driver image, one `limits` on
    nvidia.com/gpu from `maxGpus` (the pool's whole GPU budget, Spot and on-demand together), disruption
    `WhenEmptyOrUnderutilized` after `consolidateAfter` with a one-node budget, `expireAfter` and
    `terminationGracePeriod`.

    Requires: KarpenterController (CRDs, instance profile, discovery tag); Cluster; the GPU Operator for
    Ubuntu pools (driver) and AL2023 pools (device plugin).
    Conflicts: a managed node group with the same pool name (the config refuses it).
    Sources:
    - NodePools: https://karpenter.sh/docs/concepts/nodepools/
    - EC2NodeClasses: https://karpenter.sh/docs/concepts/nodeclasses/
    - Canonical's EKS images: https://documentation.ubuntu.com/aws/en/latest/aws-how-to/kubernetes/deploy-ubuntu-cluster-with-eks-ami/
    """

    labels: dict[str, str]
    node_class: k8s.apiextensions.CustomResource
    node_pools: dict[str, k8s.apiextensions.CustomResource]
    node_class_spec: pulumi.Output[dict[str, Any]]
    nodepool_specs: dict[str, dict[str, Any]]

    def __init__(
        self,
        name: str,
        config: KarpenterPoolConfig,
        pool: GpuPool,
        cluster: Cluster,
        controller: KarpenterController,
        *,
        cluster_name: str,
        existing_cluster: bool,
        tags: Mapping[str, str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-platform:components:KarpenterGpuPool", name, None, opts)
        matrix = load_matrix()
        known = matrix.instance_type(config.instance_types[0])
        cpu_arch = known.cpu_arch if known is not None else "x86_64"
        self.labels = labels.gpu_pool_labels(pool.name, pool.os, pool.driver_version)
        if existing_cluster:
            subnets: Any = cluster.private_subnet_ids.apply(lambda ids: [{"id": i} for i in ids])
            groups: Any = cluster.cluster_security_group_id.apply(lambda i: [{"id": i}])
        else:
            subnets = [{"tags": {KARPENTER_DISCOVERY_TAG: cluster_name}}]
            groups = [{"tags": {KARPENTER_DISCOVERY_TAG: cluster_name}}]
        common: dict[str, Any] = {
            "instanceProfile": controller.instance_profile_name,
            "subnetSelectorTerms": subnets,
            "securityGroupSelectorTerms": groups,
            "metadataOptions": metadata_options(),
            "blockDeviceMappings": block_device_mappings(pool.os, config.disk_size_gib),
            # spec.tags: on the instances, volumes and launch templates Karpenter creates (stack key `tags`).
            "tags": {**(tags or {}), labels.POOL_LABEL: pool.name},
        }
        ignore: list[str] = []
        if config.ami_alias is not None:
            spec: Any = {**common, "amiSelectorTerms": [{"alias": config.ami_alias}]}
            if config.nvidia_driver_branch is not None:
                spec["userData"] = bottlerocket_branch_settings(config.nvidia_driver_branch)
        else:
            ami_id, held = self._ubuntu_image(config, pool, cpu_arch)
            ignore = [] if not held else ["spec.amiSelectorTerms"]
            node_labels = dict(self.labels)
            user_data = pulumi.Output.all(
                cluster.cluster_name, cluster.endpoint, cluster.certificate_authority_data, cluster.service_ipv4_cidr,
            ).apply(lambda a: bootstrap_user_data(
                a[0], a[1], a[2], dns_cluster_ip=cluster_dns_ip(a[3]), node_labels=node_labels,
                taints=(labels.GPU_TAINT, UNREGISTERED_TAINT)))
            # Only userData waits for the cluster endpoint; the rest stays known at preview for the policies.
            spec = {**common, "amiFamily": "Custom", "amiSelectorTerms": [{"id": ami_id}], "userData": user_data}
        self.node_class_spec = pulumi.Output.from_input(spec)
        after_crds: list[pulumi.Resource] = [controller.crd_release, controller.release]
        if controller.security_group_tag is not None:
            after_crds.append(controller.security_group_tag)
        self.node_class = k8s.apiextensions.CustomResource(
            f"{name}-node-class",
            api_version=NODECLASS_API,
            kind="EC2NodeClass",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=pool.name),
            spec=spec,
            opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=after_crds,
                                        ignore_changes=ignore, custom_timeouts=DELETE_TIMEOUTS),
        )
        arch = KUBERNETES_ARCH[cpu_arch]
        self.nodepool_specs = {pool.name: nodepool_spec(config, pool, arch=arch)}
        self.node_pools = {
            nodepool: k8s.apiextensions.CustomResource(
                f"{name}-node-pool",
                api_version=NODEPOOL_API,
                kind="NodePool",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=nodepool),
                spec=nodepool_spec_value,
                opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider,
                                            depends_on=[*after_crds, self.node_class],
                                            custom_timeouts=DELETE_TIMEOUTS),
            )
            for nodepool, nodepool_spec_value in self.nodepool_specs.items()
        }
        self.register_outputs({
            "labels": self.labels,
            "nodeClass": pool.name,
            "nodePools": sorted(self.node_pools),
        })

    def _ubuntu_image(self, config: KarpenterPoolConfig, pool: GpuPool, cpu_arch: str) -> tuple[str, bool]:
        """(AMI id, held): `imageId` when pinned, else Canonical's current image, held after the first deploy."""
        if config.image_id is not None:
            return config.image_id, False
        image = load_matrix().node_image(pool.os, pool.kubelet_version, cpu_arch)  # type: ignore[arg-type]
        if image is None:
            raise ValueError(f"no node image recorded for {pool.os} on {cpu_arch} in the compatibility matrix")
        ami_id = aws.ssm.get_parameter(name=image.ssm_parameter).value
        pulumi.log.warn(
            f"Karpenter pool {pool.name!r}: no imageId in the stack, so its EC2NodeClass holds the image of its "
            f"first deploy ({ami_id} now, from {image.ssm_parameter}); pin it with karpenter.pools[].imageId to "
            "roll nodes to a new image when you choose", self)
        return ami_id, True
