"""The stack schema: one pydantic model per `gpu-platform:*` section, and the resolved GPU pool."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from components.config.base import _Model
from components.config.fields import (
    ChartVersion,
    ClusterName,
    DriverVersionStr,
    Duration,
    ImageId,
    InstanceType,
    KubeVersion,
    OperatorVersion,
    PoolName,
    PrincipalArn,
    PublicCidr,
    ResourceTags,
    VpcCidr,
    _unique,
)
from components.config.issues import (
    CapacityType,
    ConfigIssue,
    ConfigIssues,
    OperatorOs,
    Path,
    PoolOs,
    _close,
    _format_path,
)
from components.config.serving import AddonsConfig, InferenceServiceConfig
from policies.gpu_guard.versions import parse_driver_version


def _check_sizes(min_size: int, desired_size: int, max_size: int) -> None:
    if not min_size <= desired_size <= max_size:
        if desired_size < min_size:
            raise ConfigIssue(f"minSize <= desiredSize <= maxSize must hold (minSize is {min_size})",
                              value=desired_size, path=("desiredSize",), nearest=[str(min_size)])
        if desired_size > max_size:
            raise ConfigIssue(f"minSize <= desiredSize <= maxSize must hold (maxSize is {max_size})",
                              value=desired_size, path=("desiredSize",), nearest=[str(max_size)])


# The Kubernetes service range of a new cluster, set explicitly so that nodes can be told the cluster DNS
# address (`--dns-cluster-ip`); the VPC must not overlap it (checked at config time, below).
# Source: https://docs.aws.amazon.com/eks/latest/APIReference/API_KubernetesNetworkConfigRequest.html
SERVICE_IPV4_CIDR = "172.20.0.0/16"


# --------------------------------------------------------------------------------------------------
# The models


class ClusterConfig(_Model):
    """`gpu-platform:cluster`: the EKS cluster, its VPC and API access."""

    name: ClusterName = Field(description="EKS cluster name; also tags the subnets for Karpenter discovery.")
    kubernetes_version: KubeVersion = Field(
        alias="kubernetesVersion",
        description='Control-plane Kubernetes minor version, quoted ("1.35"); choose one in EKS standard support.',
    )
    existing: bool = Field(
        default=False, description="true: adopt the existing EKS cluster `name`; no VPC or cluster is created."
    )
    vpc_cidr: VpcCidr = Field(
        default="10.0.0.0/16", alias="vpcCidr",
        description="IPv4 CIDR of the new VPC (/16 to /24), cut into private and public subnets per zone.",
    )
    availability_zones: int = Field(
        default=3, ge=2, le=6, alias="availabilityZones",
        description="How many Availability Zones get a public and a private subnet (EKS needs at least 2).",
    )
    single_nat_gateway: bool = Field(
        default=False, alias="singleNatGateway",
        description="One NAT gateway for all zones (cheaper, for dev) instead of one per zone (zone-independent "
                    "egress, for prod).",
    )
    endpoint_public_access_cidrs: list[PublicCidr] = Field(
        default_factory=list, alias="endpointPublicAccessCidrs",
        description="CIDRs allowed to reach the public API endpoint; [] makes the endpoint private-only. "
                    "The private endpoint is always on.",
    )
    ops_read_only_principal_arn: PrincipalArn | None = Field(
        default=None, alias="opsReadOnlyPrincipalArn",
        description="IAM role of a read-only operations assistant (EKS MCP server in read-only mode); gets an "
                    "access entry with AmazonEKSViewPolicy on the whole cluster.",
    )
    admin_principal_arns: list[PrincipalArn] = Field(
        default_factory=list, alias="adminPrincipalArns",
        description="IAM roles/users of people who administer the cluster with kubectl: each gets a cluster-admin "
                    "access entry (AmazonEKSClusterAdminPolicy), keyed by its ARN.",
    )
    deployer_principal_arns: list[PrincipalArn] = Field(
        default_factory=list, alias="deployerPrincipalArns",
        description="IAM roles/users that run `pulumi up` on this stack: the CI deploy role and every person who "
                    "deploys. Each gets a cluster-admin access entry, keyed by its ARN; the one that creates the "
                    "cluster gets EKS's creator entry instead, which the next `pulumi up` adopts.",
    )
    preview_principal_arns: list[PrincipalArn] = Field(
        default_factory=list, alias="previewPrincipalArns",
        description="IAM roles that run `pulumi preview` on pull requests: each gets a view-only access entry "
                    "(AmazonEKSViewPolicy), because a pull request's own code runs with them. Kubernetes authorises "
                    "a server-side dry run like the write, so it refuses their dry runs and pulumi-kubernetes "
                    "previews those objects from their inputs (docs/ci-cd.md). Empty: previews reach no "
                    "Kubernetes object.",
    )
    deletion_protection: bool = Field(
        default=True, alias="deletionProtection",
        description="EKS deletion protection: the control plane cannot be deleted until it is turned off "
                    "(set false in throwaway stacks such as dev).",
    )
    support_type: Literal["standard", "extended"] = Field(
        default="standard", alias="supportType",
        description="EKS upgrade policy: standard (the cluster is upgraded when standard support ends) or "
                    "extended (kept on its version, billed at the extended-support price).",
    )

    def principals(self) -> list[tuple[Path, str]]:
        """Every principal that gets an access entry, with the key path it comes from (config order)."""
        found: list[tuple[Path, str]] = []
        if self.ops_read_only_principal_arn:
            found.append((("opsReadOnlyPrincipalArn",), self.ops_read_only_principal_arn))
        for key, arns in (("deployerPrincipalArns", self.deployer_principal_arns),
                          ("adminPrincipalArns", self.admin_principal_arns),
                          ("previewPrincipalArns", self.preview_principal_arns)):
            found += [((key, i), arn) for i, arn in enumerate(arns)]
        return found

    @model_validator(mode="after")
    def _one_entry_per_principal(self) -> ClusterConfig:
        # EKS holds one access entry per principal: a second CreateAccessEntry for it answers 409
        # (ResourceInUseException). Source: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html
        issues: list[ConfigIssue] = []
        seen: dict[str, Path] = {}
        for path, arn in self.principals():
            if arn in seen:
                issues.append(ConfigIssue(
                    f"a principal gets one access entry; {_format_path(('cluster', *seen[arn]))} already lists it",
                    value=arn, path=path, fix=f"remove it from {_format_path(('cluster', *path[:1]))}"))
            else:
                seen[arn] = path
        vpc = ipaddress.IPv4Network(self.vpc_cidr)
        service = ipaddress.IPv4Network(SERVICE_IPV4_CIDR)
        if vpc.overlaps(service):
            # Source: https://docs.aws.amazon.com/eks/latest/APIReference/API_KubernetesNetworkConfigRequest.html
            # (the service range must not overlap resources in other networks peered or connected to the VPC)
            issues.append(ConfigIssue(
                f"the VPC must not overlap the cluster's Kubernetes service range {SERVICE_IPV4_CIDR}, or "
                "CreateCluster fails and pods could not reach addresses in the overlap",
                value=self.vpc_cidr, path=("vpcCidr",), nearest=["10.0.0.0/16"]))
        if issues:
            raise ConfigIssues(issues)
        return self


class SystemNodeGroupConfig(_Model):
    """`gpu-platform:systemNodeGroup`: the untainted node group every controller and CoreDNS runs on."""

    name: PoolName = Field(default="system", description="Node group name suffix.")
    ami_type: Literal["AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD"] = Field(
        default="AL2023_x86_64_STANDARD", alias="amiType",
        description="EKS-optimized AL2023 image type; ARM_64 for Graviton instance types.",
    )
    instance_types: list[InstanceType] = Field(
        default_factory=lambda: ["m7i.large"], min_length=1, alias="instanceTypes",
        description="Non-GPU instance types, in order of preference.",
    )
    min_size: int = Field(default=2, ge=1, le=100, alias="minSize", description="Minimum node count.")
    desired_size: int = Field(default=2, ge=1, le=100, alias="desiredSize", description="Initial node count.")
    max_size: int = Field(default=3, ge=1, le=100, alias="maxSize", description="Maximum node count.")
    disk_size_gib: int = Field(default=50, ge=20, le=16384, alias="diskSizeGiB",
                               description="Encrypted gp3 root volume size in GiB.")

    @model_validator(mode="after")
    def _sizes(self) -> SystemNodeGroupConfig:
        _check_sizes(self.min_size, self.desired_size, self.max_size)
        return self


class GpuOperatorConfig(_Model):
    """`gpu-platform:gpuOperator`: the NVIDIA GPU Operator Helm release and its default driver."""

    version: OperatorVersion = Field(description="gpu-operator chart version from helm.ngc.nvidia.com (v26.7.0).")
    driver_version: DriverVersionStr = Field(
        alias="driverVersion",
        description="Driver for operator-managed pools that do not set their own (full version, e.g. 580.173.02; "
                    "the branch, e.g. 580, with usePrecompiled).",
    )
    use_precompiled: bool = Field(
        default=False, alias="usePrecompiled",
        description="Use NVIDIA's precompiled driver containers (driver.usePrecompiled); driverVersion is then "
                    "a branch.",
    )
    smoke_test: bool = Field(
        default=False, alias="smokeTest",
        description="Run a CUDA smoke-test Job (nvidia-smi) on every operator-managed GPU pool.",
    )
    service_monitor: bool = Field(
        default=False, alias="serviceMonitor",
        description="Create the DCGM exporter's ServiceMonitor; set true only where the Prometheus Operator "
                    "CRDs (monitoring.coreos.com/v1 ServiceMonitor) are installed, since without them the "
                    "operator leaves the ClusterPolicy NotReady.",
    )


class GpuNodeGroupConfig(_Model):
    """One entry of `gpu-platform:gpuNodeGroups`: an operator-driver GPU pool on Canonical's Ubuntu EKS image."""

    name: PoolName = Field(description="Pool name: the gpu-platform.io/pool label value and node group suffix.")
    instance_types: list[InstanceType] = Field(
        min_length=1, alias="instanceTypes", description="GPU instance types, in order of preference."
    )
    os: OperatorOs = Field(default="ubuntu-24.04", description="Node OS: ubuntu-22.04 | ubuntu-24.04 | ubuntu-26.04.")
    kubelet_version: KubeVersion | None = Field(
        default=None, alias="kubeletVersion",
        description="Kubelet (node image) Kubernetes version; default: the cluster version.",
    )
    driver_version: DriverVersionStr | None = Field(
        default=None, alias="driverVersion",
        description="NVIDIA driver for this pool; default: gpuOperator.driverVersion.",
    )
    use_precompiled: bool | None = Field(
        default=None, alias="usePrecompiled",
        description="Precompiled driver containers for this pool; default: gpuOperator.usePrecompiled.",
    )
    capacity_type: CapacityType = Field(default="on-demand", alias="capacityType",
                                        description="on-demand | spot.")
    min_size: int = Field(default=0, ge=0, le=1000, alias="minSize",
                          description="Minimum node count (0 scales to zero).")
    desired_size: int = Field(default=1, ge=0, le=1000, alias="desiredSize", description="Initial node count.")
    max_size: int = Field(default=2, ge=1, le=1000, alias="maxSize", description="Maximum node count.")
    disk_size_gib: int = Field(default=100, ge=30, le=16384, alias="diskSizeGiB",
                               description="Encrypted gp3 root volume size in GiB (driver, images, model cache).")
    image_id: ImageId | None = Field(
        default=None, alias="imageId",
        description="The pool's AMI, pinned: nodes roll only when this changes. Unset: the image Canonical "
                    "publishes as current at the first deploy, held until imageId is set.",
    )
    self_managed: bool = Field(
        default=False, alias="selfManaged",
        description="true: a self-managed Auto Scaling group + EC2_LINUX access entry instead of an EKS managed "
                    "node group.",
    )

    @model_validator(mode="after")
    def _sizes(self) -> GpuNodeGroupConfig:
        _check_sizes(self.min_size, self.desired_size, self.max_size)
        return self


_IMAGE_RELEASE_RE = re.compile(r"^v[0-9][0-9.]*$")


def _on_demand_only() -> list[CapacityType]:
    return ["on-demand"]


class KarpenterPoolConfig(_Model):
    """One entry of `gpu-platform:karpenter.pools`: a Karpenter NodePool + EC2NodeClass for GPU nodes."""

    name: PoolName = Field(description="Pool name: NodePool name and gpu-platform.io/pool label value.")
    os: PoolOs = Field(description="bottlerocket | al2023 (driver baked in) or ubuntu-22.04 | ubuntu-24.04 | "
                                   "ubuntu-26.04 (driver installed by the operator).")
    driver_version: DriverVersionStr = Field(
        alias="driverVersion",
        description="Baked images: the branch the image ships (\"580\"); Ubuntu: the full driver version.",
    )
    instance_types: list[InstanceType] = Field(
        min_length=1, alias="instanceTypes",
        description="GPU instance types the NodePool may launch. Order carries no preference: Karpenter picks "
                    "among the types that fit (cheapest on-demand, price-capacity-optimized Spot).",
    )
    capacity_types: Annotated[list[CapacityType], AfterValidator(_unique)] = Field(
        default_factory=_on_demand_only, min_length=1, alias="capacityTypes",
        description="Capacity types the NodePool may launch: spot, on-demand.",
    )
    on_demand_fallback: bool = Field(
        default=False, alias="onDemandFallback",
        description="Let the pool's one NodePool launch on-demand too: Karpenter prefers Spot and falls back to "
                    "on-demand when no Spot offering can launch, all under one maxGpus limit.",
    )
    max_gpus: int = Field(default=8, ge=1, le=10000, alias="maxGpus",
                          description="The pool's GPU budget: its one NodePool's limit on nvidia.com/gpu, Spot and "
                                      "on-demand together (Karpenter has no global limit).")
    expire_after: Duration = Field(default="720h", alias="expireAfter",
                                   description="Node lifetime before Karpenter replaces it (Karpenter duration).")
    consolidate_after: Duration = Field(default="10m", alias="consolidateAfter",
                                        description="Idle time before an empty node is removed (Karpenter duration).")
    termination_grace_period: Duration = Field(
        default="24h", alias="terminationGracePeriod",
        description="Longest a draining node waits for its pods (a blocking PodDisruptionBudget included) before "
                    "Karpenter deletes them and terminates it (Karpenter duration).",
    )
    disk_size_gib: int = Field(default=100, ge=30, le=16384, alias="diskSizeGiB",
                               description="Encrypted gp3 root volume size in GiB.")
    image_version: str | None = Field(
        default=None, alias="imageVersion",
        description="Bottlerocket / AL2023 pools: the pinned EKS-optimized image release of the EC2NodeClass "
                    "alias (v1.26.0 for bottlerocket@v1.26.0, v20251120 for al2023@v20251120); nodes roll only "
                    "when it changes. Ubuntu pools do not use an alias.",
    )
    nvidia_driver_branch: Literal["lts", "pb"] | None = Field(
        default=None, alias="nvidiaDriverBranch",
        description="Bottlerocket pools: the driver tree a two-tree variant (aws-k8s-1.37-nvidia from 1.66) "
                    "activates at boot, as settings.kernel.drivers.nvidia.branch (lts = R580, pb = R595). Unset: "
                    "Bottlerocket picks by GPU (pb only for GPUs the lts driver lacks). Source: "
                    "https://github.com/bottlerocket-os/bottlerocket-core-kit/pull/1041",
    )
    image_id: ImageId | None = Field(
        default=None, alias="imageId",
        description="Ubuntu pools: the pinned Canonical EKS AMI of the EC2NodeClass (`amiSelectorTerms: [{id}]`); "
                    "nodes roll only when it changes. Unset: Canonical's current image at the first deploy, held "
                    "afterwards. Bottlerocket / AL2023 pools pin imageVersion instead.",
    )

    @property
    def ami_alias(self) -> str | None:
        """The EC2NodeClass `amiSelectorTerms[].alias`, `family@version` (None for Ubuntu pools)."""
        return f"{self.os}@{self.image_version}" if self.image_version else None

    @model_validator(mode="after")
    def _image(self) -> KarpenterPoolConfig:
        # Source: .upstream-cache/crds/karpenter/karpenter.k8s.aws_ec2nodeclasses.yaml (amiSelectorTerms.alias:
        # "family@version"; "latest" drifts whenever a new AMI is released, not recommended for production)
        baked = self.os in ("bottlerocket", "al2023")
        example = "v1.26.0" if self.os == "bottlerocket" else "v20251120"
        if baked and self.image_version is None:
            raise ConfigIssue(
                f"pin the {self.os} image release: without it the alias is {self.os}@latest, and every new "
                "release rolls every node of the pool",
                value=None, path=("imageVersion",), nearest=[example],
                fix=f"set imageVersion to a release listed for {self.os} (see the EC2NodeClass alias docs)")
        if self.nvidia_driver_branch is not None and self.os != "bottlerocket":
            raise ConfigIssue(
                "nvidiaDriverBranch is Bottlerocket's settings.kernel.drivers.nvidia.branch; other images ignore it",
                value=self.nvidia_driver_branch, path=("nvidiaDriverBranch",), fix="remove nvidiaDriverBranch")
        if self.image_id is not None and baked:
            raise ConfigIssue(
                f"imageId pins an Ubuntu pool's AMI; a {self.os} pool is pinned by its alias release",
                value=self.image_id, path=("imageId",), fix="remove imageId and set imageVersion")
        if self.image_version is not None:
            if not baked:
                raise ConfigIssue("imageVersion pins a Bottlerocket or AL2023 alias; Ubuntu pools do not use one",
                                  value=self.image_version, path=("imageVersion",), fix="remove imageVersion")
            if not _IMAGE_RELEASE_RE.match(self.image_version):
                raise ConfigIssue(
                    "an image release is v followed by its version (v1.26.0, v20251120); latest is not a pin",
                    value=self.image_version, path=("imageVersion",), nearest=[example])
        return self

    @model_validator(mode="after")
    def _fallback(self) -> KarpenterPoolConfig:
        if self.on_demand_fallback and "on-demand" in self.capacity_types:
            raise ConfigIssue(
                "onDemandFallback lets a Spot pool fall back to on-demand; it only makes sense when capacityTypes "
                "is [spot]",
                value=True, path=("onDemandFallback",), nearest=["false"],
            )
        parsed = parse_driver_version(self.driver_version)
        if self.os in ("bottlerocket", "al2023") and not parsed.is_branch_only:
            raise ConfigIssue(
                f"a {self.os} image bakes a driver branch, not a version you pick; give the branch",
                value=self.driver_version, path=("driverVersion",), nearest=[str(parsed.branch)],
            )
        if self.os.startswith("ubuntu") and parsed.is_branch_only:
            raise ConfigIssue(
                "an Ubuntu pool's driver is installed by the operator; give the full driver version",
                value=self.driver_version, path=("driverVersion",),
                fix="run `.venv/bin/gpu-platform matrix drivers --os <os> --operator <version>` for the versions "
                    "that fit",
            )
        return self


class KarpenterConfig(_Model):
    """`gpu-platform:karpenter`: the Karpenter controller and its GPU pools."""

    version: ChartVersion = Field(description="Karpenter chart version (oci://public.ecr.aws/karpenter), e.g. 1.14.1.")
    controller_replicas: int = Field(
        default=2, ge=1, le=5, alias="controllerReplicas",
        description="Karpenter controller replicas on the system nodes (leader election: one works, the others "
                    "stand by); 2 keeps provisioning alive through a system node's loss (prod), 1 is enough for dev.",
    )
    spot_service_linked_role: Literal["create", "adopt", "none"] = Field(
        default="create", alias="spotServiceLinkedRole",
        description="The account's EC2 Spot service-linked role AWSServiceRoleForEC2Spot, needed by the first Spot "
                    "launch when any pool can run Spot: create (a new account), adopt (import the role the "
                    "account already has), none (someone else manages it). Never deleted with the stack.",
    )
    pools: list[KarpenterPoolConfig] = Field(default_factory=list, description="GPU NodePools.")

    @property
    def runs_spot(self) -> bool:
        """Whether any pool's NodePool may launch Spot capacity."""
        return any("spot" in pool.capacity_types for pool in self.pools)


@dataclass(frozen=True)
class GpuPool:
    """A GPU pool with every default resolved (what components and the matrix checks work on)."""

    name: str
    kind: Literal["managed-node-group", "self-managed", "karpenter"]
    os: str
    driver_version: str
    kubelet_version: str
    instance_types: tuple[str, ...]
    use_precompiled: bool
    path: Path  # where the pool sits in the stack config, e.g. ("gpuNodeGroups", 0)
    driver_path: Path  # the key its driver version comes from
    image_version: str | None = None  # a Karpenter Bottlerocket / AL2023 pool: its pinned alias release
    branch_pin: str | None = None  # a Karpenter Bottlerocket pool: settings.kernel.drivers.nvidia.branch (lts / pb)

    @property
    def driver_source(self) -> Literal["operator", "image"]:
        return "image" if self.os in ("bottlerocket", "al2023") else "operator"


class StackConfig(_Model):
    """Every `gpu-platform:*` key of a stack. Only `cluster` is required."""

    cluster: ClusterConfig = Field(description="The EKS cluster and its network.")
    system_node_group: SystemNodeGroupConfig = Field(
        default_factory=SystemNodeGroupConfig, alias="systemNodeGroup",
        description="Untainted node group for CoreDNS and every controller.",
    )
    gpu_operator: GpuOperatorConfig | None = Field(
        default=None, alias="gpuOperator", description="NVIDIA GPU Operator; required when an Ubuntu GPU pool exists."
    )
    gpu_node_groups: list[GpuNodeGroupConfig] = Field(
        default_factory=list, alias="gpuNodeGroups", description="Operator-driver GPU node groups."
    )
    karpenter: KarpenterConfig | None = Field(default=None, description="Karpenter and its GPU NodePools.")
    inference_services: list[InferenceServiceConfig] = Field(
        default_factory=list, alias="inferenceServices", description="GPU inference services."
    )
    addons: AddonsConfig = Field(
        default_factory=AddonsConfig,
        description="Pinned versions of the add-ons inference services need (installed only when one does).",
    )
    tags: ResourceTags = Field(
        default_factory=dict,
        description="Tags the controllers stamp on what they create (Karpenter's EC2NodeClass spec.tags, the load "
                    "balancer controller's defaultTags, the EBS CSI driver's extraVolumeTags), also set as labels "
                    "on every Kubernetes object; the provider's own resources take `aws:defaultTags`.",
    )

    @model_validator(mode="after")
    def _cross_checks(self) -> StackConfig:
        issues: list[ConfigIssue] = []
        seen: dict[str, Path] = {}
        named: list[tuple[str, Path]] = [(g.name, ("gpuNodeGroups", i, "name"))
                                         for i, g in enumerate(self.gpu_node_groups)]
        if self.karpenter is not None:
            named += [(p.name, ("karpenter", "pools", i, "name")) for i, p in enumerate(self.karpenter.pools)]
        for name, path in named:
            if name == self.system_node_group.name:
                issues.append(ConfigIssue(
                    "GPU pool names must differ from the system node group name (systemNodeGroup.name)",
                    value=name, path=path, nearest=[f"{name}-gpu"]))
            if name in seen:
                issues.append(ConfigIssue(
                    f"pool names must be unique across gpuNodeGroups and karpenter.pools; "
                    f"{_format_path(seen[name])} already uses it",
                    value=name, path=path, nearest=[_free_name(name, {n for n, _ in named})]))
            else:
                seen[name] = path
        services: set[str] = set()
        for i, service in enumerate(self.inference_services):
            if service.name in services:
                issues.append(ConfigIssue("service names must be unique", value=service.name,
                                          path=("inferenceServices", i, "name"),
                                          nearest=[_free_name(service.name, services)]))
            services.add(service.name)
            for j, pool in enumerate(service.node_pools):
                if pool not in seen:
                    issues.append(ConfigIssue(
                        "nodePools may only name pools defined in gpuNodeGroups or karpenter.pools",
                        value=pool, path=("inferenceServices", i, "nodePools", j),
                        nearest=_close(pool, seen) or sorted(seen)[:1],
                        fix=None if seen else "define a pool in gpuNodeGroups or karpenter.pools first"))
        operator_pools = [p for p in self.gpu_pools_unchecked() if p.driver_source == "operator"]
        if operator_pools and self.gpu_operator is None:
            first = operator_pools[0]
            issues.append(ConfigIssue(
                "Ubuntu GPU pools get their driver from the GPU Operator; add gpu-platform:gpuOperator "
                "(version and driverVersion)",
                value=first.name, path=(*first.path, "name"),
                fix="add gpu-platform:gpuOperator: {version: <chart version>, driverVersion: <driver>}"))
        # AL2023 NVIDIA images bake driver and toolkit, not the device plugin.
        # Source: https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html
        if self.gpu_operator is None and self.karpenter is not None:
            for i, karpenter_pool in enumerate(self.karpenter.pools):
                if karpenter_pool.os == "al2023":
                    issues.append(ConfigIssue(
                        "AL2023 NVIDIA images ship the driver and container toolkit but no device plugin; the GPU "
                        "Operator's device plugin serves the pool, so gpu-platform:gpuOperator is required",
                        value=karpenter_pool.os, path=("karpenter", "pools", i, "os"), nearest=["bottlerocket"],
                        fix="add gpu-platform:gpuOperator, or use bottlerocket (it ships its own device plugin)"))
        if self.inference_services and not named:
            issues.append(ConfigIssue("inference services need at least one GPU pool",
                                      value=self.inference_services[0].name, path=("inferenceServices", 0, "name"),
                                      fix="add a gpuNodeGroups entry or a karpenter pool"))
        if self.cluster.existing and "vpc_cidr" in self.cluster.model_fields_set:
            issues.append(ConfigIssue("existing: true adopts the cluster's own VPC; vpcCidr would be ignored",
                                      value=self.cluster.vpc_cidr, path=("cluster", "vpcCidr"),
                                      fix="remove cluster.vpcCidr"))
        if issues:
            raise ConfigIssues(issues)
        return self

    def gpu_pools_unchecked(self) -> list[GpuPool]:
        """Every GPU pool with defaults resolved (without the gpuOperator presence check)."""
        pools: list[GpuPool] = []
        for i, group in enumerate(self.gpu_node_groups):
            driver_path: Path = ("gpuNodeGroups", i, "driverVersion")
            driver = group.driver_version
            if driver is None:
                driver = self.gpu_operator.driver_version if self.gpu_operator else ""
                driver_path = ("gpuOperator", "driverVersion")
            precompiled = group.use_precompiled
            if precompiled is None:
                precompiled = self.gpu_operator.use_precompiled if self.gpu_operator else False
            pools.append(GpuPool(
                name=group.name, kind="self-managed" if group.self_managed else "managed-node-group",
                os=group.os, driver_version=driver,
                kubelet_version=group.kubelet_version or self.cluster.kubernetes_version,
                instance_types=tuple(group.instance_types), use_precompiled=precompiled,
                path=("gpuNodeGroups", i), driver_path=driver_path))
        if self.karpenter is not None:
            for i, pool in enumerate(self.karpenter.pools):
                pools.append(GpuPool(
                    name=pool.name, kind="karpenter", os=pool.os, driver_version=pool.driver_version,
                    kubelet_version=self.cluster.kubernetes_version, instance_types=tuple(pool.instance_types),
                    use_precompiled=False, path=("karpenter", "pools", i),
                    driver_path=("karpenter", "pools", i, "driverVersion"), image_version=pool.image_version,
                    branch_pin=pool.nvidia_driver_branch))
        return pools

    def gpu_pools(self) -> list[GpuPool]:
        """Every GPU pool (managed, self-managed, Karpenter) with defaults resolved."""
        return self.gpu_pools_unchecked()

    def operator_pools(self) -> list[GpuPool]:
        """GPU pools whose driver the GPU Operator installs (Ubuntu)."""
        return [p for p in self.gpu_pools() if p.driver_source == "operator"]


def _free_name(name: str, taken: Iterable[str]) -> str:
    used = set(taken)
    for n in range(2, 100):
        candidate = f"{name}-{n}"
        if candidate not in used:
            return candidate
    return f"{name}-x"

