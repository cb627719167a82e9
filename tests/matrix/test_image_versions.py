"""How a pinned node image version is read (`parse_image_version`) and dated (`_release_date`), exactly.

Written from the survivors of the mutation run (docs/testing.md): each case pins a spelling a user writes
(the Karpenter alias, the AMI release version, `latest` in any case and spacing) or the exact error text.
"""

from __future__ import annotations

from datetime import date

import pytest

from policies.gpu_guard.matrix.images import _release_date, parse_image_version, release_key

AL2023_AMI = "amazon-eks-node-al2023-x86_64-nvidia-1.35-v20260917"
BR_FORMS = ("the EKS release version <version>-<8-hex build> (1.47.0-6154605b), the AMI name "
            "bottlerocket-aws-k8s-1.35-nvidia-x86_64-v<version>-<build>, or latest")


@pytest.mark.parametrize(
    ("os", "value", "release"),
    [
        ("al2023", "al2023@v20260917", "v20260917"),
        ("al2023", "v20260917", "v20260917"),
        ("al2023", "20260917", "v20260917"),
        ("al2023", "1.35.2-20260917", "v20260917"),  # the AMI release version: the date is its suffix
        ("al2023", " al2023@v20260917 ", "v20260917"),
        ("bottlerocket", "bottlerocket@v1.68.0", "v1.68.0"),
        ("bottlerocket", "1.68.0", "v1.68.0"),
        ("bottlerocket", "\tv1.68.0\n", "v1.68.0"),
    ],
)
def test_a_pinned_release_reads_as_its_tag(os: str, value: str, release: str) -> None:
    assert parse_image_version(os, value) == release


@pytest.mark.parametrize("value", [None, "", "latest", "  LATEST ", "Al2023@Latest", "bottlerocket@latest"])
@pytest.mark.parametrize("os", ["al2023", "bottlerocket", "ubuntu-24.04"])
def test_latest_in_any_spelling_is_no_pin(os: str, value: str | None) -> None:
    assert parse_image_version(os, value) is None


@pytest.mark.parametrize(
    ("os", "value", "message"),
    [
        ("al2023", "2026-09-17",
         "AL2023 image version '2026-09-17' is not a release; use v20260917 (alias al2023@v20260917), the AMI "
         f"release version 1.35.2-20260917, the AMI name {AL2023_AMI}, or latest"),
        ("al2023", "bottlerocket@v1.68.0",
         "AL2023 image version 'bottlerocket@v1.68.0' is not a release; use v20260917 (alias al2023@v20260917), "
         f"the AMI release version 1.35.2-20260917, the AMI name {AL2023_AMI}, or latest"),
        ("bottlerocket", "v1.68",
         f"Bottlerocket image version 'v1.68' is not a release; use v1.68.0 (alias bottlerocket@v1.68.0), {BR_FORMS}"),
        ("ubuntu-24.04", "v20260917",
         "OS 'ubuntu-24.04' has no image releases: only bottlerocket, al2023 bake the driver"),
    ],
)
def test_an_unreadable_pin_names_the_forms_that_read(os: str, value: str, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_image_version(os, value)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("os", "release", "day"),
    [
        ("al2023", "v20260917", date(2026, 9, 17)),
        ("al2023", "20251231", date(2025, 12, 31)),
        ("al2023", "v20260230", None),  # not a day of the calendar
        ("al2023", "v2026", None),  # a year alone: no day
        ("al2023", "vlatest", None),
        ("bottlerocket", "v1.68.0", None),  # Bottlerocket tags are versions, not dates
        ("bottlerocket", "v20260917", None),
    ],
)
def test_only_an_al2023_tag_is_a_date(os: str, release: str, day: date | None) -> None:
    assert _release_date(os, release) == day


def test_release_tags_order_by_their_numbers() -> None:
    assert release_key("v1.68.0") == (1, 68, 0)
    assert release_key("v20260917") == (20260917,)
    assert sorted(["v1.9.0", "v1.68.0", "v1.10.2"], key=release_key) == ["v1.9.0", "v1.10.2", "v1.68.0"]
