"""How the inventory reads a managed node group: taints in EKS spelling, instance types from its launch
template, the template found by the `launchTemplate` dependency or by name (never by id)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

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
