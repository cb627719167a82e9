"""`Matrix.drivers`, the driver versions that fit an OS, operator release and instance type (what
`tools.matrix drivers` prints and config errors suggest): judged on a pinned day, never the calendar."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from policies.gpu_guard.matrix import Matrix, load_matrix
from policies.gpu_guard.versions import parse_driver_version

MATRIX: Matrix = load_matrix()
TODAY = date(2026, 11, 29)
OPERATOR = "v26.7.0"


def test_ubuntu_drivers_are_the_operator_releases_own_newest_first():
    op = MATRIX.operator(OPERATOR)
    assert op is not None
    for os in ("ubuntu-22.04", "ubuntu-24.04"):
        fitting = MATRIX.drivers(os=os, operator=OPERATOR, today=TODAY)
        assert fitting, os
        assert set(fitting) <= set(op.drivers)
        newest = sorted(fitting, key=parse_driver_version, reverse=True)
        # branches in support first, then the ended ones (issue 46), newest first within each
        def ended(version: str) -> bool:
            row = MATRIX.branch(parse_driver_version(version).branch)
            return row is None or row.is_end_of_life(TODAY)

        assert fitting == sorted(newest, key=ended)


def test_r535_fits_ubuntu_22_04_but_never_24_04():
    on_22 = MATRIX.drivers(os="ubuntu-22.04", operator=OPERATOR, today=TODAY)
    on_24 = MATRIX.drivers(os="ubuntu-24.04", operator=OPERATOR, today=TODAY)
    assert any(v.startswith("535.") for v in on_22)
    assert not any(v.startswith("535.") for v in on_24)
    assert set(on_24) < set(on_22)


def test_an_instance_type_narrows_to_the_drivers_its_gpu_supports():
    v100 = MATRIX.drivers(os="ubuntu-24.04", operator=OPERATOR, instance_type="p3.2xlarge", today=TODAY)
    every = MATRIX.drivers(os="ubuntu-24.04", operator=OPERATOR, today=TODAY)
    assert v100 and set(v100) < set(every)
    assert all(parse_driver_version(v).branch <= 580 for v in v100)  # V100 stops at R580


BOTTLEROCKET = next(row for row in MATRIX.data.node_images if row.os == "bottlerocket").baked_driver


@pytest.mark.parametrize("baked", BOTTLEROCKET, ids=[f"R{b.branch}-{b.since}" for b in BOTTLEROCKET])
def test_a_baked_image_fits_the_branch_it_ships_on_the_day(baked):
    earlier = [b for b in BOTTLEROCKET if b.since < baked.since]
    before = [str(max(earlier, key=lambda b: b.since).branch)] if earlier else []
    day = timedelta(days=1)
    assert MATRIX.drivers(os="bottlerocket", operator=OPERATOR, today=baked.since - day) == before
    assert MATRIX.drivers(os="bottlerocket", operator=OPERATOR, today=baked.since) == [str(baked.branch)]


def test_before_any_baked_branch_nothing_fits():
    first = min(b.since for b in BOTTLEROCKET)
    assert MATRIX.drivers(os="bottlerocket", operator=OPERATOR, today=first - timedelta(days=1)) == []


def test_an_unknown_operator_release_is_refused_with_the_known_ones():
    with pytest.raises(ValueError) as caught:
        MATRIX.drivers(os="ubuntu-24.04", operator="v26.4.9", today=TODAY)
    message = str(caught.value)
    # issue 55: the two releases around it, never the whole list
    assert message == "GPU Operator v26.4.9 is not a release the matrix records; the nearest are v26.3.3 and v26.7.0"
