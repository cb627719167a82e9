"""`gpu-platform cost refresh`: re-read the instance prices' machine-readable source and rewrite its batch.

The one machine-readable source of on-demand prices reachable without AWS credentials is Karpenter's generated
table (`pkg/providers/pricing/zz_generated.pricing_aws.go` of aws/karpenter-provider-aws), which Karpenter's
maintainers regenerate from AWS's Price List API: a Go map `region -> instance type -> USD per hour`, headed
`// generated at <RFC 3339> for us-east-1`. It holds us-east-1 only. `read_karpenter` parses it; `refresh`
replaces the us-east-1 batch of policies/gpu_guard/pricing/prices.yaml with it (the other batches, read by hand
from AWS's pages, stay: a human re-reads them and edits the file). The date a price carries is the day its source
says it was generated, so the 180-day advisory (`pricing.table.stale`) measures the price, not our read.

Source of the file's format: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/pricing/zz_generated.pricing_aws.go
(lines 19-25: the header and the map), written by hack/code/prices_gen/main.go of the same tag.
"""

from __future__ import annotations

import re
import urllib.request
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import yaml

from policies.gpu_guard.pricing.table import PRICES_PATH

KARPENTER_TAG = "v1.14.1"
KARPENTER_FILE = "pkg/providers/pricing/zz_generated.pricing_aws.go"
KARPENTER_URL = f"https://raw.githubusercontent.com/aws/karpenter-provider-aws/{KARPENTER_TAG}/{KARPENTER_FILE}"
KARPENTER_SOURCE = f"https://github.com/aws/karpenter-provider-aws/blob/{KARPENTER_TAG}/{KARPENTER_FILE}"
_GENERATED = re.compile(r"^// generated at (\d{4}-\d{2}-\d{2})T[0-9:]+Z for ([a-z0-9-]+)$", re.M)
_REGION = re.compile(r'^\t"([a-z]{2}-[a-z]+-\d)": \{$', re.M)
_PRICE = re.compile(r'"([a-z0-9][a-z0-9.-]*\.[a-z0-9-]+)": ([0-9]+\.[0-9]+)')
_TIMEOUT_S = 20
_MAX_BYTES = 4 * 1024 * 1024


class RefreshError(Exception):
    """The source could not be read or parsed: the message says which and what to do."""


@dataclass(frozen=True)
class KarpenterTable:
    generated: date
    region: str
    prices: dict[str, float]


def read_karpenter(text: str) -> KarpenterTable:
    """The header's date and region and every `"type": price` pair of that region's map."""
    header = _GENERATED.search(text)
    regions = _REGION.findall(text)
    if not header or regions != [header.group(2)]:
        raise RefreshError(f"{KARPENTER_FILE}: expected one region map headed '// generated at <time> for <region>', "
                           f"found header {header.group(0) if header else None!r} and maps {regions}; the generator's "
                           "format changed: read hack/code/prices_gen/main.go and update tools/cost/refresh.py")
    prices = {name: float(value) for name, value in _PRICE.findall(text)}
    if len(prices) < 100:
        raise RefreshError(f"{KARPENTER_FILE}: only {len(prices)} prices parsed; refusing to replace the table")
    return KarpenterTable(date.fromisoformat(header.group(1)), header.group(2), prices)


def fetch_karpenter(url: str = KARPENTER_URL) -> str:
    try:
        with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as response:
            return str(response.read(_MAX_BYTES).decode())
    except OSError as error:
        raise RefreshError(f"could not read {url} ({error}); the table is unchanged. Without network, read the "
                           f"file at {KARPENTER_SOURCE} and pass it with --from-file") from error


def karpenter_batch(table: KarpenterTable, source: str = KARPENTER_SOURCE) -> dict[str, object]:
    return {"region": table.region, "kind": "instance", "source": source, "date": table.generated.isoformat(),
            "note": "Linux on-demand USD per instance-hour, Karpenter's generated table (from AWS's Price List API), "
                    f"'generated at' {table.generated.isoformat()}",
            "prices": dict(sorted(table.prices.items()))}


def replace_batch(document: dict[str, object], batch: dict[str, object]) -> dict[str, object]:
    """`document` with the batch of the same source and region replaced by `batch` in its place (appended when new),
    so a refresh that changes no price changes no line."""
    batches = list(document.get("batches", []) or [])  # type: ignore[call-overload]
    same = [i for i, b in enumerate(batches)
            if b.get("region") == batch["region"] and b.get("source") == batch["source"]]
    if same:
        batches[same[0]] = batch
        batches = [b for i, b in enumerate(batches) if i not in same[1:]]
    else:
        batches.append(batch)
    return {**document, "batches": batches}


def dump(document: dict[str, object]) -> str:
    """The table as YAML, one batch's prices per line group (flow maps keep the file short and diffable)."""
    header = (PRICES_PATH.read_text().split("\nschema_version", 1)[0] + "\n") if PRICES_PATH.exists() else ""
    body = yaml.safe_dump(document, sort_keys=False, width=120, default_flow_style=None)
    return header + body


def refresh(text: str, path: Path = PRICES_PATH) -> tuple[KarpenterTable, int]:
    """Rewrite the us-east-1 batch from `text`; returns the parsed table and how many prices changed."""
    table = read_karpenter(text)
    document = yaml.safe_load(path.read_text())
    old: dict[str, float] = next((b["prices"] for b in document.get("batches", [])
                                  if b.get("source") == KARPENTER_SOURCE
                and b.get("region") == table.region), {})
    changed = sum(1 for k, v in table.prices.items() if old.get(k) != v)
    path.write_text(dump(replace_batch(document, karpenter_batch(table))))
    return table, changed
