"""Node affinity operators as the policies read them: `Gt`, `Lt`, `In`, `NotIn`, `Exists`, `DoesNotExist`.

A workload reaches a pool when every expression of one required node-selector term matches the
labels that pool's nodes carry. Numeric operators are tested on the label's value, one below and one
above it; set operators with the value, without it and with the label absent. Semantics:
https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#operators (Gt / Lt compare
the label value as an integer, NotIn and DoesNotExist match a node without the label).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from policies.gpu_guard.inventory import build_inventory

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}


def _resource(rtype: str, name: str, props: dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(resource_type=rtype, name=name, props=props, urn=f"urn:pulumi:test::p::{rtype}::{name}")


NODE_GROUP = _resource("aws:eks/nodeGroup:NodeGroup", "gpu-dev-a10g", {
    "nodeGroupName": "a10g",
    "instanceTypes": ["g5.12xlarge"],
    "labels": {"gpu-platform.io/pool": "a10g", "gpu-platform.io/gpu-count": "4"},
    "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
})

NODE_POOL = _resource("kubernetes:karpenter.sh/v1:NodePool", "gpu-spot", {
    "metadata": {"name": "gpu-spot"},
    "spec": {"template": {
        "metadata": {"labels": {"gpu-platform.io/pool": "gpu-spot"}},
        "spec": {
            "requirements": [
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6.xlarge", "g5.xlarge"]},
                {"key": "topology.kubernetes.io/zone", "operator": "Exists"},
            ],
            "taints": [GPU_TAINT],
        },
    }},
})


def _reach(resource: SimpleNamespace, *expressions: dict[str, Any]) -> tuple[str, ...] | None:
    """The instance types of `resource`'s pool a GPU pod with these required expressions can land on."""
    pod = _resource("kubernetes:core/v1:Pod", "probe", {
        "metadata": {"name": "probe"},
        "spec": {
            "containers": [{"name": "c", "image": "nvidia/cuda:12.8.0-base-ubuntu24.04",
                            "resources": {"limits": {"nvidia.com/gpu": 1}}}],
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": list(expressions)}]}}},
        },
    })
    inv = build_inventory([resource, pod])
    assert len(inv.pools) == 1 and len(inv.workloads) == 1
    reaches = inv.reach(inv.workloads[0], inv.pools)
    return reaches[0].instance_types if reaches else None


def _expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    expr: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        expr["values"] = list(values)
    return expr


COUNT = "gpu-platform.io/gpu-count"  # the node group's nodes carry 4


@pytest.mark.parametrize(("bound", "reached"), [("3", True), ("4", False), ("5", False)])
def test_gt_matches_only_label_values_above_the_bound(bound, reached):
    assert (_reach(NODE_GROUP, _expr(COUNT, "Gt", bound)) is not None) is reached


@pytest.mark.parametrize(("bound", "reached"), [("3", False), ("4", False), ("5", True)])
def test_lt_matches_only_label_values_below_the_bound(bound, reached):
    assert (_reach(NODE_GROUP, _expr(COUNT, "Lt", bound)) is not None) is reached


@pytest.mark.parametrize("operator", ["Gt", "Lt"])
def test_numeric_operators_never_match_a_node_without_the_label_or_a_bound_that_is_not_a_number(operator):
    assert _reach(NODE_GROUP, _expr("gpu-platform.io/absent", operator, "0")) is None
    assert _reach(NODE_GROUP, _expr(COUNT, operator, "four")) is None


@pytest.mark.parametrize(("values", "reached"), [
    (("a10g",), True),  # the node's value
    (("a10g", "l4"), True),  # among others
    (("l4",), False),  # another value only
])
def test_in_matches_when_the_node_value_is_listed(values, reached):
    assert (_reach(NODE_GROUP, _expr("gpu-platform.io/pool", "In", *values)) is not None) is reached


@pytest.mark.parametrize(("values", "reached"), [
    (("a10g",), False),
    (("a10g", "l4"), False),
    (("l4",), True),
])
def test_notin_matches_when_the_node_value_is_not_listed(values, reached):
    assert (_reach(NODE_GROUP, _expr("gpu-platform.io/pool", "NotIn", *values)) is not None) is reached


def test_in_never_and_notin_always_match_a_node_without_the_label():
    assert _reach(NODE_GROUP, _expr("gpu-platform.io/absent", "In", "x")) is None
    assert _reach(NODE_GROUP, _expr("gpu-platform.io/absent", "NotIn", "x")) == ("g5.12xlarge",)


def test_exists_and_does_not_exist_look_only_at_the_key():
    assert _reach(NODE_GROUP, _expr("gpu-platform.io/pool", "Exists")) == ("g5.12xlarge",)
    assert _reach(NODE_GROUP, _expr("gpu-platform.io/absent", "Exists")) is None
    assert _reach(NODE_GROUP, _expr("gpu-platform.io/pool", "DoesNotExist")) is None
    assert _reach(NODE_GROUP, _expr("gpu-platform.io/absent", "DoesNotExist")) == ("g5.12xlarge",)


def test_an_unknown_operator_matches_nothing():
    assert _reach(NODE_GROUP, _expr("gpu-platform.io/pool", "Equals", "a10g")) is None


INSTANCE = "node.kubernetes.io/instance-type"  # the NodePool may launch g6.xlarge or g5.xlarge


@pytest.mark.parametrize(("operator", "values", "types"), [
    ("In", ("g5.xlarge",), ("g5.xlarge",)),
    ("In", ("g5.xlarge", "g6.xlarge"), ("g6.xlarge", "g5.xlarge")),
    ("In", ("p5.48xlarge",), None),
    ("NotIn", ("g5.xlarge",), ("g6.xlarge",)),
    ("NotIn", ("g5.xlarge", "g6.xlarge"), None),
    ("NotIn", ("p5.48xlarge",), ("g6.xlarge", "g5.xlarge")),
])
def test_set_operators_on_a_pool_that_launches_several_instance_types_narrow_them(operator, values, types):
    assert _reach(NODE_POOL, _expr(INSTANCE, operator, *values)) == types


def test_a_label_the_pool_requires_to_exist_with_any_value_may_match_any_value():
    zone = "topology.kubernetes.io/zone"
    assert _reach(NODE_POOL, _expr(zone, "In", "us-west-2a")) == ("g6.xlarge", "g5.xlarge")
    assert _reach(NODE_POOL, _expr(zone, "Exists")) == ("g6.xlarge", "g5.xlarge")
    assert _reach(NODE_POOL, _expr(zone, "DoesNotExist")) is None


@pytest.mark.parametrize(("toleration", "tolerated"), [
    ({"key": "nvidia.com/gpu", "operator": "Exists"}, True),
    ({"operator": "Exists"}, True),  # an empty key with Exists tolerates every taint
    ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}, True),
    ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}, False),
    ({"key": "other", "operator": "Exists"}, False),
    ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "true"}, True),
    ({"key": "nvidia.com/gpu", "value": "true"}, True),  # Equal is the default operator
    ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "false"}, False),
    ({"key": "nvidia.com/gpu", "operator": "Equal"}, False),
])
def test_toleration_operators_against_the_gpu_taint(toleration, tolerated):
    from policies.gpu_guard.inventory import Taint, tolerates  # noqa: PLC0415

    assert tolerates([toleration], Taint("nvidia.com/gpu", "true", "NoSchedule")) is tolerated
