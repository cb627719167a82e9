"""matrix.yaml is internally consistent; each test fails on the inconsistency it names."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
import yaml

from policies.gpu_guard.matrix import Matrix
from policies.gpu_guard.versions import parse_cuda_version, parse_driver_version, parse_kube_minor
from tests.shared import upstream

OS_TAG = {"ubuntu-22.04": "ubuntu22.04", "ubuntu-24.04": "ubuntu24.04", "ubuntu-26.04": "ubuntu26.04"}


def test_every_operator_default_driver_is_in_its_supported_list(matrix: Matrix):
    missing = [op.version for op in matrix.data.operators if op.default_driver not in op.drivers]
    assert missing == []


def test_every_supported_driver_has_a_published_image_on_each_os_whose_branches_include_it(matrix: Matrix):
    images = {row.os_tag: set(row.versions) for row in matrix.data.driver_images}
    missing = [
        f"{op.version}: {driver}-{OS_TAG[os]}"
        for op in matrix.data.operators
        for os, branches in op.branches.items()
        for driver in op.drivers
        if parse_driver_version(driver).branch in branches and driver not in images.get(OS_TAG[os], set())
    ]
    assert missing == []


def test_every_branch_an_operator_supports_has_a_driver_in_its_list(matrix: Matrix):
    empty = [
        f"{op.version} {os} R{branch}"
        for op in matrix.data.operators
        for os, branches in op.branches.items()
        for branch in branches
        if not any(parse_driver_version(d).branch == branch for d in op.drivers)
    ]
    assert empty == []


def test_every_operator_driver_belongs_to_a_branch_it_supports_on_some_os(matrix: Matrix):
    stray = [
        f"{op.version}: {d}"
        for op in matrix.data.operators
        for d in op.drivers
        if not any(parse_driver_version(d).branch in branches for branches in op.branches.values())
    ]
    assert stray == []


def test_operators_support_kubernetes_and_precompiled_only_on_oses_they_support(matrix: Matrix):
    for op in matrix.data.operators:
        assert set(op.kubernetes) == set(op.branches), op.version
        assert set(op.precompiled) <= set(op.branches), op.version
        for low, high in [*op.kubernetes.values(), op.eks]:
            assert parse_kube_minor(low) <= parse_kube_minor(high), op.version


def test_r535_is_never_supported_or_published_on_ubuntu_24_04(matrix: Matrix):
    assert all(535 not in op.branches.get("ubuntu-24.04", ()) for op in matrix.data.operators)
    assert all(535 not in op.precompiled.get("ubuntu-24.04", ()) for op in matrix.data.operators)
    noble = next(row for row in matrix.data.driver_images if row.os_tag == "ubuntu24.04")
    assert [v for v in noble.versions if v.startswith("535.")] == []


def test_unpublished_drivers_appear_in_no_image_list_and_no_operator(matrix: Matrix):
    for row in matrix.data.unpublished_drivers:
        assert all(row.version not in images.versions for images in matrix.data.driver_images)
        assert all(row.version not in op.drivers for op in matrix.data.operators)


def test_every_driver_in_use_belongs_to_a_known_branch(matrix: Matrix):
    unknown = sorted(
        {parse_driver_version(v).branch for v in matrix.known_driver_versions()}
        - {b.branch for b in matrix.data.driver_branches}
    )
    assert unknown == []


def test_operators_are_listed_oldest_first_without_duplicates(matrix: Matrix):
    keys = [tuple(int(p) for p in op.version[1:].split(".")) for op in matrix.data.operators]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)


def test_cuda_table_minimum_drivers_never_decrease_with_the_toolkit(matrix: Matrix):
    rows = sorted(matrix.data.cuda_releases, key=lambda r: parse_cuda_version(r.cuda))
    for older, newer in itertools.pairwise(rows):
        assert parse_driver_version(older.min_driver) <= parse_driver_version(newer.min_driver), newer.cuda


def test_mvc_floor_is_the_ga_minimum_of_the_first_release_of_each_major_in_the_table(matrix: Matrix):
    for mvc in matrix.data.mvc:
        first = min(
            (parse_cuda_version(r.cuda), r.min_driver)
            for r in matrix.data.cuda_releases
            if parse_cuda_version(r.cuda).major == mvc.major
        )
        if first[0].minor == 0:
            assert first[1] == mvc.floor, mvc.major


def test_branch_native_cuda_needs_no_more_than_the_branch(matrix: Matrix):
    for branch in matrix.data.driver_branches:
        if branch.native_cuda is None:
            continue
        minimum = matrix.cuda_min_driver(branch.native_cuda)
        if minimum is not None:
            assert parse_driver_version(minimum).branch <= branch.branch, branch.branch
        assert parse_cuda_version(branch.native_cuda).major <= branch.max_cuda_major, branch.branch


def test_every_instance_family_names_a_known_gpu_and_positive_counts(matrix: Matrix):
    gpus = {gpu.model for gpu in matrix.data.gpus}
    for family in matrix.data.instance_families:
        assert family.gpu_model in gpus, family.family
        assert family.sizes, family.family
        for size, count in family.sizes.items():
            # A fractional-GPU size advertises no whole GPU: count 0 exactly when it records its share.
            assert (count == 0) == (size in family.gpu_fraction), (family.family, size)
            assert count >= 0
        assert set(family.gpu_fraction) <= set(family.sizes), family.family
        assert all(re.fullmatch(r"1/\d+", share) for share in family.gpu_fraction.values()), family.family
        assert not family.gpu_fraction or family.driver_kind == "grid", family.family


def test_brief_instance_families_are_all_present(matrix: Matrix):
    wanted = {
        "g4dn",
        "g5",
        "g6",
        "gr6",
        "g6e",
        "g7e",
        "g7",
        "p3",
        "p3dn",
        "p4d",
        "p4de",
        "p5",
        "p5e",
        "p5en",
        "p6-b200",
        "p6-b300",
        "g5g",
    }
    assert wanted <= {family.family for family in matrix.data.instance_families}


def test_gpu_minimum_drivers_fit_under_their_max_branch(matrix: Matrix):
    for gpu in matrix.data.gpus:
        if gpu.min_driver is not None and gpu.max_branch is not None:
            assert parse_driver_version(gpu.min_driver).branch <= gpu.max_branch, gpu.model


def test_forward_compat_rows_admit_only_known_branches_of_an_older_or_same_cuda_major(matrix: Matrix):
    for row in matrix.data.forward_compat:
        major = parse_cuda_version(row.cuda).major
        for branch in row.admitted_branches:
            known = matrix.branch(branch)
            assert known is not None, (row.cuda, branch)
            assert known.max_cuda_major <= major, (row.cuda, branch)


def test_eks_dates_are_ordered(matrix: Matrix):
    for row in matrix.data.eks_versions:
        dates = [d for d in (row.released, row.end_standard, row.end_extended) if d is not None]
        assert dates == sorted(dates), row.version
    versions = [parse_kube_minor(row.version) for row in matrix.data.eks_versions]
    assert versions == sorted(versions)


def test_baked_driver_history_is_in_date_order(matrix: Matrix):
    for image in matrix.data.node_images:
        dates = [b.since for b in image.baked_driver]
        assert dates == sorted(dates), image.os


def test_unconfirmed_rows_say_why(matrix: Matrix):
    def rows() -> Iterator[Any]:
        for field in type(matrix.data).model_fields:
            value = getattr(matrix.data, field)
            if isinstance(value, tuple):
                yield from value
                for row in value:
                    yield from getattr(row, "baked_driver", ())

    silent = [row for row in rows() if not getattr(row, "confirmed", True) and not getattr(row, "note", None)]
    assert silent == []


def test_every_row_was_reviewed_on_or_before_the_review_day(matrix: Matrix):
    reviewed = {
        row.reviewed
        for field in type(matrix.data).model_fields
        for row in (getattr(matrix.data, field) if isinstance(getattr(matrix.data, field), tuple) else ())
    }
    # the audits of issue 9, 26 and 39; issue 32's Ubuntu 26.04 rows; issue 37's instance_capacity; issue 48's
    # serving images and GPU memory; issue 52's GPU memory of every NVIDIA GPU (CUDA totals) and serving-image rows
    # (vLLM -cu130 arch lists, TGI on T4); issue 55's previous-generation GPU families
    assert max(reviewed) <= date(2026, 12, 7)


def test_newest_operator_matches_the_upstream_chart_defaults(matrix: Matrix):
    values = yaml.safe_load(upstream("charts", "gpu-operator", "values.yaml").read_text(encoding="utf-8"))
    newest = matrix.data.operators[-1]
    assert newest.version == "v26.7.0", "upstream.lock.json pins the chart at v26.7.0"
    assert values["driver"]["version"] == newest.default_driver
    assert values["toolkit"]["version"] == newest.toolkit


@pytest.mark.parametrize("os", ["ubuntu-22.04", "ubuntu-24.04"])
def test_the_cli_default_combination_of_config_md_is_compatible(matrix: Matrix, os):
    # CONFIG.md example: gpuOperator v26.7.0 with driver 580.173.02.
    findings = matrix.check(os=os, driver="580.173.02", operator="v26.7.0", today=date(2026, 11, 29))
    assert all(f.level == "ok" for f in findings)
