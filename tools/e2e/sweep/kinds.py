"""How the sweeper finds and deletes each kind of `order.SWEEP_ORDER`.

A resource is the run's when its tags name the run (`runid.Selector`), or, for what lives in a VPC (ENIs,
security groups, subnets, route tables, internet gateways), when it is in one of the run's VPCs: the VPC CNI's
ENIs and EKS's own cluster security group do not carry the stack's tags. A finder returns what is still there
and not already on its way out, except for asynchronous kinds (`Kind.gone_when_deleted=False`), whose finder
keeps what is being deleted so that the sweeper's wait lasts until it is gone; a deleter is safe to call twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from tools.e2e.runid import Selector, tag_dict
from tools.e2e.sweep.retry import Retry, is_not_found

Clients = Callable[[str], Any]


@dataclass(frozen=True)
class Found:
    kind: str
    id: str
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def describe(self) -> str:
        return f"{self.kind} {self.id}"


@dataclass
class Context:
    clients: Clients
    selector: Selector
    call: Retry
    vpcs: set[str] = field(default_factory=set)  # the run's VPCs, found before the VPC-scoped kinds


def _pages(client: Any, operation: str, key: str, **kwargs: Any) -> Iterator[Any]:
    if client.can_paginate(operation):
        for page in client.get_paginator(operation).paginate(**kwargs):
            yield from page.get(key, [])
    else:
        yield from getattr(client, operation)(**kwargs).get(key, [])


# ---- EKS ------------------------------------------------------------------------------------------------------

def _clusters(ctx: Context) -> Iterator[dict[str, Any]]:
    eks = ctx.clients("eks")
    for name in _pages(eks, "list_clusters", "clusters"):
        cluster = eks.describe_cluster(name=name)["cluster"]
        yield cluster


def find_eks_addons(ctx: Context) -> list[Found]:
    eks = ctx.clients("eks")
    found = []
    for cluster in _clusters(ctx):
        for addon in _pages(eks, "list_addons", "addons", clusterName=cluster["name"]):
            info = eks.describe_addon(clusterName=cluster["name"], addonName=addon)["addon"]
            tags = {**tag_dict(cluster.get("tags", {})), **tag_dict(info.get("tags", {}))}
            if info.get("status") != "DELETING" and ctx.selector.matches(tags):
                found.append(Found("eks-addon", f"{cluster['name']}/{addon}"))
    return found


def delete_eks_addon(ctx: Context, item: Found) -> None:
    cluster, _, addon = item.id.partition("/")
    ctx.call(ctx.clients("eks").delete_addon, clusterName=cluster, addonName=addon)


def find_eks_nodegroups(ctx: Context) -> list[Found]:
    eks = ctx.clients("eks")
    found = []
    for cluster in _clusters(ctx):
        for group in _pages(eks, "list_nodegroups", "nodegroups", clusterName=cluster["name"]):
            info = eks.describe_nodegroup(clusterName=cluster["name"], nodegroupName=group)["nodegroup"]
            tags = {**tag_dict(cluster.get("tags", {})), **tag_dict(info.get("tags", {}))}
            if ctx.selector.matches(tags):
                found.append(Found("eks-nodegroup", f"{cluster['name']}/{group}", {"status": info.get("status")}))
    return found


def delete_eks_nodegroup(ctx: Context, item: Found) -> None:
    if item.extra.get("status") == "DELETING":
        return
    cluster, _, group = item.id.partition("/")
    ctx.call(ctx.clients("eks").delete_nodegroup, clusterName=cluster, nodegroupName=group)


def find_eks_clusters(ctx: Context) -> list[Found]:
    return [Found("eks-cluster", c["name"], {"status": c.get("status")}) for c in _clusters(ctx)
            if ctx.selector.matches({**tag_dict(c.get("tags", {})), "eks:eks-cluster-name": c["name"]})]


def delete_eks_cluster(ctx: Context, item: Found) -> None:
    if item.extra.get("status") != "DELETING":
        ctx.call(ctx.clients("eks").delete_cluster, name=item.id)  # ResourceInUse while node groups go: retried


# ---- EC2 ------------------------------------------------------------------------------------------------------

def _tagged(ctx: Context, items: list[dict[str, Any]], id_key: str) -> list[dict[str, Any]]:
    return [i for i in items if ctx.selector.matches(tag_dict(i.get("Tags", [])), i[id_key])]


def _in_run_vpcs(ctx: Context, items: list[dict[str, Any]], id_key: str) -> list[dict[str, Any]]:
    tagged = {i[id_key] for i in _tagged(ctx, items, id_key)}
    return [i for i in items if (i[id_key] in tagged or i.get("VpcId") in ctx.vpcs)
            and i[id_key] not in ctx.selector.protect]


def find_instances(ctx: Context) -> list[Found]:
    ec2 = ctx.clients("ec2")
    live = ["pending", "running", "stopping", "stopped", "shutting-down"]
    instances = [i for r in _pages(ec2, "describe_instances", "Reservations",
                                   Filters=[{"Name": "instance-state-name", "Values": live}])
                 for i in r["Instances"]]
    return [Found("ec2-instance", i["InstanceId"], {"state": i["State"]["Name"]})
            for i in _in_run_vpcs(ctx, instances, "InstanceId")]


def delete_instance(ctx: Context, item: Found) -> None:
    if item.extra.get("state") != "shutting-down":
        ctx.call(ctx.clients("ec2").terminate_instances, InstanceIds=[item.id])


def find_launch_templates(ctx: Context) -> list[Found]:
    templates = list(_pages(ctx.clients("ec2"), "describe_launch_templates", "LaunchTemplates"))
    return [Found("ec2-launch-template", t["LaunchTemplateId"]) for t in _tagged(ctx, templates, "LaunchTemplateId")]


def delete_launch_template(ctx: Context, item: Found) -> None:
    ctx.call(ctx.clients("ec2").delete_launch_template, LaunchTemplateId=item.id)


# DeleteNatGateway returns at once; the gateway stays `deleting` until AWS has removed it, and only then is its
# Elastic IP disassociated ("Deleting a public NAT gateway disassociates its Elastic IP address, but does not
# release the address", https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DeleteNatGateway.html).
# The finder therefore keeps `deleting` gateways, so the sweeper's wait lasts until they are `deleted`.
NAT_LIVE_STATES = ("pending", "available", "failed", "deleting")


def find_nat_gateways(ctx: Context) -> list[Found]:
    gateways = list(_pages(ctx.clients("ec2"), "describe_nat_gateways", "NatGateways",
                           Filter=[{"Name": "state", "Values": list(NAT_LIVE_STATES)}]))
    gateways = [g for g in gateways if g.get("State") in NAT_LIVE_STATES]
    return [Found("ec2-nat-gateway", g["NatGatewayId"], {"state": g.get("State")})
            for g in _in_run_vpcs(ctx, gateways, "NatGatewayId")]


def delete_nat_gateway(ctx: Context, item: Found) -> None:
    if item.extra.get("state") != "deleting":
        ctx.call(ctx.clients("ec2").delete_nat_gateway, NatGatewayId=item.id)


def find_addresses(ctx: Context) -> list[Found]:
    addresses = ctx.clients("ec2").describe_addresses().get("Addresses", [])
    return [Found("ec2-elastic-ip", a["AllocationId"], {"association": a.get("AssociationId"),
                                                        "eni": a.get("NetworkInterfaceId")})
            for a in _tagged(ctx, addresses, "AllocationId")]


def _requester_managed(eni: dict[str, Any]) -> bool:
    """An ENI that AWS created for a service (NAT gateway, load balancer, VPC endpoint): "You can't detach a
    requester-managed network interface", nor disassociate its Elastic IP; the service removes it
    (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/requester-managed-eni.html)."""
    return bool(eni.get("RequesterManaged")) or eni.get("InterfaceType") in AWS_MANAGED_INTERFACE_TYPES


# InterfaceType values of ENIs that their service owns (EC2 API NetworkInterface.InterfaceType,
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_NetworkInterface.html). An ALB's ENIs are of type
# `interface` but RequesterManaged, described "ELB app/<name>/<id>".
AWS_MANAGED_INTERFACE_TYPES = frozenset({"natGateway", "nat_gateway", "load_balancer", "network_load_balancer",
                                         "gateway_load_balancer", "gateway_load_balancer_endpoint",
                                         "vpc_endpoint"})


def _eni_is_aws_managed(ctx: Context, eni_id: str | None) -> bool:
    if not eni_id:
        return False
    try:
        enis = ctx.clients("ec2").describe_network_interfaces(NetworkInterfaceIds=[eni_id])["NetworkInterfaces"]
    except ClientError as error:
        if is_not_found(error):
            return False  # the ENI is gone: nothing holds the address any more
        raise
    return any(_requester_managed(e) for e in enis)


def delete_address(ctx: Context, item: Found) -> None:
    """An address still held by a NAT gateway's ENI is not disassociated (AWS refuses it): it is released when
    the gateway's deletion lets it go, InvalidIPAddress.InUse being retried until then."""
    ec2 = ctx.clients("ec2")
    if item.extra.get("association") and not _eni_is_aws_managed(ctx, item.extra.get("eni")):
        ctx.call(ec2.disassociate_address, AssociationId=item.extra["association"])
    ctx.call(ec2.release_address, AllocationId=item.id)


def find_network_interfaces(ctx: Context) -> list[Found]:
    enis = list(_pages(ctx.clients("ec2"), "describe_network_interfaces", "NetworkInterfaces"))
    return [Found("ec2-network-interface", e["NetworkInterfaceId"],
                  {"attachment": e.get("Attachment") or {}, "aws_managed": _requester_managed(e)})
            for e in _in_run_vpcs(ctx, enis, "NetworkInterfaceId")]


def delete_network_interface(ctx: Context, item: Found) -> None:
    """A requester-managed ENI (NAT gateway, ALB: these linger for minutes after DeleteLoadBalancer) is left to
    its service; the kind is asynchronous, so the sweeper waits until AWS has removed it."""
    if item.extra.get("aws_managed"):
        return
    ec2 = ctx.clients("ec2")
    attachment = item.extra.get("attachment") or {}
    if attachment.get("AttachmentId") and attachment.get("DeviceIndex", 0) != 0:
        ctx.call(ec2.detach_network_interface, AttachmentId=attachment["AttachmentId"], Force=True)
    ctx.call(ec2.delete_network_interface, NetworkInterfaceId=item.id)


def find_security_groups(ctx: Context) -> list[Found]:
    groups = [g for g in _pages(ctx.clients("ec2"), "describe_security_groups", "SecurityGroups")
              if g.get("GroupName") != "default"]
    return [Found("ec2-security-group", g["GroupId"], {"ingress": g.get("IpPermissions", []),
                                                       "egress": g.get("IpPermissionsEgress", [])})
            for g in _in_run_vpcs(ctx, groups, "GroupId")]


def revoke_group_references(ctx: Context, items: list[Found]) -> None:
    """Rules that name another group hold both groups (the load balancer controller's backend group and the
    node group reference each other); revoke them all before deleting any group."""
    ec2 = ctx.clients("ec2")
    for item in items:
        for direction, revoke in (("ingress", ec2.revoke_security_group_ingress),
                                  ("egress", ec2.revoke_security_group_egress)):
            rules = [r for r in item.extra.get(direction, []) if r.get("UserIdGroupPairs")]
            if rules:
                ctx.call(revoke, GroupId=item.id, IpPermissions=rules)


def delete_security_group(ctx: Context, item: Found) -> None:
    ctx.call(ctx.clients("ec2").delete_security_group, GroupId=item.id)


def find_subnets(ctx: Context) -> list[Found]:
    subnets = list(_pages(ctx.clients("ec2"), "describe_subnets", "Subnets"))
    return [Found("ec2-subnet", s["SubnetId"]) for s in _in_run_vpcs(ctx, subnets, "SubnetId")]


def delete_subnet(ctx: Context, item: Found) -> None:
    ctx.call(ctx.clients("ec2").delete_subnet, SubnetId=item.id)


def find_route_tables(ctx: Context) -> list[Found]:
    tables = [t for t in _pages(ctx.clients("ec2"), "describe_route_tables", "RouteTables")
              if not any(a.get("Main") for a in t.get("Associations", []))]
    return [Found("ec2-route-table", t["RouteTableId"],
                  {"associations": [a["RouteTableAssociationId"] for a in t.get("Associations", [])]})
            for t in _in_run_vpcs(ctx, tables, "RouteTableId")]


def delete_route_table(ctx: Context, item: Found) -> None:
    ec2 = ctx.clients("ec2")
    for association in item.extra.get("associations", []):
        ctx.call(ec2.disassociate_route_table, AssociationId=association)
    ctx.call(ec2.delete_route_table, RouteTableId=item.id)


def find_internet_gateways(ctx: Context) -> list[Found]:
    gateways = list(_pages(ctx.clients("ec2"), "describe_internet_gateways", "InternetGateways"))
    for gateway in gateways:
        attached = [a["VpcId"] for a in gateway.get("Attachments", [])]
        gateway["VpcId"] = attached[0] if attached else None
    return [Found("ec2-internet-gateway", g["InternetGatewayId"], {"vpc": g["VpcId"]})
            for g in _in_run_vpcs(ctx, gateways, "InternetGatewayId")]


def delete_internet_gateway(ctx: Context, item: Found) -> None:
    ec2 = ctx.clients("ec2")
    if item.extra.get("vpc"):
        ctx.call(ec2.detach_internet_gateway, InternetGatewayId=item.id, VpcId=item.extra["vpc"])
    ctx.call(ec2.delete_internet_gateway, InternetGatewayId=item.id)


def find_vpcs(ctx: Context) -> list[Found]:
    vpcs = list(_pages(ctx.clients("ec2"), "describe_vpcs", "Vpcs"))
    return [Found("ec2-vpc", v["VpcId"]) for v in _tagged(ctx, vpcs, "VpcId")]


def delete_vpc(ctx: Context, item: Found) -> None:
    ctx.call(ctx.clients("ec2").delete_vpc, VpcId=item.id)


def find_volumes(ctx: Context) -> list[Found]:
    volumes = [v for v in _pages(ctx.clients("ec2"), "describe_volumes", "Volumes") if v.get("State") != "deleting"]
    return [Found("ec2-volume", v["VolumeId"]) for v in _tagged(ctx, volumes, "VolumeId")]


def delete_volume(ctx: Context, item: Found) -> None:
    ctx.call(ctx.clients("ec2").delete_volume, VolumeId=item.id)


def find_snapshots(ctx: Context) -> list[Found]:
    snapshots = list(_pages(ctx.clients("ec2"), "describe_snapshots", "Snapshots", OwnerIds=["self"]))
    return [Found("ec2-snapshot", s["SnapshotId"]) for s in _tagged(ctx, snapshots, "SnapshotId")]


def delete_snapshot(ctx: Context, item: Found) -> None:
    ctx.call(ctx.clients("ec2").delete_snapshot, SnapshotId=item.id)


# ---- ELB ------------------------------------------------------------------------------------------------------

def _elb_tagged(ctx: Context, arns: list[str]) -> list[str]:
    elb = ctx.clients("elbv2")
    matched = []
    for start in range(0, len(arns), 20):  # DescribeTags takes at most 20 ARNs
        for description in elb.describe_tags(ResourceArns=arns[start:start + 20])["TagDescriptions"]:
            if ctx.selector.matches(tag_dict(description.get("Tags", [])), description["ResourceArn"]):
                matched.append(description["ResourceArn"])
    return matched


def find_load_balancers(ctx: Context) -> list[Found]:
    arns = [b["LoadBalancerArn"] for b in _pages(ctx.clients("elbv2"), "describe_load_balancers", "LoadBalancers")]
    return [Found("elb-load-balancer", a) for a in _elb_tagged(ctx, arns)]


def delete_load_balancer(ctx: Context, item: Found) -> None:
    ctx.call(ctx.clients("elbv2").delete_load_balancer, LoadBalancerArn=item.id)


def find_target_groups(ctx: Context) -> list[Found]:
    arns = [g["TargetGroupArn"] for g in _pages(ctx.clients("elbv2"), "describe_target_groups", "TargetGroups")]
    return [Found("elb-target-group", a) for a in _elb_tagged(ctx, arns)]


def delete_target_group(ctx: Context, item: Found) -> None:
    ctx.call(ctx.clients("elbv2").delete_target_group, TargetGroupArn=item.id)


# ---- CloudWatch Logs ------------------------------------------------------------------------------------------

def find_log_groups(ctx: Context) -> list[Found]:
    logs = ctx.clients("logs")
    found = []
    for group in _pages(logs, "describe_log_groups", "logGroups"):
        name = group["logGroupName"]
        parts = name.split("/")
        # EKS names the control plane's group after the cluster (= the run id) and may not tag it.
        cluster = parts[3] if name.startswith("/aws/eks/") and len(parts) > 3 else ""
        tags = tag_dict(logs.list_tags_log_group(logGroupName=name).get("tags", {}))
        if ctx.selector.matches({**tags, **({"eks:eks-cluster-name": cluster} if cluster else {})}, name):
            found.append(Found("logs-log-group", name))
    return found


def delete_log_group(ctx: Context, item: Found) -> None:
    ctx.call(ctx.clients("logs").delete_log_group, logGroupName=item.id)


# ---- IAM ------------------------------------------------------------------------------------------------------

def find_oidc_providers(ctx: Context) -> list[Found]:
    iam = ctx.clients("iam")
    found = []
    for provider in iam.list_open_id_connect_providers().get("OpenIDConnectProviderList", []):
        arn = provider["Arn"]
        tags = tag_dict(iam.list_open_id_connect_provider_tags(OpenIDConnectProviderArn=arn).get("Tags", []))
        if ctx.selector.matches(tags, arn):
            found.append(Found("iam-oidc-provider", arn))
    return found


def delete_oidc_provider(ctx: Context, item: Found) -> None:
    ctx.call(ctx.clients("iam").delete_open_id_connect_provider, OpenIDConnectProviderArn=item.id)


def find_instance_profiles(ctx: Context) -> list[Found]:
    iam = ctx.clients("iam")
    found = []
    for profile in _pages(iam, "list_instance_profiles", "InstanceProfiles"):
        name = profile["InstanceProfileName"]
        # GetInstanceProfile returns the tags (ListInstanceProfiles does not).
        tags = tag_dict(iam.get_instance_profile(InstanceProfileName=name)["InstanceProfile"].get("Tags", []))
        if ctx.selector.matches(tags, name):
            found.append(Found("iam-instance-profile", name, {"roles": [r["RoleName"] for r in profile["Roles"]]}))
    return found


def delete_instance_profile(ctx: Context, item: Found) -> None:
    iam = ctx.clients("iam")
    for role in item.extra.get("roles", []):
        ctx.call(iam.remove_role_from_instance_profile, InstanceProfileName=item.id, RoleName=role)
    ctx.call(iam.delete_instance_profile, InstanceProfileName=item.id)


def find_roles(ctx: Context) -> list[Found]:
    iam = ctx.clients("iam")
    found = []
    for role in _pages(iam, "list_roles", "Roles"):
        name = role["RoleName"]
        if role.get("Path", "/").startswith("/aws-service-role/"):
            continue  # service-linked roles belong to the account (AWSServiceRoleForEC2Spot is never deleted)
        tags = tag_dict(iam.list_role_tags(RoleName=name).get("Tags", []))
        if ctx.selector.matches(tags, name):
            found.append(Found("iam-role", name))
    return found


def delete_role(ctx: Context, item: Found) -> None:
    """DeleteRole refuses a role with instance profiles, attached or inline policies: remove them first
    (https://docs.aws.amazon.com/IAM/latest/APIReference/API_DeleteRole.html)."""
    iam = ctx.clients("iam")
    for profile in iam.list_instance_profiles_for_role(RoleName=item.id).get("InstanceProfiles", []):
        ctx.call(iam.remove_role_from_instance_profile, InstanceProfileName=profile["InstanceProfileName"],
                 RoleName=item.id)
    for policy in iam.list_attached_role_policies(RoleName=item.id).get("AttachedPolicies", []):
        ctx.call(iam.detach_role_policy, RoleName=item.id, PolicyArn=policy["PolicyArn"])
    for policy in iam.list_role_policies(RoleName=item.id).get("PolicyNames", []):
        ctx.call(iam.delete_role_policy, RoleName=item.id, PolicyName=policy)
    ctx.call(iam.delete_role, RoleName=item.id)


def find_policies(ctx: Context) -> list[Found]:
    """Customer-managed policies (the Karpenter controller's, components/karpenter/controller.py): `Scope=Local`."""
    iam = ctx.clients("iam")
    found = []
    for policy in _pages(iam, "list_policies", "Policies", Scope="Local"):
        arn = policy["Arn"]
        tags = tag_dict(iam.list_policy_tags(PolicyArn=arn).get("Tags", []))
        if ctx.selector.matches(tags, arn):
            found.append(Found("iam-policy", arn))
    return found


def delete_policy(ctx: Context, item: Found) -> None:
    """DeletePolicy: detach it from every user, group and role and delete its non-default versions first
    (https://docs.aws.amazon.com/IAM/latest/APIReference/API_DeletePolicy.html)."""
    iam = ctx.clients("iam")
    entities = iam.list_entities_for_policy(PolicyArn=item.id)
    for role in entities.get("PolicyRoles", []):
        ctx.call(iam.detach_role_policy, RoleName=role["RoleName"], PolicyArn=item.id)
    for user in entities.get("PolicyUsers", []):
        ctx.call(iam.detach_user_policy, UserName=user["UserName"], PolicyArn=item.id)
    for group in entities.get("PolicyGroups", []):
        ctx.call(iam.detach_group_policy, GroupName=group["GroupName"], PolicyArn=item.id)
    for version in iam.list_policy_versions(PolicyArn=item.id).get("Versions", []):
        if not version.get("IsDefaultVersion"):
            ctx.call(iam.delete_policy_version, PolicyArn=item.id, VersionId=version["VersionId"])
    ctx.call(iam.delete_policy, PolicyArn=item.id)


# ---- Auto Scaling ---------------------------------------------------------------------------------------------

def find_auto_scaling_groups(ctx: Context) -> list[Found]:
    """The self-managed GPU pools' groups (components/gpu_node_group.py, `selfManaged: true`); a group being
    deleted is kept, so the sweeper's wait lasts until it is gone."""
    groups = list(_pages(ctx.clients("autoscaling"), "describe_auto_scaling_groups", "AutoScalingGroups"))
    return [Found("autoscaling-group", g["AutoScalingGroupName"], {"status": g.get("Status")}) for g in groups
            if ctx.selector.matches(tag_dict(g.get("Tags", [])), g["AutoScalingGroupName"])]


def delete_auto_scaling_group(ctx: Context, item: Found) -> None:
    """ForceDelete terminates the instances with the group, so it launches no replacement of an instance the
    sweeper terminates (https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_DeleteAutoScalingGroup.html)."""
    if item.extra.get("status") != "Delete in progress":
        ctx.call(ctx.clients("autoscaling").delete_auto_scaling_group, AutoScalingGroupName=item.id,
                 ForceDelete=True)


# ---- SQS, EventBridge, KMS ------------------------------------------------------------------------------------

def find_queues(ctx: Context) -> list[Found]:
    sqs = ctx.clients("sqs")
    found = []
    for url in sqs.list_queues().get("QueueUrls", []):
        if ctx.selector.matches(tag_dict(sqs.list_queue_tags(QueueUrl=url).get("Tags", {})), url):
            found.append(Found("sqs-queue", url))
    return found


def delete_queue(ctx: Context, item: Found) -> None:
    ctx.call(ctx.clients("sqs").delete_queue, QueueUrl=item.id)


def find_rules(ctx: Context) -> list[Found]:
    events = ctx.clients("events")
    found = []
    for rule in _pages(events, "list_rules", "Rules"):
        tags = tag_dict(events.list_tags_for_resource(ResourceARN=rule["Arn"]).get("Tags", []))
        if ctx.selector.matches(tags, rule["Arn"]):
            found.append(Found("events-rule", rule["Name"]))
    return found


def delete_rule(ctx: Context, item: Found) -> None:
    """DeleteRule: remove the targets first (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_DeleteRule.html)."""
    events = ctx.clients("events")
    targets = [t["Id"] for t in events.list_targets_by_rule(Rule=item.id).get("Targets", [])]
    if targets:
        ctx.call(events.remove_targets, Rule=item.id, Ids=targets)
    ctx.call(events.delete_rule, Name=item.id)


KMS_GONE_STATES = ("PendingDeletion", "PendingReplicaDeletion")


def find_kms_keys(ctx: Context) -> list[Found]:
    kms = ctx.clients("kms")
    found = []
    for key in _pages(kms, "list_keys", "Keys"):
        meta = kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]
        if meta.get("KeyManager") != "CUSTOMER" or meta.get("KeyState") in KMS_GONE_STATES:
            continue
        tags = tag_dict(kms.list_resource_tags(KeyId=key["KeyId"]).get("Tags", []))
        if ctx.selector.matches(tags, key["KeyId"]):
            found.append(Found("kms-key", key["KeyId"]))
    return found


# The shortest waiting period AWS allows (7 days): a key cannot be deleted at once
# (https://docs.aws.amazon.com/kms/latest/APIReference/API_ScheduleKeyDeletion.html).
KMS_PENDING_DAYS = 7


def delete_kms_key(ctx: Context, item: Found) -> None:
    ctx.call(ctx.clients("kms").schedule_key_deletion, KeyId=item.id, PendingWindowInDays=KMS_PENDING_DAYS)


@dataclass(frozen=True)
class Kind:
    find: Callable[[Context], list[Found]]
    delete: Callable[[Context, Found], None]
    gone_when_deleted: bool = True  # False: deletion is asynchronous, wait until the finder no longer sees it


KINDS: dict[str, Kind] = {
    "eks-addon": Kind(find_eks_addons, delete_eks_addon, False),
    "eks-nodegroup": Kind(find_eks_nodegroups, delete_eks_nodegroup, False),
    "eks-cluster": Kind(find_eks_clusters, delete_eks_cluster, False),
    "autoscaling-group": Kind(find_auto_scaling_groups, delete_auto_scaling_group, False),
    "ec2-instance": Kind(find_instances, delete_instance, False),
    "ec2-launch-template": Kind(find_launch_templates, delete_launch_template),
    "elb-load-balancer": Kind(find_load_balancers, delete_load_balancer),
    "elb-target-group": Kind(find_target_groups, delete_target_group),
    "ec2-nat-gateway": Kind(find_nat_gateways, delete_nat_gateway, False),
    "ec2-elastic-ip": Kind(find_addresses, delete_address),
    "ec2-network-interface": Kind(find_network_interfaces, delete_network_interface, False),
    "ec2-security-group": Kind(find_security_groups, delete_security_group),
    "ec2-subnet": Kind(find_subnets, delete_subnet),
    "ec2-route-table": Kind(find_route_tables, delete_route_table),
    "ec2-internet-gateway": Kind(find_internet_gateways, delete_internet_gateway),
    "ec2-vpc": Kind(find_vpcs, delete_vpc),
    "ec2-volume": Kind(find_volumes, delete_volume),
    "ec2-snapshot": Kind(find_snapshots, delete_snapshot),
    "logs-log-group": Kind(find_log_groups, delete_log_group),
    "iam-oidc-provider": Kind(find_oidc_providers, delete_oidc_provider),
    "iam-instance-profile": Kind(find_instance_profiles, delete_instance_profile),
    "iam-role": Kind(find_roles, delete_role),
    "iam-policy": Kind(find_policies, delete_policy),
    "sqs-queue": Kind(find_queues, delete_queue),
    "events-rule": Kind(find_rules, delete_rule),
    "kms-key": Kind(find_kms_keys, delete_kms_key),
}
