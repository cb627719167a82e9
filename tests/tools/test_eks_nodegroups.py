"""The child pulumi-eks's ManagedNodeGroup registers, emulated offline (tools/engine/mocks/eks_nodegroups.py).

`eks.ManagedNodeGroup` is the most common pulumi-eks idiom (pulumi-eks examples/managed-nodegroups-py). Its Construct
runs in the pulumi-eks plugin and registers an `aws:eks/nodeGroup:NodeGroup` that the real preview analyzes; without
it the pack saw no node group and `system-node-group-present` said "Node groups: none" in every phase. The emulation
is pinned to the lines it comes from (tests/tools/fixtures/pulumi_eks_source.yaml, pulumi-eks 7bf0c1b1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from google.protobuf.struct_pb2 import Struct

from tests.conftest import RunPreview
from tools.engine.mocks.eks_children import Child
from tools.engine.mocks.eks_nodegroups import SOURCE, construct_managed_node_group, uncovered_mng
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
        return f"urn:{child.name}", {"id": UNKNOWN}

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


def test_inputs_outside_the_emulation_are_named_not_half_emulated() -> None:
    recorded = _recorded({})
    reasons = uncovered_mng({"cluster": CLUSTER, "nodeRole": ROLE, "kubeletExtraArgs": "--max-pods=110",
                             "operatingSystem": "AL2023"}, recorded.get)
    assert [r.split(" ")[0] for r in reasons] == ["kubeletExtraArgs", "operatingSystem"]
    reasons = uncovered_mng({"cluster": {"cluster": {}}, "nodeRoleArn": "arn"}, recorded.get)
    assert [r.split(" ")[0] for r in reasons] == ["cluster"]


def _mandatory(doc: dict[str, Any]) -> list[str]:
    return sorted(v["policy"] for v in doc["violations"] if v["enforcement"] == "mandatory")


@pytest.mark.parametrize("phase", ["preview", "update", "up"])
def test_a_program_of_managed_node_groups_has_its_node_groups_seen(run_preview: RunPreview, phase: str) -> None:
    """The program imports its own `vpc` module, which creates the network at import time (the shape of
    pulumi/examples aws-py-eks): the forked first preview used to crash on it ("attached to a different loop")."""
    run = run_preview("--program", str(PROGRAM), "--phase", phase, "--today", "2026-11-30", "--json")
    assert run.returncode in (0, 1), run.explain()
    doc = run.json()
    groups = {r["name"]: r for r in doc["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup"}
    assert set(groups) == {"system", "gpu"}
    assert {c["urn"] for c in doc["emulated_children"]} >= {g["urn"] for g in groups.values()}
    assert groups["gpu"]["inputs"]["taints"] == [{"effect": "NO_SCHEDULE", "key": "nvidia.com/gpu"}]
    assert "ManagedNodeGroup" not in " ".join(n["type"] for n in doc["not_seen_offline"])
    assert "aws:iam/openIdConnectProvider:OpenIdConnectProvider" in {r["type"] for r in doc["resources"]}
    assert "system-node-group-present" not in _mandatory(doc)
    assert {r["name"] for r in doc["resources"] if r["type"] == "aws:ec2/subnet:Subnet"} == {"eks-subnet-0",
                                                                                               "eks-subnet-1"}


def test_without_its_system_group_the_program_gets_the_true_finding(run_preview: RunPreview) -> None:
    run = run_preview("--program", str(PROGRAM), "--stack", "nosystem", "--phase", "update", "--today", "2026-11-30",
                      "--json")
    doc = run.json()
    assert run.returncode == 1, run.explain()
    found = [v for v in doc["violations"] if v["policy"] == "system-node-group-present"]
    assert [v["enforcement"] for v in found] == ["mandatory"]
