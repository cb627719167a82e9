"""matrix.yaml against what NVIDIA publishes: the deriver (tools.matrix.nvidia_upstream) and the comparison.

The snapshot tests read `nvidia/` of the upstream cache (`make upstream`). Without it they skip with the
reason, except under CI=true, where a missing snapshot is a failure (CI runs `make upstream` first).
The parser tests run on small texts written here and need no snapshot.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from policies.gpu_guard.matrix import MATRIX_PATH, parse_matrix
from tests.shared import upstream
from tools.matrix.nvidia_upstream import (
    CiSnapshot,
    DocSnapshot,
    UpstreamReading,
    _platform_ranges,
    read_ci,
    read_ci_text,
    read_life_cycle,
    read_upstream,
)
from tools.matrix.refresh import compare

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def upstream_dir() -> Path:
    return upstream("nvidia")


@pytest.fixture(scope="module")
def reading(upstream_dir: Path) -> UpstreamReading:
    return read_upstream(upstream_dir)


# --- the oracle -----------------------------------------------------------------------------------------------


def test_matrix_yaml_agrees_with_the_nvidia_snapshots(reading):
    differences = compare(parse_matrix(MATRIX_PATH.read_text(encoding="utf-8")), reading)
    assert differences == [], "matrix.yaml differs from upstream:\n" + "\n".join(d.describe() for d in differences)


def test_an_override_hides_only_the_upstream_value_it_was_written_against(reading):
    text = MATRIX_PATH.read_text(encoding="utf-8")
    data = parse_matrix(text)
    v2530 = next(row for row in data.operators if row.version == "v25.3.0")
    assert {o.field for o in v2530.override} == {"kubernetes", "eks"}
    # The same row without its overrides: both differences come back.
    stripped = data.model_copy(
        update={"operators": tuple(r.model_copy(update={"override": ()}) if r is v2530 else r for r in data.operators)}
    )
    assert {(d.key, d.field) for d in compare(stripped, reading)} == {("v25.3.0", "kubernetes"), ("v25.3.0", "eks")}
    # An override recorded against another upstream value no longer holds.
    moved = v2530.override[0].model_copy(update={"upstream": {"ubuntu-22.04": ["1.29", "1.34"]}})
    changed = data.model_copy(
        update={
            "operators": tuple(
                r.model_copy(update={"override": (moved, v2530.override[1])}) if r is v2530 else r
                for r in data.operators
            )
        }
    )
    assert [(d.key, d.field) for d in compare(changed, reading)] == [("v25.3.0", "kubernetes")]


# --- what the snapshots say (the audit's facts) ------------------------------------------------------------------


def test_570_133_20_was_first_built_for_both_ubuntu_releases_on_2025_04_17(reading):
    assert reading.driver_images["ubuntu22.04"]["570.133.20"] == date(2025, 4, 17)
    assert reading.driver_images["ubuntu24.04"]["570.133.20"] == date(2025, 4, 17)
    assert reading.driver_images["ubuntu24.04"]["570.86.15"] == date(2025, 1, 27)


def test_the_r525_ubuntu_22_04_builds_are_in_the_history(reading):
    r525 = {v for v in reading.driver_images["ubuntu22.04"] if v.startswith("525.")}
    assert r525 == {"525.60.13", "525.85.12", "525.105.17", "525.125.06", "525.147.05"}


def test_precompiled_branches_over_time_follow_the_ci_main_line(reading):
    assert [(d.isoformat(), list(b)) for d, b in reading.precompiled["ubuntu22.04"] if d >= date(2025, 1, 1)] == [
        ("2025-03-25", [535, 550, 570]),
        ("2025-07-17", [535, 570]),
        ("2025-09-22", [535, 570, 580]),
        ("2026-02-23", [535, 580]),
        ("2026-05-29", [580, 595]),
    ]
    assert [(d.isoformat(), list(b)) for d, b in reading.precompiled["ubuntu24.04"]] == [
        ("2024-12-03", [550]),
        ("2025-03-25", [550, 570]),
        ("2025-07-17", [570]),
        ("2025-09-22", [570, 580]),
        ("2026-02-23", [580]),
        ("2026-05-29", [580, 595]),
    ]


def test_v26_3_3_gained_610_595_and_a_recommended_580_178_04(reading):
    listing = reading.operators["v26.3.3"]
    assert {"610.57.04", "595.91.07", "580.178.04"} <= set(listing.drivers)
    assert listing.recommended == "580.178.04"
    assert listing.default == "580.126.20"
    assert "580.178.04" not in reading.operators["v26.7.0"].drivers


def test_v25_10_1_lists_the_recommended_updates(reading):
    listing = reading.operators["v25.10.1"]
    assert {"590.48.01", "580.126.16", "580.126.09", "570.211.01", "535.288.01"} <= set(listing.drivers)
    assert listing.recommended == "580.126.16"


def test_kubernetes_1_36_came_with_v26_3_2(reading):
    assert reading.kubernetes["v26.3.1"].eks["ubuntu-24.04"] == ("1.32", "1.35")
    assert reading.kubernetes["v26.3.0"].bare_metal["ubuntu-22.04"] == ("1.32", "1.35")
    assert reading.kubernetes["v26.3.2"].eks["ubuntu-24.04"] == ("1.32", "1.36")
    assert reading.kubernetes["v25.10.1"].eks["ubuntu-22.04"] == ("1.30", "1.35")


def test_the_25_3_eks_column_said_1_25_to_1_28_until_september_2025(upstream_dir):
    history = upstream_dir / "cloud-native-docs" / "platform-support-history"
    _, eks_june = _platform_ranges((history / "2025-06-17-638a2ea6.rst").read_text(encoding="utf-8"))
    assert eks_june == {"ubuntu-20.04": ("1.25", "1.28"), "ubuntu-22.04": ("1.25", "1.28")}
    september = next(history.glob("2025-09-15-*.rst"))
    _, eks_september = _platform_ranges(september.read_text(encoding="utf-8"))
    assert eks_september["ubuntu-24.04"] == ("1.29", "1.33")


# --- the parsers, on texts written here ----------------------------------------------------------------------

_FLAT_TABLE = """
.. list-table:: Support Status for Releases
   :header-rows: 1

   * - GPU Operator Version
     - Status

   * - 9.1.x
     - Supported

**D** = Default driver, **R** = Recommended driver

.. flat-table::
   :header-rows: 2

   * - :rspan:`1` Component
     - :cspan:`1` GPU Operator Version

   * - v9.1.0
     - v9.1.1

   * - NVIDIA GPU Driver |ki|_
     - :cspan:`1` | `600.10.01 <https://example.invalid/600-10-01>`_ (**D**)
       | `590.48.01 <https://example.invalid/590-48-01>`_ (**R**)
"""


def test_a_spanned_driver_cell_is_listed_for_every_release_it_spans():
    listings = read_life_cycle([DocSnapshot(date(2030, 1, 1), "abc", _FLAT_TABLE)])
    assert set(listings) == {"v9.1.0", "v9.1.1"}
    assert listings["v9.1.1"].drivers == ["600.10.01", "590.48.01"]
    assert (listings["v9.1.1"].default, listings["v9.1.1"].recommended) == ("600.10.01", "590.48.01")


_CI = """
variables:
  DRIVER_VERSIONS: 600.10.01
.driver-versions:
  parallel:
    matrix:
      - DRIVER_VERSION: [{versions}]
.driver-versions-precompiled-ubuntu24.04:
  parallel:
    matrix:
      - DRIVER_BRANCH: [{branches}]
.dist-ubuntu24.04:
  variables:
    DIST: ubuntu24.04
.release-generic:
  script: [make]
.release-ubuntu24.04:
  extends: [.release-generic, .driver-versions]
release:staging-ubuntu24.04:
  extends: [.release-ubuntu24.04, .dist-ubuntu24.04]
  needs: !reference [.needs, list]
"""


def test_a_job_builds_the_versions_of_the_template_it_extends():
    images, precompiled = read_ci_text(_CI.format(versions="600.10.01, 590.48.01", branches="590, 600"))
    assert images == {"ubuntu24.04": {"600.10.01", "590.48.01"}}
    assert precompiled == {"ubuntu24.04": (590, 600)}


def test_same_day_commits_keep_the_set_the_main_line_continues():
    def snap(day: str, sha: str, branches: str) -> CiSnapshot:
        return CiSnapshot(date.fromisoformat(day), sha, _CI.format(versions="600.10.01", branches=branches))

    # On 2030-02-01 a release-branch commit still says [570, 580, 590]; main moved to [580, 590] that day.
    _, timeline = read_ci(
        [
            snap("2030-01-01", "a1", "570, 580, 590"),
            snap("2030-02-01", "b1", "580, 590"),
            snap("2030-02-01", "b2", "570, 580, 590"),
            snap("2030-03-01", "c1", "580, 590"),
            snap("2030-04-01", "d1", "580, 590, 600"),
            snap("2030-04-01", "d2", "590, 600"),
            snap("2030-05-01", "e1", "590, 600"),
        ]
    )
    assert [(d.isoformat(), list(b)) for d, b in timeline["ubuntu24.04"]] == [
        ("2030-01-01", [570, 580, 590]),
        ("2030-02-01", [580, 590]),
        ("2030-04-01", [590, 600]),
    ]
