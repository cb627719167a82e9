"""How the inventory reads a managed node group: taints in EKS spelling, instance types from its launch
template, the template found by the `launchTemplate` dependency or by name (never by id)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from policies.gpu_guard.inventory import build_inventory

LT = "aws:ec2/launchTemplate:LaunchTemplate"
NG = "aws:eks/nodeGroup:NodeGroup"


def _resource(rtype: str, name: str, props: dict[str, Any], **deps: list[Any]) -> SimpleNamespace:
    return SimpleNamespace(resource_type=rtype, name=name, props=props, urn=f"urn:pulumi:test::p::{rtype}::{name}",
                           property_dependencies=deps)


def _group(**props: Any) -> dict[str, Any]:
    return {"clusterName": "gpu-dev", "nodeGroupName": "a10g", "labels": {"gpu-platform.io/pool": "a10g"},
            "scalingConfig": {"minSize": 0, "desiredSize": 1, "maxSize": 2}, **props}


def test_taints_in_eks_spelling_read_as_kubernetes_effects():
    taints = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"},
              {"key": "dedicated", "value": "infer", "effect": "NO_EXECUTE"},
              {"key": "soft", "value": "x", "effect": "PREFER_NO_SCHEDULE"},
              {"key": "odd", "value": "y", "effect": "NoSchedule"},
              {"effect": "NO_SCHEDULE"}]
    (pool,) = build_inventory([_resource(NG, "gpu-dev-a10g", _group(instanceTypes=["g5.xlarge"], taints=taints))]).pools
    assert [(t.key, t.value, t.effect) for t in pool.taints] == [
        ("nvidia.com/gpu", "true", "NoSchedule"), ("dedicated", "infer", "NoExecute"),
        ("soft", "x", "PreferNoSchedule"), ("odd", "y", "NoSchedule"), ("", "", "NoSchedule")]


def test_instance_types_come_from_the_launch_template_named_when_the_group_lists_none():
    template = _resource(LT, "gpu-dev-a10g-lt", {"name": "a10g-lt", "instanceType": "g5.2xlarge"})
    group = _resource(NG, "gpu-dev-a10g", _group(launchTemplate={"name": "a10g-lt", "version": "1"}))
    (pool,) = build_inventory([template, group]).pools
    assert pool.instance_types == ("g5.2xlarge",)


def test_the_launch_template_dependency_wins_over_the_name_and_an_id_is_never_followed():
    by_name = _resource(LT, "named-lt", {"name": "a10g-lt", "instanceType": "g5.xlarge"})
    linked = _resource(LT, "linked-lt", {"name": "other", "instanceType": "g6.xlarge"})
    group = _resource(NG, "gpu-dev-a10g", _group(launchTemplate={"name": "a10g-lt"}), launchTemplate=[linked])
    assert build_inventory([by_name, linked, group]).pools[0].instance_types == ("g6.xlarge",)
    by_id = _resource(NG, "gpu-dev-a10g", _group(launchTemplate={"id": "lt-0123"}))
    with_id = _resource(LT, "id-lt", {"name": "x", "instanceType": "g5.xlarge"})
    assert build_inventory([with_id, by_id]).pools[0].instance_types == ()


def test_listed_instance_types_win_over_the_template():
    template = _resource(LT, "gpu-dev-a10g-lt", {"name": "a10g-lt", "instanceType": "g5.2xlarge"})
    group = _resource(NG, "gpu-dev-a10g", _group(instanceTypes=["g5.xlarge"], launchTemplate={"name": "a10g-lt"}))
    assert build_inventory([template, group]).pools[0].instance_types == ("g5.xlarge",)
    bare = _resource(LT, "bare-lt", {"name": "bare"})
    no_type = _resource(NG, "gpu-dev-a10g", _group(launchTemplate={"name": "bare"}))
    assert build_inventory([bare, no_type]).pools[0].instance_types == ()


NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
ASG = "aws:autoscaling/group:Group"


def _node_class(name: str, spec: dict[str, Any]) -> SimpleNamespace:
    return _resource(NODE_CLASS, name, {"metadata": {"name": name}, "spec": spec})


def _node_pool(class_name: str, **template_spec: Any) -> SimpleNamespace:
    return _resource(NODE_POOL, "gpu-spot", {"metadata": {"name": "gpu-spot-k8s"}, "spec": {"template": {
        "metadata": {"labels": {"team": "ml"}},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": class_name},
                 **template_spec}}}})


@pytest.mark.parametrize(("spec", "os"), [
    ({"amiSelectorTerms": [{"alias": "bottlerocket@v1.50.0"}]}, "bottlerocket"),
    ({"amiSelectorTerms": [{"id": "ami-0123"}, {"alias": "AL2023@latest"}]}, "al2023"),
    ({"amiSelectorTerms": [{"alias": "ubuntu@latest"}], "amiFamily": "Bottlerocket"}, "bottlerocket"),
    ({"amiSelectorTerms": [{"id": "ami-0123"}], "amiFamily": "Custom"}, None),
    ({"amiSelectorTerms": [{"alias": "al2@latest"}]}, None),
])
def test_a_nodepool_takes_the_os_its_node_class_bakes_a_driver_into(spec, os):
    (pool,) = build_inventory([_node_class("gpu", spec), _node_pool("gpu")]).pools
    assert (pool.node_class, pool.os_hint) == ("gpu", os)


def test_a_nodepool_reads_its_name_labels_taints_and_requirements():
    requirements = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6.xlarge", "g5.xlarge"]},
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g5.xlarge", "p5.48xlarge"]},
        {"key": "topology.kubernetes.io/zone", "operator": "Exists"},
        {"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": ["on-demand"]},
    ]
    taints = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    (pool,) = build_inventory([_node_pool("missing", requirements=requirements, taints=taints)]).pools
    assert (pool.name, pool.kind, pool.labels, pool.min_size, pool.node_class, pool.os_hint) == (
        "gpu-spot-k8s", "karpenter-nodepool", {"team": "ml"}, 0, "missing", None)
    assert [(t.key, t.value, t.effect) for t in pool.taints] == [("nvidia.com/gpu", "true", "NoSchedule")]
    assert pool.instance_types == ("g5.xlarge",)  # the types every In requirement on the instance type allows
    assert pool.label_domain["node.kubernetes.io/instance-type"] == frozenset({"g5.xlarge"})  # both In: narrowed
    assert pool.label_domain["topology.kubernetes.io/zone"] is None  # exists with a value we cannot tell
    assert pool.label_domain["karpenter.sh/capacity-type"] is None  # NotIn: some other value (spot, reserved)
    assert pool.label_domain["kubernetes.io/arch"] == frozenset({"amd64"})  # Karpenter's default
    assert pool.label_domain["karpenter.k8s.aws/instance-family"] == frozenset({"g5"})  # from the instance type
    assert pool.label_domain["karpenter.k8s.aws/instance-gpu-name"] == frozenset({"a10g"})  # from the matrix
    assert pool.label_domain["karpenter.sh/nodepool"] == frozenset({"gpu-spot-k8s"})


def test_a_self_managed_group_reads_labels_taints_and_kubelet_from_its_tags():
    tags = [
        {"key": "k8s.io/cluster-autoscaler/node-template/label/gpu-platform.io/pool", "value": "l4"},
        {"key": "k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu", "value": "true:NoSchedule"},
        {"key": "gpu-platform.io/kubelet-version", "value": "1.34"},
        {"key": "Name", "value": "gpu-l4"},
    ]
    template = _resource(LT, "l4-lt", {"name": "l4-lt", "instanceType": "g6.xlarge"})
    group = _resource(ASG, "gpu-l4", {"minSize": 1, "tags": tags, "launchTemplate": {"name": "l4-lt"},
                                      "mixedInstancesPolicy": {"launchTemplate": {"overrides": [
                                          {"instanceType": "g6.2xlarge"}, {"instanceType": "g6.xlarge"}, {}]}}})
    (pool,) = build_inventory([template, group]).pools
    assert (pool.name, pool.kind, pool.labels, pool.min_size, pool.kubelet_version) == (
        "l4", "self-managed", {"gpu-platform.io/pool": "l4"}, 1, "1.34")
    assert [(t.key, t.value, t.effect) for t in pool.taints] == [("nvidia.com/gpu", "true", "NoSchedule")]
    assert pool.instance_types == ("g6.xlarge", "g6.2xlarge")
