"""Baked-driver node images (Bottlerocket, AL2023) without a Kubernetes version, and precompiled kernels.

Each finding is compared whole (level, rule, message, source, nearest), so that a change to any part of it,
the release named, the branches offered or the source cited, fails a test. The facts behind the values are
the matrix's own rows (policies/gpu_guard/matrix.yaml), each with the source the finding cites.
"""

from __future__ import annotations

from datetime import date

import pytest

from policies.gpu_guard.matrix import load_matrix

TODAY = date(2026, 11, 29)
MATRIX = load_matrix()
BR_ISSUE = "https://github.com/bottlerocket-os/bottlerocket-kernel-kit/issues/254"
AL2023_TWO_TREES = "https://github.com/awslabs/amazon-eks-ami/pull/2819"
PLATFORM_SUPPORT = "https://github.com/NVIDIA/cloud-native-docs/blob/main/gpu-operator/platform-support.rst"
DRIVER_CI = "https://github.com/NVIDIA/gpu-driver-container/blob/main/.common-ci.yml"


def _baked(os: str, driver: str, image_version: str | None) -> list[tuple[object, ...]]:
    findings = MATRIX.check(os=os, driver=driver, operator=None, image_version=image_version,  # type: ignore[arg-type]
                            today=TODAY)
    return [(f.level, f.rule, f.message, f.source, f.nearest) for f in findings if f.rule == "baked-driver-branch"]


@pytest.mark.parametrize(("os", "image_version", "where", "offered", "source"), [
    ("bottlerocket", None, "bottlerocket NVIDIA images ship driver branch R580 (as of 2026-11-29)", ("580",),
     BR_ISSUE),
    ("bottlerocket", "v1.37.0", "bottlerocket v1.37.0 ships driver branch R535", ("535",),
     "https://bottlerocket.dev/en/os/1.37.x/version-information/gpu-drivers/1.37.0"),
    ("bottlerocket", "v1.58.0", "bottlerocket v1.58.0 ships driver branch R580", ("580",),
     "https://github.com/bottlerocket-os/bottlerocket/pull/4797"),
    ("bottlerocket", "v1.68.0", "bottlerocket v1.68.0 ships driver branch R580 and R595", ("580", "595"),
     "https://bottlerocket.dev/en/os/1.68.x/version-information/gpu-drivers/1.68.0/"),
    ("al2023", None, "al2023 v20260917 ships driver branch R580 and R595", ("580", "595"), AL2023_TWO_TREES),
    ("al2023", "v20251217", "al2023 v20251217 ships driver branch R580", ("580",),
     "https://github.com/awslabs/amazon-eks-ami/releases/tag/v20251217"),
    ("al2023", "v20260917", "al2023 v20260917 ships driver branch R580 and R595", ("580", "595"), AL2023_TWO_TREES),
])
def test_a_baked_image_without_kubernetes_version_names_the_release_and_its_branches(
        os: str, image_version: str | None, where: str, offered: tuple[str, ...], source: str) -> None:
    assert _baked(os, "570.1.1", image_version) == [(
        "mandatory", "baked-driver-branch",
        f"{where}, not R570; declare driver {' or '.join(offered)} for this pool, or use Ubuntu with an "
        "operator-installed driver.", source, offered)]
    for branch in offered:
        assert _baked(os, f"{branch}.1.1", image_version) == [("ok", "baked-driver-branch", where, source, ())]


@pytest.mark.parametrize(("os", "image_version", "instance_type", "expected"), [
    ("bottlerocket", None, None, ["580"]),
    ("bottlerocket", "v1.37.0", None, ["535"]),
    ("bottlerocket", "v1.37.0", "g7e.2xlarge", []),  # R535 predates Blackwell
    ("bottlerocket", "v1.68.0", None, ["595", "580"]),
    ("bottlerocket", "v1.68.0", "g4dn.xlarge", ["580"]),  # ghostdog: the T4 is in lts's open list, never pb
    ("al2023", None, None, ["595", "580"]),
    ("al2023", None, "g4dn.xlarge", ["580"]),  # the R580 open module list has the T4: R595 is never picked
    ("al2023", "v20260917", "g7e.2xlarge", ["580"]),
    ("al2023", "v20260714", None, ["580"]),
    ("al2023", "v20251217", None, ["580"]),
])
def test_drivers_of_a_baked_image_follow_its_release_and_instance_type(
        os: str, image_version: str | None, instance_type: str | None, expected: list[str]) -> None:
    assert MATRIX.drivers(os=os, operator="v26.7.0", instance_type=instance_type,  # type: ignore[arg-type]
                          image_version=image_version, today=TODAY) == expected


@pytest.mark.parametrize(("os", "kernel", "expected"), [
    ("ubuntu-22.04", "6.8.0-1024-aws", ("ok", "precompiled R580 images are built for ubuntu22.04", DRIVER_CI, ())),
    ("ubuntu-22.04", "5.15.0-1000-aws", ("ok", "precompiled R580 images are built for ubuntu22.04", DRIVER_CI, ())),
    ("ubuntu-24.04", "6.8.0-1024-aws", ("ok", "precompiled R580 images are built for ubuntu24.04", DRIVER_CI, ())),
    ("ubuntu-24.04", "5.15.0-1000-aws", (
        "mandatory", "precompiled driver images for ubuntu24.04 are not built for kernel 5.15.0-1000-aws: kernel "
        "line 5.15 (built: 6.8). Use an LTS kernel with a built flavour, or a conventional driver.",
        PLATFORM_SUPPORT, ("6.8",))),
    ("ubuntu-22.04", "6.8.0-1024-lowlatency", (
        "mandatory", "precompiled driver images for ubuntu22.04 are not built for kernel 6.8.0-1024-lowlatency: "
        "flavour lowlatency (built: aws, azure, generic, nvidia, oracle). Use an LTS kernel with a built flavour, "
        "or a conventional driver.", PLATFORM_SUPPORT, ("5.15", "6.8"))),
    ("ubuntu-24.04", "6.99.0-1-lowlatency", (
        "mandatory", "precompiled driver images for ubuntu24.04 are not built for kernel 6.99.0-1-lowlatency: "
        "kernel line 6.99 (built: 6.8); flavour lowlatency (built: aws, azure, azure-fde, generic, nvidia, oracle). "
        "Use an LTS kernel with a built flavour, or a conventional driver.", PLATFORM_SUPPORT, ("6.8",))),
    ("ubuntu-22.04", "linux-6.8", (
        "mandatory", "kernel 'linux-6.8' is not an Ubuntu kernel release (expected e.g. 6.8.0-1024-aws, as `uname "
        "-r` prints it); precompiled images are tagged per kernel.", PLATFORM_SUPPORT, ())),
])
def test_a_precompiled_driver_is_judged_against_the_kernels_nvidia_builds_for(
        os: str, kernel: str, expected: tuple[object, ...]) -> None:
    findings = MATRIX.driver_image("580", os, precompiled=True, operator="v26.7.0", kernel=kernel,  # type: ignore[arg-type]
                                   today=TODAY)
    assert [(f.level, f.message, f.source, f.nearest) for f in findings] == [expected]
    assert {f.rule for f in findings} == {"driver-image-published"}


@pytest.mark.parametrize(("os", "today", "expected"), [
    ("al2023", date(2024, 6, 1), None),  # no NVIDIA AL2023 image recorded yet: nothing to say
    ("al2023", date(2025, 6, 1), 570),
    ("al2023", date(2026, 7, 20), 580),
    ("bottlerocket", date(2024, 6, 1), 535),
    ("bottlerocket", date(2025, 6, 1), 570),
    ("bottlerocket", date(2026, 7, 20), 580),
])
def test_an_unpinned_image_loads_the_branch_of_the_newest_release_as_of_the_day(
        os: str, today: date, expected: int | None) -> None:
    assert MATRIX.driver_branch_for_image(os, None, None, "1.30", today=today) == expected
    assert MATRIX.driver_branch_for_image(os, "latest", None, "1.30", today=today) == expected


def test_an_os_with_no_recorded_precompiled_kernels_is_refused_not_guessed() -> None:
    from policies.gpu_guard.matrix.core import Matrix  # noqa: PLC0415

    only_jammy = [r for r in MATRIX.data.precompiled_kernels if r.os_tag == "ubuntu22.04"]
    matrix = Matrix(MATRIX.data.model_copy(update={"precompiled_kernels": only_jammy}))
    findings = matrix.driver_image("580", "ubuntu-24.04", precompiled=True, operator="v26.7.0",
                                   kernel="6.8.0-1024-aws", today=TODAY)
    assert [(f.level, f.rule, f.message, f.source, f.nearest) for f in findings] == [(
        "mandatory", "driver-image-published", "no precompiled driver kernels are recorded for ubuntu24.04",
        PLATFORM_SUPPORT, ())]
