"""What one e2e run leaves in an account, built with boto3 against moto: every kind of order.SWEEP_ORDER,
tagged as the stack and the controllers tag them (the run tag, or only a controller's cluster tag)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tools.e2e.runid import run_tags

REGION = "us-west-2"
ASSUME = json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]})


@dataclass
class Built:
    run_id: str
    ids: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, ident: str) -> None:
        self.ids.setdefault(kind, []).append(ident)


def _ec2_tags(resource: str, tags: dict[str, str]) -> list[dict[str, Any]]:
    return [{"ResourceType": resource, "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]


def build_run(clients: Callable[[str], Any], run_id: str, *, index: int = 0) -> Built:
    """A run's leftovers: the stack's resources with the run tag, and what controllers create with only their
    cluster tags (Karpenter's instance, the VPC CNI's ENI, EKS's log group)."""
    tags = run_tags(run_id)
    kv = [{"Key": k, "Value": v} for k, v in tags.items()]
    built = Built(run_id)
    ec2, elb, eks, iam = clients("ec2"), clients("elbv2"), clients("eks"), clients("iam")

    vpc = ec2.create_vpc(CidrBlock=f"10.{40 + index}.0.0/16", TagSpecifications=_ec2_tags("vpc", tags))["Vpc"]["VpcId"]
    built.add("ec2-vpc", vpc)
    subnets = []
    for i, zone in enumerate(("a", "b")):
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.{40 + index}.{i}.0/24", AvailabilityZone=f"{REGION}{zone}",
                                   TagSpecifications=_ec2_tags("subnet", tags))["Subnet"]["SubnetId"]
        subnets.append(subnet)
        built.add("ec2-subnet", subnet)
    igw = ec2.create_internet_gateway(TagSpecifications=_ec2_tags("internet-gateway", tags))
    igw_id = igw["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw_id, VpcId=vpc)
    built.add("ec2-internet-gateway", igw_id)
    table = ec2.create_route_table(VpcId=vpc, TagSpecifications=_ec2_tags("route-table", tags))["RouteTable"]
    ec2.associate_route_table(RouteTableId=table["RouteTableId"], SubnetId=subnets[0])
    built.add("ec2-route-table", table["RouteTableId"])

    node_sg = ec2.create_security_group(GroupName=f"nodes-{run_id}", Description="nodes", VpcId=vpc,
                                        TagSpecifications=_ec2_tags("security-group", tags))["GroupId"]
    # The load balancer controller's backend group, tagged only with its cluster tag; the two reference each other.
    lbc_sg = ec2.create_security_group(GroupName=f"k8s-traffic-{run_id}", Description="lbc", VpcId=vpc,
                                       TagSpecifications=_ec2_tags("security-group", {"elbv2.k8s.aws/cluster": run_id}))
    lbc_sg_id = lbc_sg["GroupId"]
    for group, other in ((node_sg, lbc_sg_id), (lbc_sg_id, node_sg)):
        ec2.authorize_security_group_ingress(GroupId=group, IpPermissions=[
            {"IpProtocol": "tcp", "FromPort": 8000, "ToPort": 8000, "UserIdGroupPairs": [{"GroupId": other}]}])
    built.add("ec2-security-group", node_sg)
    built.add("ec2-security-group", lbc_sg_id)
    # The VPC CNI's ENI: no stack tag at all, found because it is in the run's VPC.
    eni = ec2.create_network_interface(SubnetId=subnets[1], Groups=[node_sg])["NetworkInterface"]["NetworkInterfaceId"]
    built.add("ec2-network-interface", eni)

    template = ec2.create_launch_template(
        LaunchTemplateName=f"karpenter-{run_id}", LaunchTemplateData={"InstanceType": "g4dn.xlarge"},
        TagSpecifications=_ec2_tags("launch-template", {"karpenter.k8s.aws/cluster": run_id}))
    built.add("ec2-launch-template", template["LaunchTemplate"]["LaunchTemplateId"])
    # Karpenter's instance: EC2NodeClass spec.tags carries the run tag.
    instance = ec2.run_instances(ImageId="ami-12c6146b", MinCount=1, MaxCount=1, InstanceType="g4dn.xlarge",
                                 SubnetId=subnets[0], SecurityGroupIds=[node_sg],
                                 TagSpecifications=_ec2_tags("instance", {**tags, "karpenter.sh/nodepool": "gpu"}))
    built.add("ec2-instance", instance["Instances"][0]["InstanceId"])
    # A self-managed GPU pool's Auto Scaling group (aws:defaultTags reach it through the provider).
    clients("autoscaling").create_auto_scaling_group(
        AutoScalingGroupName=f"{run_id}-gpu-self", MinSize=0, MaxSize=1, DesiredCapacity=0,
        LaunchTemplate={"LaunchTemplateId": template["LaunchTemplate"]["LaunchTemplateId"]},
        VPCZoneIdentifier=subnets[0], Tags=[{**t, "PropagateAtLaunch": True} for t in kv])
    built.add("autoscaling-group", f"{run_id}-gpu-self")

    eip = ec2.allocate_address(Domain="vpc", TagSpecifications=_ec2_tags("elastic-ip", tags))["AllocationId"]
    built.add("ec2-elastic-ip", eip)
    nat = ec2.create_nat_gateway(SubnetId=subnets[0], AllocationId=eip,
                                 TagSpecifications=_ec2_tags("natgateway", tags))["NatGateway"]["NatGatewayId"]
    built.add("ec2-nat-gateway", nat)

    volume = ec2.create_volume(AvailabilityZone=f"{REGION}a", Size=20, TagSpecifications=_ec2_tags("volume", tags))
    built.add("ec2-volume", volume["VolumeId"])
    snapshot = ec2.create_snapshot(VolumeId=volume["VolumeId"], TagSpecifications=_ec2_tags("snapshot", tags))
    built.add("ec2-snapshot", snapshot["SnapshotId"])

    lb = elb.create_load_balancer(Name=f"k8s-{index}-{run_id[-8:]}", Subnets=subnets, SecurityGroups=[lbc_sg_id],
                                  Tags=kv)["LoadBalancers"][0]["LoadBalancerArn"]
    built.add("elb-load-balancer", lb)
    tg = elb.create_target_group(Name=f"tg-{index}-{run_id[-8:]}", Protocol="HTTP", Port=8000, VpcId=vpc,
                                 TargetType="ip", Tags=kv)["TargetGroups"][0]["TargetGroupArn"]
    elb.create_listener(LoadBalancerArn=lb, Protocol="HTTP", Port=80,
                        DefaultActions=[{"Type": "forward", "TargetGroupArn": tg}])
    built.add("elb-target-group", tg)

    role = iam.create_role(RoleName=f"{run_id}-node", AssumeRolePolicyDocument=ASSUME, Tags=kv)["Role"]
    document = json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]})
    policy = iam.create_policy(PolicyName=f"{run_id}-node", PolicyDocument=document, Tags=kv)["Policy"]["Arn"]
    built.add("iam-policy", policy)
    iam.attach_role_policy(RoleName=role["RoleName"], PolicyArn=policy)
    iam.put_role_policy(RoleName=role["RoleName"], PolicyName="inline", PolicyDocument=document)
    built.add("iam-role", role["RoleName"])
    profile = iam.create_instance_profile(InstanceProfileName=f"{run_id}-karpenter",
                                          Tags=[{"Key": f"kubernetes.io/cluster/{run_id}", "Value": "owned"}])
    iam.add_role_to_instance_profile(InstanceProfileName=f"{run_id}-karpenter", RoleName=role["RoleName"])
    built.add("iam-instance-profile", profile["InstanceProfile"]["InstanceProfileName"])
    oidc = iam.create_open_id_connect_provider(Url=f"https://oidc.eks.{REGION}.amazonaws.com/id/{run_id.upper()[-12:]}{index}",
                                               ThumbprintList=["a" * 40], ClientIDList=["sts.amazonaws.com"], Tags=kv)
    built.add("iam-oidc-provider", oidc["OpenIDConnectProviderArn"])

    cluster_role = iam.create_role(RoleName=f"{run_id}-cluster", AssumeRolePolicyDocument=ASSUME, Tags=kv)["Role"]
    built.add("iam-role", cluster_role["RoleName"])
    eks.create_cluster(name=run_id, roleArn=cluster_role["Arn"], tags=tags,
                       resourcesVpcConfig={"subnetIds": subnets, "securityGroupIds": [node_sg]})
    eks.create_nodegroup(clusterName=run_id, nodegroupName="system", nodeRole=role["Arn"], subnets=subnets, tags=tags)
    built.add("eks-cluster", run_id)
    built.add("eks-nodegroup", f"{run_id}/system")

    logs = clients("logs")
    logs.create_log_group(logGroupName=f"/aws/eks/{run_id}/cluster")  # EKS's: untagged
    built.add("logs-log-group", f"/aws/eks/{run_id}/cluster")
    logs.create_log_group(logGroupName=f"/gpu-platform/{run_id}/probe", tags=tags)
    built.add("logs-log-group", f"/gpu-platform/{run_id}/probe")

    queue = clients("sqs").create_queue(QueueName=f"{run_id}-interruption", tags=tags)["QueueUrl"]
    built.add("sqs-queue", queue)
    events = clients("events")
    events.put_rule(Name=f"{run_id}-spot", EventPattern=json.dumps({"source": ["aws.ec2"]}), Tags=kv)
    events.put_targets(Rule=f"{run_id}-spot", Targets=[{"Id": "queue", "Arn": f"arn:aws:sqs:{REGION}:123456789012:x"}])
    built.add("events-rule", f"{run_id}-spot")
    key = clients("kms").create_key(Tags=[{"TagKey": k, "TagValue": v} for k, v in tags.items()])["KeyMetadata"]
    built.add("kms-key", key["KeyId"])
    return built
