"""The child pulumi-eks's ManagedNodeGroup registers, emulated offline (tools/engine/mocks/eks_nodegroups.py).

`eks.ManagedNodeGroup` is the most common pulumi-eks idiom (pulumi-eks examples/managed-nodegroups-py). Its Construct
runs in the pulumi-eks plugin and registers an `aws:eks/nodeGroup:NodeGroup` that the real preview analyzes; without
it the pack saw no node group and `system-node-group-present` said "Node groups: none" in every phase. The emulation
is pinned to the lines it comes from (tests/tools/fixtures/pulumi_eks_source.yaml, pulumi-eks 7bf0c1b1).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml
from google.protobuf.struct_pb2 import Struct

from tests.conftest import RunPreview
from tests.result_view import entries
from tools.engine.mocks.eks_children import Child
from tools.engine.mocks.eks_nodegroups import SOURCE, construct_managed_node_group, uncovered_mng
from tools.engine.mocks.eks_userdata import create_user_data
from tools.engine.records import UNKNOWN, RecordedResource

PINNED = yaml.safe_load((Path(__file__).parent / "fixtures" / "pulumi_eks_source.yaml").read_text())
PROGRAM = Path(__file__).parent / "fixtures" / "eks_mng_program"
CLUSTER = "urn:pulumi:dev::p::eks:index:Cluster::gpu-cluster"
ROLE = "urn:pulumi:dev::p::aws:iam/role:Role::system-role"


@pytest.mark.parametrize("key", sorted(SOURCE))
def test_every_citation_holds_the_pinned_text_of_its_line(key: str) -> None:
    cite = SOURCE[key]
    text = PINNED["files"][cite.path]["lines"][cite.line]
    assert cite.snippet in text, f"{cite.path}:{cite.line} reads {text!r}"


def _recorded(cluster_inputs: dict[str, Any], role_arn: Any = "arn:aws:iam::111122223333:role/system") -> dict[
        str, RecordedResource]:
    cluster = RecordedResource(urn=CLUSTER, type="eks:index:Cluster", name="gpu-cluster", parent=None, custom=False,
                               inputs=cluster_inputs, properties=Struct(), remote=True)
    role = RecordedResource(urn=ROLE, type="aws:iam/role:Role", name="system-role", parent=None, custom=True,
                            inputs={}, properties=Struct(), outputs={"arn": role_arn})
    return {CLUSTER: cluster, ROLE: role}


def _construct(inputs: dict[str, Any], recorded: dict[str, RecordedResource]) -> list[Child]:
    children: list[Child] = []

    def register(child: Child) -> tuple[str, dict[str, Any]]:
        children.append(child)
        state = {"id": UNKNOWN, "latestVersion": UNKNOWN}
        if child.type == "aws:ec2/placementGroup:PlacementGroup":
            state["name"] = "pg-name"  # auto-named in Check: known in a first preview
        return f"urn:{child.name}", state

    assert uncovered_mng(inputs, recorded.get) == []
    construct_managed_node_group("urn:mng", "system", inputs, recorded=recorded, register=register)
    return children


def test_the_node_group_takes_pulumi_eks_defaults_the_cluster_s_version_subnets_and_the_role_arn() -> None:
    recorded = _recorded({"version": "1.33", "subnetIds": ["subnet-a", "subnet-b"]})
    [child] = _construct({"cluster": CLUSTER, "nodeRole": ROLE, "instanceTypes": ["t3.medium"], "gpu": False,
                          "labels": {"role": "system"}, "ignoreScalingChanges": True}, recorded)

    assert (child.type, child.name, child.parent, child.cite) == (
        "aws:eks/nodeGroup:NodeGroup", "system", "urn:mng", SOURCE["nodeGroup"])
    assert child.inputs["scalingConfig"] == {"desiredSize": 2, "minSize": 1, "maxSize": 2}  # nodegroup.ts 2100-2102
    assert child.inputs["version"] == "1.33"
    assert child.inputs["subnetIds"] == ["subnet-a", "subnet-b"]
    assert child.inputs["nodeRoleArn"] == "arn:aws:iam::111122223333:role/system"
    assert child.inputs["clusterName"].startswith("gpu-cluster-eksCluster-")
    assert child.ignore_changes == ("scalingConfig.desiredSize",)
    # The component's own options are not NodeGroup inputs: the JS SDK's constructor drops them.
    assert not {"cluster", "nodeRole", "gpu", "ignoreScalingChanges"} & set(child.inputs)
    assert child.inputs["labels"] == {"role": "system"} and child.inputs["instanceTypes"] == ["t3.medium"]


def test_a_first_preview_keeps_what_it_does_not_know_unknown() -> None:
    recorded = _recorded({"publicSubnetIds": [UNKNOWN], "privateSubnetIds": ["subnet-p"]}, role_arn=UNKNOWN)
    [child] = _construct({"cluster": CLUSTER, "nodeRole": ROLE, "scalingConfig": {"minSize": 0, "maxSize": UNKNOWN},
                          "launchTemplate": {"id": "lt-1", "version": "1"}}, recorded)

    assert child.inputs["scalingConfig"] == UNKNOWN  # pulumi.all([...]).apply over an unknown
    assert child.inputs["subnetIds"] == UNKNOWN
    assert child.inputs["nodeRoleArn"] == UNKNOWN
    assert "version" not in child.inputs  # a launch template decides the version (nodegroup.ts 1889-1890)
    assert child.inputs["launchTemplate"] == {"id": "lt-1", "version": "1"}


def test_what_pulumi_eks_refuses_or_cannot_reach_is_named_not_half_emulated() -> None:
    recorded = _recorded({})
    assert uncovered_mng({"cluster": CLUSTER, "nodeRole": ROLE, "kubeletExtraArgs": "--max-pods=110",
                          "operatingSystem": "AL2023"}, recorded.get) == []
    reasons = uncovered_mng({"cluster": {"cluster": {}}, "nodeRoleArn": "arn"}, recorded.get)
    assert [r.split(" ")[0] for r in reasons] == ["cluster"]
    reasons = uncovered_mng({"cluster": CLUSTER, "nodeRole": ROLE, "amiId": "ami-1", "gpu": True,
                             "operatingSystem": "AL2", "instanceTypes": ["g5g.xlarge"]}, recorded.get)
    assert reasons == ["inputs pulumi-eks refuses (You cannot specify both amiId and gpu when creating a managed node "
                       "group.)"]
    reasons = uncovered_mng({"cluster": CLUSTER, "nodeRole": ROLE, "operatingSystem": "AL2", "gpu": True,
                             "instanceTypes": ["g5g.xlarge"]}, recorded.get)
    assert reasons == ["inputs pulumi-eks refuses (No AMI type found for OS: AL2, GPU support: true, architecture: "
                       "arm64)"]
    reasons = uncovered_mng({"cluster": CLUSTER, "nodeRole": ROLE, "operatingSystem": "Bottlerocket",
                             "kubeletExtraArgs": "--max-pods=110"}, recorded.get)
    assert reasons == ["inputs pulumi-eks refuses (The 'kubeletExtraArgs' argument is not supported with "
                       "Bottlerocket.)"]


# pulumi-eks's own createManagedNodeGroup tests (nodejs/eks/nodes/nodegroup.test.ts at 7bf0c1b1, lines 395-562): a
# cluster of version 1.30 and a node role ARN; translated case by case.
def _core_130(**cluster: Any) -> dict[str, RecordedResource]:
    return _recorded({"version": "1.30", **cluster})


def _by_type(children: list[Child]) -> dict[str, Child]:
    return {c.type: c for c in children}


def test_the_version_defaults_to_the_cluster_s() -> None:  # nodegroup.test.ts 396-416
    [child] = _construct({"cluster": CLUSTER, "nodeRoleArn": "nodeRoleArn"}, _core_130())
    assert child.inputs["version"] == "1.30"


def test_a_version_of_the_user_s_is_kept() -> None:  # nodegroup.test.ts 418-439
    [child] = _construct({"cluster": CLUSTER, "nodeRoleArn": "nodeRoleArn", "version": "1.29"}, _core_130())
    assert child.inputs["version"] == "1.29"


def test_the_version_is_not_defaulted_with_a_launch_template_of_the_user_s() -> None:  # nodegroup.test.ts 441-465
    [child] = _construct({"cluster": CLUSTER, "nodeRoleArn": "nodeRoleArn",
                          "launchTemplate": {"id": "lt-id", "version": "lt-version"}}, _core_130())
    assert "version" not in child.inputs
    assert child.inputs["launchTemplate"] == {"id": "lt-id", "version": "lt-version"}


def test_efa_support_without_a_placement_group_zone_is_refused() -> None:  # nodegroup.test.ts 467-496
    reasons = uncovered_mng({"cluster": CLUSTER, "nodeRoleArn": "nodeRoleArn", "enableEfaSupport": True},
                            _core_130().get)
    assert reasons == ["inputs pulumi-eks refuses (You must specify placementGroupAvailabilityZone when enabling EFA "
                       "support.)"]


def test_no_placement_group_without_efa_support() -> None:  # nodegroup.test.ts 498-517
    children = _construct({"cluster": CLUSTER, "nodeRoleArn": "nodeRoleArn"}, _core_130())
    assert [c.type for c in children] == ["aws:eks/nodeGroup:NodeGroup"]


def test_efa_support_makes_a_placement_group_the_template_places_nodes_in() -> None:  # nodegroup.test.ts 519-561
    children = _construct({"cluster": CLUSTER, "nodeRoleArn": "nodeRoleArn", "enableEfaSupport": True,
                           "placementGroupAvailabilityZone": "us-west-2a",
                           "subnetIds": ["subnet-12345", "subnet-67890", "subnet-54321"]}, _core_130())
    kinds = _by_type(children)
    group = kinds["aws:ec2/placementGroup:PlacementGroup"]
    assert (group.name, group.inputs, group.cite) == ("system", {"strategy": "cluster"}, SOURCE["placementGroup"])
    template = kinds["aws:ec2/launchTemplate:LaunchTemplate"]
    assert template.inputs["placement"] == {"groupName": "pg-name"}
    assert template.property_dependencies["placement"] == ("urn:system",)
    # getEfaNetworkInterfaces and filterEfaSubnets read invokes the mocks do not answer: unknown, never made up.
    assert template.inputs["networkInterfaces"] == UNKNOWN
    assert kinds["aws:eks/nodeGroup:NodeGroup"].inputs["subnetIds"] == UNKNOWN


# The launch-template path (nodegroup.ts 2049-2072 and 2143-2301), which has no upstream unit test: each assertion
# names the lines it holds the emulation to.
def test_enable_imdsv2_sets_the_template_s_metadata_options() -> None:
    for enabled, tokens in ((True, "required"), (False, "optional")):  # nodegroup.ts 2236-2243
        kinds = _by_type(_construct({"cluster": CLUSTER, "nodeRole": ROLE, "enableIMDSv2": enabled}, _core_130()))
        template = kinds["aws:ec2/launchTemplate:LaunchTemplate"]
        assert template.name == "system-launchTemplate" and template.cite == SOURCE["lt"]
        assert template.inputs == {"metadataOptions": {"httpTokens": tokens, "httpPutResponseHopLimit": 2,
                                                       "httpEndpoint": "enabled"}}
        group = kinds["aws:eks/nodeGroup:NodeGroup"]
        assert group.inputs["launchTemplate"] == {"id": UNKNOWN, "version": UNKNOWN}  # a first preview
        assert group.property_dependencies["launchTemplate"] == ("urn:system-launchTemplate",)
        assert group.inputs["version"] == "1.30"  # no custom user data: the version stays (2068)


def test_disk_size_moves_to_the_template_s_root_or_data_volume() -> None:
    for os_, device in (("AL2023", "/dev/xvda"), ("Bottlerocket", "/dev/xvdb")):  # nodegroup.ts 2245-2270
        kinds = _by_type(_construct({"cluster": CLUSTER, "nodeRole": ROLE, "enableIMDSv2": True, "diskSize": 200,
                                     "operatingSystem": os_}, _core_130()))
        template = kinds["aws:ec2/launchTemplate:LaunchTemplate"]
        assert template.inputs["blockDeviceMappings"] == [{"deviceName": device, "ebs": {"volumeSize": 200}}]
        assert "diskSize" not in kinds["aws:eks/nodeGroup:NodeGroup"].inputs  # 2059-2060
    [child] = _construct({"cluster": CLUSTER, "nodeRole": ROLE, "diskSize": 200}, _core_130())
    assert child.inputs["diskSize"] == 200  # no custom template: the node group keeps it


def _state_cluster(**extra: Any) -> dict[str, RecordedResource]:
    """A cluster that exists (an update): its aws:eks/cluster:Cluster child with the state EKS reports."""
    recorded = _core_130(**extra)
    child = RecordedResource(
        urn="urn:child", type="aws:eks/cluster:Cluster", name="gpu-cluster-eksCluster", parent=CLUSTER, custom=True,
        inputs={}, properties=Struct(), outputs={
            "name": "gpu-cluster-eksCluster-1234567", "version": "1.30", "endpoint": "https://ABC.gr7.eks.example",
            "certificateAuthority": {"data": "Q0E="},
            "kubernetesNetworkConfig": {"ipFamily": "ipv4", "serviceIpv4Cidr": "10.100.0.0/16"}})
    return {**recorded, child.urn: child}


def test_custom_user_data_carries_the_taints_and_drops_ami_type_version_and_release_version() -> None:
    inputs = {"cluster": CLUSTER, "nodeRole": ROLE, "kubeletExtraArgs": "--max-pods=110", "amiType":
              "AL2023_x86_64_NVIDIA", "version": "1.30", "releaseVersion": "1.30.0-20260101",
              "instanceTypes": ["g5.xlarge"], "labels": {"role": "gpu"},
              "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]}
    kinds = _by_type(_construct(inputs, _state_cluster()))
    group = kinds["aws:eks/nodeGroup:NodeGroup"]
    assert not {"amiType", "version", "releaseVersion"} & set(group.inputs)  # nodegroup.ts 2068-2072
    assert group.inputs["taints"] == inputs["taints"] and group.inputs["instanceTypes"] == ["g5.xlarge"]
    template = kinds["aws:ec2/launchTemplate:LaunchTemplate"]
    text = base64.b64decode(template.inputs["userData"]).decode()  # nodegroup.ts 2229
    assert text == create_user_data("AL2023", {
        "name": "gpu-cluster-eksCluster-1234567", "apiServerEndpoint": "https://ABC.gr7.eks.example",
        "certificateAuthority": "Q0E=", "serviceCidr": "10.100.0.0/16"}, {
        "nodeGroupType": "managed", "kubeletExtraArgs": "--max-pods=110", "labels": {"role": "gpu"},
        "taints": {"nvidia.com/gpu": {"value": "true", "effect": "NoSchedule"}}})  # nodegroup.ts 2157-2170
    assert "--register-with-taints=nvidia.com/gpu=true:NoSchedule" in text
    assert template.inputs["imageId"] == UNKNOWN  # aws.ssm.getParameter, not answered offline (2289-2291)
    assert template.property_dependencies["userData"] == ("urn:child",)


def test_the_recommended_image_is_read_from_the_ssm_parameter_of_the_ami_type_and_version() -> None:
    """nodegroup.ts 2346-2391: the AMI type given (or derived), the node group's version (the cluster's by default)."""
    asked: list[tuple[str, dict[str, Any]]] = []

    def invoke(token: str, args: dict[str, Any]) -> dict[str, Any]:
        asked.append((token, args))
        return {"value": "ami-0recommended"}

    children: list[Child] = []

    def register(child: Child) -> tuple[str, dict[str, Any]]:
        children.append(child)
        return f"urn:{child.name}", {"id": UNKNOWN}

    construct_managed_node_group("urn:mng", "system", {
        "cluster": CLUSTER, "nodeRole": ROLE, "kubeletExtraArgs": "--max-pods=110", "operatingSystem": "AL2023",
        "gpu": True, "instanceTypes": ["g5.xlarge"]}, recorded=_state_cluster(), invoke=invoke, register=register)
    template = _by_type(children)["aws:ec2/launchTemplate:LaunchTemplate"]
    assert template.inputs["imageId"] == "ami-0recommended"
    assert asked == [("aws:ssm/getParameter:getParameter", {
        "name": "/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/nvidia/recommended/image_id"})]


def test_a_first_preview_leaves_the_user_data_unknown_as_a_whole() -> None:
    kinds = _by_type(_construct({"cluster": CLUSTER, "nodeRole": ROLE, "userData": "#!/bin/bash"}, _core_130()))
    assert kinds["aws:ec2/launchTemplate:LaunchTemplate"].inputs["userData"] == UNKNOWN


def test_an_ami_id_is_the_template_s_image_and_drops_the_ami_type() -> None:
    kinds = _by_type(_construct({"cluster": CLUSTER, "nodeRole": ROLE, "amiId": "ami-0abc",
                                 "operatingSystem": "Bottlerocket"}, _state_cluster()))
    template = kinds["aws:ec2/launchTemplate:LaunchTemplate"]
    assert template.inputs["imageId"] == "ami-0abc"  # nodegroup.ts 2289-2290
    assert "settings.kubernetes" in base64.b64decode(template.inputs["userData"]).decode()
    assert not {"amiType", "version"} & set(kinds["aws:eks/nodeGroup:NodeGroup"].inputs)


def test_operating_system_and_gpu_derive_the_ami_type() -> None:  # nodegroup.ts 2073-2083
    [child] = _construct({"cluster": CLUSTER, "nodeRole": ROLE, "operatingSystem": "AL2023", "gpu": True,
                          "instanceTypes": ["g5.xlarge"]}, _core_130())
    assert child.inputs["amiType"] == "AL2023_x86_64_NVIDIA"
    [child] = _construct({"cluster": CLUSTER, "nodeRole": ROLE, "operatingSystem": "Bottlerocket", "gpu": True,
                          "instanceTypes": ["g5g.xlarge"]}, _core_130())
    assert child.inputs["amiType"] == "BOTTLEROCKET_ARM_64_NVIDIA"
    [child] = _construct({"cluster": CLUSTER, "nodeRole": ROLE, "operatingSystem": "AL2023", "gpu": True,
                          "instanceTypes": UNKNOWN}, _core_130())
    assert child.inputs["amiType"] == UNKNOWN  # an apply over an unknown input


def test_the_node_group_records_the_property_dependencies_the_engine_would() -> None:
    recorded = _state_cluster()
    [child] = _construct({"cluster": CLUSTER, "nodeRole": ROLE}, recorded)
    assert child.property_dependencies["nodeRoleArn"] == (ROLE,)
    assert child.property_dependencies["version"] == ("urn:child",)
    assert child.property_dependencies["clusterName"] == ("urn:child",)


def _mandatory(doc: dict[str, Any]) -> list[str]:
    return sorted(v["policy"] for v in entries(doc) if v["enforcement"] == "mandatory")


@pytest.mark.parametrize("phase", ["preview", "update", "up"])
def test_a_program_of_managed_node_groups_has_its_node_groups_seen(run_preview: RunPreview, phase: str) -> None:
    """The program imports its own `vpc` module, which creates the network at import time (the shape of
    pulumi/examples aws-py-eks): the forked first preview used to crash on it ("attached to a different loop")."""
    run = run_preview("--program", str(PROGRAM), "--phase", phase, "--today", "2026-11-30", "--json")
    assert run.returncode in (0, 1), run.explain()
    doc = run.json()
    groups = {r["name"]: r for r in doc["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup"}
    assert set(groups) == {"system", "gpu"}
    assert {c["urn"] for c in doc["emulatedChildren"]} >= {g["urn"] for g in groups.values()}
    assert groups["gpu"]["inputs"]["taints"] == [{"effect": "NO_SCHEDULE", "key": "nvidia.com/gpu"}]
    assert "ManagedNodeGroup" not in " ".join(n["type"] for n in doc["notSeenOffline"])
    assert "aws:iam/openIdConnectProvider:OpenIdConnectProvider" in {r["type"] for r in doc["resources"]}
    assert "system-node-group-present" not in _mandatory(doc)
    assert {r["name"] for r in doc["resources"] if r["type"] == "aws:ec2/subnet:Subnet"} == {"eks-subnet-0",
                                                                                               "eks-subnet-1"}


def test_without_its_system_group_the_program_gets_the_true_finding(run_preview: RunPreview) -> None:
    run = run_preview("--program", str(PROGRAM), "--stack", "nosystem", "--phase", "update", "--today", "2026-11-30",
                      "--json")
    doc = run.json()
    assert run.returncode == 1, run.explain()
    found = [v for v in entries(doc) if v["policy"] == "system-node-group-present"]
    assert [v["enforcement"] for v in found] == ["mandatory"]
