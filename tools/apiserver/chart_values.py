"""Which values.yaml a Helm release's values are judged against: the one of the chart version it installs.

A chart's keys change between versions (gpu-operator's `operator.defaultRuntime` is in values.yaml at tag v24.9.2,
NVIDIA/gpu-operator@a7551902 deployments/gpu-operator/values.yaml:75, and gone by v26.7.0), and Helm takes any key
(the chart has no values.schema.json), so judging one version's values against another's keys refuses what Helm
installs. A release is judged only against the values of the version it names:

- `charts/<chart>/<tag>/values.yaml` (and its Chart.yaml) where upstream.lock.json pins that version and the cache
  holds it (the GPU Operator's releases the matrix names, pinned optional: fetched where raw.githubusercontent.com
  answers);
- else `charts/<chart>/values.yaml` where that file is that version: its Chart.yaml says so, or (a chart whose
  Chart.yaml in git carries a placeholder, gpu-operator's `v1.0.0-devel`) the lockfile pins that version's
  values.yaml with the same sha256;
- else none, and the release's values are reported unjudged (advisory), naming the version and the versions that
  are pinned. A release that names no version (Helm installs the newest) is unjudged the same way: never judged
  against another version's keys.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from tools.upstream.lock import Pin, load

_VERSIONED = re.compile(r"^charts/(?P<chart>[^/]+)/(?P<version>[^/]+)/values\.yaml$")


@dataclass(frozen=True)
class ChartValues:
    """The values.yaml to judge a release against, or why there is none (`reason`, for the advisory)."""

    values: Path | None
    reason: str = ""
    fix: str = ""


def bare(version: str) -> str:
    """`v24.9.2` -> `24.9.2`: Helm chart versions are SemVer, with or without the tag's `v`."""
    return version.strip().lstrip("vV")


@cache
def _chart_yaml_version(path: Path) -> str | None:
    if not path.is_file():
        return None
    version = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("version")
    return str(version) if version is not None else None


@cache
def lock_pins() -> tuple[Pin, ...]:
    """upstream.lock.json's pins, read once per process."""
    return tuple(load())


def pinned_versions(chart: str, pins: Sequence[Pin]) -> dict[str, Pin]:
    """Each version of `chart` whose values.yaml the lockfile pins under `charts/<chart>/<tag>/`, by bare version."""
    found: dict[str, Pin] = {}
    for pin in pins:
        match = _VERSIONED.match(pin.file)
        if match and match.group("chart") == chart:
            found[bare(match.group("version"))] = pin
    return found


def chart_values(chart: str, version: str | None, upstream: Path, pins: Sequence[Pin] | None = None) -> ChartValues:
    """The values.yaml of `chart` at `version` in the cache `upstream` (see the module docstring)."""
    pins = lock_pins() if pins is None else pins
    versioned = pinned_versions(chart, pins)
    current = upstream / "charts" / chart / "values.yaml"
    current_version = _chart_yaml_version(current.parent / "Chart.yaml")
    current_pin = next((p for p in pins if p.file == f"charts/{chart}/values.yaml"), None)
    known = sorted({*versioned, *([bare(current_version)] if current_version and current.is_file() else [])})
    listed = ", ".join(known) or "none"
    if not version or not version.strip():
        return ChartValues(None, f"the release names no chart version (Helm installs the newest), so its values are "
                                 f"not judged against any one version's keys (pinned versions: {listed})",
                           "set the release's `version` to the chart version it installs")
    wanted = bare(version)
    pin = versioned.get(wanted)
    if pin is not None and (upstream / pin.file).is_file():
        return ChartValues(upstream / pin.file)
    if current.is_file() and (
            (current_version is not None and bare(current_version) == wanted)
            or (pin is not None and current_pin is not None and current_pin.sha256 == pin.sha256)):
        return ChartValues(current)
    if pin is not None:
        why = f"its values.yaml is pinned ({pin.file}) but not in the cache: {pin.optional or 'run `make upstream`'}"
        fix = "run `make upstream` where raw.githubusercontent.com answers"
    else:
        why = f"upstream.lock.json pins no values.yaml of that version (pinned versions: {listed})"
        fix = f"pin that version's values.yaml in upstream.lock.json (charts/{chart}/{version.strip()}/values.yaml)"
    return ChartValues(None, f"chart {chart!r} version {version.strip()}: {why}; its values are not judged", fix)
