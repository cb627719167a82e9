"""A precompiled driver the GPU Operator release does not build for the OS: the exact finding, its choices
(`DriverQueries._precompiled_image`). Written from survivors of the mutation run (docs/testing.md); the
operator rows' precompiled builds are matrix.yaml's (NVIDIA cloud-native-docs life-cycle-policy.rst)."""

from __future__ import annotations

from datetime import date

from policies.gpu_guard.matrix import load_matrix
from policies.gpu_guard.matrix.findings import Finding

MATRIX = load_matrix()
DAY = date(2026, 11, 29)


def _operator_source(version: str) -> str:
    op = MATRIX.operator(version)
    assert op is not None
    return op.source


def test_an_operator_that_builds_nothing_for_the_os_says_so() -> None:
    op = MATRIX.operator("v24.9.2")
    assert op is not None and "ubuntu-24.04" not in op.precompiled
    assert MATRIX.driver_image("580.105.08", "ubuntu-24.04", precompiled=True, operator="v24.9.2", today=DAY) == [
        Finding("mandatory", "driver-image-published",
                "precompiled driver R580 is not built for ubuntu-24.04 under GPU Operator v24.9.2 (v24.9.2 builds "
                "precompiled drivers for no branch on ubuntu-24.04); use a conventional (non-precompiled) driver, or "
                "another operator release.", _operator_source("v24.9.2"), ()),  # not "one of none" (issue 46)
    ]


def test_an_unbuilt_branch_is_offered_the_built_ones_newest_first() -> None:
    op = MATRIX.operator("v25.3.2")
    assert op is not None and op.precompiled["ubuntu-22.04"] == (535, 550, 570)
    assert MATRIX.driver_image("580.105.08", "ubuntu-22.04", precompiled=True, operator="v25.3.2", today=DAY) == [
        Finding("mandatory", "driver-image-published",
                "precompiled driver R580 is not built for ubuntu-22.04 under GPU Operator v25.3.2 (v25.3.2 builds "
                "precompiled drivers for R570, R550, R535 on ubuntu-22.04); set driver.version to one of 570, 550, "
                "535 or use a conventional (non-precompiled) driver.", _operator_source("v25.3.2"),
                ("570", "550", "535")),
    ]
