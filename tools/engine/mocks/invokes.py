"""INVOKES: what the offline mocks answer for provider functions (data sources) and component methods.

Add an entry when a program calls a function the mocks do not know; `tools.engine.mocks.monitor.RecordingMocks`
looks the token up here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pulumi

from tools.engine.mocks.values import (
    CREATED_AT,
    DEFAULT_EKS_VERSION,
    DEPLOY_ROLE,
    InvokeFailure,
    InvokeHandler,
    MockContext,
    certificate_authority,
    eks_endpoint,
    eks_oidc_issuer,
    kubeconfig,
    stable_hex,
    stable_uuid,
    zone_id_prefix,
)


class MockValueError(Exception):
    """An invoke the mocks know was called with arguments they cannot answer realistically."""


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
        "_ssm_parameter_value in tools/engine/mocks/monitor.py"
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


def offline_caller_role() -> str:
    """The name of the role the offline program runs as: the stack's deploy role (values.DEPLOY_ROLE)."""
    return DEPLOY_ROLE.format(stack=pulumi.get_stack())


def _get_caller_identity(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    return {
        "id": ctx.account,
        "accountId": ctx.account,
        "arn": f"arn:{ctx.partition}:sts::{ctx.account}:assumed-role/{offline_caller_role()}/offline",
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


def eks_cluster_description(name: str, ctx: MockContext) -> dict[str, Any]:
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
    return eks_cluster_description(str(args["name"]), ctx)


def _existing_cluster(ctx: MockContext) -> str | None:
    """The cluster the offline account already has: the stack's own when it adopts one (`existing: true`)."""
    cluster_cfg = ctx.config.get("cluster")
    if isinstance(cluster_cfg, Mapping) and cluster_cfg.get("existing") is True:
        return str(cluster_cfg.get("name") or "")
    return None


def _get_eks_clusters(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    # A first preview's account has no cluster of the stack's name unless the stack adopts one.
    existing = _existing_cluster(ctx)
    return {"id": ctx.region, "names": [existing] if existing else []}


def _get_access_entry(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    # The adopted cluster holds one access entry: its creator's, the offline caller's role (_get_caller_identity).
    # Any other principal: the AWS provider's not-found error.
    # Source: https://github.com/hashicorp/terraform-provider-aws/blob/main/internal/service/eks/access_entry.go
    cluster, principal = str(args["clusterName"]), str(args["principalArn"])
    role = offline_caller_role()
    creator = f"arn:{ctx.partition}:iam::{ctx.account}:role/{role}"
    if cluster != _existing_cluster(ctx) or principal != creator:
        raise InvokeFailure(f"reading EKS Access Entry ({cluster}:{principal}): couldn't find resource")
    return {"id": f"{cluster}:{principal}", "clusterName": cluster, "principalArn": principal, "type": "STANDARD",
            "accessEntryArn": ctx.arn("eks", f"access-entry/{cluster}/role/{ctx.account}/{role}/x"),
            "kubernetesGroups": [], "userName": principal, "createdAt": CREATED_AT, "modifiedAt": CREATED_AT,
            "tags": {}, "tagsAll": {}}


def _get_node_groups(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    # The offline account holds no node group of the stack's yet (an adopted cluster's are not the stack's).
    return {"id": str(args["clusterName"]), "clusterName": str(args["clusterName"]), "names": []}


def _get_auto_scaling_groups(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    # aws:autoscaling/getAmiIds is the aws_autoscaling_groups data source: no group of the stack's yet.
    return {"id": ctx.region, "arns": [], "names": [], "filters": args.get("filters")}


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


# IAM roles the offline account holds, by path (the stack's own roles are registered, not listed here). By default
# none under /aws-service-role/: an account that never ran Spot, so `karpenter.spotServiceLinkedRole: create`
# (the shipped stacks' default) goes through (components/deploy_checks.py). Tests answer with `roles_answer`
# for an account that holds AWSServiceRoleForEC2Spot.
ACCOUNT_ROLES: tuple[tuple[str, str], ...] = ()


def roles_answer(roles: tuple[tuple[str, str], ...]) -> InvokeHandler:
    """A `getRoles` handler for an account holding `roles` ((path, name) pairs)."""
    def get_roles(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
        # ListRoles matches PathPrefix on the path; name_regex filters what it returns, in the provider.
        # Source: https://docs.aws.amazon.com/IAM/latest/APIReference/API_ListRoles.html
        # Source: https://registry.terraform.io/providers/hashicorp/aws/latest/docs/data-sources/iam_roles
        prefix = str(args.get("pathPrefix") or "/")
        pattern = re.compile(str(args["nameRegex"])) if args.get("nameRegex") else None
        found = sorted((path, name) for path, name in roles
                       if path.startswith(prefix) and (pattern is None or pattern.search(name)))
        return {"id": ctx.region, "pathPrefix": args.get("pathPrefix"), "nameRegex": args.get("nameRegex"),
                "names": [name for _, name in found],
                "arns": [f"arn:{ctx.partition}:iam::{ctx.account}:role{path}{name}" for path, name in found]}
    return get_roles


def _get_session_context(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    # An assumed-role session's issuer is the role (path dropped in the session ARN); any other ARN is its own.
    # Source: https://registry.terraform.io/providers/hashicorp/aws/latest/docs/data-sources/iam_session_context
    arn = str(args["arn"])
    session = _ASSUMED_ROLE.match(arn)
    issuer = f"arn:{session[1]}:iam::{session[2]}:role/{session[3]}" if session else arn
    return {"id": arn, "arn": arn, "issuerArn": issuer, "issuerId": "AROA" + stable_hex("session", arn).upper(),
            "issuerName": issuer.rsplit("/", 1)[-1], "sessionName": session[4] if session else ""}


_ASSUMED_ROLE = re.compile(r"^arn:([^:]+):sts::(\d{12}):assumed-role/([^/]+)/(.+)$")


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
    "aws:eks/getClusters:getClusters": _get_eks_clusters,
    "aws:eks/getAccessEntry:getAccessEntry": _get_access_entry,
    "aws:eks/getNodeGroups:getNodeGroups": _get_node_groups,
    "aws:autoscaling/getAmiIds:getAmiIds": _get_auto_scaling_groups,
    "aws:iam/getPolicyDocument:getPolicyDocument": _get_policy_document,
    "aws:iam/getRole:getRole": _get_iam_role,
    "aws:iam/getRoles:getRoles": roles_answer(ACCOUNT_ROLES),
    "aws:iam/getSessionContext:getSessionContext": _get_session_context,
    "aws:ec2/getSubnets:getSubnets": _get_subnets,
    "aws:ec2/getSubnet:getSubnet": _get_subnet,
    "aws:ec2/getVpc:getVpc": _get_vpc,
    "aws:kms/getKey:getKey": _get_kms_key,
    "aws:kms/getAlias:getAlias": _get_kms_alias,
    "eks:index:Cluster/getKubeconfig": _eks_kubeconfig_method,
}
# ---- end INVOKES

