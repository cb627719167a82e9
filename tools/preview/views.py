"""The result document's views of a recording (`tools.preview.result`): GPU pools, the services that can reach
them, Helm releases, Kubernetes objects.

GPU pools and the services that can reach them are read with the policy pack's own inventory
(`policies/gpu_guard/inventory.py`), so the summary and the policies agree on the label contract
(CONFIG.md section 2) and on scheduler reachability.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from policies.gpu_guard import inventory
from policies.gpu_guard.rules.gpu_nodes_tainted import is_gpu_pool
from tools.apiserver.check import is_kubernetes_object, kubernetes_object
from tools.engine.records import UNKNOWN, RecordedResource
from tools.preview.model import Recording

# What a value the engine does not know yet shows as (never the engine's placeholder, `records.UNKNOWN`).
NOT_KNOWN = "(known after create)"


def kubernetes_objects(resources: Iterable[RecordedResource]) -> list[tuple[RecordedResource, dict[str, Any]]]:
    return [(r, kubernetes_object(r)) for r in sorted(resources, key=lambda r: r.urn) if is_kubernetes_object(r)]


@dataclass(frozen=True)
class _AsPolicyResource:
    """The shape `policies.gpu_guard.inventory.build_inventory` reads."""

    resource_type: str
    props: Any
    urn: str
    name: str


def shown(value: Any, default: str = "?") -> str:
    """A value as a person reads it: the engine's unknown placeholder is "(known after create)"."""
    if value is None or value == "":
        return default
    return NOT_KNOWN if UNKNOWN in str(value) else str(value)


def views(recording: Recording) -> dict[str, Any]:
    """`gpuPools`, `services`, `helmReleases` and `kubernetesObjects` of the result document."""
    resources = sorted(recording.resources, key=lambda r: r.urn)
    inv = inventory.build_inventory(_AsPolicyResource(r.type, r.inputs, r.urn, r.name) for r in resources)
    gpu_pools = [p for p in inv.pools if is_gpu_pool(p)]
    pools = [{"name": p.name, "kind": p.kind, "os": shown(p.os), "driver": shown(p.driver_label),
              "driverSource": shown(p.driver_source), "instanceTypes": list(p.instance_types), "urn": p.urn}
             for p in sorted(gpu_pools, key=lambda p: (p.name, p.urn))]
    services = []
    for w in sorted(inv.workloads, key=lambda w: (w.name, w.urn)):
        if w.gpus == 0 and w.cuda_label is None:
            continue
        reach = inv.reach(w, gpu_pools)
        services.append({"name": w.name, "kind": w.kind, "cuda": shown(w.cuda_label), "gpus": w.gpus,
                         "pools": sorted({r.pool.name for r in reach}), "urn": w.urn})
    by_urn = {r.urn: r for r in resources}

    def release_name(urn: str, fallback: str) -> str:
        # The Helm release name (`name` input, else the provider's auto-name), not the Pulumi logical name; before
        # it is created an auto-name is not known (the engine's placeholder is never shown).
        res = by_urn[urn]
        return shown(res.inputs.get("name") or res.outputs.get("name"), fallback)

    releases = [{"name": release_name(r.urn, r.name), "chart": r.chart, "version": shown(r.version),
                 "namespace": shown(r.namespace, "default"), "urn": r.urn}
                for r in sorted(inv.releases, key=lambda r: (r.chart, r.name))]
    return {"gpuPools": pools, "services": services, "helmReleases": releases,
            "kubernetesObjects": len(kubernetes_objects(resources))}
