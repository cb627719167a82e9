"""Recording mocks: run a Pulumi Python program with no cloud account and no Pulumi CLI.

`RecordingMonitor` stands in for the engine's resource monitor. It records every resource the program
registers (custom resources, local components, remote components such as pulumi-eks's
`eks:index:Cluster`, providers, `.get()` reads) as a `tools.records.RecordedResource`, with the parent,
provider, protect flag, dependencies and the raw protobuf Struct the engine would receive.

`RecordingMocks` answers the provider: every invoke a real program makes (INVOKES) and plausible,
deterministic outputs for every resource (ids, ARNs and the type-specific outputs in RESOURCE_OUTPUTS), so
every `apply` runs. Same program and config, same answers: every value derives from a hash of the
resource's type and URN or of the invoke's arguments, never from time or randomness.

The pulumi SDK's own MockMonitor drops `parent`, `protect`, dependencies and the raw Struct, which is why
the monitor methods are overridden here.
Source: https://github.com/pulumi/pulumi/blob/master/sdk/python/lib/pulumi/runtime/mocks.py
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime import rpc
from pulumi.runtime.mocks import MockCallArgs, MockMonitor, MockResourceArgs, Mocks
from pulumi.runtime.proto import provider_pb2, resource_pb2
from pulumi.runtime.settings import get_project, get_stack
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from tools.records import UNKNOWN, RecordedResource

# The account every mocked ARN lives in: the documentation account id AWS uses in its examples.
# Source: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html
ACCOUNT_ID = "111122223333"
PARTITION = "aws"
DEFAULT_REGION = "us-west-2"
# The EKS version an adopted (`aws.eks.get_cluster`) cluster reports when the stack does not say.
DEFAULT_EKS_VERSION = "1.35"
# A fixed creation time, so outputs stay byte-identical across runs.
CREATED_AT = "2026-01-01T00:00:00Z"

# Signatures of the special objects in a property Struct.
# Source: https://github.com/pulumi/pulumi/blob/master/sdk/python/lib/pulumi/runtime/rpc.py
_SIG_KEY = "4dabf18193072939515e22adb298388d"
_SIG_SECRET = "1b47061264138c4ac30d75fd1eb44270"
_SIG_RESOURCE = "5cf8f73096256a8f31e491e813e4eb8e"
_SIG_ASSET = "c44067f5952c0a294b673a41bacd8c17"
_SIG_ARCHIVE = "0def7320c3a5731c473e5ecbe6d01bc7"
_SIG_OUTPUT = "d0e6a833031e9bbcd3f4e8bde6ca49a4"


class UnknownInvokeError(Exception):
    """The program called a provider function the mocks have no answer for."""


class MockValueError(Exception):
    """An invoke the mocks know was called with arguments they cannot answer realistically."""


# --------------------------------------------------------------------------------------------------
# Deterministic building blocks
# --------------------------------------------------------------------------------------------------


def stable_hex(*parts: object, length: int = 17) -> str:
    """`length` lowercase hex characters derived from `parts` (sha256), the same on every run."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()
    while len(digest) < length:
        digest += hashlib.sha256(digest.encode()).hexdigest()
    return digest[:length]


def stable_uuid(*parts: object) -> str:
    h = stable_hex(*parts, length=32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def zone_id_prefix(region: str) -> str:
    """`us-west-2` -> `usw2`, `ap-southeast-1` -> `apse1`: the prefix of AWS availability zone ids.

    Source: https://docs.aws.amazon.com/ram/latest/userguide/working-with-az-ids.html
    """
    directions = {
        "north": "n", "south": "s", "east": "e", "west": "w", "central": "c",
        "northeast": "ne", "southeast": "se", "northwest": "nw", "southwest": "sw",
    }
    parts = region.split("-")
    if len(parts) < 3:
        return region.replace("-", "")
    return parts[0] + directions.get(parts[1], parts[1][:1]) + "".join(parts[2:])


def eks_endpoint(cluster: str, region: str) -> str:
    return f"https://{stable_hex('eks-endpoint', cluster, region, length=32).upper()}.gr7.{region}.eks.amazonaws.com"


def eks_oidc_issuer(cluster: str, region: str) -> str:
    return f"https://oidc.eks.{region}.amazonaws.com/id/{stable_hex('eks-oidc', cluster, region, length=32).upper()}"


def certificate_authority(cluster: str) -> str:
    """A base64 PEM-shaped blob (not a real certificate; nothing parses it offline)."""
    body = base64.b64encode(hashlib.sha512(f"ca:{cluster}".encode()).digest() * 3).decode()
    pem = f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n"
    return base64.b64encode(pem.encode()).decode()


def kubeconfig(cluster: str, region: str) -> dict[str, Any]:
    """A kubeconfig for an EKS cluster, shaped like the one pulumi-eks and `aws eks update-kubeconfig` write.

    Source: https://docs.aws.amazon.com/eks/latest/userguide/create-kubeconfig.html
    """
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster,
                "cluster": {
                    "server": eks_endpoint(cluster, region),
                    "certificate-authority-data": certificate_authority(cluster),
                },
            }
        ],
        "contexts": [{"name": "aws", "context": {"cluster": cluster, "user": "aws"}}],
        "current-context": "aws",
        "preferences": {},
        "users": [
            {
                "name": "aws",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "aws",
                        "args": ["--region", region, "eks", "get-token", "--cluster-name", cluster, "--output", "json"],
                    }
                },
            }
        ],
    }


# --------------------------------------------------------------------------------------------------
# Context handed to every table entry
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MockContext:
    """What an invoke or resource answer may depend on: region, account, the stack's config."""

    region: str
    account: str
    partition: str
    config: Mapping[str, Any]

    def arn(self, service: str, resource: str, *, region: bool = True, account: bool = True) -> str:
        return (
            f"arn:{self.partition}:{service}:{self.region if region else ''}:"
            f"{self.account if account else ''}:{resource}"
        )


@dataclass(frozen=True)
class ResourceRequest:
    """One resource registration as the table entries see it."""

    type: str
    name: str
    urn: str
    inputs: dict[str, Any]
    custom: bool
    remote: bool
    ctx: MockContext

    def h(self, *extra: object, length: int = 17) -> str:
        return stable_hex(self.type, self.urn, *extra, length=length)

    def physical_name(self, key: str = "name") -> str:
        """The physical name the provider would use: the input, or `<logical>-<7 hex>` (Pulumi auto-naming).

        Source: https://www.pulumi.com/docs/iac/concepts/resources/names/#autonaming
        """
        value = self.inputs.get(key)
        if isinstance(value, str) and value and value != UNKNOWN:
            return value
        prefix = self.inputs.get("namePrefix")
        if isinstance(prefix, str) and prefix:
            return prefix + self.h("name", length=26)
        return f"{self.name}-{self.h('name', length=7)}"


InvokeHandler = Callable[[dict[str, Any], MockContext], dict[str, Any]]
OutputHandler = Callable[[ResourceRequest], dict[str, Any]]


# --------------------------------------------------------------------------------------------------
# INVOKE table: provider functions (data sources) and component methods
# --------------------------------------------------------------------------------------------------


def _ssm_parameter_value(name: str, ctx: MockContext) -> str:
    # AMI ids published in SSM by EKS, Bottlerocket and Canonical end in image_id / ami-id.
    # Source: https://docs.aws.amazon.com/eks/latest/userguide/retrieve-ami-id.html
    # Source: https://bottlerocket.dev/en/os/latest/#/install/quickstart/aws/host-containers/ (SSM parameters)
    # Source: https://documentation.ubuntu.com/aws/aws-how-to/instances/find-ubuntu-images/
    tail = name.rstrip("/").rsplit("/", 1)[-1]
    if tail in ("image_id", "ami-id", "image-id") or tail.endswith("ami_id"):
        return "ami-" + stable_hex("ssm", name, ctx.region)
    if tail in ("image_version", "release_version"):
        return f"{DEFAULT_EKS_VERSION}.0-{stable_hex('ssm', name, length=8)}"
    raise MockValueError(
        f"aws:ssm/getParameter:getParameter: no mock value for SSM parameter {name!r}; the mocks answer "
        "AMI id parameters (ending in /image_id or /ami-id) and image/release versions. Add a rule to "
        "_ssm_parameter_value in tools/mocks.py"
    )


def _get_parameter(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    name = str(args["name"])
    value = _ssm_parameter_value(name, ctx)
    return {
        "arn": ctx.arn("ssm", f"parameter/{name.lstrip('/')}"),
        "id": name,
        "name": name,
        "type": "String",
        "value": value,
        "insecureValue": value,
        "version": 1,
        "withDecryption": bool(args.get("withDecryption", True)),
    }


def _get_ami(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    key = json.dumps(args, sort_keys=True, default=str)
    image_id = "ami-" + stable_hex("ami", key, ctx.region)
    return {
        "id": image_id,
        "imageId": image_id,
        "arn": ctx.arn("ec2", f"image/{image_id}", account=False),
        "architecture": "x86_64",
        "name": f"mock-image-{stable_hex('ami-name', key, length=8)}",
        "ownerId": ctx.account,
        "rootDeviceName": "/dev/xvda",
        "state": "available",
        "virtualizationType": "hvm",
        "creationDate": CREATED_AT,
    }


def _get_availability_zones(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    # Four zones, as us-west-2 has; zone ids use the region's short form (usw2-az1 ...).
    letters = "abcd"
    names = [f"{ctx.region}{letter}" for letter in letters]
    zone_ids = [f"{zone_id_prefix(ctx.region)}-az{i + 1}" for i in range(len(letters))]
    excluded = set(args.get("excludeNames") or []) | set(args.get("excludeZoneIds") or [])
    pairs = [(n, z) for n, z in zip(names, zone_ids, strict=True) if n not in excluded and z not in excluded]
    return {
        "id": ctx.region,
        "names": [n for n, _ in pairs],
        "zoneIds": [z for _, z in pairs],
        "groupNames": [ctx.region] * len(pairs),
        "state": args.get("state", "available"),
    }


def _get_caller_identity(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    return {
        "id": ctx.account,
        "accountId": ctx.account,
        "arn": f"arn:{ctx.partition}:sts::{ctx.account}:assumed-role/gpu-platform-preview/offline",
        "userId": "AROA" + stable_hex("caller", ctx.account, length=17).upper() + ":offline",
    }


def _get_partition(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    return {"id": ctx.partition, "partition": ctx.partition, "dnsSuffix": "amazonaws.com",
            "reverseDnsPrefix": "com.amazonaws"}


def _get_region(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    region = str(args.get("region") or args.get("name") or ctx.region)
    return {
        "id": region,
        "name": region,
        "region": region,
        "endpoint": f"ec2.{region}.amazonaws.com",
        "description": region,
    }


def _eks_cluster_description(name: str, ctx: MockContext) -> dict[str, Any]:
    cluster_cfg = ctx.config.get("cluster")
    version = DEFAULT_EKS_VERSION
    if isinstance(cluster_cfg, Mapping) and isinstance(cluster_cfg.get("kubernetesVersion"), str):
        version = cluster_cfg["kubernetesVersion"]
    vpc_id = "vpc-" + stable_hex("existing-vpc", name, ctx.region)
    return {
        "id": name,
        "name": name,
        "arn": ctx.arn("eks", f"cluster/{name}"),
        "endpoint": eks_endpoint(name, ctx.region),
        "certificateAuthorities": [{"data": certificate_authority(name)}],
        "identities": [{"oidcs": [{"issuer": eks_oidc_issuer(name, ctx.region)}]}],
        "version": version,
        "platformVersion": "eks.1",
        "status": "ACTIVE",
        "createdAt": CREATED_AT,
        "roleArn": f"arn:{ctx.partition}:iam::{ctx.account}:role/{name}-cluster",
        "accessConfigs": [{"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": False}],
        "kubernetesNetworkConfigs": [{"ipFamily": "ipv4", "serviceIpv4Cidr": "172.20.0.0/16", "serviceIpv6Cidr": ""}],
        "vpcConfig": {
            "clusterSecurityGroupId": "sg-" + stable_hex("existing-cluster-sg", name, ctx.region),
            "endpointPrivateAccess": True,
            "endpointPublicAccess": False,
            "publicAccessCidrs": [],
            "securityGroupIds": [],
            "subnetIds": ["subnet-" + stable_hex("existing-subnet", name, i) for i in range(3)],
            "vpcId": vpc_id,
        },
        "enabledClusterLogTypes": [],
        "tags": {},
    }


def _get_eks_cluster(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    return _eks_cluster_description(str(args["name"]), ctx)


def _get_eks_cluster_auth(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    name = str(args["name"])
    return {"id": name, "name": name, "token": "k8s-aws-v1." + stable_hex("token", name, length=64)}


def _one_or_list(values: list[Any]) -> Any:
    return values[0] if len(values) == 1 else values


def _statement(stmt: Mapping[str, Any]) -> dict[str, Any]:
    """One `getPolicyDocument` statement rendered as IAM JSON, key order as the AWS provider writes it.

    Source: https://registry.terraform.io/providers/hashicorp/aws/latest/docs/data-sources/iam_policy_document
    """
    out: dict[str, Any] = {}
    if stmt.get("sid"):
        out["Sid"] = stmt["sid"]
    out["Effect"] = stmt.get("effect") or "Allow"
    for key, field_name in (("actions", "Action"), ("notActions", "NotAction"), ("resources", "Resource"),
                            ("notResources", "NotResource")):
        values = stmt.get(key)
        if values:
            out[field_name] = _one_or_list(sorted(values) if key.endswith("ctions") else list(values))
    for key, field_name in (("principals", "Principal"), ("notPrincipals", "NotPrincipal")):
        principals = stmt.get(key)
        if principals:
            rendered: dict[str, Any] = {}
            for p in principals:
                identifiers = list(p.get("identifiers") or [])
                if p.get("type") == "*" and identifiers == ["*"]:
                    rendered = {"*": "*"}
                    break
                rendered.setdefault(p["type"], []).extend(identifiers)
            out[field_name] = "*" if rendered == {"*": "*"} else {k: _one_or_list(v) for k, v in rendered.items()}
    conditions = stmt.get("conditions")
    if conditions:
        cond: dict[str, dict[str, Any]] = {}
        for c in conditions:
            cond.setdefault(c["test"], {})[c["variable"]] = _one_or_list(list(c.get("values") or []))
        out["Condition"] = cond
    return out


def _get_policy_document(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    statements: list[dict[str, Any]] = []
    for source in args.get("sourcePolicyDocuments") or []:
        statements.extend(json.loads(source).get("Statement", []))
    statements.extend(_statement(s) for s in args.get("statements") or [])
    for override in args.get("overridePolicyDocuments") or []:
        for stmt in json.loads(override).get("Statement", []):
            sid = stmt.get("Sid")
            statements = [s for s in statements if not sid or s.get("Sid") != sid] + [stmt]
    doc: dict[str, Any] = {"Version": args.get("version") or "2012-10-17"}
    if args.get("policyId"):
        doc["Id"] = args["policyId"]
    doc["Statement"] = statements
    pretty = json.dumps(doc, indent=2)
    return {"id": stable_hex("policy-document", pretty, length=10), "json": pretty,
            "minifiedJson": json.dumps(doc, separators=(",", ":"))}


def _get_subnets(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    key = json.dumps(args, sort_keys=True, default=str)
    return {"id": ctx.region, "ids": ["subnet-" + stable_hex("subnets", key, i) for i in range(3)]}


def _get_subnet(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    key = json.dumps(args, sort_keys=True, default=str)
    subnet_id = str(args.get("id") or "subnet-" + stable_hex("subnet", key))
    return {
        "id": subnet_id,
        "arn": ctx.arn("ec2", f"subnet/{subnet_id}"),
        "vpcId": "vpc-" + stable_hex("subnet-vpc", key),
        "availabilityZone": f"{ctx.region}a",
        "availabilityZoneId": f"{zone_id_prefix(ctx.region)}-az1",
        "cidrBlock": "10.0.0.0/20",
        "mapPublicIpOnLaunch": False,
        "tags": {},
    }


def _get_vpc(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    key = json.dumps(args, sort_keys=True, default=str)
    vpc_id = str(args.get("id") or "vpc-" + stable_hex("vpc", key))
    return {
        "id": vpc_id,
        "arn": ctx.arn("ec2", f"vpc/{vpc_id}"),
        "cidrBlock": "10.0.0.0/16",
        "default": bool(args.get("default", False)),
        "enableDnsHostnames": True,
        "enableDnsSupport": True,
        "mainRouteTableId": "rtb-" + stable_hex("vpc-rtb", vpc_id),
        "ownerId": ctx.account,
        "tags": {},
    }


def _get_kms_key(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    ref = str(args["keyId"])
    key_id = stable_uuid("kms", ref) if ref.startswith("alias/") or ":alias/" in ref else ref.rsplit("/", 1)[-1]
    arn = ctx.arn("kms", f"key/{key_id}")
    return {"id": key_id, "keyId": ref, "arn": arn, "enabled": True, "keyState": "Enabled",
            "keyUsage": "ENCRYPT_DECRYPT", "keySpec": "SYMMETRIC_DEFAULT", "keyManager": "CUSTOMER"}


def _get_kms_alias(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    name = str(args["name"])
    key_id = stable_uuid("kms", name)
    return {"id": name, "name": name, "arn": ctx.arn("kms", name), "targetKeyId": key_id,
            "targetKeyArn": ctx.arn("kms", f"key/{key_id}")}


def _get_iam_role(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    name = str(args["name"])
    return {"id": name, "name": name, "arn": f"arn:{ctx.partition}:iam::{ctx.account}:role/{name}",
            "uniqueId": "AROA" + stable_hex("role", name).upper(), "path": "/", "createDate": CREATED_AT}


def _get_session_context(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    arn = str(args["arn"])
    return {"id": arn, "arn": arn, "issuerArn": arn, "issuerId": "AROA" + stable_hex("session", arn).upper(),
            "issuerName": arn.rsplit("/", 1)[-1], "sessionName": ""}


def _eks_kubeconfig_method(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    cluster = args.get("__self__")
    name = getattr(cluster, "_name", None) or "cluster"
    return {"result": json.dumps(kubeconfig(str(name), ctx.region))}


# ---- INVOKES: token -> handler. Add an entry here when a program calls a function the mocks do not know.
INVOKES: dict[str, InvokeHandler] = {
    "aws:ssm/getParameter:getParameter": _get_parameter,
    "aws:ec2/getAmi:getAmi": _get_ami,
    "aws:index/getAvailabilityZones:getAvailabilityZones": _get_availability_zones,
    "aws:index/getCallerIdentity:getCallerIdentity": _get_caller_identity,
    "aws:index/getPartition:getPartition": _get_partition,
    "aws:index/getRegion:getRegion": _get_region,
    "aws:eks/getCluster:getCluster": _get_eks_cluster,
    "aws:eks/getClusterAuth:getClusterAuth": _get_eks_cluster_auth,
    "aws:iam/getPolicyDocument:getPolicyDocument": _get_policy_document,
    "aws:iam/getRole:getRole": _get_iam_role,
    "aws:iam/getSessionContext:getSessionContext": _get_session_context,
    "aws:ec2/getSubnets:getSubnets": _get_subnets,
    "aws:ec2/getSubnet:getSubnet": _get_subnet,
    "aws:ec2/getVpc:getVpc": _get_vpc,
    "aws:kms/getKey:getKey": _get_kms_key,
    "aws:kms/getAlias:getAlias": _get_kms_alias,
    "eks:index:Cluster/getKubeconfig": _eks_kubeconfig_method,
    "aws:cloudwatch/getLogGroups:getLogGroups": lambda args, ctx: _mocks_eks().get_log_groups(args, ctx.region),
}
# ---- end INVOKES


# --------------------------------------------------------------------------------------------------
# RESOURCE_OUTPUTS table: what the provider answers for a created resource
# --------------------------------------------------------------------------------------------------

# EC2 id prefixes. Source: https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_Types.html (resource ids)
EC2_ID_PREFIXES: dict[str, str] = {
    "aws:ec2/vpc:Vpc": "vpc",
    "aws:ec2/subnet:Subnet": "subnet",
    "aws:ec2/securityGroup:SecurityGroup": "sg",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "sgr",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "sgr",
    "aws:ec2/securityGroupRule:SecurityGroupRule": "sgrule",
    "aws:ec2/internetGateway:InternetGateway": "igw",
    "aws:ec2/natGateway:NatGateway": "nat",
    "aws:ec2/eip:Eip": "eipalloc",
    "aws:ec2/routeTable:RouteTable": "rtb",
    "aws:ec2/routeTableAssociation:RouteTableAssociation": "rtbassoc",
    "aws:ec2/route:Route": "r-rtb",
    "aws:ec2/launchTemplate:LaunchTemplate": "lt",
    "aws:ec2/vpcEndpoint:VpcEndpoint": "vpce",
    "aws:ec2/networkAcl:NetworkAcl": "acl",
    "aws:ec2/flowLog:FlowLog": "fl",
    "aws:ebs/volume:Volume": "vol",
    "aws:ebs/snapshot:Snapshot": "snap",
    "aws:ec2/instance:Instance": "i",
    "aws:ec2/placementGroup:PlacementGroup": "pg",
}

# ARN resource part per type ({name}: physical name, {id}: the id). Region-less services say so.
# Source: https://docs.aws.amazon.com/service-authorization/latest/reference/reference_policies_actions-resources-contextkeys.html
ARN_FORMATS: dict[str, tuple[str, str, bool]] = {
    # type: (service, resource part, regional)
    "aws:iam/role:Role": ("iam", "role/{name}", False),
    "aws:iam/policy:Policy": ("iam", "policy/{name}", False),
    "aws:iam/instanceProfile:InstanceProfile": ("iam", "instance-profile/{name}", False),
    "aws:iam/user:User": ("iam", "user/{name}", False),
    "aws:eks/cluster:Cluster": ("eks", "cluster/{name}", True),
    "aws:eks/fargateProfile:FargateProfile": ("eks", "fargateprofile/{cluster}/{name}/{uuid}", True),
    "aws:eks/nodeGroup:NodeGroup": ("eks", "nodegroup/{cluster}/{name}/{uuid}", True),
    "aws:eks/addon:Addon": ("eks", "addon/{cluster}/{name}/{uuid}", True),
    "aws:eks/accessEntry:AccessEntry": ("eks", "access-entry/{cluster}/role/{account}/{name}/{uuid}", True),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": ("eks", "podidentityassociation/{cluster}/{id}", True),
    "aws:kms/key:Key": ("kms", "key/{id}", True),
    "aws:kms/alias:Alias": ("kms", "{name}", True),
    "aws:sqs/queue:Queue": ("sqs", "{name}", True),
    "aws:sns/topic:Topic": ("sns", "{name}", True),
    "aws:cloudwatch/eventRule:EventRule": ("events", "rule/{name}", True),
    "aws:cloudwatch/logGroup:LogGroup": ("logs", "log-group:{name}", True),
    "aws:wafv2/webAcl:WebAcl": ("wafv2", "regional/webacl/{name}/{id}", True),
    "aws:wafv2/ipSet:IpSet": ("wafv2", "regional/ipset/{name}/{id}", True),
    "aws:ecr/repository:Repository": ("ecr", "repository/{name}", True),
    "aws:ssm/parameter:Parameter": ("ssm", "parameter/{name}", True),
    "aws:lb/loadBalancer:LoadBalancer": ("elasticloadbalancing", "loadbalancer/app/{name}/{hex16}", True),
    "aws:lb/targetGroup:TargetGroup": ("elasticloadbalancing", "targetgroup/{name}/{hex16}", True),
    "aws:acm/certificate:Certificate": ("acm", "certificate/{id}", True),
    "aws:secretsmanager/secret:Secret": ("secretsmanager", "secret:{name}-{hex6}", True),
    "aws:autoscaling/group:Group": ("autoscaling", "autoScalingGroup:{uuid}:autoScalingGroupName/{name}", True),
}


# Types whose id is a UUID the service generates.
UUID_ID_TYPES = frozenset({"aws:kms/key:Key", "aws:wafv2/webAcl:WebAcl", "aws:wafv2/ipSet:IpSet",
                           "aws:acm/certificate:Certificate"})


def _cluster_name(req: ResourceRequest) -> str:
    value = req.inputs.get("clusterName") or req.inputs.get("cluster")
    return str(value) if isinstance(value, str) else "cluster"


def _arn(req: ResourceRequest, name: str, id_: str) -> str | None:
    ctx = req.ctx
    fmt = ARN_FORMATS.get(req.type)
    if fmt is None:
        if req.type in EC2_ID_PREFIXES:
            resource = req.type.rsplit(":", 1)[-1]
            kebab = "".join("-" + c.lower() if c.isupper() else c for c in resource).lstrip("-")
            return ctx.arn("ec2", f"{kebab}/{id_}")
        return None
    service, resource, regional = fmt
    part = resource.format(
        name=name, id=id_, cluster=_cluster_name(req), account=ctx.account, uuid=stable_uuid(req.type, req.urn),
        hex16=req.h(length=16), hex6=req.h(length=6),
    )
    return ctx.arn(service, part, region=regional)


def _aws_default(req: ResourceRequest) -> dict[str, Any]:
    """Outputs every AWS resource gets: id, arn (where the type has one), the physical name, tagsAll."""
    name = req.physical_name()
    prefix = EC2_ID_PREFIXES.get(req.type)
    if prefix is not None:
        id_ = f"{prefix}-{req.h()}"
    elif req.type in UUID_ID_TYPES:
        id_ = stable_uuid(req.type, req.urn)
    else:
        id_ = name
    out: dict[str, Any] = {"id": id_}
    arn = _arn(req, name, id_)
    if arn is not None:
        out["arn"] = arn
    if "name" in req.inputs or req.type in ARN_FORMATS:
        out["name"] = name
    tags = req.inputs.get("tags")
    if isinstance(tags, dict):
        out["tagsAll"] = dict(tags)
    return out


def _eks_cluster(req: ResourceRequest) -> dict[str, Any]:
    out = _aws_default(req)
    name = out["name"]
    vpc = dict(req.inputs.get("vpcConfig") or {})
    subnet_ids = vpc.get("subnetIds") or []
    vpc.setdefault("endpointPrivateAccess", False)
    vpc.setdefault("endpointPublicAccess", True)
    vpc.setdefault("publicAccessCidrs", ["0.0.0.0/0"] if vpc["endpointPublicAccess"] else [])
    vpc["clusterSecurityGroupId"] = "sg-" + req.h("cluster-sg")
    vpc["vpcId"] = "vpc-" + stable_hex("subnet-vpc", *subnet_ids) if subnet_ids else "vpc-" + req.h("vpc")
    out.update(
        {
            "id": name,
            "endpoint": eks_endpoint(name, req.ctx.region),
            "certificateAuthority": {"data": certificate_authority(name)},
            "identities": [{"oidcs": [{"issuer": eks_oidc_issuer(name, req.ctx.region)}]}],
            "version": req.inputs.get("version") or DEFAULT_EKS_VERSION,
            "platformVersion": "eks.1",
            "status": "ACTIVE",
            "createdAt": CREATED_AT,
            "clusterId": stable_uuid("cluster-id", req.urn),
            "vpcConfig": vpc,
        }
    )
    return out


def _mocks_eks() -> Any:
    import tools.mocks_eks  # noqa: PLC0415 - tools.mocks_eks imports this module

    return tools.mocks_eks


def _eks_component_cluster(req: ResourceRequest) -> dict[str, Any]:
    ctx = req.ctx
    outputs: dict[str, Any] = _mocks_eks().eks_cluster_outputs(
        req.name, req.inputs, region=ctx.region, partition=ctx.partition, account=ctx.account)
    return outputs


def _launch_template(req: ResourceRequest) -> dict[str, Any]:
    out = _aws_default(req)
    out.update({"latestVersion": 1, "defaultVersion": 1})
    return out


def _iam_role(req: ResourceRequest) -> dict[str, Any]:
    out = _aws_default(req)
    out.update({"uniqueId": "AROA" + req.h().upper(), "createDate": CREATED_AT})
    return out


def _iam_policy(req: ResourceRequest) -> dict[str, Any]:
    out = _aws_default(req)
    out.update({"id": out["arn"], "policyId": "ANPA" + req.h().upper(), "attachmentCount": 0})
    return out


def _oidc_provider(req: ResourceRequest) -> dict[str, Any]:
    url = str(req.inputs.get("url") or "oidc.example").removeprefix("https://")
    arn = f"arn:{req.ctx.partition}:iam::{req.ctx.account}:oidc-provider/{url}"
    return {"id": arn, "arn": arn}


def _vpc(req: ResourceRequest) -> dict[str, Any]:
    out = _aws_default(req)
    out.update(
        {
            "defaultSecurityGroupId": "sg-" + req.h("default-sg"),
            "defaultRouteTableId": "rtb-" + req.h("main-rtb"),
            "mainRouteTableId": "rtb-" + req.h("main-rtb"),
            "defaultNetworkAclId": "acl-" + req.h("acl"),
            "ownerId": req.ctx.account,
        }
    )
    return out


def _subnet(req: ResourceRequest) -> dict[str, Any]:
    out = _aws_default(req)
    zone = req.inputs.get("availabilityZone")
    if isinstance(zone, str) and zone.startswith(req.ctx.region):
        out["availabilityZoneId"] = f"{zone_id_prefix(req.ctx.region)}-az{'abcdef'.find(zone[-1]) + 1}"
    out["ownerId"] = req.ctx.account
    return out


def _node_group(req: ResourceRequest) -> dict[str, Any]:
    out = _aws_default(req)
    name = req.physical_name("nodeGroupName")
    cluster = _cluster_name(req)
    out.update(
        {
            "id": f"{cluster}:{name}",
            "nodeGroupName": name,
            "arn": req.ctx.arn("eks", f"nodegroup/{cluster}/{name}/{stable_uuid(req.type, req.urn)}"),
            "status": "ACTIVE",
            "resources": [{"autoscalingGroups": [{"name": f"eks-{name}-{stable_uuid('asg', req.urn)}"}],
                           "remoteAccessSecurityGroupId": ""}],
        }
    )
    out.pop("name", None)
    return out


def _eks_addon(req: ResourceRequest) -> dict[str, Any]:
    out = _aws_default(req)
    addon = str(req.inputs.get("addonName") or req.name)
    cluster = _cluster_name(req)
    arn = req.ctx.arn("eks", f"addon/{cluster}/{addon}/{stable_uuid(req.urn)}")
    out.update({"id": f"{cluster}:{addon}", "arn": arn, "createdAt": CREATED_AT, "modifiedAt": CREATED_AT})
    out.pop("name", None)
    return out


def _access_entry(req: ResourceRequest) -> dict[str, Any]:
    cluster = _cluster_name(req)
    principal = str(req.inputs.get("principalArn") or req.name)
    role = principal.rsplit("/", 1)[-1]
    arn = req.ctx.arn("eks", f"access-entry/{cluster}/role/{req.ctx.account}/{role}/{stable_uuid(req.urn)}")
    session_user = f"arn:aws:sts::{req.ctx.account}:assumed-role/{role}/{{{{SessionName}}}}"
    return {
        "id": f"{cluster}:{principal}",
        "accessEntryArn": arn,
        "createdAt": CREATED_AT,
        "modifiedAt": CREATED_AT,
        "type": req.inputs.get("type") or "STANDARD",
        "userName": req.inputs.get("userName") or session_user,
    }


def _pod_identity(req: ResourceRequest) -> dict[str, Any]:
    cluster = _cluster_name(req)
    association_id = "a-" + req.h(length=17)
    arn = req.ctx.arn("eks", f"podidentityassociation/{cluster}/{association_id}")
    return {"id": f"{cluster},{association_id}", "associationId": association_id, "associationArn": arn}


def _kms_key(req: ResourceRequest) -> dict[str, Any]:
    out = _aws_default(req)
    out.update({"keyId": out["id"]})
    out.pop("name", None)
    return out


def _kms_alias(req: ResourceRequest) -> dict[str, Any]:
    out = _aws_default(req)
    target = req.inputs.get("targetKeyId")
    if isinstance(target, str):
        out["targetKeyArn"] = target if target.startswith("arn:") else req.ctx.arn("kms", f"key/{target}")
    return out


def _sqs_queue(req: ResourceRequest) -> dict[str, Any]:
    out = _aws_default(req)
    url = f"https://sqs.{req.ctx.region}.amazonaws.com/{req.ctx.account}/{out['name']}"
    out.update({"id": url, "url": url})
    return out


def _snapshot(req: ResourceRequest) -> dict[str, Any]:
    out = _aws_default(req)
    out.update({"ownerId": req.ctx.account, "dataEncryptionKeyId": "", "volumeSize": req.inputs.get("volumeSize", 100)})
    return out


def _web_acl(req: ResourceRequest) -> dict[str, Any]:
    out = _aws_default(req)
    out.update({"capacity": 100, "lockToken": stable_uuid("lock", req.urn)})
    return out


def _k8s_object(req: ResourceRequest) -> dict[str, Any]:
    """A Kubernetes object as the API server returns it: metadata filled in, status empty.

    The provider auto-names an object without `metadata.name` as `<logical>-<8 hex>`.
    Source: https://www.pulumi.com/registry/packages/kubernetes/how-to-guides/managing-resources-with-server-side-apply/
    """
    metadata = dict(req.inputs.get("metadata") or {})
    if not metadata.get("name"):
        metadata["name"] = f"{req.name}-{req.h('name', length=8)}"
    metadata.update({"uid": stable_uuid("uid", req.urn), "resourceVersion": "1", "generation": 1,
                     "creationTimestamp": CREATED_AT})
    return {"metadata": metadata, "status": {}}


def _helm_release(req: ResourceRequest) -> dict[str, Any]:
    name = req.inputs.get("name") or f"{req.name}-{req.h('name', length=8)}"
    namespace = req.inputs.get("namespace") or "default"
    chart = str(req.inputs.get("chart") or "")
    version = str(req.inputs.get("version") or "")
    return {
        "name": name,
        "namespace": namespace,
        "status": {
            "name": name,
            "namespace": namespace,
            "chart": chart.rstrip("/").rsplit("/", 1)[-1],
            "version": version,
            "appVersion": version,
            "revision": 1,
            "status": "deployed",
        },
    }


def _provider(req: ResourceRequest) -> dict[str, Any]:
    return {"id": stable_uuid("provider", req.urn)}


# ---- RESOURCE_OUTPUTS: type token -> handler. Types not listed get the defaults of their package.
RESOURCE_OUTPUTS: dict[str, OutputHandler] = {
    "aws:eks/cluster:Cluster": _eks_cluster,
    "eks:index:Cluster": _eks_component_cluster,
    "aws:ec2/launchTemplate:LaunchTemplate": _launch_template,
    "aws:iam/role:Role": _iam_role,
    "aws:iam/policy:Policy": _iam_policy,
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": _oidc_provider,
    "aws:ec2/vpc:Vpc": _vpc,
    "aws:ec2/subnet:Subnet": _subnet,
    "aws:eks/nodeGroup:NodeGroup": _node_group,
    "aws:eks/addon:Addon": _eks_addon,
    "aws:eks/accessEntry:AccessEntry": _access_entry,
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": _pod_identity,
    "aws:kms/key:Key": _kms_key,
    "aws:kms/alias:Alias": _kms_alias,
    "aws:sqs/queue:Queue": _sqs_queue,
    "aws:ebs/snapshot:Snapshot": _snapshot,
    "aws:wafv2/webAcl:WebAcl": _web_acl,
    "kubernetes:helm.sh/v3:Release": _helm_release,
}
# ---- end RESOURCE_OUTPUTS


def _default_outputs(req: ResourceRequest) -> dict[str, Any]:
    if req.type.startswith("pulumi:providers:"):
        return _provider(req)
    if req.type.startswith("aws:"):
        return _aws_default(req)
    if req.type.startswith("kubernetes:") and not req.type.startswith("kubernetes:helm.sh/"):
        return _k8s_object(req)
    return {}


# --------------------------------------------------------------------------------------------------
# Struct -> plain values
# --------------------------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A protobuf Struct/Value as plain JSON-able Python, the way a policy or a reviewer reads it.

    Secrets are unwrapped, resource references become their URN, assets their path/text/uri, unknowns
    stay `UNKNOWN`, and integral numbers become ints (protobuf has only doubles).
    """
    if isinstance(value, struct_pb2.Struct):
        sig = value.fields.get(_SIG_KEY)
        if sig is not None:
            kind = sig.string_value
            if kind == _SIG_SECRET:
                return plain(value.fields["value"]) if "value" in value.fields else None
            if kind == _SIG_RESOURCE:
                return value.fields["urn"].string_value
            if kind in (_SIG_ASSET, _SIG_ARCHIVE):
                return {k: plain(v) for k, v in sorted(value.fields.items()) if k != _SIG_KEY}
            if kind == _SIG_OUTPUT:
                return plain(value.fields["value"]) if "value" in value.fields else UNKNOWN
        return {k: plain(value.fields[k]) for k in sorted(value.fields)}
    if isinstance(value, struct_pb2.ListValue):
        return [plain(v) for v in value.values]
    if isinstance(value, struct_pb2.Value):
        which = value.WhichOneof("kind")
        if which == "struct_value":
            return plain(value.struct_value)
        if which == "list_value":
            return plain(value.list_value)
        if which == "number_value":
            n = value.number_value
            return int(n) if n.is_integer() and abs(n) < 2**53 else n
        if which == "bool_value":
            return value.bool_value
        if which == "string_value":
            return value.string_value
        return None
    return value


def _copy_struct(src: struct_pb2.Struct) -> struct_pb2.Struct:
    dst = struct_pb2.Struct()
    dst.CopyFrom(src)
    return dst


# --------------------------------------------------------------------------------------------------
# The mocks and the monitor
# --------------------------------------------------------------------------------------------------


@dataclass
class RecordingMocks(Mocks):
    """Answers invokes from INVOKES and resources from RESOURCE_OUTPUTS, deterministically.

    `config` is the stack's project config (the `<project>:` keys without the prefix, parsed values),
    read only where a real answer depends on the account (the version an adopted cluster reports).
    """

    region: str = DEFAULT_REGION
    account: str = ACCOUNT_ID
    partition: str = PARTITION
    config: Mapping[str, Any] = field(default_factory=dict)
    invokes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def context(self, region: str | None = None) -> MockContext:
        return MockContext(region=region or self.region, account=self.account, partition=self.partition,
                           config=self.config)

    def answer_invoke(self, token: str, args: dict[str, Any], region: str | None = None) -> dict[str, Any]:
        handler = INVOKES.get(token)
        if handler is None:
            raise UnknownInvokeError(
                f"the program called {token} with {sorted(args)} and the offline mocks have no answer for it; "
                "add a handler for this token to the INVOKES table in tools/mocks.py"
            )
        self.invokes.append((token, args))
        return handler(args, self.context(region))

    def answer_resource(self, req: ResourceRequest) -> tuple[str, dict[str, Any]]:
        handler = RESOURCE_OUTPUTS.get(req.type, _default_outputs)
        outputs = handler(req)
        if not req.custom:
            return "", outputs
        id_ = str(outputs.get("id") or f"{req.name}-{req.h(length=8)}")
        return id_, outputs

    # The pulumi.runtime.Mocks interface, for callers that use the stock MockMonitor.
    def call(self, args: MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return self.answer_invoke(args.token, dict(args.args)), None

    def new_resource(self, args: MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        req = ResourceRequest(type=args.typ, name=args.name, urn=f"urn:pulumi:mock::mock::{args.typ}::{args.name}",
                              inputs=dict(args.inputs), custom=bool(args.custom), remote=False,
                              ctx=self.context())
        return self.answer_resource(req)


class RecordingMonitor(MockMonitor):
    """A MockMonitor that keeps every registration as a RecordedResource (see the module docstring)."""

    mocks: RecordingMocks

    def __init__(self, mocks: RecordingMocks) -> None:
        super().__init__(mocks)
        self.mocks = mocks
        self.recorded: dict[str, RecordedResource] = {}
        self.order: list[str] = []
        self.resource_outputs: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._provider_regions: dict[str, str] = {}

    # -- helpers ----------------------------------------------------------------------------------

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The URN the engine builds: the parent's full qualified type chain, the root stack left out.

        (The SDK's MockMonitor keeps only the parent's last type and includes the stack.)
        Source: https://github.com/pulumi/pulumi/blob/master/sdk/go/common/resource/urn.go (NewURN)
        """
        qualified = type_
        if parent:
            parent_type = parent.split("::")[2]
            if parent_type != "pulumi:pulumi:Stack":
                qualified = f"{parent_type}${type_}"
        return f"urn:pulumi:{get_stack()}::{get_project()}::{qualified}::{name}"

    def _region_for(self, provider_ref: str) -> str | None:
        return self._provider_regions.get(provider_ref.rsplit("::", 1)[0]) if provider_ref else None

    def _record(self, res: RecordedResource) -> None:
        with self._lock:
            if res.urn in self.recorded:
                raise ValueError(
                    f"duplicate resource URN {res.urn}: two resources of type {res.type} named {res.name!r} "
                    "under the same parent; give them distinct names"
                )
            self.recorded[res.urn] = res
            self.order.append(res.urn)

    def _outputs_struct(self, outputs: dict[str, Any]) -> struct_pb2.Struct:
        result: struct_pb2.Struct = _sync_await(rpc.serialize_properties(outputs, {}))
        return result

    # -- ResourceMonitor --------------------------------------------------------------------------

    def RegisterResource(self, request: Any) -> Any:
        urn = self.make_urn(request.parent, request.type, request.name)
        _ensure_event_loop()  # type: ignore[no-untyped-call]
        inputs = plain(request.object)
        base = {
            "urn": urn,
            "type": request.type,
            "name": request.name,
            "parent": request.parent or None,
            "custom": bool(request.custom),
            "inputs": inputs,
            "properties": _copy_struct(request.object),
            "provider": request.provider,
            "protect": bool(request.protect),
            "dependencies": tuple(request.dependencies),
            "property_dependencies": {k: tuple(v.urns) for k, v in request.propertyDependencies.items()},
            "remote": bool(request.remote),
        }
        if request.type == "pulumi:pulumi:Stack":
            self._record(RecordedResource(**base))
            return resource_pb2.RegisterResourceResponse(urn=urn)

        if request.type.startswith("pulumi:providers:") and isinstance(inputs.get("region"), str):
            self._provider_regions[urn] = inputs["region"]
        req = ResourceRequest(type=request.type, name=request.name, urn=urn, inputs=inputs,
                              custom=bool(request.custom), remote=bool(request.remote),
                              ctx=self.mocks.context(self._region_for(request.provider)))
        id_, outputs = self.mocks.answer_resource(req)
        # A custom resource answers with its inputs plus the provider's outputs; a remote component with
        # the outputs its provider registers; a local component only has what it passes to register_outputs.
        state: dict[str, Any] = {}
        if request.custom:
            state = {**inputs, **outputs}
        elif request.remote:
            state = dict(outputs)
        state.pop("id", None)
        self._record(RecordedResource(**base, id=id_, outputs=outputs))
        self.resources[urn] = MockMonitor.ResourceRegistration(urn, id_, state)
        return resource_pb2.RegisterResourceResponse(urn=urn, id=id_, object=self._outputs_struct(state))

    def ReadResource(self, request: Any) -> Any:
        urn = self.make_urn(request.parent, request.type, request.name)
        _ensure_event_loop()  # type: ignore[no-untyped-call]
        inputs = plain(request.properties)
        req = ResourceRequest(type=request.type, name=request.name, urn=urn, inputs=inputs, custom=True,
                              remote=False, ctx=self.mocks.context(self._region_for(request.provider)))
        _, outputs = self.mocks.answer_resource(req)
        if request.type == "aws:eks/cluster:Cluster":
            outputs = {**outputs, **_eks_cluster_description(request.id, req.ctx)}
        state = {**inputs, **outputs, "id": request.id}
        self._record(
            RecordedResource(
                urn=urn, type=request.type, name=request.name, parent=request.parent or None, custom=True,
                inputs=inputs, properties=_copy_struct(request.properties), provider=request.provider,
                dependencies=tuple(request.dependencies), id=request.id, outputs=state, read=True,
            )
        )
        self.resources[urn] = MockMonitor.ResourceRegistration(urn, request.id, state)
        return resource_pb2.ReadResourceResponse(urn=urn, properties=self._outputs_struct(state))

    def RegisterResourceOutputs(self, request: Any) -> Any:
        with self._lock:
            self.resource_outputs[request.urn] = plain(request.outputs)
        return empty_pb2.Empty()

    def Invoke(self, request: Any) -> Any:
        if request.tok == "pulumi:pulumi:getResource":
            return super().Invoke(request)  # type: ignore[no-untyped-call]
        _ensure_event_loop()  # type: ignore[no-untyped-call]
        args = plain(request.args)
        ret = self.mocks.answer_invoke(request.tok, args, self._region_for(request.provider))
        response = resource_pb2.ResourceInvokeResponse()
        getattr(response, "return").CopyFrom(self._outputs_struct(ret))  # `return` is a Python keyword
        return response

    def Call(self, request: Any) -> Any:
        _ensure_event_loop()  # type: ignore[no-untyped-call]
        args = rpc.deserialize_properties(request.args)
        ret = self.mocks.answer_invoke(request.tok, args, self._region_for(request.provider))
        response = provider_pb2.CallResponse()
        getattr(response, "return").CopyFrom(self._outputs_struct(ret))
        return response

    # -- results ----------------------------------------------------------------------------------

    def resources_in_order(self) -> list[RecordedResource]:
        with self._lock:
            return [self.recorded[u] for u in self.order]
