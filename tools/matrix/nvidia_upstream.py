"""Read what NVIDIA publishes as data: the deriver behind `python -m tools.matrix refresh`.

Input: the snapshots in `nvidia/` of the upstream cache (`make upstream` fills it from upstream.lock.json;
or any folder with the same layout), or, with `--fetch`, the same files fetched live (newest version only, no history).

- `cloud-native-docs/life-cycle-policy-history/*.rst` (and `life-cycle-policy.rst`): the GPU Operator
  component matrix, i.e. the drivers each release lists, with the default (D) and recommended (R) ones.
- `cloud-native-docs/platform-support-history/*.rst` (and `platform-support.rst`): the Kubernetes range per
  OS on bare metal / VMs with GPU passthrough, and on Amazon EKS (the "Cloud Service Providers" table).
- `gpu-driver-container-ci-history/*.yml`: every committed `.common-ci.yml` of NVIDIA/gpu-driver-container;
  the jobs that build `nvcr.io/nvidia/driver:<version>-<os>` and the precompiled branch matrices.

History files are named `<commit date>-<short sha>.<ext>`; the date is what "first built" and "since" mean.
Sources (what each file holds, its repository and commit): upstream.lock.json;
upstream repositories https://github.com/NVIDIA/cloud-native-docs (gpu-operator/) and
https://github.com/NVIDIA/gpu-driver-container (.common-ci.yml).

The policy pack never needs this at run time (it reads matrix.yaml), so it lives under tools/.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from policies.gpu_guard.versions import parse_driver_version, parse_kube_minor
from tools.upstream.lock import DEFAULT_CACHE, cache_dir

__all__ = [
    "CiSnapshot",
    "DocSnapshot",
    "OperatorListing",
    "UpstreamError",
    "UpstreamReading",
    "default_upstream_dir",
    "read_ci_text",
    "read_upstream",
]

DOCS_REPO = "https://github.com/NVIDIA/cloud-native-docs/blob/main/gpu-operator"
LIFE_CYCLE_SOURCE = f"{DOCS_REPO}/life-cycle-policy.rst"
PLATFORM_SOURCE = f"{DOCS_REPO}/platform-support.rst"
CI_SOURCE = "https://github.com/NVIDIA/gpu-driver-container/blob/main/.common-ci.yml"

# Operating-system names as the docs print them -> OS label values (CONFIG.md section 2).
_DOC_OS = re.compile(r"Ubuntu\s+(\d{2}\.\d{2})")
_HISTORY_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})-([0-9a-f]+)\.(rst|yml)$")
_DRIVER_IN_CELL = re.compile(r"(?<![\d.])(\d{3}\.\d{2,3}(?:\.\d{2})?)(?![\d.])")
_KUBE_RANGE = re.compile(r"(\d+\.\d+)\s*(?:-{1,3}|\u2014|\u2013|to)\s*(\d+\.\d+)")
_VERSION_HEADER = re.compile(r"^v?(\d+\.\d+\.\d+)$")
_MAJOR_LINE = re.compile(r"^(\d+\.\d+)\.x$")


class UpstreamError(Exception):
    """The upstream folder is missing, or a file cannot be read; the message names the path."""


def default_upstream_dir(repo_root: Path | None = None) -> Path:
    """`nvidia/` in the upstream cache (GPU_PLATFORM_UPSTREAM_CACHE, default `.upstream-cache/` in `repo_root`)."""
    cache = cache_dir()
    if repo_root is not None and cache == DEFAULT_CACHE:
        cache = repo_root / DEFAULT_CACHE.name
    return cache / "nvidia"


# --------------------------------------------------------------------------------------------------------
# reStructuredText tables (list-table and flat-table directives)
# --------------------------------------------------------------------------------------------------------


def _tables(text: str) -> list[tuple[int, list[list[str]]]]:
    """Every list-table / flat-table in `text`: (line number, rows of cell texts)."""
    lines = text.splitlines()
    found: list[tuple[int, list[list[str]]]] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if re.match(r"^\s*\.\. (list|flat)-table::", line):
            indent = len(line) - len(line.lstrip())
            body: list[str] = []
            index += 1
            while index < len(lines) and (not lines[index].strip() or _indent(lines[index]) > indent):
                body.append(lines[index])
                index += 1
            found.append((index, _rows(body)))
            continue
        index += 1
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _rows(body: list[str]) -> list[list[str]]:
    rows: list[list[str]] = []
    cell: list[str] | None = None
    for raw in body:
        stripped = raw.strip()
        if stripped.startswith("* - ") or stripped == "* -":
            rows.append([])
            cell = []
            rows[-1].append("")
            stripped = stripped[3:].strip()
        elif (stripped.startswith("- ") or stripped == "-") and rows:
            rows[-1].append("")
            cell = []
            stripped = stripped[1:].strip()
        elif cell is None or not rows:
            continue  # directive options (:header-rows: 2) before the first row
        if stripped:
            rows[-1][-1] = f"{rows[-1][-1]}\n{stripped}".strip()
    return rows


def _plain(cell: str) -> str:
    """Cell text without line-block bars, footnote references and role markup."""
    text = re.sub(r"\|\w+\|_?", "", cell)
    text = text.replace("|", " ")
    text = re.sub(r":\w+:`\d+`", "", text)
    return " ".join(text.split())


# --------------------------------------------------------------------------------------------------------
# Readings
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DocSnapshot:
    """One committed version of a docs file: its commit date, short sha and text."""

    day: date
    sha: str
    text: str


@dataclass(frozen=True)
class CiSnapshot:
    """One committed version of `.common-ci.yml`."""

    day: date
    sha: str
    text: str


@dataclass
class OperatorListing:
    """What the component matrix says about one GPU Operator release (or a major line such as 25.3.x).

    `drivers` is every driver ever listed for it, newest first; `default` and `recommended` are the marks
    of the newest snapshot that lists it; `first_seen`/`last_seen` are snapshot dates.
    """

    release: str
    drivers: list[str] = field(default_factory=list)
    default: str | None = None
    recommended: str | None = None
    first_seen: date | None = None
    last_seen: date | None = None


@dataclass(frozen=True)
class KubernetesRanges:
    """Kubernetes ranges the platform-support page gives while a release is the newest one."""

    release: str
    seen: date
    bare_metal: Mapping[str, tuple[str, str]]
    eks: Mapping[str, tuple[str, str]]


@dataclass
class UpstreamReading:
    """Everything the deriver reads, as plain data."""

    operators: dict[str, OperatorListing]
    kubernetes: dict[str, KubernetesRanges]
    driver_images: dict[str, dict[str, date]]
    precompiled: dict[str, list[tuple[date, tuple[int, ...]]]]
    history: bool
    origin: str
    # Live reading only: per image OS tag, the kernel lines and flavours the registry's precompiled tags
    # `<branch>-<kernel line>.<patch>-<abi>-<flavour>-<os_tag>` carry (e.g. 595-7.0.0-1008-aws-ubuntu26.04).
    kernels: dict[str, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)

    def operator(self, version: str) -> OperatorListing | None:
        """The listing of `v25.3.0`: its own column, else the column of its major line (`25.3.x`)."""
        own = self.operators.get(version)
        if own is not None:
            return own
        major = ".".join(version.lstrip("v").split(".")[:2])
        return self.operators.get(f"{major}.x")

    def ranges(self, version: str) -> KubernetesRanges | None:
        """The Kubernetes ranges of `v26.3.1`: its own, else those of its major line."""
        own = self.kubernetes.get(version)
        if own is not None:
            return own
        major = ".".join(version.lstrip("v").split(".")[:2])
        return self.kubernetes.get(f"{major}.x")


def _version_key(release: str) -> tuple[int, ...]:
    parts = release.lstrip("v").replace(".x", ".999").split(".")
    return tuple(int(part) for part in parts)


def _driver_key(version: str) -> tuple[int, ...]:
    return parse_driver_version(version).key


def _life_cycle_columns(text: str) -> dict[str, tuple[list[str], str | None, str | None]]:
    """Per release column of the component matrix: (drivers, default, recommended)."""
    current_line = None
    for _, rows in _tables(text):
        if rows and rows[0] and "GPU Operator Version" in _plain(rows[0][0]):
            for row in rows[1:]:
                status = _plain(row[1]).lower() if len(row) > 1 else ""
                if row and _MAJOR_LINE.match(_plain(row[0])) and status in ("generally available", "supported"):
                    current_line = _plain(row[0])
                    break
    columns: dict[str, tuple[list[str], str | None, str | None]] = {}
    for _, rows in _tables(text):
        driver_rows = [row for row in rows if row and _plain(row[0]).startswith("NVIDIA GPU Driver")]
        if not driver_rows:
            continue
        headers = _release_headers(rows, current_line)
        cells = _expand_spans(driver_rows[0][1:])
        for release, cell in zip(headers, cells, strict=False):
            columns[release] = _drivers_of(cell)
    return columns


def _release_headers(rows: list[list[str]], current_line: str | None) -> list[str]:
    for row in rows[:3]:
        versions = [_VERSION_HEADER.match(_plain(cell)) for cell in row]
        if row and all(versions):
            return [f"v{match.group(1)}" for match in versions if match]
    operator_row = next((row for row in rows if row and _plain(row[0]) == "NVIDIA GPU Operator"), None)
    if operator_row is not None and len(operator_row) > 1:
        match = _VERSION_HEADER.match(_plain(operator_row[1]))
        if match:
            return [f"v{match.group(1)}"]
    return [current_line] if current_line else []


def _expand_spans(cells: list[str]) -> list[str]:
    expanded: list[str] = []
    for cell in cells:
        match = re.match(r"^:cspan:`(\d+)`\s*", cell)
        if match:
            expanded.extend([cell[match.end() :]] * (int(match.group(1)) + 1))
        else:
            expanded.append(cell)
    return expanded


def _drivers_of(cell: str) -> tuple[list[str], str | None, str | None]:
    drivers: list[str] = []
    default = recommended = None
    for item in re.split(r"(?:^|\n)\|\s*", cell):
        link_text = item.split("<", 1)[0]
        match = _DRIVER_IN_CELL.search(link_text)
        if match is None:
            continue
        version = match.group(1)
        drivers.append(version)
        marks = item.split(">", 1)[-1].lower()
        if "**d**" in marks or "(default)" in marks:
            default = version
        if "**r**" in marks or "(recommended)" in marks:
            recommended = version
    return drivers, default, recommended


def _os_label(cell: str) -> str | None:
    match = _DOC_OS.search(_plain(cell))
    return f"ubuntu-{match.group(1)}" if match else None


def _kube_range(cell: str) -> tuple[str, str] | None:
    match = _KUBE_RANGE.search(_plain(cell))
    if match is None:
        return None
    low, high = match.group(1), match.group(2)
    parse_kube_minor(low)
    parse_kube_minor(high)
    return low, high


def _platform_ranges(text: str) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
    """(bare metal / passthrough ranges per OS, Amazon EKS ranges per OS) of one platform-support page."""
    bare: dict[str, tuple[str, str]] = {}
    eks: dict[str, tuple[str, str]] = {}
    seen_bare = False
    for _, rows in _tables(text):
        if not rows or len(rows[0]) < 2:
            continue
        header = [_plain(cell) for cell in rows[0]]
        eks_column = next((i for i, cell in enumerate(header) if "Amazon EKS" in cell), None)
        target: dict[str, tuple[str, str]] | None = None
        column = 1
        if eks_column is not None and not eks:
            target, column = eks, eks_column
        elif header[1].startswith("Kubernetes") and "Operating System" in header[0] and not seen_bare:
            target, seen_bare = bare, True
        if target is None:
            continue
        for row in rows[1:]:
            os_label = _os_label(row[0]) if row else None
            span = _kube_range(row[column]) if os_label and len(row) > column else None
            if os_label and span:
                target[os_label] = span
    return bare, eks


def _history(folder: Path, suffix: str) -> list[tuple[date, str, str]]:
    if not folder.is_dir():
        raise UpstreamError(f"{folder}: snapshot folder is missing")
    items: list[tuple[date, str, str]] = []
    for path in sorted(folder.iterdir()):
        match = _HISTORY_NAME.match(path.name)
        if match is None or match.group(3) != suffix:
            continue
        items.append((date.fromisoformat(match.group(1)), match.group(2), path.read_text(encoding="utf-8")))
    return items


def read_life_cycle(snapshots: Iterable[DocSnapshot]) -> dict[str, OperatorListing]:
    """Union over snapshots of each release column's drivers; marks from the newest snapshot listing it."""
    listings: dict[str, OperatorListing] = {}
    for snap in sorted(snapshots, key=lambda s: s.day):
        for release, (drivers, default, recommended) in _life_cycle_columns(snap.text).items():
            listing = listings.setdefault(release, OperatorListing(release, first_seen=snap.day))
            listing.drivers = sorted(set(listing.drivers) | set(drivers), key=_driver_key, reverse=True)
            listing.default, listing.recommended, listing.last_seen = default, recommended, snap.day
    return listings


def read_platform(
    life_cycle: Iterable[DocSnapshot], platform: Iterable[DocSnapshot]
) -> dict[str, KubernetesRanges]:
    """Kubernetes ranges per release: the last platform-support page while the release was the newest listed."""
    newest_by_day: list[tuple[date, str]] = []
    for snap in sorted(life_cycle, key=lambda s: s.day):
        columns = _life_cycle_columns(snap.text)
        if columns:
            newest_by_day.append((snap.day, max(columns, key=_version_key)))
    ranges: dict[str, KubernetesRanges] = {}
    for snap in sorted(platform, key=lambda s: s.day):
        current = [release for day, release in newest_by_day if day <= snap.day]
        if not current:
            continue
        release = current[-1]
        bare, eks = _platform_ranges(snap.text)
        if bare or eks:
            ranges[release] = KubernetesRanges(release, snap.day, bare, eks)
    return ranges


def _load_ci(text: str, origin: str) -> dict[str, Any]:
    class _Loader(yaml.SafeLoader):
        """SafeLoader that reads GitLab's `!reference [...]` tags as plain lists."""

    def _reference(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node)
        return None

    _Loader.add_constructor("!reference", _reference)
    try:
        document = yaml.load(text, Loader=_Loader)  # a SafeLoader subclass: no arbitrary objects
    except yaml.YAMLError as err:
        raise UpstreamError(f"{origin}: not valid YAML: {err}") from err
    return document if isinstance(document, dict) else {}


def _extends_closure(jobs: dict[str, Any], name: str, seen: set[str] | None = None) -> list[str]:
    seen = seen if seen is not None else set()
    if name in seen or not isinstance(jobs.get(name), dict):
        return []
    seen.add(name)
    parents = jobs[name].get("extends", [])
    parents = [parents] if isinstance(parents, str) else list(parents or [])
    chain = [name]
    for parent in parents:
        if isinstance(parent, str):
            chain.extend(_extends_closure(jobs, parent, seen))
    return chain


def _job_value(jobs: dict[str, Any], chain: list[str], key: str) -> Any:
    """GitLab merges `variables` and `parallel` along `extends`; the job's own value wins."""
    for name in chain:
        job = jobs.get(name)
        if not isinstance(job, dict):
            continue
        if key == "parallel" and isinstance(job.get("parallel"), dict):
            return job["parallel"]
        if key != "parallel" and isinstance(job.get("variables"), dict) and key in job["variables"]:
            return job["variables"][key]
    return None


def read_ci_text(
    text: str, origin: str = ".common-ci.yml"
) -> tuple[dict[str, set[str]], dict[str, tuple[int, ...]]]:
    """One `.common-ci.yml`: driver versions built per Ubuntu OS tag, precompiled branches per OS tag."""
    jobs = _load_ci(text, origin)
    images: dict[str, set[str]] = {}
    for name in jobs:
        chain = _extends_closure(jobs, name)
        dist = _job_value(jobs, chain, "DIST")
        if not isinstance(dist, str) or not dist.startswith("ubuntu"):
            continue
        versions: list[str] = []
        parallel = _job_value(jobs, chain, "parallel")
        if isinstance(parallel, dict):
            for cell in parallel.get("matrix") or []:
                if isinstance(cell, dict) and "DRIVER_VERSION" in cell:
                    value = cell["DRIVER_VERSION"]
                    versions.extend(str(v) for v in (value if isinstance(value, list) else [value]))
        if not versions:
            for key in ("DRIVER_VERSIONS", "DRIVER_VERSION"):
                value = _job_value(jobs, chain, key)
                if isinstance(value, str | int | float) and str(value).strip():
                    versions.extend(str(value).split())
                    break
        found = {v for v in versions if _DRIVER_IN_CELL.fullmatch(v)}
        if found:
            images.setdefault(dist, set()).update(found)
    precompiled: dict[str, tuple[int, ...]] = {}
    for name, job in jobs.items():
        match = re.fullmatch(r"\.driver-versions-precompiled-(ubuntu\d{2}\.\d{2})", str(name))
        if match is None or not isinstance(job, dict) or not isinstance(job.get("parallel"), dict):
            continue
        branches: set[int] = set()
        for cell in job["parallel"].get("matrix") or []:
            if isinstance(cell, dict) and "DRIVER_BRANCH" in cell:
                value = cell["DRIVER_BRANCH"]
                branches.update(int(b) for b in (value if isinstance(value, list) else [value]))
        precompiled[match.group(1)] = tuple(sorted(branches))
    return images, precompiled


def read_ci(
    snapshots: Iterable[CiSnapshot],
) -> tuple[dict[str, dict[str, date]], dict[str, list[tuple[date, tuple[int, ...]]]]]:
    """Driver images per OS tag with the date each was first built; precompiled branch sets per OS over time."""
    images: dict[str, dict[str, date]] = {}
    per_day: dict[str, dict[date, list[tuple[int, ...]]]] = {}
    for snap in sorted(snapshots, key=lambda s: (s.day, s.sha)):
        built, precompiled = read_ci_text(snap.text, f".common-ci.yml@{snap.sha}")
        for os_tag, versions in built.items():
            for version in versions:
                images.setdefault(os_tag, {}).setdefault(version, snap.day)
        for os_tag, branches in precompiled.items():
            per_day.setdefault(os_tag, {}).setdefault(snap.day, []).append(branches)
    return images, {os_tag: _timeline(days) for os_tag, days in per_day.items()}


def _timeline(days: dict[date, list[tuple[int, ...]]]) -> list[tuple[date, tuple[int, ...]]]:
    """Collapse the branch sets seen per day into the main line of changes.

    The history holds release-branch commits next to main, and a file name gives a commit's date but
    not its order within the day, so a plain "set per commit" sequence flip-flops. NVIDIA only moves
    forward (a branch set, once replaced on main, does not come back), so each distinct set starts on
    the day it first appears; sets are ordered by that day, then by the day they were last seen, and a
    set replaced on the very day it appeared (an intermediate commit) is dropped.
    """
    first: dict[tuple[int, ...], date] = {}
    last: dict[tuple[int, ...], date] = {}
    for day in sorted(days):
        for branches in days[day]:
            first.setdefault(branches, day)
            last[branches] = day
    ordered = sorted(first, key=lambda b: (first[b], last[b]))
    steps = [(first[b], b) for b in ordered]
    return [step for index, step in enumerate(steps) if index + 1 == len(steps) or steps[index + 1][0] != step[0]]


def read_upstream(folder: Path | None = None) -> UpstreamReading:
    """Read the snapshot folder (default `nvidia/` of the upstream cache); UpstreamError when it is missing."""
    base = folder or default_upstream_dir()
    if not base.is_dir():
        raise UpstreamError(f"{base}: upstream snapshot folder is missing")
    docs = base / "cloud-native-docs"
    life = [DocSnapshot(d, s, t) for d, s, t in _history(docs / "life-cycle-policy-history", "rst")]
    platform = [DocSnapshot(d, s, t) for d, s, t in _history(docs / "platform-support-history", "rst")]
    ci = [CiSnapshot(d, s, t) for d, s, t in _history(base / "gpu-driver-container-ci-history", "yml")]
    if not life or not platform or not ci:
        raise UpstreamError(f"{base}: a history folder holds no snapshots")
    images, timeline = read_ci(ci)
    return UpstreamReading(
        operators=read_life_cycle(life),
        kubernetes=read_platform(life, platform),
        driver_images=images,
        precompiled=timeline,
        history=True,
        origin=str(base),
    )
