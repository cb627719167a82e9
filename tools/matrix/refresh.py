"""matrix.yaml against what NVIDIA publishes: the differences, the live fetch, and the rewrite of data rows.

`compare` lists every field where matrix.yaml disagrees with an `UpstreamReading` (tools.matrix.nvidia_upstream),
except the fields a row keeps on purpose with an `override` (reason, source, and the upstream value it was
written against). `fetch_reading` reads the same files live: the newest docs pages and `.common-ci.yml`
from GitHub, and the `tags/list` of `nvcr.io/nvidia/driver`, each bounded by a timeout. `write` puts the
upstream values into the data rows, keeping each row's `source` and `reviewed` (a human reviews the change).
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from policies.gpu_guard.matrix import MatrixData, OperatorRelease
from policies.gpu_guard.matrix.findings import OS_TAG
from policies.gpu_guard.registry import RegistryUnavailable, list_tags
from policies.gpu_guard.versions import parse_driver_version
from tools.matrix.nvidia_upstream import (
    CI_SOURCE,
    DocSnapshot,
    KubernetesRanges,
    OperatorListing,
    UpstreamError,
    UpstreamReading,
    read_ci_text,
    read_life_cycle,
    read_platform,
)

# Live sources read by `refresh --fetch` (the newest version of each snapshot file).
DOCS_BASE = "https://raw.githubusercontent.com/NVIDIA/cloud-native-docs/main/gpu-operator"
CI_URL = "https://raw.githubusercontent.com/NVIDIA/gpu-driver-container/main/.common-ci.yml"
DRIVER_REPOSITORY = "nvcr.io/nvidia/driver"
_TAG = re.compile(r"^(\d{3}\.\d{2,3}\.\d{2})-(ubuntu\d{2}\.\d{2})$")
# Precompiled tags: `<branch>-<kernel>-<os_tag>`, the kernel as `uname -r` prints it (GetPrecompiledImagePath,
# https://github.com/NVIDIA/gpu-operator/blob/v26.7.0/controllers/object_controls.go#L3391-L3394), e.g.
# 595-7.0.0-1008-aws-ubuntu26.04 (gpu-driver-container issue #853).
_PRECOMPILED_TAG = re.compile(r"^(\d{3})-(\d+\.\d+)\.\d+-\d+-([a-z][a-z0-9-]*?)-(ubuntu\d{2}\.\d{2})$")
_MAX_FILE = 8 * 1024 * 1024
_IMAGE_OS_TAGS = tuple(OS_TAG.values())


@dataclass(frozen=True)
class Difference:
    """One field where matrix.yaml and the upstream reading disagree."""

    section: str  # operators | driver_images | precompiled_builds | precompiled_kernels
    key: str  # the row: v26.3.1, ubuntu22.04
    field: str
    matrix: Any
    upstream: Any
    writable: bool = True

    def describe(self) -> str:
        """One line: where, what matrix.yaml says, what upstream says."""
        where = f"{self.section}[{self.key}].{self.field}"
        return f"{where}: matrix.yaml {_show(self.matrix)}; upstream {_show(self.upstream)}"


def _show(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, list | tuple) and value and isinstance(value[0], list | tuple):
        return "; ".join(_show(item) for item in value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(str(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_show(v)}" for k, v in value.items()) + "}"
    return str(value)


def _newest_first(versions: Iterable[str]) -> list[str]:
    return sorted(set(versions), key=lambda v: parse_driver_version(v).key, reverse=True)


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.lstrip("v").replace(".x", ".999").split("."))


def _kubernetes_of(row: OperatorRelease, ranges: KubernetesRanges) -> dict[str, list[str]]:
    systems = sorted(set(row.kubernetes) | {os for os in ranges.bare_metal if os in OS_TAG})
    return {os: list(ranges.bare_metal[os]) for os in systems if os in ranges.bare_metal}


def _eks_of(row: OperatorRelease, ranges: KubernetesRanges) -> Any:
    systems = [os for os in row.kubernetes if os in ranges.eks] or [os for os in ranges.eks if os in OS_TAG]
    spans = {ranges.eks[os] for os in systems}
    if len(spans) == 1:
        return list(spans.pop())
    return {os: list(ranges.eks[os]) for os in systems} or None


def _operator_differences(row: OperatorRelease, reading: UpstreamReading) -> list[Difference]:
    found: list[Difference] = []
    listing: OperatorListing | None = reading.operator(row.version)
    if listing is not None:
        if _newest_first(row.drivers) != listing.drivers:
            found.append(Difference("operators", row.version, "drivers", _newest_first(row.drivers), listing.drivers))
        if listing.release == row.version and listing.default and listing.default != row.default_driver:
            found.append(Difference("operators", row.version, "default_driver", row.default_driver, listing.default))
        if listing.release == row.version and listing.recommended != row.recommended_driver:
            found.append(
                Difference("operators", row.version, "recommended_driver", row.recommended_driver, listing.recommended)
            )
    ranges = reading.ranges(row.version)
    if ranges is not None:
        mine = {os: list(span) for os, span in sorted(row.kubernetes.items())}
        theirs = _kubernetes_of(row, ranges)
        if theirs and mine != theirs:
            found.append(Difference("operators", row.version, "kubernetes", mine, theirs))
        eks = _eks_of(row, ranges)
        if eks is not None and list(row.eks) != eks:
            found.append(Difference("operators", row.version, "eks", list(row.eks), eks, isinstance(eks, list)))
    return found


def _missing_operators(data: MatrixData, reading: UpstreamReading) -> list[Difference]:
    known = {row.version for row in data.operators}
    lines = {".".join(v.lstrip("v").split(".")[:2]) + ".x" for v in known}
    oldest = min((_release_key(v) for v in known), default=(0,))
    found = []
    for release in sorted(reading.operators, key=_release_key):
        if release in known or release in lines or _release_key(release) < oldest:
            continue
        listing = reading.operators[release]
        found.append(Difference("operators", release, "row", None, listing.drivers, writable=False))
    return found


def _override_holds(row: Any, difference: Difference) -> bool:
    return any(o.field == difference.field and _same(o.upstream, difference.upstream) for o in row.override)


def _same(recorded: Any, upstream: Any) -> bool:
    return bool(_plain(recorded) == _plain(upstream))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, date):
        return value.isoformat()
    return str(value) if value is not None else None


def compare(data: MatrixData, reading: UpstreamReading) -> list[Difference]:
    """Every disagreement between matrix.yaml and the reading that no row-level override accounts for."""
    found: list[Difference] = []
    for row in data.operators:
        found.extend(d for d in _operator_differences(row, reading) if not _override_holds(row, d))
    found.extend(_missing_operators(data, reading))
    images = {row.os_tag: row for row in data.driver_images}
    for os_tag in _IMAGE_OS_TAGS:
        upstream = reading.driver_images.get(os_tag)
        if upstream is None:
            continue
        image_row = images.get(os_tag)
        mine = _newest_first(image_row.versions) if image_row else []
        theirs = _newest_first(upstream) if reading.history else _newest_first(set(upstream) | set(mine))
        difference = Difference("driver_images", os_tag, "versions", mine, theirs)
        if mine != theirs and not (image_row is not None and _override_holds(image_row, difference)):
            found.append(difference)
    for os_tag in _IMAGE_OS_TAGS:
        steps = reading.precompiled.get(os_tag)
        if not steps:
            continue
        rows = sorted((r for r in data.precompiled_builds if r.os_tag == os_tag), key=lambda r: r.since)
        mine_steps = [[r.since.isoformat(), list(r.branches)] for r in rows]
        theirs_steps = [[d.isoformat(), list(b)] for d, b in steps]
        if reading.history and mine_steps != theirs_steps:
            found.append(Difference("precompiled_builds", os_tag, "since/branches", mine_steps, theirs_steps))
        elif not reading.history and (not rows or list(rows[-1].branches) != list(steps[-1][1])):
            current = [mine_steps[-1]] if mine_steps else []
            found.append(Difference("precompiled_builds", os_tag, "current branches", current, [theirs_steps[-1]]))
    found.extend(_kernel_differences(data, reading))
    return found


def _kernel_differences(data: MatrixData, reading: UpstreamReading) -> list[Difference]:
    """Kernel lines and flavours the registry's precompiled tags carry that `precompiled_kernels` lacks.

    Only additions are reported: the registry keeps the tags of kernels it no longer builds for, so a line
    or flavour missing from it says nothing. A new row or a wider one is a hand edit (its source, a note).
    """
    found: list[Difference] = []
    rows = {row.os_tag: row for row in data.precompiled_kernels}
    for os_tag, (lines, flavours) in sorted(reading.kernels.items()):
        if os_tag not in _IMAGE_OS_TAGS:
            continue
        row = rows.get(os_tag)
        for name, theirs, mine in (
            ("kernel_lines", lines, set(row.kernel_lines) if row else set()),
            ("flavours", flavours, set(row.flavours) if row else set()),
        ):
            if not theirs <= mine:
                found.append(
                    Difference("precompiled_kernels", os_tag, name, sorted(mine) or None, sorted(mine | theirs), False)
                )
    return found


# --------------------------------------------------------------------------------------------------------
# --fetch: the same files, live
# --------------------------------------------------------------------------------------------------------


def _get(url: str, timeout_s: float) -> str:
    return get_text(url, timeout_s) or ""


def get_text(url: str, timeout_s: float, *, missing_ok: bool = False) -> str | None:
    """The body of `url` (https, or plain http on loopback); None for a 404 when `missing_ok`; UpstreamError."""
    if not url.startswith(("https://", "http://127.0.0.1", "http://localhost", "http://[::1]")):
        raise UpstreamError(f"{url}: only https URLs (or plain http on loopback) are fetched")
    # Loopback (tests) never goes through a proxy from the environment.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({})) if url.startswith("http://") else None
    request = urllib.request.Request(url, headers={"User-Agent": "gpu-platform/matrix-refresh"})
    try:
        with (opener or urllib.request.build_opener()).open(request, timeout=timeout_s) as resp:
            body: bytes = resp.read(_MAX_FILE)
    except urllib.error.HTTPError as err:
        if missing_ok and err.code == 404:
            return None
        raise UpstreamError(f"GET {url}: HTTP {err.code}") from err
    except (urllib.error.URLError, TimeoutError, OSError) as err:
        raise UpstreamError(f"GET {url}: no answer within {timeout_s:g}s or unreachable ({err})") from err
    return body.decode("utf-8", "replace")


def fetch_reading(
    *,
    docs_base: str = DOCS_BASE,
    ci_url: str = CI_URL,
    registry: str | None = None,
    timeout_s: float = 20.0,
    today: date | None = None,
) -> UpstreamReading:
    """Read the newest docs pages, `.common-ci.yml` and the driver repository's tags; UpstreamError on failure.

    `registry` is a base URL replacing https://nvcr.io (tests pass a loopback registry).
    """
    day = today or date.today()
    life = [DocSnapshot(day, "live", _get(f"{docs_base.rstrip('/')}/life-cycle-policy.rst", timeout_s))]
    platform = [DocSnapshot(day, "live", _get(f"{docs_base.rstrip('/')}/platform-support.rst", timeout_s))]
    built, precompiled = read_ci_text(_get(ci_url, timeout_s), ci_url)
    try:
        tags = list_tags(DRIVER_REPOSITORY, timeout_s=timeout_s, registry_override=registry)
    except (RegistryUnavailable, ValueError) as err:
        raise UpstreamError(f"{DRIVER_REPOSITORY} tags/list: {err}") from err
    images: dict[str, dict[str, date]] = {os_tag: dict.fromkeys(versions, day) for os_tag, versions in built.items()}
    for tag in tags:
        match = _TAG.match(tag)
        if match:
            images.setdefault(match.group(2), {}).setdefault(match.group(1), day)
    return _with_kernels(
        UpstreamReading(
            operators=read_life_cycle(life),
            kubernetes=read_platform(life, platform),
            driver_images=images,
            precompiled={os_tag: [(day, branches)] for os_tag, branches in precompiled.items()},
            history=False,
            origin=f"{docs_base}, {ci_url}, {registry or 'https://nvcr.io'}",
        ),
        tags,
    )


def _with_kernels(reading: UpstreamReading, tags: Iterable[str]) -> UpstreamReading:
    """The reading with the kernel lines and flavours of every precompiled tag, per image OS tag."""
    lines: dict[str, set[str]] = {}
    flavours: dict[str, set[str]] = {}
    for tag in tags:
        match = _PRECOMPILED_TAG.match(tag)
        if match:
            lines.setdefault(match.group(4), set()).add(match.group(2))
            flavours.setdefault(match.group(4), set()).add(match.group(3))
    reading.kernels = {os_tag: (frozenset(lines[os_tag]), frozenset(flavours[os_tag])) for os_tag in lines}
    return reading


# --------------------------------------------------------------------------------------------------------
# --write
# --------------------------------------------------------------------------------------------------------


def write(path: Path, differences: Sequence[Difference], today: date) -> list[Difference]:
    """Apply the writable differences to the data rows of `path`; return those written.

    Rows keep their `source`, `reviewed`, `note` and `override`; new precompiled steps get the CI source and
    `reviewed: today`. The sections touched are re-emitted; the rest of the file stays byte for byte.
    """
    text = path.read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    written: list[Difference] = []
    touched: set[str] = set()
    for diff in differences:
        if not diff.writable:
            continue
        if diff.section == "operators":
            row = next(r for r in raw["operators"] if r["version"] == diff.key)
            row[diff.field] = diff.upstream
        elif diff.section == "driver_images":
            rows = [r for r in raw["driver_images"] if r["os_tag"] == diff.key]
            if rows:
                rows[0]["versions"] = diff.upstream
            else:
                raw["driver_images"].append(
                    {"os_tag": diff.key, "versions": diff.upstream, "source": CI_SOURCE, "reviewed": today}
                )
        elif diff.section == "precompiled_builds":
            raw["precompiled_builds"] = _precompiled_rows(raw["precompiled_builds"], diff, today)
        written.append(diff)
        touched.add(diff.section)
    for section in sorted(touched):
        text = _replace_section(text, section, raw[section])
    path.write_text(text, encoding="utf-8")
    return written


def _precompiled_rows(rows: list[dict[str, Any]], diff: Difference, today: date) -> list[dict[str, Any]]:
    old = {(str(r["since"]), tuple(r["branches"])): r for r in rows if r["os_tag"] == diff.key}
    source = next((r["source"] for r in rows if r["os_tag"] == diff.key), CI_SOURCE)
    if diff.field == "since/branches":  # the whole history was read: it replaces the rows
        steps = diff.upstream
    else:  # a live read knows only today's set: it becomes a new step
        steps = [[str(r["since"]), list(r["branches"])] for r in rows if r["os_tag"] == diff.key] + diff.upstream
    new = []
    for since, branches in steps:
        kept = old.get((since, tuple(branches)))
        new.append(kept or {"os_tag": diff.key, "since": date.fromisoformat(since), "branches": branches,
                            "source": source, "reviewed": today})
    others = [r for r in rows if r["os_tag"] != diff.key]
    return sorted([*others, *new], key=lambda r: (r["os_tag"], str(r["since"])))


def _replace_section(text: str, section: str, rows: list[dict[str, Any]]) -> str:
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.rstrip() == f"{section}:")
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"^[^\s-]", lines[i])), len(lines))
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
        end -= 1
    if section in _ONE_LINE_ROWS:
        body = "".join(f"  - {_dump(row, flow=True, width=100_000).strip()}\n" for row in rows)
    else:
        dumped = _dump(rows, flow=None, width=118)
        body = "".join(f"  {line}" if line.strip() else line for line in dumped.splitlines(keepends=True))
    return "".join(lines[:start]) + f"{section}:\n" + body + "".join(lines[end:])


# Sections whose rows are short enough to keep one row per line, as matrix.yaml writes them by hand.
_ONE_LINE_ROWS = ("precompiled_builds",)


class _Dumper(yaml.SafeDumper):
    """SafeDumper without anchors and aliases: every row spells its values out."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _dump(value: Any, *, flow: bool | None, width: int) -> str:
    return yaml.dump(value, Dumper=_Dumper, sort_keys=False, default_flow_style=flow, width=width, allow_unicode=True)
