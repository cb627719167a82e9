"""`Matrix.check` (what `tools.matrix check` prints) and the precompiled kernel checks, on pinned days."""

from __future__ import annotations

from datetime import date

import pytest

from policies.gpu_guard.matrix import Finding, Matrix, load_matrix

MATRIX: Matrix = load_matrix()
TODAY = date(2026, 11, 29)
ROWS = {row.os_tag: row for row in MATRIX.data.precompiled_kernels}


def _kernel(kernel: str) -> list[tuple[str, str]]:
    findings = MATRIX.driver_image("580", "ubuntu-24.04", precompiled=True, operator="v26.7.0", kernel=kernel,
                                   today=TODAY)
    return [(f.level, f.message) for f in findings]


def test_a_built_kernel_line_and_flavour_has_images():
    assert _kernel("6.8.0-1024-aws") == [("ok", "precompiled R580 images are built for ubuntu24.04")]


def test_a_kernel_line_that_is_not_built_is_named_with_the_built_lines():
    row = ROWS["ubuntu24.04"]
    assert _kernel("6.5.0-1024-aws") == [("mandatory", (
        f"precompiled driver images for ubuntu24.04 are not built for kernel 6.5.0-1024-aws: kernel line 6.5 "
        f"(built: {', '.join(row.kernel_lines)}). Use an LTS kernel with a built flavour, or a conventional driver."))]


def test_a_flavour_that_is_not_built_is_named_with_the_built_flavours():
    row = ROWS["ubuntu24.04"]
    assert _kernel("6.8.0-1024-lowlatency") == [("mandatory", (
        f"precompiled driver images for ubuntu24.04 are not built for kernel 6.8.0-1024-lowlatency: flavour "
        f"lowlatency (built: {', '.join(row.flavours)}). Use an LTS kernel with a built flavour, or a conventional "
        "driver."))]


def test_both_problems_are_named_together():
    ((level, message),) = _kernel("6.5.0-1024-kvm")
    assert level == "mandatory"
    assert "kernel 6.5.0-1024-kvm: kernel line 6.5 (built: 6.8); flavour kvm (built: " in message


@pytest.mark.parametrize("kernel", ["junk", "6.8-aws", "6.8.0-aws", "6.8.0-1024-"])
def test_a_kernel_that_is_not_an_ubuntu_release_is_refused(kernel):
    assert _kernel(kernel) == [("mandatory", (
        f"kernel {kernel!r} is not an Ubuntu kernel release (expected e.g. 6.8.0-1024-aws, as `uname -r` prints "
        "it); precompiled images are tagged per kernel."))]


def _rules(findings: list[Finding], *rules: str) -> list[tuple[str, str, str]]:
    return [(f.rule, f.level, f.message) for f in findings if f.rule in rules]


def test_check_judges_the_cuda_of_a_known_image_through_its_tag():
    findings = MATRIX.check(os="ubuntu-22.04", driver="535.309.01", operator=None, today=TODAY,
                            cuda="nvcr.io/nvidia/tritonserver:25.01-py3")
    ((rule, level, message),) = _rules(findings, "cuda-driver-compatible", "gpu-workload-cuda-declared")
    assert (rule, level) == ("cuda-driver-compatible", "advisory")
    assert message.startswith("CUDA 12.8 runs on driver 535.309.01 only through minor version compatibility")


def test_check_refuses_an_image_whose_cuda_is_unknown():
    findings = MATRIX.check(os="ubuntu-22.04", driver="535.309.01", operator=None, today=TODAY,
                            cuda="registry.example.com/team/model:1.0")
    assert _rules(findings, "cuda-driver-compatible", "gpu-workload-cuda-declared") == [(
        "gpu-workload-cuda-declared", "mandatory",
        "the CUDA runtime of image registry.example.com/team/model:1.0 is unknown (not an nvidia/cuda tag nor an "
        "NGC release in the matrix); declare it with the gpu-platform.io/cuda label, e.g. 12.8.")]


def test_check_uses_the_images_forward_compatibility_and_the_instances_gpu():
    plain = MATRIX.check(os="ubuntu-22.04", driver="535.309.01", operator=None, today=TODAY, cuda="13.0",
                         instance_type="g5.xlarge")
    compat = MATRIX.check(os="ubuntu-22.04", driver="535.309.01", operator=None, today=TODAY,
                          cuda="nvidia/cuda:13.0.0-runtime-ubuntu22.04", instance_type="g5.xlarge")
    assert [lv for _, lv, _ in _rules(plain, "cuda-driver-compatible")] == ["mandatory"]
    assert [lv for _, lv, _ in _rules(compat, "cuda-driver-compatible")] == ["advisory"]
    assert _rules(plain, "cuda-architecture-compatible") == [
        ("cuda-architecture-compatible", "ok", "CUDA 13.0 supports sm_86 (A10G)")]
    geforce = MATRIX.check(os="ubuntu-22.04", driver="535.309.01", operator=None, today=TODAY,
                           cuda="nvidia/cuda:13.0.0-runtime-ubuntu22.04", instance_type="g6.xlarge")
    assert [lv for _, lv, _ in _rules(geforce, "cuda-driver-compatible")] == ["advisory"]  # L4 is data-center


def test_check_compares_a_baked_image_pools_branch_with_what_the_image_ships():
    wrong = MATRIX.check(os="bottlerocket", driver="570", operator=None, kubernetes="1.35", today=TODAY)
    right = MATRIX.check(os="bottlerocket", driver="580", operator=None, kubernetes="1.35", today=TODAY)
    assert _rules(wrong, "baked-driver-branch") == [(
        "baked-driver-branch", "mandatory",
        "bottlerocket NVIDIA images ship driver branch R580 (as of 2026-11-29), not R570; declare driver 580 for "
        "this pool, or use Ubuntu with an operator-installed driver.")]
    assert _rules(right, "baked-driver-branch") == [
        ("baked-driver-branch", "ok", "bottlerocket NVIDIA images ship R580")]


def test_a_published_node_image_names_its_ssm_parameter():
    assert [(f.level, f.message) for f in MATRIX.node_image_findings("ubuntu-24.04", "1.35", today=TODAY)] == [(
        "ok", "/aws/service/canonical/ubuntu/eks/24.04/1.35/stable/current/amd64/hvm/ebs-gp3/ami-id is published")]
    assert [f.level for f in MATRIX.node_image_findings("bottlerocket", "1.35", "arm64", today=TODAY)] == ["ok"]


def test_an_unpublished_kubelet_version_names_the_published_ones_and_other_oses():
    row = next(r for r in MATRIX.data.node_images if r.os == "ubuntu-24.04")
    assert "1.30" not in row.published
    ((level, message),) = [(f.level, f.message) for f in MATRIX.node_image_findings("ubuntu-24.04", "1.30",
                                                                                    today=TODAY)]
    assert level == "mandatory"
    assert message.startswith(
        "no ubuntu-24.04 EKS node image is published for Kubernetes 1.30 (/aws/service/canonical/ubuntu/eks/24.04/"
        f"1.30/stable/current/amd64/hvm/ebs-gp3/ami-id does not exist; published: {', '.join(row.published)}). "
        f"Use kubelet {row.published[-1]} within the skew policy, or ")
    others = [f"{r.os} (1.30)" for r in MATRIX.data.node_images if r.os != "ubuntu-24.04" and "1.30" in r.published]
    assert message.endswith(", ".join(others) + ".")


def test_an_unknown_architecture_has_no_node_image():
    assert [(f.level, f.message) for f in MATRIX.node_image_findings("ubuntu-24.04", "1.35", "s390x",
                                                                     today=TODAY)] == [(
        "mandatory",
        "no node image is recorded for OS ubuntu-24.04 on s390x; use one of ubuntu-22.04, ubuntu-24.04, ubuntu-26.04, "
        "bottlerocket, al2023.")]


def test_a_node_image_carries_its_parameter_release_list_and_baked_branch_of_the_day():
    row = next(r for r in MATRIX.data.node_images if r.os == "bottlerocket")
    image = MATRIX.node_image("bottlerocket", "1.35", "x86_64", TODAY)
    assert image is not None
    assert (image.os, image.kubernetes, image.arch, image.published, image.published_versions, image.source) == (
        "bottlerocket", "1.35", "x86_64", True, row.published, row.source)
    assert image.ssm_parameter == "/aws/service/bottlerocket/aws-k8s-1.35-nvidia/x86_64/latest/image_id"
    assert image.driver_branch == MATRIX.baked_driver_branch("bottlerocket", "1.35", TODAY) == 580
    earlier = MATRIX.node_image("bottlerocket", "1.35", "x86_64", date(2025, 6, 1))
    assert earlier is not None and earlier.driver_branch == 570


def test_a_node_image_reads_the_minor_of_a_patch_version_and_has_no_baked_branch_on_ubuntu():
    image = MATRIX.node_image("ubuntu-24.04", "v1.35.2", "arm64", TODAY)
    assert image is not None
    assert (image.kubernetes, image.driver_branch) == ("1.35", None)
    assert image.ssm_parameter == "/aws/service/canonical/ubuntu/eks/24.04/1.35/stable/current/arm64/hvm/ebs-gp3/ami-id"


def test_no_node_image_for_an_unknown_architecture():
    assert MATRIX.node_image("bottlerocket", "1.35", "s390x", TODAY) is None
