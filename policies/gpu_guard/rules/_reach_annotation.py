"""The pools a workload declares it can reach, read from its own inputs (not a policy).

In a first `pulumi preview` every Kubernetes object reaches stack policies with no properties, so the
CUDA / driver / GPU-count verdicts the stack policies give by correlating workloads with pools would
come only after the stack exists. The platform's InferenceService therefore stamps on each Deployment
the annotation `gpu-platform.io/reachable-pools`: a JSON list of the GPU pools its required node
affinity selects, each as its nodes are labelled (label contract, CONFIG.md section 2):
`{"pool", "os", "driver", "driverSource", "instanceTypes"}`, plus `"kubernetes"` (the nodes' kubelet version)
and, for a pool that pins its node image release, `"imageVersion"` (the Karpenter alias release, e.g. v1.68.0), so a
baked branch can be judged as the driver that release ships. Resource policies (`*-resource`) judge the
workload against those pools from its inputs alone, before it is created. A workload without the
annotation (hand-written) is left to the stack policies, which judge it once its properties are known.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..inventory import Workload, build_inventory, get

REACHABLE_POOLS_ANNOTATION = "gpu-platform.io/reachable-pools"


@dataclass(frozen=True)
class DeclaredPool:
    """One GPU pool as the workload's annotation declares it."""

    name: str
    os: str
    driver: str
    driver_source: str
    instance_types: tuple[str, ...]
    image_version: str | None = None  # the pinned node image release (baked-driver pools), None: not pinned
    kubernetes: str | None = None  # the nodes' Kubernetes (kubelet) version, None: not declared


@dataclass(frozen=True)
class DeclaredReach:
    """A workload and the pools it declares, or the reason its annotation cannot be read."""

    workload: Workload
    pools: tuple[DeclaredPool, ...]
    error: str | None = None


def _pool(item: Any) -> DeclaredPool:
    if not isinstance(item, dict) or not isinstance(item.get("pool"), str) or not isinstance(item.get("driver"), str):
        raise ValueError(f"entry {item!r} lacks a string pool and driver")
    types = item.get("instanceTypes") or []
    if not isinstance(types, list):
        raise ValueError(f"entry {item['pool']!r}: instanceTypes is not a list")
    image_version, kubernetes = item.get("imageVersion"), item.get("kubernetes")
    for key, value in (("imageVersion", image_version), ("kubernetes", kubernetes)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"entry {item['pool']!r}: {key} is not a string")
    return DeclaredPool(item["pool"], str(item.get("os", "")), item["driver"], str(item.get("driverSource", "")),
                        tuple(str(t) for t in types), image_version or None, kubernetes or None)


def declared_reach(args: Any) -> Iterator[DeclaredReach]:
    """The workload of this resource with the pools it declares; nothing when it declares none."""
    raw = get(args.props, "metadata", "annotations", REACHABLE_POOLS_ANNOTATION)
    if raw is None:
        return
    for workload in build_inventory([args]).workloads:
        try:
            items = json.loads(str(raw))
            if not isinstance(items, list):
                raise ValueError("not a JSON list")
            yield DeclaredReach(workload, tuple(_pool(i) for i in items))
        except ValueError as err:
            yield DeclaredReach(workload, (), f"annotation {REACHABLE_POOLS_ANNOTATION} is unreadable: {err}")
