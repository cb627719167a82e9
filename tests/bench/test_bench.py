"""The benchmark's own logic: generated stacks are valid, matrix-clean stacks; the slope is a least-squares fit.

Nothing here times anything (speed is measured by `make bench`, never asserted by tests).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench.preview import Case, slope, table
from bench.stacks import generated_config, inference_services, write_stack
from components.config import load_stack_config
from tests.components.harness import TODAY
from tests.shared import REPO


def _values(doc: dict[str, Any]) -> dict[str, Any]:
    return {k.split(":", 1)[1]: v for k, v in doc["config"].items() if k.startswith("gpu-platform:")}


def _prod() -> dict[str, Any]:
    base: dict[str, Any] = yaml.safe_load((REPO / "Pulumi.prod.yaml").read_text(encoding="utf-8"))
    return base


@pytest.mark.parametrize(("services", "pools"), [(0, 1), (1, 1), (100, 50)])
def test_generated_stack_passes_the_config_and_matrix_checks(services: int, pools: int) -> None:
    doc = generated_config(_prod(), services=services, pools=pools)
    config = load_stack_config(_values(doc), stack_file="Pulumi.gen.yaml", today=TODAY)
    assert [g.name for g in config.gpu_node_groups] == [f"gpu-{i:03d}" for i in range(pools)]
    assert len(config.inference_services) == services
    used = {pool for s in config.inference_services for pool in s.node_pools}
    assert used <= {g.name for g in config.gpu_node_groups}
    if services >= pools:
        assert used == {g.name for g in config.gpu_node_groups}  # round robin reaches every pool


def test_generated_stack_keeps_every_other_section_of_the_base() -> None:
    base = _prod()
    doc = generated_config(base, services=3, pools=2)
    for key, value in base["config"].items():
        if key not in ("gpu-platform:gpuNodeGroups", "gpu-platform:inferenceServices"):
            assert doc["config"][key] == value, key
    assert base == _prod()  # the base is not modified


def test_services_need_a_pool_and_stacks_need_one() -> None:
    with pytest.raises(ValueError, match="at least one GPU pool"):
        inference_services(1, [])
    with pytest.raises(ValueError, match="at least one GPU pool"):
        generated_config(_prod(), services=0, pools=0)


def test_service_mix_ingress_every_second_volume_every_fourth() -> None:
    services = inference_services(8, ["a"])
    assert [("ingress" in s, "modelVolume" in s) for s in services] == [
        (True, True), (False, False), (True, False), (False, False)] * 2


def test_write_stack_names_the_file_by_its_counts(tmp_path: Path) -> None:
    path = write_stack(tmp_path, REPO / "Pulumi.prod.yaml", services=10, pools=5)
    assert path.name == "Pulumi.gen-s10-p5.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert len(doc["config"]["gpu-platform:inferenceServices"]) == 10


def test_slope_is_the_least_squares_line() -> None:
    fit = slope([(1, 2.0), (10, 2.9), (50, 6.9), (100, 11.9)])
    assert fit is not None
    per_unit, intercept, r2 = fit
    assert per_unit == pytest.approx(0.1)
    assert intercept == pytest.approx(1.9)
    assert r2 == pytest.approx(1.0)
    noisy = slope([(0, 0.0), (1, 1.0), (2, 0.0)])
    assert noisy is not None and noisy[2] == pytest.approx(0.0)
    assert slope([(1, 2.0)]) is None
    assert slope([(3, 2.0), (3, 4.0)]) is None


def test_table_shows_ratios_and_rejections() -> None:
    floor = Case("floor", [], "floor", walls=[1.0, 2.0, 3.0], peaks_kib=[1024], cpus=[0.5, 0.7, 0.9])
    prod = Case("prod", [], "preview", walls=[4.0, 3.0, 5.0], peaks_kib=[2048, 4096], cpus=[3.0, 2.0, 9.0],
                resources=49, violations=1)
    rejected = Case("gen", [], "preview", rejected="error: a | b")
    rows = table([floor, prod, rejected], floor.median, 1.0)  # the fixed floor at 1 s, the probed one at 2 s
    assert rows[2] == "| floor | 2.00 s | 3.00 s | 2.00 | 1.00 | 0.70 s | 1 MiB |  |  |"
    assert rows[3] == "| prod | 4.00 s | 5.00 s | 4.00 | 2.00 | 3.00 s | 4 MiB | 49 | 1 |"
    assert rows[4].startswith("| gen | rejected: error: a / b |")


def test_the_pack_replay_summary_and_its_lines() -> None:
    from bench.pack_replay import Replay, _cpu_seconds, summary  # noqa: PLC0415
    from bench.preview import pack_lines  # noqa: PLC0415

    calls = {"Analyze": 3, "AnalyzeStack": 1}
    result = summary([Replay(2.0, 0.5, 1.0, calls, 0.3), Replay(3.0, 0.9, 1.2, calls, 0.4),
                      Replay(1.0, 0.7, 1.1, calls, 0.2)])
    assert (result["wall_median_s"], result["wall_worst_s"], result["cpu_median_s"], result["cpu_worst_s"]) == (
        2.0, 3.0, 0.7, 0.9)
    lines = pack_lines(result, 100, 10)
    assert lines[-1] == "| 0.70 s | 0.90 s | 2.00 s | 3.00 s | 0.30 s | 1.10 s | Analyze 3, AnalyzeStack 1 |"
    assert pack_lines(None, 0, 10) == ["not measured (`--pack-services 0`)"]
    assert _cpu_seconds(os.getpid()) > 0
