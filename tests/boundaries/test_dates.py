"""Every date comparison of the matrix, on its boundary day, the day before and the day after.

The boundary days come from matrix.yaml itself (a corrected row moves the day, not the verdict), so
these tests pin the comparisons: an end of life counts from the day after the month NVIDIA gives, EKS
standard / extended support include their last day, a release counts from its release day, a baked
driver or a precompiled build counts from its `since` day. Nothing here reads the calendar.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from policies.gpu_guard.matrix import Finding, Matrix, OsName, PrecompiledBuild, load_matrix

MATRIX: Matrix = load_matrix()
DAY = timedelta(days=1)


def _levels(findings: list[Finding]) -> list[str]:
    return [f.level for f in findings]


DATED_BRANCHES = [row for row in MATRIX.data.driver_branches if row.eol is not None and not row.listed_end_of_life]


def test_there_are_dated_branches_and_eks_versions_to_check():
    assert len(DATED_BRANCHES) >= 3
    assert any(row.branch == 535 for row in DATED_BRANCHES)
    assert len([r for r in MATRIX.data.eks_versions if r.end_standard and r.end_extended]) >= 3


@pytest.mark.parametrize("row", DATED_BRANCHES, ids=[f"R{r.branch}" for r in DATED_BRANCHES])
def test_driver_branch_is_supported_through_its_end_of_life_day_and_ended_the_day_after(row):
    assert row.eol is not None
    branch = str(row.branch)
    assert _levels(MATRIX.branch_lifecycle(branch, row.eol - DAY)) == ["ok"]
    assert _levels(MATRIX.branch_lifecycle(branch, row.eol)) == ["ok"]
    (after,) = MATRIX.branch_lifecycle(branch, row.eol + DAY)
    assert after.level == "advisory"
    assert f"R{row.branch} reached end of life in {row.eol.strftime('%B %Y')}" in after.message
    assert row.branch not in [int(b) for b in after.nearest]


RELEASED_BRANCHES = [row for row in DATED_BRANCHES if MATRIX.known_driver_versions(row.branch)]


@pytest.mark.parametrize("row", RELEASED_BRANCHES, ids=[f"R{r.branch}" for r in RELEASED_BRANCHES])
def test_a_released_branch_is_offered_as_a_choice_through_its_end_of_life_day_only(row):
    assert row.eol is not None
    unknown = "600"  # not a branch, below the newest (R999 is newer than the matrix): its finding lists the live ones
    assert str(row.branch) in MATRIX.branch_lifecycle(unknown, row.eol)[0].nearest
    assert str(row.branch) not in MATRIX.branch_lifecycle(unknown, row.eol + DAY)[0].nearest


def test_a_month_eol_means_the_last_day_of_that_month():
    r535 = MATRIX.branch(535)
    assert r535 is not None and r535.eol is not None
    assert (r535.eol + DAY).day == 1


EKS = [r for r in MATRIX.data.eks_versions if r.end_standard is not None and r.end_extended is not None]


@pytest.mark.parametrize("row", EKS, ids=[r.version for r in EKS])
def test_eks_standard_support_includes_its_last_day(row):
    assert row.end_standard is not None
    assert _levels(MATRIX.eks_lifecycle(row.version, row.end_standard - DAY)) == ["ok"]
    assert _levels(MATRIX.eks_lifecycle(row.version, row.end_standard)) == ["ok"]
    (after,) = MATRIX.eks_lifecycle(row.version, row.end_standard + DAY)
    assert after.level == "advisory"
    assert f"left standard support on {row.end_standard.isoformat()}" in after.message


@pytest.mark.parametrize("row", EKS, ids=[r.version for r in EKS])
def test_eks_extended_support_includes_its_last_day(row):
    assert row.end_extended is not None
    assert _levels(MATRIX.eks_lifecycle(row.version, row.end_extended - DAY)) == ["advisory"]
    assert _levels(MATRIX.eks_lifecycle(row.version, row.end_extended)) == ["advisory"]
    (after,) = MATRIX.eks_lifecycle(row.version, row.end_extended + DAY)
    assert after.level == "mandatory"
    assert f"extended support ended on {row.end_extended.isoformat()}" in after.message


@pytest.mark.parametrize("row", EKS, ids=[r.version for r in EKS])
def test_an_eks_version_is_a_suggested_choice_through_its_last_standard_day_only(row):
    assert row.end_standard is not None
    unknown = "1.2"  # not an EKS version: its finding lists the versions in standard support
    assert row.version in MATRIX.eks_lifecycle(unknown, row.end_standard)[0].nearest
    assert row.version not in MATRIX.eks_lifecycle(unknown, row.end_standard + DAY)[0].nearest


RELEASED = [r for r in MATRIX.data.eks_versions if (r.released or r.available_by) is not None]


@pytest.mark.parametrize("row", RELEASED, ids=[r.version for r in RELEASED])
def test_eks_version_counts_from_its_release_day(row):
    released: date = row.released or row.available_by
    (before,) = MATRIX.eks_lifecycle(row.version, released - DAY)
    assert before.level == "mandatory"
    assert f"not yet released on Amazon EKS (release {released.isoformat()})" in before.message
    assert _levels(MATRIX.eks_lifecycle(row.version, released)) == ["ok"]
    assert _levels(MATRIX.eks_lifecycle(row.version, released + DAY)) == ["ok"]


@pytest.mark.parametrize("row", [r for r in MATRIX.data.eks_versions if r.released is not None],
                         ids=[r.version for r in MATRIX.data.eks_versions if r.released is not None])
def test_an_eks_version_is_offered_from_its_release_day(row):
    unknown = "1.2"
    assert row.version not in MATRIX.eks_lifecycle(unknown, row.released - DAY)[0].nearest
    assert row.version in MATRIX.eks_lifecycle(unknown, row.released)[0].nearest


BAKED = [(image.os, b) for image in MATRIX.data.node_images for b in image.baked_driver]


@pytest.mark.parametrize(("os", "baked"), BAKED, ids=[f"{os}-R{b.branch}" for os, b in BAKED])
def test_a_node_image_ships_a_baked_branch_from_its_since_day(os, baked):
    earlier = [b for image in MATRIX.data.node_images if image.os == os for b in image.baked_driver
               if b.since < baked.since]
    before = max(earlier, key=lambda b: b.since).branch if earlier else None
    assert MATRIX.baked_driver_branch(os, "1.35", baked.since - DAY) == before
    assert MATRIX.baked_driver_branch(os, "1.35", baked.since) == baked.branch
    assert MATRIX.baked_driver_branch(os, "1.35", baked.since + DAY) == baked.branch


def test_there_are_baked_branches_and_precompiled_builds_to_check():
    assert len(BAKED) >= 3
    assert len(PRECOMPILED) >= 2
    assert len(RELEASED_BRANCHES) >= 3


def _predecessor(build: PrecompiledBuild) -> PrecompiledBuild | None:
    earlier = [e for e in MATRIX.data.precompiled_builds if e.os_tag == build.os_tag and e.since < build.since]
    return max(earlier, key=lambda e: e.since) if earlier else None


PRECOMPILED = [b for b in MATRIX.data.precompiled_builds
               if (before := _predecessor(b)) is not None and set(before.branches) - set(b.branches)]


@pytest.mark.parametrize("build", PRECOMPILED, ids=[f"{b.os_tag}-{b.since}" for b in PRECOMPILED])
def test_a_precompiled_build_list_applies_from_its_since_day(build):
    os: OsName = "ubuntu-22.04" if build.os_tag == "ubuntu22.04" else "ubuntu-24.04"
    before = _predecessor(build)
    assert before is not None
    dropped = sorted(set(before.branches) - set(build.branches))[0]
    driver = str(dropped)

    def stopped(today: date) -> bool:
        return any("NVIDIA CI stopped building precompiled" in f.message or "is not built for" in f.message
                   for f in MATRIX.driver_image(driver, os, precompiled=True, today=today))

    assert not stopped(build.since - DAY)
    assert stopped(build.since)
    assert stopped(build.since + DAY)


ANNOUNCED = [r for r in MATRIX.data.eks_versions if r.released is None and r.available_by is not None]


@pytest.mark.parametrize("row", ANNOUNCED, ids=[r.version for r in ANNOUNCED])
def test_an_announced_eks_version_is_offered_from_its_available_by_day(row):
    unknown = "1.2"
    assert row.version not in MATRIX.eks_lifecycle(unknown, row.available_by - DAY)[0].nearest
    assert row.version in MATRIX.eks_lifecycle(unknown, row.available_by)[0].nearest
