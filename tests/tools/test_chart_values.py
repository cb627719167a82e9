"""A Helm release's values are judged against the values.yaml of the chart version it installs, never another's
(issue 55): gpu-operator v24.9.2 has `operator.defaultRuntime` (NVIDIA/gpu-operator@a7551902
deployments/gpu-operator/values.yaml:75) and v26.7.0 does not; Helm installs either (no values.schema.json)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from tests.shared import upstream
from tools.apiserver.chart_values import chart_values, lock_pins, pinned_versions
from tools.apiserver.helm_values import release_findings
from tools.upstream.lock import Pin

OLD_KEY = {"operator": {"defaultRuntime": "containerd"}}


def _release(version: str | None, values: dict[str, Any]) -> dict[str, Any]:
    inputs: dict[str, Any] = {"chart": "gpu-operator", "values": values}
    if version is not None:
        inputs["version"] = version
    return {"name": "gpu-operator", "inputs": inputs}


def _verdicts(release: dict[str, Any], cache: Path) -> list[tuple[str, str, str]]:
    return [(f.rule, f.path, f.level) for f in release_findings(release, cache)]


def test_every_operator_release_of_the_matrix_has_its_chart_values_pinned() -> None:
    from policies.gpu_guard.matrix import load_matrix  # noqa: PLC0415

    pinned = pinned_versions("gpu-operator", lock_pins())
    assert {v.lstrip("v") for v in load_matrix().operators()} <= set(pinned)
    assert {f"charts/gpu-operator/v{v}/Chart.yaml" for v in pinned} <= {p.file for p in lock_pins()}


def test_a_key_of_v24_9_2_is_judged_against_v24_9_2_and_passes() -> None:
    cache = upstream("charts", "gpu-operator", "v24.9.2", "values.yaml").parents[3]  # skips: the optional pin's reason
    assert _verdicts(_release("v24.9.2", OLD_KEY), cache) == []
    assert _verdicts(_release("v24.9.2", {"operator": {"defaultRuntme": "docker"}}), cache) == [
        ("helm-values", "operator.defaultRuntme", "rejected")]


def test_the_same_key_on_v26_7_0_is_refused_and_the_pinned_chart_is_that_version() -> None:
    cache = upstream()
    assert _verdicts(_release("v26.7.0", OLD_KEY), cache) == [("helm-values", "operator.defaultRuntime", "rejected")]
    assert _verdicts(_release("26.7.0", OLD_KEY), cache) == [("helm-values", "operator.defaultRuntime", "rejected")]


def test_a_version_whose_values_are_not_in_the_cache_is_unjudged_never_judged_against_another(tmp_path: Path) -> None:
    cache = upstream()
    if (cache / "charts" / "gpu-operator" / "v24.9.2" / "values.yaml").is_file():
        # The optional pin was fetched: judge with a cache that has only what the shared copy holds.
        (tmp_path / "charts" / "gpu-operator").mkdir(parents=True)
        for name in ("values.yaml", "Chart.yaml"):
            (tmp_path / "charts" / "gpu-operator" / name).write_bytes(
                (cache / "charts" / "gpu-operator" / name).read_bytes())
        cache = tmp_path
    [finding] = release_findings(_release("v24.9.2", OLD_KEY), cache)
    assert (finding.rule, finding.path, finding.level) == ("helm-values", "version", "advisory")
    assert "chart 'gpu-operator' version v24.9.2: its values.yaml is pinned" in finding.message
    assert finding.message.endswith("its values are not judged")


@pytest.mark.parametrize("version", [None, "", "v99.1.0"])
def test_no_version_or_an_unpinned_one_is_unjudged_naming_the_pinned_versions(version: str | None) -> None:
    [finding] = release_findings(_release(version, OLD_KEY), upstream())
    assert (finding.rule, finding.path, finding.level) == ("helm-values", "version", "advisory")
    assert "24.9.2" in finding.message and "26.7.0" in finding.message


def _pin(file: str, data: bytes, optional: str = "") -> Pin:
    return Pin(file=file, repository="o/r", commit="0" * 40, path="p", sha256=hashlib.sha256(data).hexdigest(),
               size=len(data), optional=optional)


def test_the_unversioned_file_is_a_version_by_its_chart_yaml_or_by_the_lockfiles_sha256(tmp_path: Path) -> None:
    chart = tmp_path / "charts" / "demo"
    chart.mkdir(parents=True)
    current, old = b"a: 1\n", b"b: 1\n"
    (chart / "values.yaml").write_bytes(current)
    (chart / "Chart.yaml").write_text("version: v1.0.0-devel\n", encoding="utf-8")
    pins = [_pin("charts/demo/values.yaml", current), _pin("charts/demo/v2.0.0/values.yaml", current, "opt"),
            _pin("charts/demo/v1.0.0/values.yaml", old, "opt")]
    assert chart_values("demo", "v2.0.0", tmp_path, pins).values == chart / "values.yaml"  # same bytes as v2.0.0
    assert chart_values("demo", "1.0.0", tmp_path, pins).values is None  # v1.0.0 pinned, not fetched
    (chart / "v1.0.0").mkdir()
    (chart / "v1.0.0" / "values.yaml").write_bytes(old)
    assert chart_values("demo", "1.0.0", tmp_path, pins).values == chart / "v1.0.0" / "values.yaml"
    (chart / "Chart.yaml").write_text("version: 3.1.0\n", encoding="utf-8")
    other = tmp_path / "charts" / "other"
    other.mkdir()
    (other / "values.yaml").write_bytes(current)
    (other / "Chart.yaml").write_text("version: 3.1.0\n", encoding="utf-8")
    assert chart_values("other", "3.1.0", tmp_path, pins).values == other / "values.yaml"  # its Chart.yaml says so
    missing = chart_values("other", "3.0.0", tmp_path, pins)
    assert missing.values is None and "pins no values.yaml of that version (pinned versions: 3.1.0)" in missing.reason
