"""The price table (prices.yaml): loading, one clear error per bad row, lookups, and the age advisory.

A lookup answers a `Price` (USD, unit, source, date) or None: None means no readable source gave that price, and
the estimate says "not estimated" for it; nothing here ever turns a missing price into 0.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import yaml

PRICES_PATH = Path(__file__).resolve().parent / "prices.yaml"
STALE_AFTER = timedelta(days=180)

# The service prices the estimate multiplies, and their units.
SERVICE_KEYS: Mapping[str, str] = {
    "eks_standard_hour": "USD per cluster-hour, standard support",
    "eks_extended_hour": "USD per cluster-hour, extended support",
    "nat_gateway_hour": "USD per NAT gateway-hour",
    "nat_gateway_gb": "USD per GB processed by a NAT gateway",
    "public_ipv4_hour": "USD per public IPv4 address-hour",
    "alb_hour": "USD per Application Load Balancer-hour",
    "alb_lcu_hour": "USD per LCU-hour",
    "gp3_gb_month": "USD per gp3 GB-month",
    "gp3_iops_month": "USD per provisioned IOPS-month above 3,000",
    "gp3_mibps_month": "USD per provisioned MiB/s-month above 125",
    "snapshot_gb_month": "USD per standard snapshot GB-month",
    "fsr_dsu_hour": "USD per fast snapshot restore DSU-hour (one snapshot in one zone)",
    "volume_init_gib": "USD per GiB initialized at a provisioned volume initialization rate",
    "kms_key_month": "USD per customer-managed KMS key-month",
    "logs_ingest_gb": "USD per GB of CloudWatch Logs ingested",
}


class PriceTableError(ValueError):
    """prices.yaml is malformed: the message names the file, the batch and the key."""


@dataclass(frozen=True)
class Price:
    usd: float
    unit: str
    source: str
    date: date
    region: str

    def cite(self) -> str:
        unit = self.unit.removeprefix("USD ")
        return f"USD {self.usd:g} {unit} ({self.region}, {self.date.isoformat()}, {self.source})"


@dataclass(frozen=True)
class PriceTable:
    hours_per_month: int
    instances: Mapping[tuple[str, str], Price]  # (region, instance type)
    services: Mapping[tuple[str, str], Price]  # (region, key)

    def instance(self, region: str, instance_type: str) -> Price | None:
        return self.instances.get((region, instance_type))

    def service(self, region: str, key: str) -> Price | None:
        if key not in SERVICE_KEYS:
            raise KeyError(f"unknown service price key {key!r}; one of {sorted(SERVICE_KEYS)}")
        return self.services.get((region, key))

    @property
    def regions(self) -> tuple[str, ...]:
        return tuple(sorted({r for r, _ in self.instances} | {r for r, _ in self.services}))


def stale(prices: Iterable[Price], judged: date) -> list[Price]:
    """The prices older than 180 days on `judged` (the judged day, never the wall clock), oldest first."""
    return sorted({p for p in prices if judged - p.date > STALE_AFTER}, key=lambda p: (p.date, p.source, p.unit))


def _fail(path: Path, where: str, problem: str) -> PriceTableError:
    return PriceTableError(f"{path}: {where}: {problem}")


def parse(document: Any, path: Path = PRICES_PATH) -> PriceTable:
    if not isinstance(document, dict) or document.get("schema_version") != 1:
        raise _fail(path, "schema_version", "expected 1")
    hours = document.get("hours_per_month")
    if not isinstance(hours, int) or hours <= 0:
        raise _fail(path, "hours_per_month", f"{hours!r} is not a positive integer")
    instances: dict[tuple[str, str], Price] = {}
    services: dict[tuple[str, str], Price] = {}
    for index, batch in enumerate(document.get("batches") or []):
        where = f"batches[{index}]"
        if not isinstance(batch, dict):
            raise _fail(path, where, "not a mapping")
        region, kind, source = batch.get("region"), batch.get("kind"), batch.get("source")
        if not isinstance(region, str) or kind not in ("instance", "service") or not isinstance(source, str) \
                or not source.startswith("https://"):
            raise _fail(path, where, "needs region, kind (instance | service) and an https source")
        try:
            day = date.fromisoformat(str(batch.get("date")))
        except ValueError:
            raise _fail(path, f"{where}.date", f"{batch.get('date')!r} is not YYYY-MM-DD") from None
        target = instances if kind == "instance" else services
        for name, usd in (batch.get("prices") or {}).items():
            if kind == "service" and name not in SERVICE_KEYS:
                raise _fail(path, f"{where}.prices.{name}", f"unknown key; one of {sorted(SERVICE_KEYS)}")
            if isinstance(usd, bool) or not isinstance(usd, (int, float)) or usd <= 0:
                raise _fail(path, f"{where}.prices.{name}", f"{usd!r}: a price is a positive number (a price no "
                            "source gives is left out, never written as 0)")
            if (region, name) in target:
                raise _fail(path, f"{where}.prices.{name}", f"{region} already has a price for it "
                            f"({target[(region, name)].source}); one price per region")
            unit = "USD per instance-hour, Linux on-demand" if kind == "instance" else SERVICE_KEYS[name]
            target[(region, name)] = Price(float(usd), unit, source, day, region)
    return PriceTable(hours, instances, services)


@functools.cache
def load(path: Path = PRICES_PATH) -> PriceTable:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        document = yaml.load(path.read_text(), Loader=loader)
    except (OSError, yaml.YAMLError) as error:
        raise PriceTableError(f"{path}: cannot be read ({error})") from error
    return parse(document, path)
