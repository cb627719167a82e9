"""RESOURCE_OUTPUTS: what the offline mocks answer as a provider's outputs for a created resource.

A dispatch table by resource type token. Another module adds a type with one line:

    register_outputs("eks:index:Cluster", eks_cluster_outputs)

where the handler takes a `ResourceRequest` and returns the outputs (see `tools/engine/mocks/eks.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tools.engine.mocks.values import (
    CREATED_AT,
    DEFAULT_EKS_VERSION,
    OutputHandler,
    ResourceRequest,
    certificate_authority,
    eks_endpoint,
    eks_oidc_issuer,
    stable_hex,
    stable_uuid,
    zone_id_prefix,
)

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
    zone_id = req.inputs.get("availabilityZoneId")
    prefix = f"{zone_id_prefix(req.ctx.region)}-az"
    if isinstance(zone_id, str) and zone_id.startswith(prefix) and zone_id[len(prefix):].isdigit():
        # The mocks' zones: the n-th zone id is the n-th zone name (tools/mock_invokes.py).
        out["availabilityZone"] = f"{req.ctx.region}{'abcdef'[int(zone_id[len(prefix):]) - 1]}"
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
    return {"metadata": metadata, "status": _k8s_status(req, str(metadata["uid"]))}


def _k8s_status(req: ResourceRequest, uid: str) -> dict[str, Any]:
    """The status a created object reports: a Service of type LoadBalancer its load balancer's hostname, every
    other object nothing the program reads. (A preview never gets here with a status: the provider's preview
    Create drops it, so the SDK makes it unknown; `RecordingMocks.answer_resource` does the same.)

    pulumi-kubernetes's Create of a LoadBalancer Service returns only once `status.loadBalancer.ingress` is
    non-empty (pulumi/pulumi-kubernetes@v4.32.0 provider/pkg/await/service.go lines 299-309), and deletes the
    status in a preview (provider/pkg/provider/provider.go lines 1849-1854; v4.32.0 is the newest tag of the
    snapshot read, the pin is 4.34.2). On EKS the AWS cloud provider names
    the load balancer `a` + the Service's UID without dashes, cut to 32 characters (k8s.io/cloud-provider
    cloud.go `DefaultLoadBalancerName`, https://github.com/kubernetes/cloud-provider/blob/v0.34.0/cloud.go), and
    the ingress is its DNS name, `<name>-<number>.<region>.elb.amazonaws.com`
    (https://docs.aws.amazon.com/elasticloadbalancing/latest/classic/using-domain-names-with-elb.html).
    """
    if req.type != "kubernetes:core/v1:Service":
        return {}
    spec = req.inputs.get("spec")
    if not isinstance(spec, Mapping) or spec.get("type") != "LoadBalancer":
        return {"loadBalancer": {}}
    name = ("a" + uid.replace("-", ""))[:32]
    number = int(req.h("elb", length=8), 16) % 10**10
    return {"loadBalancer": {"ingress": [{"hostname": f"{name}-{number}.{req.ctx.region}.elb.amazonaws.com"}]}}


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


# Outputs the cloud chooses at create when the program sets no input, which the state then holds: the version of
# an EKS cluster created without `version` is the EKS default of that day ("If you don't specify a value here, the
# default version available in Amazon EKS is used",
# https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html#AmazonEKS-CreateCluster-request-version),
# and a preview of the existing stack reads it from the state (pulumi/pulumi@1b5949891b pkg/resource/deploy/
# step_generator.go: an unchanged resource's outputs are its old state's). The offline gate has no state, so in
# `update` such an output is unknown, never made up (issue 45).
STATE_CHOSEN: dict[str, tuple[str, ...]] = {
    "aws:eks/cluster:Cluster": ("version",),
}


def state_chosen_unknown(req: ResourceRequest, outputs: Mapping[str, Any], unknown: Any) -> dict[str, Any]:
    """`outputs`, with each STATE_CHOSEN output the program did not set as `unknown` (the `update` phase)."""
    chosen = [k for k in STATE_CHOSEN.get(req.type, ()) if req.inputs.get(k) is None and k in outputs]
    return {**outputs, **dict.fromkeys(chosen, unknown)} if chosen else dict(outputs)


def register_outputs(type_token: str, handler: OutputHandler) -> None:
    """Answer resources of `type_token` with `handler` (one line per type, from any module)."""
    if type_token in RESOURCE_OUTPUTS and RESOURCE_OUTPUTS[type_token] is not handler:
        raise ValueError(f"{type_token}: outputs are already answered by {RESOURCE_OUTPUTS[type_token].__name__}")
    RESOURCE_OUTPUTS[type_token] = handler


def outputs_for(req: ResourceRequest) -> dict[str, Any]:
    """The provider's outputs for `req`: its RESOURCE_OUTPUTS entry, else the defaults of its package."""
    return RESOURCE_OUTPUTS.get(req.type, default_outputs)(req)


def default_outputs(req: ResourceRequest) -> dict[str, Any]:
    if req.type.startswith("pulumi:providers:"):
        return _provider(req)
    if req.type.startswith("aws:"):
        return _aws_default(req)
    if req.type.startswith("kubernetes:") and not req.type.startswith("kubernetes:helm.sh/"):
        return _k8s_object(req)
    return {}



def models_outputs(type_: str) -> bool:
    """Whether the mocks answer this type's computed outputs: a RESOURCE_OUTPUTS entry, or a package whose defaults
    `default_outputs` knows (providers, pulumi-aws, Kubernetes objects). A type of any other provider
    (pulumi-docker-build's `Image`, ...) gets its inputs back and nothing it computes."""
    return (type_ in RESOURCE_OUTPUTS or type_.startswith(("pulumi:", "aws:"))
            or (type_.startswith("kubernetes:") and not type_.startswith("kubernetes:helm.sh/")))
