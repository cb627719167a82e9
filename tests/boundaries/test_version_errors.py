"""The version parsers' errors, word for word: each names the value, the expected form and an example.

They reach users through config errors and policy findings (`judged` turns a ValueError into a
mandatory finding that prints it), so the text is part of the behaviour.
"""

from __future__ import annotations

import pytest

from policies.gpu_guard.versions import KubeMinor, parse_cuda_version, parse_driver_version, parse_kube_minor


def test_a_driver_version_error_names_the_value_and_the_form():
    with pytest.raises(ValueError) as caught:
        parse_driver_version("latest")
    assert str(caught.value) == (
        "driver version 'latest' is not an NVIDIA driver version; expected <branch>.<minor>[.<patch>] such as "
        "580.173.02, or a branch such as 580")


def test_a_cuda_version_error_names_the_value_and_the_form():
    with pytest.raises(ValueError) as caught:
        parse_cuda_version("cuda12")
    assert str(caught.value) == (
        "CUDA version 'cuda12' is not a CUDA release; expected <major>.<minor>[.<update>] such as 12.8 or 12.2.2")


def test_a_kubernetes_version_error_names_the_value_and_the_form():
    with pytest.raises(ValueError) as caught:
        parse_kube_minor("one.thirty")
    assert str(caught.value) == (
        "Kubernetes version 'one.thirty' is not a Kubernetes version; expected <major>.<minor> such as 1.35")


def test_minors_behind_refuses_two_majors_naming_both():
    with pytest.raises(ValueError) as caught:
        KubeMinor(1, 35).minors_behind(KubeMinor(2, 0))
    assert str(caught.value) == "Kubernetes 1.35 and 2.0 differ in major version"


@pytest.mark.parametrize(("text", "key", "spelling"), [
    ("580.173.02", (580, 173, 2), "580.173.02"),
    ("R580", (580,), "580"),
    ("r570.86.15", (570, 86, 15), "570.86.15"),
    (" 535.54.03 ", (535, 54, 3), "535.54.03"),
    ("1000.1", (1000, 1), "1000.1"),
])
def test_driver_versions_parse_to_their_numeric_key_and_keep_their_spelling(text, key, spelling):
    parsed = parse_driver_version(text)
    assert (parsed.key, str(parsed), parsed.branch, parsed.is_branch_only) == (key, spelling, key[0], len(key) == 1)


@pytest.mark.parametrize("text", ["58", "58000", "580.12345", "580.1.2.3", "v580", "580.", "580a1", ""])
def test_driver_versions_outside_the_form_are_refused(text):
    with pytest.raises(ValueError, match="is not an NVIDIA driver version"):
        parse_driver_version(text)


@pytest.mark.parametrize(("text", "parts", "short"), [
    ("12.8", (12, 8, 0), "12.8"),
    ("12.2.2", (12, 2, 2), "12.2.2"),
    ("13.0.2.006", (13, 0, 2), "13.0.2"),
    (" 11.8.0 ", (11, 8, 0), "11.8"),
])
def test_cuda_versions_parse_with_their_update(text, parts, short):
    parsed = parse_cuda_version(text)
    assert ((parsed.major, parsed.minor, parsed.patch), parsed.short, str(parsed)) == (
        parts, short, ".".join(map(str, parts)))
    assert parsed.minor_key == parts[:2]


@pytest.mark.parametrize("text", ["12", "123.1", "12.123", "12.8.1.2.3", "v12.8", "12.8-1"])
def test_cuda_versions_outside_the_form_are_refused(text):
    with pytest.raises(ValueError, match="is not a CUDA release"):
        parse_cuda_version(text)


@pytest.mark.parametrize(("text", "minor"), [
    ("1.35", "1.35"), ("v1.35.2", "1.35"), ("1.32.3-eks-1", "1.32"), (" 1.30 ", "1.30"),
])
def test_kubernetes_versions_parse_to_their_minor(text, minor):
    assert str(parse_kube_minor(text)) == minor


@pytest.mark.parametrize("text", ["1", "1.x", "k1.35", "1.35_2"])
def test_kubernetes_versions_outside_the_form_are_refused(text):
    with pytest.raises(ValueError, match="is not a Kubernetes version"):
        parse_kube_minor(text)


def test_minors_behind_counts_in_both_directions():
    assert KubeMinor(1, 32).minors_behind(KubeMinor(1, 35)) == 3
    assert KubeMinor(1, 35).minors_behind(KubeMinor(1, 35)) == 0
    assert KubeMinor(1, 36).minors_behind(KubeMinor(1, 35)) == -1
