"""A small price table and stack for the estimate's tests: round prices, so every figure is arithmetic a reader can
check by hand."""

from __future__ import annotations

from datetime import date
from typing import Any

from policies.gpu_guard.pricing.shape import KarpenterPool, ModelVolume, NodeGroup, Service, Stack
from policies.gpu_guard.pricing.table import PriceTable, parse

JUDGED = date(2026, 12, 7)
SRC = "https://example.com/prices"
REGION = "us-test-1"

SERVICES = {"eks_standard_hour": 0.1, "eks_extended_hour": 0.6, "nat_gateway_hour": 0.05, "nat_gateway_gb": 0.05,
            "public_ipv4_hour": 0.005, "alb_hour": 0.02, "alb_lcu_hour": 0.008, "gp3_gb_month": 0.1,
            "gp3_iops_month": 0.005, "gp3_mibps_month": 0.04, "snapshot_gb_month": 0.05, "fsr_dsu_hour": 0.75,
            "kms_key_month": 1.0, "logs_ingest_gb": 0.5}
INSTANCES = {"m7i.large": 0.1, "g5.xlarge": 1.0, "g6.xlarge": 0.8, "g5.12xlarge": 6.0, "g6e.12xlarge": 10.0}


def table(instances: dict[str, float] | None = None, services: dict[str, float] | None = None,
          day: str = "2026-12-01") -> PriceTable:
    batches: list[dict[str, Any]] = [
        {"region": REGION, "kind": "instance", "source": SRC, "date": day,
         "prices": INSTANCES if instances is None else instances},
        {"region": REGION, "kind": "service", "source": SRC, "date": day,
         "prices": SERVICES if services is None else services},
    ]
    return parse({"schema_version": 1, "hours_per_month": 730, "batches": batches})


def system(running: int = 2, maximum: int = 3) -> NodeGroup:
    return NodeGroup("system", "gpu-platform:systemNodeGroup", ("m7i.large",), "on-demand", running, maximum, 50,
                     system=True)


def stack(**overrides: Any) -> Stack:
    base: dict[str, Any] = {"name": "t", "region": REGION, "zones": 2, "nat_gateways": 1, "kubernetes_version": "1.35",
                            "support_type": "STANDARD", "node_groups": (system(),)}
    base.update(overrides)
    return Stack(**base)


def karpenter(name: str = "burst", types: tuple[str, ...] = ("g6.xlarge", "g5.xlarge"),
              capacity: tuple[str, ...] = ("on-demand",), fallback: bool = False, max_gpus: int | None = 4
              ) -> KarpenterPool:
    return KarpenterPool(name, "gpu-platform:karpenter.pools[0]", types, capacity, fallback, max_gpus, 100)


def service(name: str = "svc", pools: tuple[str, ...] = ("burst",), **overrides: Any) -> Service:
    base: dict[str, Any] = {"name": name, "key": "gpu-platform:inferenceServices[0]", "pools": pools,
                            "gpus_per_replica": 1, "min_replicas": 0, "max_replicas": 2}
    base.update(overrides)
    return Service(**base)


def volume(**overrides: Any) -> ModelVolume:
    base: dict[str, Any] = {"size_gib": 100, "snapshot_gib": 80, "iops": 3000, "throughput_mibps": 125,
                            "fast_snapshot_restore": False}
    base.update(overrides)
    return ModelVolume(**base)
