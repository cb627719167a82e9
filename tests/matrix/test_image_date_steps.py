"""A pinned or latest node image older than every recorded release: the date-based `baked_driver` step of
`node_images` (`ImageQueries._date_step_driver`), every field of the ImageDriver it gives.

Written from the survivors of the mutation run (docs/testing.md). The steps are matrix.yaml's own rows (their
sources are the amazon-eks-ami release notes); the expected values are read from those rows, not copied.
"""

from __future__ import annotations

from datetime import date

import pytest

from policies.gpu_guard.matrix import load_matrix
from policies.gpu_guard.matrix.findings import Finding, OsName
from policies.gpu_guard.matrix.results import ImageDriver
from policies.gpu_guard.matrix.rows import BakedDriver, ImageRelease, NodeImageRow
from policies.gpu_guard.versions import parse_kube_minor

MATRIX = load_matrix()
DAY = date(2026, 11, 29)
AL2023 = next(r for r in MATRIX.data.node_images if r.os == "al2023")
BOTTLEROCKET = next(r for r in MATRIX.data.node_images if r.os == "bottlerocket")


def _step(row: NodeImageRow, since: date) -> BakedDriver:
    return next(s for s in row.baked_driver if s.since == since)


def test_the_steps_this_file_relies_on_are_before_the_first_recorded_release() -> None:
    first = MATRIX.image_releases("al2023")[0].release
    assert first > "v20250807" and _step(AL2023, date(2025, 7, 15)).branch == 575
    assert _step(AL2023, date(2025, 4, 1)).branch == 570


@pytest.mark.parametrize("kubernetes", ["1.33", "1.37"])
def test_a_pinned_al2023_release_before_the_recorded_ones_is_judged_by_its_date_step(kubernetes: str) -> None:
    step = _step(AL2023, date(2025, 7, 15))  # v20250801 falls between the 2025-07-15 and 2025-08-07 steps
    assert MATRIX.driver_for_image("al2023", "al2023@v20250801", "g6.xlarge", kubernetes, today=DAY) == ImageDriver(
        os="al2023", image_version="v20250801", release=None, exact=False, kubernetes=kubernetes,
        published=kubernetes in AL2023.published, published_versions=AL2023.published, drivers=("575",),
        version="575", branch=575, rule="al2023 v20250801 ship driver branch R575", source=step.source,
        confirmed=step.confirmed,
    )
    bare = MATRIX.driver_for_image("al2023", "v20250801", "g6.xlarge", kubernetes, today=DAY)
    assert bare is not None and bare.published is (kubernetes in AL2023.published)


def test_latest_before_the_first_recorded_release_is_the_step_of_the_judging_day() -> None:
    step = _step(AL2023, date(2025, 7, 15))
    assert MATRIX.driver_for_image("al2023", None, "g6.xlarge", "1.33", today=date(2025, 8, 1)) == ImageDriver(
        os="al2023", image_version=None, release=None, exact=False, kubernetes="1.33", published=True,
        published_versions=AL2023.published, drivers=("575",), version="575", branch=575,
        rule="al2023 NVIDIA images (as of 2025-08-01) ship driver branch R575", source=step.source,
        confirmed=step.confirmed,
    )


@pytest.mark.parametrize(
    ("row", "image_version", "today", "covers"),
    [
        (AL2023, "v20250101", DAY, "v20250101"),  # before the first dated step
        (AL2023, None, date(2019, 1, 1), "2019-01-01"),  # latest, on a day before every step
        (BOTTLEROCKET, "v1.10.0", DAY, "v1.10.0"),  # Bottlerocket tags are not dates: no step applies
    ],
)
def test_nothing_covers_an_image_before_every_step(row: NodeImageRow, image_version: str | None, today: date,
                                                   covers: str) -> None:
    assert MATRIX.driver_for_image(row.os, image_version, "g6.xlarge", "1.33", today=today) == ImageDriver(
        os=row.os, image_version=image_version, release=None, exact=False, kubernetes="1.33", published=None,
        published_versions=row.published, drivers=(), version=None, branch=None,
        rule=f"no recorded {row.os} release or dated step covers {covers}", source=row.source, confirmed=False,
    )


def _minors(row: ImageRelease) -> tuple[str, ...]:
    """The Kubernetes versions a release publishes a variant for, oldest first."""
    return tuple(sorted(row.drivers, key=lambda v: tuple(map(int, v.split(".")))))


def _release(os: str, release: str) -> ImageRelease:
    return next(r for r in MATRIX.image_releases(os) if r.release == release)


def test_a_recorded_release_without_the_kubernetes_variant_carries_no_driver() -> None:
    row = _release("bottlerocket", "v1.68.0")
    assert MATRIX.driver_for_image("bottlerocket", "v1.68.0", "g6.xlarge", "1.99", today=DAY) == ImageDriver(
        os="bottlerocket", image_version="v1.68.0", release="v1.68.0", exact=True, kubernetes="1.99",
        published=False, published_versions=_minors(row),
        drivers=(), version=None, branch=None, rule="bottlerocket v1.68.0 carries no driver for Kubernetes 1.99",
        source=row.source, confirmed=row.confirmed,
    )


@pytest.mark.parametrize("kubernetes", ["1.33", "1.99"])
def test_a_release_between_recorded_ones_is_judged_by_the_step_before_and_never_confirmed(kubernetes: str) -> None:
    row = _release("bottlerocket", "v1.41.0")  # v1.42.0 is not recorded: the step before it is v1.41.0
    assert row.confirmed
    got = MATRIX.driver_for_image("bottlerocket", "bottlerocket@v1.42.0", "g6.xlarge", kubernetes, today=DAY)
    carried = row.drivers.get(kubernetes, ())
    assert got == ImageDriver(
        os="bottlerocket", image_version="v1.42.0", release="v1.41.0", exact=False, kubernetes=kubernetes,
        published=bool(carried), published_versions=_minors(row),
        drivers=tuple(carried), version=carried[0] if carried else None,
        branch=int(carried[0].split(".")[0]) if carried else None,
        rule=("bottlerocket v1.42.0 (recorded step: v1.41.0) "
              + (f"ships one driver, {carried[0]}" if carried else f"carries no driver for Kubernetes {kubernetes}")),
        source=row.source, confirmed=False,
    )


# Bottlerocket's recorded releases publish a newer Kubernetes variant (1.37) than the image line's `published`
# list: the releases' own minors decide. (AL2023's two lists end alike.)
@pytest.mark.parametrize("os", ["bottlerocket"])
def test_the_image_of_any_minor_is_the_newest_kubernetes_any_recorded_release_publishes(os: OsName) -> None:
    minors = sorted({m for r in MATRIX.image_releases(os) for m in r.drivers if m != "*"}, key=parse_kube_minor)
    node_row = next(r for r in MATRIX.data.node_images if r.os == os)
    assert parse_kube_minor(minors[-1]) > parse_kube_minor(node_row.published[-1])  # what makes the choice visible
    image = MATRIX._any_minor_image(os, "g6.xlarge", None, DAY)
    assert image is not None and image.kubernetes == minors[-1]
    assert image == MATRIX.driver_for_image(os, None, "g6.xlarge", minors[-1], today=DAY)


def test_an_unrecorded_release_past_its_step_is_not_judged_published_and_names_recorded_ones() -> None:
    step = _release("bottlerocket", "v1.37.0")  # v1.38.0 is not recorded; v1.37.0 has no 1.33 variant
    assert "1.33" not in step.drivers
    nearest = tuple(reversed([r.release for r in MATRIX.image_releases("bottlerocket") if "1.33" in r.drivers][-3:]))
    assert len(nearest) == 3
    findings = [f for f in MATRIX.image_findings("bottlerocket", "v1.38.0", "g6.xlarge", "1.33", today=DAY)
                if f.rule == "node-image-published"]
    assert findings == [Finding(
        "advisory", "node-image-published",
        "whether bottlerocket v1.38.0 publishes aws-k8s-1.33-nvidia variant is not recorded (its own table was not "
        f"read; the nearest recorded release v1.37.0 publishes {', '.join(_minors(step))}). Pin a recorded release: "
        f"{', '.join(nearest)}.", step.source, nearest,
    )]


def test_with_no_recorded_release_the_image_line_decides_the_newest_kubernetes() -> None:
    import yaml  # noqa: PLC0415

    from policies.gpu_guard.matrix import MATRIX_PATH  # noqa: PLC0415
    from policies.gpu_guard.matrix.core import Matrix  # noqa: PLC0415
    from policies.gpu_guard.matrix.loader import parse_matrix  # noqa: PLC0415

    data = yaml.safe_load(MATRIX_PATH.read_text(encoding="utf-8"))
    data["image_releases"] = [r for r in data["image_releases"] if r["os"] != "bottlerocket"]
    matrix = Matrix(parse_matrix(yaml.safe_dump(data, sort_keys=False)))
    image = matrix._any_minor_image("bottlerocket", "g6.xlarge", None, DAY)
    assert image is not None and image.kubernetes == BOTTLEROCKET.published[-1]
    # and with no image line either, there is no image to judge
    data["node_images"] = [r for r in data["node_images"] if r["os"] != "bottlerocket"]
    bare = Matrix(parse_matrix(yaml.safe_dump(data, sort_keys=False)))
    assert bare._any_minor_image("bottlerocket", "g6.xlarge", None, DAY) is None


def test_a_pin_between_recorded_releases_steps_back_and_sees_the_next() -> None:
    rows = {r.release: r for r in MATRIX.image_releases("bottlerocket")}
    first, last = MATRIX.image_releases("bottlerocket")[0], MATRIX.image_releases("bottlerocket")[-1]
    assert MATRIX._pinned_step("bottlerocket", "v1.42.0") == (rows["v1.41.0"], rows["v1.43.0"])
    assert MATRIX._pinned_step("bottlerocket", "v1.41.0") == (rows["v1.41.0"], rows["v1.43.0"])  # its own row
    assert MATRIX._pinned_step("bottlerocket", "v1.0.0") == (None, first)
    assert MATRIX._pinned_step("bottlerocket", "v9.0.0") == (last, None)


def test_the_newest_release_counts_from_the_day_it_was_seen() -> None:
    newest = MATRIX.image_releases("bottlerocket")[-1]
    assert newest.released is None  # a Bottlerocket tag is no date: the day it was reviewed counts
    assert MATRIX._latest_release("bottlerocket", newest.reviewed) is newest
    assert MATRIX._latest_release("bottlerocket", date.fromordinal(newest.reviewed.toordinal() - 1)) is None
