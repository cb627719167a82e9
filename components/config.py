"""The stack configuration (`gpu-platform:*` keys of `Pulumi.<stack>.yaml`): the one definition of its schema.

`load_stack_config` reads every `gpu-platform:` key, validates it with the models below and checks
the GPU pools against the compatibility matrix, all before a single resource is registered. Any
problem stops the program with one `ConfigError` whose message names the stack file, the key path
(`gpuNodeGroups[0].instanceTypes`), the value, the rule and the nearest valid choice.

Sources:
- EKS cluster name rules: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html
- EKS requires subnets in at least two Availability Zones:
  https://docs.aws.amazon.com/eks/latest/userguide/network-reqs.html
- Karpenter duration syntax (`^(([0-9]+(s|m|h))+|Never)$`): upstream CRD karpenter.sh_nodepools.yaml v1.14.1
- EBS snapshot ids (`snap-` + 8 or 17 hex digits):
  https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_Snapshot.html
- gp3 volume size 1-16384 GiB: https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html
- Kubernetes label values (63 characters, DNS-1123 style):
  https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set
"""

from __future__ import annotations

import contextlib
import difflib
import ipaddress
import json
import os
import re
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any, Literal, TypeAlias

import pulumi
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.fields import FieldInfo

from policies.gpu_guard.matrix import load_matrix
from policies.gpu_guard.versions import parse_cuda_version, parse_driver_version, parse_kube_minor

PROJECT = "gpu-platform"
CONFIG_FILE_ENV = "GPU_PLATFORM_CONFIG_FILE"

PathPart: TypeAlias = str | int
Path: TypeAlias = tuple[PathPart, ...]

OperatorOs = Literal["ubuntu-22.04", "ubuntu-24.04"]
PoolOs = Literal["ubuntu-22.04", "ubuntu-24.04", "bottlerocket", "al2023"]
CapacityType = Literal["on-demand", "spot"]
_UNSET: Any = object()


class ConfigError(pulumi.RunError):
    """The stack configuration was rejected; the message says where, what, why and the fix.

    A `pulumi.RunError`, so `pulumi up` prints the message without a Python traceback.
    """


class ConfigIssue(ValueError):
    """One problem with one key: raised inside validators, collected into a `ConfigError`."""

    def __init__(
        self,
        rule: str,
        *,
        value: Any = _UNSET,
        path: Path = (),
        nearest: Sequence[str] = (),
        fix: str | None = None,
    ) -> None:
        super().__init__(rule)
        self.rule = rule
        self.value = value
        self.path = path
        self.nearest = tuple(nearest)
        self.fix = fix


class ConfigIssues(ValueError):
    """Several `ConfigIssue`s found together by a cross-field check."""

    def __init__(self, issues: Sequence[ConfigIssue]) -> None:
        super().__init__("; ".join(i.rule for i in issues))
        self.issues = list(issues)


# --------------------------------------------------------------------------------------------------
# Field validators (each raises ConfigIssue with the nearest valid choice where one can be computed)

_CLUSTER_NAME_RE = re.compile(r"^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$")
_POOL_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$")
_SERVICE_NAME_RE = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")
_KUBE_VERSION_RE = re.compile(r"^1\.\d{2}$")
_OPERATOR_VERSION_RE = re.compile(r"^v\d{2}\.\d{1,2}\.\d{1,3}$")
_SEMVER_RE = re.compile(r"^\d+\.\d+\.\d+$")
_INSTANCE_TYPE_RE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$")
_DURATION_RE = re.compile(r"^(([0-9]+(s|m|h))+|Never)$")
_SNAPSHOT_RE = re.compile(r"^snap-([0-9a-f]{8}|[0-9a-f]{17})$")
_IAM_PRINCIPAL_RE = re.compile(r"^arn:aws(-cn|-us-gov)?:iam::\d{12}:(role|user)/[\w+=,.@/-]{1,512}$")
_STS_ASSUMED_RE = re.compile(r"^arn:(aws(?:-cn|-us-gov)?):sts::(\d{12}):assumed-role/([\w+=,.@-]+)/.*$")
_ACM_ARN_RE = re.compile(r"^arn:aws(-cn|-us-gov)?:acm:[a-z]{2}(-gov)?-[a-z]+-\d:\d{12}:certificate/[0-9a-f-]{36}$")
_WAF_ARN_RE = re.compile(
    r"^arn:aws(-cn|-us-gov)?:wafv2:[a-z]{2}(-gov)?-[a-z]+-\d:\d{12}:regional/webacl/[\w-]{1,128}/[0-9a-f-]{36}$"
)
_HOST_RE = re.compile(r"^(?=.{1,253}$)([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
_IMAGE_RE = re.compile(
    r"^(?P<name>[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*)"
    r"(:(?P<tag>[\w][\w.-]{0,127}))?(@sha256:(?P<digest>[0-9a-f]{64}))?$"
)
_MOUNT_PATH_RE = re.compile(r"^/[A-Za-z0-9._/-]*$")


def _close(value: str, choices: Iterable[str]) -> list[str]:
    return difflib.get_close_matches(value, list(choices), n=1, cutoff=0.5)


def _cluster_name(value: str) -> str:
    if not _CLUSTER_NAME_RE.match(value):
        fixed = re.sub(r"[^A-Za-z0-9_-]", "-", value).strip("-_")[:100] or "gpu-cluster"
        raise ConfigIssue(
            "an EKS cluster name is 1-100 letters, digits, '-' or '_' and starts with a letter or digit",
            nearest=[fixed],
        )
    return value


def _pool_name(value: str) -> str:
    if not _POOL_NAME_RE.match(value):
        fixed = re.sub(r"[^a-z0-9-]", "-", value.lower()).strip("-")[:32] or "gpu"
        raise ConfigIssue(
            "a pool name is 1-32 lowercase letters, digits or '-', starting and ending with a letter or digit "
            "(it becomes a node label value and part of AWS resource names)",
            nearest=[fixed],
        )
    return value


def _service_name(value: str) -> str:
    if not _SERVICE_NAME_RE.match(value):
        fixed = re.sub(r"[^a-z0-9-]", "-", value.lower()).strip("-")[:40] or "inference"
        if not fixed[0].isalpha():
            fixed = f"svc-{fixed}"[:40]
        raise ConfigIssue(
            "a service name is a DNS-1035 label: 1-40 lowercase letters, digits or '-', starting with a letter",
            nearest=[fixed],
        )
    return value


def _kube_version(value: str) -> str:
    if not _KUBE_VERSION_RE.match(value):
        try:
            minor = parse_kube_minor(value)
        except ValueError:
            nearest: list[str] = []
        else:
            nearest = [str(minor)]
        raise ConfigIssue("a Kubernetes version is <major>.<minor> in quotes, such as \"1.35\"", nearest=nearest)
    return value


def _operator_version(value: str) -> str:
    if not _OPERATOR_VERSION_RE.match(value):
        bare = value.strip().lstrip("vV")
        nearest = [f"v{bare}"] if _SEMVER_RE.match(bare) else []
        raise ConfigIssue(
            "a GPU Operator version is the Helm chart version, v<YY>.<MM>.<patch> such as v26.7.0", nearest=nearest
        )
    return value


def _chart_semver(value: str) -> str:
    if not _SEMVER_RE.match(value):
        bare = value.strip().lstrip("vV")
        nearest = [bare] if _SEMVER_RE.match(bare) else []
        raise ConfigIssue("a chart version is <major>.<minor>.<patch> without a leading v, such as 1.14.1",
                          nearest=nearest)
    return value


def _driver_version(value: str) -> str:
    try:
        parse_driver_version(value)
    except ValueError as exc:
        digits = re.sub(r"[^0-9.]", "", value)
        nearest = [digits] if digits and digits != value and re.match(r"^\d{3}(\.\d+){0,2}$", digits) else []
        raise ConfigIssue(str(exc), nearest=nearest) from exc
    if value.startswith(("R", "r")):
        raise ConfigIssue("write the driver version without the R prefix", nearest=[value[1:]])
    return value


def _cuda_version(value: str) -> str:
    try:
        parse_cuda_version(value)
    except ValueError as exc:
        raise ConfigIssue(str(exc)) from exc
    return value


def _instance_type(value: str) -> str:
    if not _INSTANCE_TYPE_RE.match(value):
        raise ConfigIssue("an EC2 instance type is <family>.<size>, such as g6.xlarge",
                          nearest=[value.strip().lower().replace("_", ".")] if "." in value or "_" in value else [])
    return value


def _unique(values: list[str]) -> list[str]:
    seen: set[str] = set()
    for index, item in enumerate(values):
        if item in seen:
            raise ConfigIssue("each entry may appear only once", value=item, path=(index,),
                              nearest=[json.dumps(list(dict.fromkeys(values)))])
        seen.add(item)
    return values


def _duration(value: str) -> str:
    if not _DURATION_RE.match(value):
        nearest: list[str] = []
        days = re.fullmatch(r"(\d+)\s*d", value.strip())
        if days:
            nearest = [f"{int(days.group(1)) * 24}h"]
        elif value.strip().lower() == "never":
            nearest = ["Never"]
        elif re.fullmatch(r"\d+", value.strip()):
            nearest = [f"{value.strip()}s"]
        raise ConfigIssue("a Karpenter duration is digits with s, m or h (720h, 10m, 1h30m) or Never",
                          nearest=nearest)
    return value


def _cidr(value: str) -> str:
    try:
        ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        nearest: list[str] = []
        with contextlib.suppress(ValueError):
            nearest = [str(ipaddress.IPv4Network(value, strict=False))]
        raise ConfigIssue(f"not an IPv4 network in CIDR notation ({exc})", nearest=nearest) from exc
    return value


def _vpc_cidr(value: str) -> str:
    _cidr(value)
    network = ipaddress.IPv4Network(value)
    # Source: https://docs.aws.amazon.com/vpc/latest/userguide/vpc-cidr-blocks.html (/16 to /28); the
    # VPC is cut into 16 equal subnets, so /24 is the smallest that still leaves /28 subnets.
    if not 16 <= network.prefixlen <= 24:
        size = min(max(network.prefixlen, 16), 24)
        raise ConfigIssue("the VPC CIDR must be between /16 and /24 (it is cut into 16 subnets)",
                          nearest=[str(ipaddress.IPv4Network(f"{network.network_address}/{size}", strict=False))])
    if not network.is_private:
        raise ConfigIssue("the VPC CIDR must be an RFC 1918 private range", nearest=["10.0.0.0/16"])
    return value


def _public_cidr(value: str) -> str:
    _cidr(value)
    if ipaddress.IPv4Network(value).prefixlen == 0:
        raise ConfigIssue(
            "the public API endpoint must not be open to the whole internet "
            "(EKS best practices: restrict public access CIDRs)",
            fix="list your office/VPN egress ranges, or use [] for a private-only endpoint",
        )
    return value


def _principal_arn(value: str) -> str:
    if not _IAM_PRINCIPAL_RE.match(value):
        assumed = _STS_ASSUMED_RE.match(value)
        nearest = [f"arn:{assumed.group(1)}:iam::{assumed.group(2)}:role/{assumed.group(3)}"] if assumed else []
        raise ConfigIssue(
            "an access entry principal is an IAM role or user ARN, arn:aws:iam::<12-digit account>:role/<name>",
            nearest=nearest,
        )
    return value


def _acm_arn(value: str) -> str:
    if not _ACM_ARN_RE.match(value):
        raise ConfigIssue(
            "an ACM certificate ARN looks like arn:aws:acm:<region>:<12-digit account>:certificate/<uuid>",
            fix="copy the CertificateArn from `aws acm list-certificates`",
        )
    return value


def _waf_arn(value: str) -> str:
    if not _WAF_ARN_RE.match(value):
        raise ConfigIssue(
            "a regional WAFv2 web ACL ARN looks like "
            "arn:aws:wafv2:<region>:<12-digit account>:regional/webacl/<name>/<uuid>",
            fix="copy the ARN from `aws wafv2 list-web-acls --scope REGIONAL`",
        )
    return value


def _snapshot_id(value: str) -> str:
    if not _SNAPSHOT_RE.match(value):
        lowered = value.strip().lower()
        raise ConfigIssue("an EBS snapshot id is snap- followed by 8 or 17 lowercase hex digits",
                          nearest=[lowered] if _SNAPSHOT_RE.match(lowered) else [],
                          fix="copy the SnapshotId from `aws ec2 describe-snapshots --owner-ids self`")
    return value


def _host(value: str) -> str:
    if not _HOST_RE.match(value):
        lowered = value.strip().lower().rstrip(".")
        raise ConfigIssue("an ingress host is a lowercase DNS name such as inference.example.com",
                          nearest=[lowered] if _HOST_RE.match(lowered) else [])
    return value


def _image(value: str) -> str:
    match = _IMAGE_RE.match(value)
    if not match:
        raise ConfigIssue("not a container image reference; expected registry/repository:tag")
    if not match.group("tag") and not match.group("digest"):
        raise ConfigIssue("pin the image: a reference without a tag or digest pulls whatever 'latest' is",
                          nearest=[f"{value}:<tag>"])
    if match.group("tag") == "latest" and not match.group("digest"):
        raise ConfigIssue("pin the image to a release tag or digest instead of 'latest'")
    return value


def _number_string(value: str) -> str:
    try:
        float(value)
    except ValueError as exc:
        digits = re.sub(r"[^0-9.]", "", value)
        raise ConfigIssue("a KEDA threshold is a number written as a string, such as \"100\"",
                          nearest=[digits] if digits else []) from exc
    return value


def _mount_path(value: str) -> str:
    if not _MOUNT_PATH_RE.match(value) or "//" in value or value == "/":
        raise ConfigIssue("a mount path is an absolute path below /, such as /models", nearest=["/models"])
    return value


ClusterName = Annotated[str, AfterValidator(_cluster_name)]
PoolName = Annotated[str, AfterValidator(_pool_name)]
ServiceName = Annotated[str, AfterValidator(_service_name)]
KubeVersion = Annotated[str, AfterValidator(_kube_version)]
OperatorVersion = Annotated[str, AfterValidator(_operator_version)]
ChartVersion = Annotated[str, AfterValidator(_chart_semver)]
DriverVersionStr = Annotated[str, AfterValidator(_driver_version)]
CudaVersionStr = Annotated[str, AfterValidator(_cuda_version)]
InstanceType = Annotated[str, AfterValidator(_instance_type)]
Duration = Annotated[str, AfterValidator(_duration)]
VpcCidr = Annotated[str, AfterValidator(_vpc_cidr)]
PublicCidr = Annotated[str, AfterValidator(_public_cidr)]
PrincipalArn = Annotated[str, AfterValidator(_principal_arn)]
AcmArn = Annotated[str, AfterValidator(_acm_arn)]
WafArn = Annotated[str, AfterValidator(_waf_arn)]
SnapshotId = Annotated[str, AfterValidator(_snapshot_id)]
Host = Annotated[str, AfterValidator(_host)]
Image = Annotated[str, AfterValidator(_image)]
NumberString = Annotated[str, AfterValidator(_number_string)]
MountPath = Annotated[str, AfterValidator(_mount_path)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, validate_by_alias=True,
                              validate_by_name=False, serialize_by_alias=True)


def _check_sizes(min_size: int, desired_size: int, max_size: int) -> None:
    if not min_size <= desired_size <= max_size:
        if desired_size < min_size:
            raise ConfigIssue(f"minSize <= desiredSize <= maxSize must hold (minSize is {min_size})",
                              value=desired_size, path=("desiredSize",), nearest=[str(min_size)])
        if desired_size > max_size:
            raise ConfigIssue(f"minSize <= desiredSize <= maxSize must hold (maxSize is {max_size})",
                              value=desired_size, path=("desiredSize",), nearest=[str(max_size)])


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
        description="IAM roles/users that get cluster-admin access entries (AmazonEKSClusterAdminPolicy). "
                    "The cluster creator gets no implicit admin.",
    )


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


class GpuNodeGroupConfig(_Model):
    """One entry of `gpu-platform:gpuNodeGroups`: an operator-driver GPU pool on Canonical's Ubuntu EKS image."""

    name: PoolName = Field(description="Pool name: the gpu-platform.io/pool label value and node group suffix.")
    instance_types: list[InstanceType] = Field(
        min_length=1, alias="instanceTypes", description="GPU instance types, in order of preference."
    )
    os: OperatorOs = Field(default="ubuntu-24.04", description="Node OS: ubuntu-22.04 | ubuntu-24.04.")
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
    self_managed: bool = Field(
        default=False, alias="selfManaged",
        description="true: a self-managed Auto Scaling group + EC2_LINUX access entry instead of an EKS managed "
                    "node group.",
    )

    @model_validator(mode="after")
    def _sizes(self) -> GpuNodeGroupConfig:
        _check_sizes(self.min_size, self.desired_size, self.max_size)
        return self


def _on_demand_only() -> list[CapacityType]:
    return ["on-demand"]


class KarpenterPoolConfig(_Model):
    """One entry of `gpu-platform:karpenter.pools`: a Karpenter NodePool + EC2NodeClass for GPU nodes."""

    name: PoolName = Field(description="Pool name: NodePool name and gpu-platform.io/pool label value.")
    os: PoolOs = Field(description="bottlerocket | al2023 (driver baked in) or ubuntu-22.04 | ubuntu-24.04 "
                                   "(driver installed by the operator).")
    driver_version: DriverVersionStr = Field(
        alias="driverVersion",
        description="Baked images: the branch the image ships (\"580\"); Ubuntu: the full driver version.",
    )
    instance_types: list[InstanceType] = Field(
        min_length=1, alias="instanceTypes", description="GPU instance types; order = preference."
    )
    capacity_types: Annotated[list[CapacityType], AfterValidator(_unique)] = Field(
        default_factory=_on_demand_only, min_length=1, alias="capacityTypes",
        description="Capacity types the NodePool may launch: spot, on-demand.",
    )
    on_demand_fallback: bool = Field(
        default=False, alias="onDemandFallback",
        description="Add a second, lower-weight on-demand NodePool for when Spot capacity runs out.",
    )
    max_gpus: int = Field(default=8, ge=1, le=10000, alias="maxGpus",
                          description="NodePool limit on nvidia.com/gpu (Karpenter has no global limit).")
    expire_after: Duration = Field(default="720h", alias="expireAfter",
                                   description="Node lifetime before Karpenter replaces it (Karpenter duration).")
    consolidate_after: Duration = Field(default="10m", alias="consolidateAfter",
                                        description="Idle time before an empty node is removed (Karpenter duration).")
    disk_size_gib: int = Field(default=100, ge=30, le=16384, alias="diskSizeGiB",
                               description="Encrypted gp3 root volume size in GiB.")

    @model_validator(mode="after")
    def _fallback(self) -> KarpenterPoolConfig:
        if self.on_demand_fallback and "on-demand" in self.capacity_types:
            raise ConfigIssue(
                "onDemandFallback adds a separate on-demand NodePool; it only makes sense when capacityTypes "
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
                fix="run `python -m tools.matrix drivers --os <os> --operator <version>` for the versions that fit",
            )
        return self


class KarpenterConfig(_Model):
    """`gpu-platform:karpenter`: the Karpenter controller and its GPU pools."""

    version: ChartVersion = Field(description="Karpenter chart version (oci://public.ecr.aws/karpenter), e.g. 1.14.1.")
    pools: list[KarpenterPoolConfig] = Field(default_factory=list, description="GPU NodePools.")


class AutoscalingConfig(_Model):
    """`inferenceServices[].autoscaling`: a KEDA Prometheus trigger."""

    query: str = Field(min_length=1, description="PromQL query whose value drives the replica count.")
    threshold: NumberString = Field(description="Target value per replica, as a string (KEDA).")
    activation_threshold: NumberString = Field(
        default="0", alias="activationThreshold",
        description="Value above which the service scales from zero, as a string (KEDA).",
    )


class IngressConfig(_Model):
    """`inferenceServices[].ingress`: an AWS Load Balancer Controller ALB in front of the service."""

    host: Host = Field(description="DNS name the ALB serves.")
    certificate_arn: AcmArn = Field(alias="certificateArn", description="ACM certificate for HTTPS.")
    scheme: Literal["internet-facing", "internal"] = Field(default="internal",
                                                           description="internet-facing | internal.")
    waf_acl_arn: WafArn | None = Field(default=None, alias="wafAclArn",
                                       description="Regional WAFv2 web ACL attached to the ALB.")


class ModelVolumeConfig(_Model):
    """`inferenceServices[].modelVolume`: model weights restored from an EBS snapshot."""

    snapshot_id: SnapshotId = Field(alias="snapshotId", description="EBS snapshot holding the model.")
    size_gib: int = Field(default=100, ge=1, le=65536, alias="sizeGiB",
                          description="Volume size in GiB (at least the snapshot size).")
    mount_path: MountPath = Field(default="/models", alias="mountPath", description="Where the model is mounted.")
    fast_snapshot_restore: bool = Field(default=False, alias="fastSnapshotRestore",
                                        description="Enable EBS fast snapshot restore in the cluster's zones.")


class InferenceServiceConfig(_Model):
    """One entry of `gpu-platform:inferenceServices`: a GPU inference Deployment with autoscaling."""

    name: ServiceName = Field(description="Service name (Deployment, Service, ScaledObject).")
    image: Image = Field(description="Container image, pinned by tag or digest.")
    cuda_version: CudaVersionStr | None = Field(
        default=None, alias="cudaVersion",
        description="CUDA runtime the image carries; optional where the image tag reveals it.",
    )
    gpus_per_replica: int = Field(default=1, ge=1, le=16, alias="gpusPerReplica",
                                  description="nvidia.com/gpu per replica.")
    port: int = Field(default=8000, ge=1, le=65535, description="HTTP port.")
    metrics_port: int = Field(default=8002, ge=1, le=65535, alias="metricsPort", description="Prometheus port.")
    node_pools: Annotated[list[PoolName], AfterValidator(_unique)] = Field(
        default_factory=list, alias="nodePools",
        description="Pools the service may run on; empty = every GPU pool.",
    )
    min_replicas: int = Field(default=0, ge=0, le=1000, alias="minReplicas", description="Minimum replicas.")
    max_replicas: int = Field(default=1, ge=1, le=1000, alias="maxReplicas", description="Maximum replicas.")
    autoscaling: AutoscalingConfig | None = Field(default=None, description="KEDA trigger; omit for fixed size.")
    ingress: IngressConfig | None = Field(default=None, description="ALB ingress; omit for internal-only.")
    model_volume: ModelVolumeConfig | None = Field(default=None, alias="modelVolume",
                                                   description="Model volume from a snapshot.")

    @model_validator(mode="after")
    def _ports_and_replicas(self) -> InferenceServiceConfig:
        if self.metrics_port == self.port:
            raise ConfigIssue("metricsPort must differ from port", value=self.metrics_port, path=("metricsPort",),
                              nearest=[str(self.port + 2)])
        if self.min_replicas > self.max_replicas:
            raise ConfigIssue(f"minReplicas <= maxReplicas must hold (maxReplicas is {self.max_replicas})",
                              value=self.min_replicas, path=("minReplicas",), nearest=[str(self.max_replicas)])
        return self


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
                    driver_path=("karpenter", "pools", i, "driverVersion")))
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


# --------------------------------------------------------------------------------------------------
# Error formatting


def _format_path(path: Sequence[PathPart]) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _format_value(value: Any) -> str:
    if value is _UNSET:
        return "(missing)"
    text = json.dumps(value, default=str, sort_keys=True) if not isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 160 else text[:157] + "..."


def _unwrap(annotation: Any) -> Any:
    """Strip Annotated / Optional / list to the model or literal underneath (one list level at a time)."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            annotation = args[0] if len(args) == 1 else annotation
            if len(args) != 1:
                return annotation
        else:
            return annotation


def _field_at(path: Sequence[PathPart]) -> tuple[type[BaseModel] | None, FieldInfo | None, Any]:
    """The model holding the last key of `path`, that key's FieldInfo and the annotation it resolves to."""
    model: type[BaseModel] | None = StackConfig
    info: FieldInfo | None = None
    annotation: Any = StackConfig
    holder: type[BaseModel] | None = StackConfig
    for part in path:
        annotation = _unwrap(annotation)
        if isinstance(part, int):
            if typing.get_origin(annotation) is list:
                annotation = typing.get_args(annotation)[0]
                continue
            return holder, info, annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return holder, None, None
        model = annotation
        info = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        holder = model
        if info is None:
            return holder, None, None
        annotation = info.annotation
    return holder, info, _unwrap(annotation)


def _aliases(model: type[BaseModel]) -> list[str]:
    return [f.alias or n for n, f in model.model_fields.items()]


def _literal_choices(annotation: Any) -> list[str]:
    annotation = _unwrap(annotation)
    if typing.get_origin(annotation) is list:
        annotation = _unwrap(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) is Literal:
        return [str(a) for a in typing.get_args(annotation)]
    return []


_TYPE_NAMES = {
    "string_type": "a string", "int_type": "an integer", "bool_type": "true or false", "list_type": "a list",
    "model_type": "a mapping of keys", "dict_type": "a mapping of keys", "model_attributes_type": "a mapping of keys",
    "int_from_float": "a whole number", "float_type": "a number",
}


@dataclass(frozen=True)
class Problem:
    """One rejected key, ready to print."""

    path: Path
    value: Any
    rule: str
    nearest: tuple[str, ...] = ()
    fix: str | None = None

    def render(self, stack_file: str) -> str:
        where = _format_path(self.path) or "(top level)"
        text = f"{stack_file}: {where} = {_format_value(self.value)}: {self.rule.rstrip('. ')}"
        if self.nearest:
            text += f"; nearest valid choice: {', '.join(self.nearest)}"
        if self.fix:
            text += f"; fix: {self.fix}"
        return text


def _problem_from_error(error: Mapping[str, Any]) -> list[Problem]:
    loc: Path = tuple(p for p in error["loc"] if isinstance(p, (str, int)))
    kind = str(error["type"])
    value = error.get("input", _UNSET)
    ctx = error.get("ctx") or {}
    exc = ctx.get("error")
    if isinstance(exc, ConfigIssues):
        return [_problem_from_issue(loc, issue, value) for issue in exc.issues]
    if isinstance(exc, ConfigIssue):
        return [_problem_from_issue(loc, exc, value)]
    if kind == "extra_forbidden":
        holder, _, annotation = _field_at(loc[:-1])
        model = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else holder
        allowed = _aliases(model) if model is not None else []
        key = str(loc[-1])
        where = "gpu-platform:" + key if len(loc) == 1 else key
        nearest = _close(key, allowed)
        return [Problem(loc, value, f"unknown key {where!r}", tuple(nearest),
                        None if nearest else f"allowed keys: {', '.join(allowed)}")]
    _, info, annotation = _field_at(loc)
    if kind == "missing":
        description = info.description if info is not None else None
        key = f"gpu-platform:{loc[0]}" if len(loc) == 1 else _format_path(loc)
        return [Problem(loc, _UNSET, "required key is missing", (),
                        f"add {key}" + (f" ({description})" if description else ""))]
    if kind == "literal_error":
        choices = _literal_choices(annotation) or re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return [Problem(loc, value, f"must be one of {', '.join(choices)}",
                        tuple(_close(str(value), choices) or choices))]
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        bound = ctx.get("ge", ctx.get("le", ctx.get("gt", ctx.get("lt"))))
        words = {"greater_than_equal": ">=", "less_than_equal": "<=", "greater_than": ">", "less_than": "<"}
        return [Problem(loc, value, f"must be {words[kind]} {bound}", (str(bound),))]
    if kind in ("too_short", "too_long"):
        return [Problem(loc, value, str(error["msg"]).lower(), (),
                        "give at least one entry" if kind == "too_short" else "remove entries")]
    if kind in _TYPE_NAMES:
        fix = None
        hint: tuple[str, ...] = ()
        if kind == "string_type" and isinstance(value, (int, float)) and not isinstance(value, bool):
            fix = 'quote it in YAML (an unquoted 1.30 reads as the number 1.3)'
            hint = (json.dumps(str(value)),)
        elif kind == "int_type" and isinstance(value, str) and value.strip().isdigit():
            hint = (value.strip(),)
            fix = "write the number without quotes"
        elif kind == "bool_type" and isinstance(value, str) and value.strip().lower() in ("true", "false"):
            hint = (value.strip().lower(),)
            fix = "write true or false without quotes"
        return [Problem(loc, value, f"must be {_TYPE_NAMES[kind]}", hint, fix)]
    return [Problem(loc, value, str(error["msg"]), (), None)]


def _problem_from_issue(loc: Path, issue: ConfigIssue, input_value: Any) -> Problem:
    path = (*loc, *issue.path) if not _is_root_path(issue.path) else issue.path
    value = issue.value if issue.value is not _UNSET else input_value
    return Problem(path, value, issue.rule, issue.nearest, issue.fix)


def _is_root_path(path: Path) -> bool:
    return bool(path) and path[0] in {f.alias or n for n, f in StackConfig.model_fields.items()}


# --------------------------------------------------------------------------------------------------
# Matrix checks at program start


def _matrix_problems(stack: StackConfig, today: date | None) -> tuple[list[Problem], list[Problem]]:
    """(mandatory problems, advisories) from the compatibility matrix for the cluster and every GPU pool."""
    matrix = load_matrix()
    when = today or date.today()
    mandatory: list[Problem] = []
    advisory: list[Problem] = []

    def add(level: str, problem: Problem) -> None:
        target = mandatory if level == "mandatory" else advisory
        if level != "ok" and problem not in target:
            target.append(problem)

    control_plane = stack.cluster.kubernetes_version
    for finding in matrix.eks_lifecycle(control_plane, when):
        add(finding.level, Problem(("cluster", "kubernetesVersion"), control_plane, finding.message, finding.nearest))
    for j, instance_type in enumerate(stack.system_node_group.instance_types):
        if matrix.is_gpu_instance(instance_type):
            add("mandatory", Problem(
                ("systemNodeGroup", "instanceTypes", j), instance_type,
                "the system node group is untainted and must not use GPU instances (GPU nodes carry the "
                "nvidia.com/gpu taint and belong in a GPU pool)",
                ("m7i.large",)))
    operator = stack.gpu_operator.version if stack.gpu_operator else None
    if operator is not None and matrix.operator(operator) is None:
        choices = tuple(reversed(matrix.operators()))
        add("mandatory", Problem(("gpuOperator", "version"), operator,
                                 "not a GPU Operator release the compatibility matrix knows",
                                 tuple(_close(operator, choices)) or choices[:3]))
        return mandatory, advisory
    for pool in stack.gpu_pools():
        known = [(j, matrix.instance_type(t)) for j, t in enumerate(pool.instance_types)]
        arches = [(j, inst.cpu_arch) for j, inst in known if inst is not None]
        for j, cpu_arch in arches[1:]:
            if cpu_arch != arches[0][1]:
                add("mandatory", Problem(
                    (*pool.path, "instanceTypes", j), pool.instance_types[j],
                    f"a pool boots one image, so its instance types share a CPU architecture; this one is {cpu_arch}, "
                    f"{pool.instance_types[arches[0][0]]} is {arches[0][1]}",
                    fix="move it to a pool of its own"))
        for instance_type in pool.instance_types:
            findings = matrix.check(
                os=typing.cast(Any, pool.os), driver=pool.driver_version,
                operator=operator if pool.driver_source == "operator" else None,
                kubernetes=control_plane, kubelet=pool.kubelet_version, instance_type=instance_type,
                precompiled=pool.use_precompiled, today=when,
            )
            for finding in findings:
                if finding.rule == "kubernetes-version-lifecycle":
                    continue  # reported once for the cluster above
                path, value = _finding_target(stack, pool, finding.rule, finding.nearest, instance_type)
                add(finding.level, Problem(path, value, finding.message, finding.nearest))
    return mandatory, advisory


def _finding_target(
    stack: StackConfig, pool: GpuPool, rule: str, nearest: Sequence[str], instance_type: str
) -> tuple[Path, Any]:
    """The key a matrix finding blames: driver, OS, kubelet, operator version or an instance type."""
    if rule == "instance-type-known":
        return (*pool.path, "instanceTypes", pool.instance_types.index(instance_type)), instance_type
    if rule in ("kubelet-version-skew", "node-image-published"):
        return (*pool.path, "kubeletVersion"), pool.kubelet_version
    if rule in ("operator-kubernetes-supported", "operator-known"):
        return ("gpuOperator", "version"), stack.gpu_operator.version if stack.gpu_operator else None
    if rule == "driver-branch-supported" and nearest and all(n in _OS_CHOICES for n in nearest):
        return (*pool.path, "os"), pool.os
    return pool.driver_path, pool.driver_version


_OS_CHOICES = frozenset(typing.get_args(PoolOs))


# --------------------------------------------------------------------------------------------------
# Loading


def stack_file_name() -> str:
    """The file the user edits: $GPU_PLATFORM_CONFIG_FILE, else `Pulumi.<stack>.yaml`."""
    override = os.environ.get(CONFIG_FILE_ENV)
    if override:
        return override
    return f"Pulumi.{pulumi.get_stack()}.yaml"


def _raw_values(cfg: pulumi.Config | Mapping[str, Any]) -> dict[str, Any]:
    """Every `gpu-platform:` key with its value, the prefix stripped."""
    raw: dict[str, Any] = {}
    if isinstance(cfg, pulumi.Config):
        from pulumi.runtime import config as runtime_config  # noqa: PLC0415

        keys = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
        items = {k: runtime_config.get_config(k) for k in keys}
    else:
        items = dict(cfg)
    for full_key, value in items.items():
        namespace, _, bare = full_key.rpartition(":")
        if namespace and namespace != PROJECT:
            continue
        raw[bare] = value
    return {k: _decode(v) for k, v in raw.items()}


def _decode(value: Any) -> Any:
    """Pulumi hands object and list values over as JSON strings."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "["):
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                return value
    return value


def parse_stack_config(raw: Mapping[str, Any]) -> tuple[StackConfig | None, list[Problem]]:
    """Validate the decoded `gpu-platform:` values; (config, []) or (None, problems)."""
    try:
        return StackConfig.model_validate(dict(raw)), []
    except ValidationError as exc:
        problems: list[Problem] = []
        for error in exc.errors(include_url=False):
            for problem in _problem_from_error(typing.cast(Mapping[str, Any], error)):
                if problem not in problems:
                    problems.append(problem)
        return None, problems


def _raise(problems: Sequence[Problem], stack_file: str) -> typing.NoReturn:
    lines = [p.render(stack_file) for p in problems]
    if len(lines) == 1:
        raise ConfigError(lines[0])
    header = f"{stack_file}: the stack configuration has {len(lines)} problems; nothing was created:"
    raise ConfigError("\n".join([header, *(f"  - {line}" for line in lines)]))


def load_stack_config(
    cfg: pulumi.Config | Mapping[str, Any],
    *,
    stack_file: str | None = None,
    check_matrix: bool = True,
    today: date | None = None,
) -> StackConfig:
    """Read, validate and matrix-check every `gpu-platform:*` key; raise ConfigError on the first bad stack.

    `cfg` is a `pulumi.Config` (inside a Pulumi program) or a mapping of config keys (`gpu-platform:cluster`
    or bare `cluster`) to values (JSON strings or already-decoded objects). Matrix advisories (an EOL
    driver branch, extended-support Kubernetes) are logged as warnings, never raised.
    """
    file_name = stack_file or stack_file_name()
    config, problems = parse_stack_config(_raw_values(cfg))
    if config is None:
        _raise(problems, file_name)
    if check_matrix:
        mandatory, advisories = _matrix_problems(config, today)
        if mandatory:
            _raise(mandatory, file_name)
        for advisory in advisories:
            pulumi.log.warn(advisory.render(file_name))
    return config


def matrix_advisories(config: StackConfig, *, stack_file: str, today: date | None = None) -> list[str]:
    """The advisory matrix findings for a valid stack, rendered (for tests and the preview summary)."""
    return [p.render(stack_file) for p in _matrix_problems(config, today)[1]]
