"""Inventory: which operator drivers serve which pool, including the release's chart default."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from policies.gpu_guard.inventory import build_inventory


def _resource(rtype: str, name: str, props: dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(resource_type=rtype, name=name, props=props, urn=f"urn:pulumi:test::p::{rtype}::{name}")


def _ubuntu_pool(name: str) -> SimpleNamespace:
    return _resource("aws:eks/nodeGroup:NodeGroup", name, {
        "instanceTypes": ["g5.xlarge"],
        "labels": {"gpu-platform.io/pool": name, "gpu-platform.io/os": "ubuntu-24.04",
                   "gpu-platform.io/driver-source": "operator"},
        "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
    })


def _operator(values: dict[str, Any]) -> SimpleNamespace:
    return _resource("kubernetes:helm.sh/v3:Release", "gpu-operator",
                     {"chart": "gpu-operator", "version": "v26.7.0", "values": values})


def test_pinned_driver_version_serves_every_pool_and_wins_over_the_chart_default():
    inv = build_inventory([_ubuntu_pool("a10g"), _operator({"driver": {"version": "580.173.02"}})])
    drivers = inv.drivers_for(inv.pools[0], default_version="595.91.07")
    assert [(d.name, d.version, d.source) for d in drivers] == [("default", "580.173.02", "helm-values")]


def test_release_without_driver_version_serves_the_chart_default_when_it_is_known():
    inv = build_inventory([_ubuntu_pool("a10g"), _operator({"driver": {"enabled": True}})])
    assert inv.drivers_for(inv.pools[0]) == []
    drivers = inv.drivers_for(inv.pools[0], default_version="595.91.07")
    assert [(d.name, d.version) for d in drivers] == [("chart-default", "595.91.07")]


def test_chart_default_is_not_deployed_when_the_nvidiadriver_crd_replaces_the_default_cr():
    values = {"driver": {"nvidiaDriverCRD": {"enabled": True, "deployDefaultCR": False}}}
    nvidia_driver = _resource("kubernetes:nvidia.com/v1alpha1:NVIDIADriver", "a10g-driver", {
        "metadata": {"name": "a10g-driver"},
        "spec": {"version": "580.173.02", "nodeSelector": {"gpu-platform.io/pool": "a10g"}},
    })
    inv = build_inventory([_ubuntu_pool("a10g"), _ubuntu_pool("l40s"), _operator(values), nvidia_driver])
    a10g, l40s = inv.pools
    assert [d.name for d in inv.drivers_for(a10g, default_version="595.91.07")] == ["a10g-driver"]
    assert inv.drivers_for(l40s, default_version="595.91.07") == []


def test_disabled_driver_has_no_chart_default():
    inv = build_inventory([_ubuntu_pool("a10g"), _operator({"driver": {"enabled": False}})])
    assert inv.drivers_for(inv.pools[0], default_version="595.91.07") == []
