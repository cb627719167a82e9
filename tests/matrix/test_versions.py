"""Version parsing: NVIDIA driver versions compare numerically per component; junk is rejected."""

from __future__ import annotations

import pytest

from policies.gpu_guard.versions import (
    KubeMinor,
    parse_cuda_version,
    parse_driver_version,
    parse_kube_minor,
)


def test_driver_versions_compare_numerically_per_component():
    assert parse_driver_version("570.26") < parse_driver_version("570.124.06")
    assert parse_driver_version("570.124.06") < parse_driver_version("570.133.20")
    assert parse_driver_version("535.309.01") < parse_driver_version("550.54.14")
    assert parse_driver_version("580.9.1") < parse_driver_version("580.65.06")


def test_driver_version_keeps_leading_zeros_as_written():
    version = parse_driver_version("535.54.03")
    assert str(version) == "535.54.03"
    assert version.key == (535, 54, 3)
    assert version.branch == 535


def test_bare_branch_sorts_before_every_release_of_the_branch():
    branch = parse_driver_version("580")
    assert branch.is_branch_only
    assert branch < parse_driver_version("580.65.06")
    assert branch > parse_driver_version("575.57.08")


def test_r_prefixed_branch_is_accepted():
    assert parse_driver_version("R580").branch == 580


@pytest.mark.parametrize("junk", ["", "abc", "v580", "580.", "580.65.06.1", "580.post1", "58", "580-1", "5 80"])
def test_rejects_strings_that_are_not_driver_versions(junk):
    with pytest.raises(ValueError, match="not an NVIDIA driver version"):
        parse_driver_version(junk)


def test_cuda_versions_default_to_ga_and_drop_the_build_number():
    assert parse_cuda_version("12.8") == parse_cuda_version("12.8.0")
    assert parse_cuda_version("12.8.1.012").patch == 1
    assert str(parse_cuda_version("12.2.2")) == "12.2.2"
    assert parse_cuda_version("12.8").short == "12.8"
    assert parse_cuda_version("12.10") > parse_cuda_version("12.9.1")


@pytest.mark.parametrize("junk", ["12", "twelve", "12.x", "v12.8", ""])
def test_rejects_strings_that_are_not_cuda_versions(junk):
    with pytest.raises(ValueError, match="not a CUDA release"):
        parse_cuda_version(junk)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1.35", KubeMinor(1, 35)), ("v1.32.3", KubeMinor(1, 32)), ("1.32.3-eks-4f4795d", KubeMinor(1, 32))],
)
def test_kubernetes_versions_reduce_to_the_minor(text, expected):
    assert parse_kube_minor(text) == expected


def test_kubernetes_minor_ordering_is_numeric():
    assert parse_kube_minor("1.9") < parse_kube_minor("1.10")
    assert parse_kube_minor("1.31").minors_behind(parse_kube_minor("1.35")) == 4


@pytest.mark.parametrize("junk", ["1", "one.two", "1.x", ""])
def test_rejects_strings_that_are_not_kubernetes_versions(junk):
    with pytest.raises(ValueError, match="not a Kubernetes version"):
        parse_kube_minor(junk)
