"""Field validators of the stack schema: each raises ConfigIssue with the nearest valid choice it can compute."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import re
from typing import Annotated

from pydantic import AfterValidator

from components.config.issues import ConfigIssue
from policies.gpu_guard.versions import parse_cuda_version, parse_driver_version, parse_kube_minor

_CLUSTER_NAME_RE = re.compile(r"^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$")
_POOL_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$")
_SERVICE_NAME_RE = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")
_KUBE_VERSION_RE = re.compile(r"^1\.\d{2}$")
_OPERATOR_VERSION_RE = re.compile(r"^v\d{2}\.\d{1,2}\.\d{1,3}$")
_SEMVER_RE = re.compile(r"^\d+\.\d+\.\d+$")
_INSTANCE_TYPE_RE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$")
_DURATION_RE = re.compile(r"^(([0-9]+(s|m|h))+|Never)$")
# Source: https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_Image.html (imageId)
_AMI_RE = re.compile(r"^ami-([0-9a-f]{8}|[0-9a-f]{17})$")
_SNAPSHOT_RE = re.compile(r"^snap-([0-9a-f]{8}|[0-9a-f]{17})$")
_IAM_PRINCIPAL_RE = re.compile(r"^arn:aws(-cn|-us-gov)?:iam::\d{12}:(role|user)/[\w+=,.@/-]{1,512}$")
_STS_ASSUMED_RE = re.compile(r"^arn:(aws(?:-cn|-us-gov)?):sts::(\d{12}):assumed-role/([\w+=,.@-]+)/.*$")
_ACM_ARN_RE = re.compile(r"^arn:aws(-cn|-us-gov)?:acm:[a-z]{2}(-gov)?-[a-z]+-\d:\d{12}:certificate/[0-9a-f-]{36}$")
# Source: https://docs.aws.amazon.com/kms/latest/developerguide/concepts.html#key-id-key-ARN
_KMS_KEY_ARN_RE = re.compile(
    r"^arn:aws(-cn|-us-gov)?:kms:[a-z]{2}(-gov)?-[a-z]+-\d:\d{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f-]{36})$")
_WAF_ARN_RE = re.compile(
    r"^arn:aws(-cn|-us-gov)?:wafv2:[a-z]{2}(-gov)?-[a-z]+-\d:\d{12}:regional/webacl/[\w-]{1,128}/[0-9a-f-]{36}$"
)
_HOST_RE = re.compile(r"^(?=.{1,253}$)([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
_IMAGE_RE = re.compile(
    r"^(?P<name>[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*)"
    r"(:(?P<tag>[\w][\w.-]{0,127}))?(@sha256:(?P<digest>[0-9a-f]{64}))?$"
)
_MOUNT_PATH_RE = re.compile(r"^/[A-Za-z0-9._/-]*$")


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
            # Only a choice the rule itself accepts ("1.3" parses, but is no EKS version).
            nearest = [str(minor)] if _KUBE_VERSION_RE.match(str(minor)) else []
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


def _kms_key_arn(value: str) -> str:
    if not _KMS_KEY_ARN_RE.match(value):
        raise ConfigIssue(
            "a KMS key ARN looks like arn:aws:kms:<region>:<12-digit account>:key/<key id> (not an alias)",
            fix="copy the KmsKeyId from `aws ec2 describe-snapshots --snapshot-ids <id>`")
    return value


def _image_id(value: str) -> str:
    if not _AMI_RE.match(value):
        lowered = value.strip().lower()
        raise ConfigIssue("an AMI id is ami- followed by 8 or 17 lowercase hex digits",
                          nearest=[lowered] if _AMI_RE.match(lowered) else [],
                          fix="run `.venv/bin/gpu-platform matrix images --stack <stack>` for the parameter to read it "
                              "from")
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
KmsKeyArn = Annotated[str, AfterValidator(_kms_key_arn)]
SnapshotId = Annotated[str, AfterValidator(_snapshot_id)]
ImageId = Annotated[str, AfterValidator(_image_id)]
Host = Annotated[str, AfterValidator(_host)]
Image = Annotated[str, AfterValidator(_image)]
NumberString = Annotated[str, AfterValidator(_number_string)]
MountPath = Annotated[str, AfterValidator(_mount_path)]


# `gpu-platform:tags`: each pair is an AWS tag on what the controllers create and a label on every Kubernetes
# object, so it must be valid as both; the label rules are the narrower (63-character name and value, a DNS
# subdomain prefix). Reserved prefixes: `aws:` (AWS refuses user tags with it) and the Kubernetes and Karpenter
# prefixes the controllers set themselves (Karpenter's EC2NodeClass CRD rejects them in spec.tags).
# Sources: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set
# https://docs.aws.amazon.com/tag-editor/latest/userguide/tagging.html (tag naming limits)
# https://karpenter.sh/docs/concepts/nodeclasses/#spectags (restricted tags)
_LABEL_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_TAG_KEY_RE = re.compile(rf"^(?:[a-z0-9](?:[-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_LABEL_NAME}$")
_TAG_VALUE_RE = re.compile(rf"^(?:{_LABEL_NAME})?$")
_RESERVED_TAG_PREFIXES = ("aws:", "kubernetes.io/", "k8s.io/", "karpenter.sh/", "karpenter.k8s.aws/", "eks:",
                          "eks.amazonaws.com/", "elbv2.k8s.aws/", "ebs.csi.aws.com/")


def _resource_tags(value: dict[str, str]) -> dict[str, str]:
    for key, tag in value.items():
        if key.startswith(_RESERVED_TAG_PREFIXES) or not _TAG_KEY_RE.match(key):
            raise ConfigIssue(
                "a tag key is also a Kubernetes label key: an optional DNS-subdomain prefix and '/', then 1-63 "
                f"letters, digits, '-', '_' or '.'; not under {', '.join(_RESERVED_TAG_PREFIXES)}",
                value=key, path=(key,), nearest=[re.sub(r"[^A-Za-z0-9_.-]", "-", key.rpartition("/")[2])[:63]
                                                 .strip("-_.") or "team"])
        if not _TAG_VALUE_RE.match(tag):
            raise ConfigIssue(
                "a tag value is also a Kubernetes label value: at most 63 letters, digits, '-', '_' or '.', "
                "starting and ending with a letter or digit",
                value=tag, path=(key,), nearest=[re.sub(r"[^A-Za-z0-9_.-]", "-", tag)[:63].strip("-_.")])
    return value


ResourceTags = Annotated[dict[str, str], AfterValidator(_resource_tags)]
