"""The seed scenarios the policies rely on, end to end through the matrix queries."""

from __future__ import annotations

from datetime import date

import pytest

from policies.gpu_guard.matrix import Finding, worst_level

from .conftest import REVIEW_DAY


def _not_ok(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.level != "ok"]


def _only(findings: list[Finding], rule: str) -> Finding:
    matching = [f for f in findings if f.rule == rule and f.level != "ok"]
    assert len(matching) == 1, findings
    return matching[0]


# --- the AWS China blog setup: v26.3.1 + 535.309.01 on Ubuntu 22.04, CUDA 12.2.2 ------------------------------


def test_accepts_r535_on_ubuntu_22_04_under_v26_3_1_with_only_an_eol_advisory(matrix):
    findings = matrix.check(
        os="ubuntu-22.04",
        driver="535.309.01",
        operator="v26.3.1",
        cuda="12.2.2",
        instance_type="g5.xlarge",
        today=REVIEW_DAY,
    )
    assert worst_level(findings) == "advisory"
    [eol] = _not_ok(findings)
    assert eol.rule == "driver-branch-eol"
    assert "R535 reached end of life in June 2026" in eol.message
    assert eol.source.startswith("https://docs.nvidia.com/datacenter/tesla/drivers/")


def test_r535_is_not_yet_end_of_life_in_may_2026(matrix):
    assert worst_level(matrix.branch_lifecycle("535.309.01", date(2026, 5, 31))) == "ok"
    assert worst_level(matrix.branch_lifecycle("535.309.01", date(2026, 7, 1))) == "advisory"


# --- published driver images ---------------------------------------------------------------------------------


def test_rejects_driver_535_15_04_which_has_no_published_image(matrix):
    finding = _only(matrix.driver_image("535.15.04", "ubuntu-22.04"), "driver-image-published")
    assert finding.level == "mandatory"
    assert "nvcr.io/nvidia/driver:535.15.04-ubuntu22.04" in finding.message
    assert "ImagePullBackOff" in finding.message
    assert finding.nearest[0] == "535.309.01"
    assert "nearest published for ubuntu22.04: 535.309.01" in finding.message


def test_accepts_535_309_01_image_for_ubuntu_22_04(matrix):
    assert worst_level(matrix.driver_image("535.309.01", "ubuntu-22.04")) == "ok"
    assert matrix.driver_image_ref("535.309.01", "ubuntu-22.04") == "nvcr.io/nvidia/driver:535.309.01-ubuntu22.04"


def test_535_309_01_is_the_last_r535_build(matrix):
    assert matrix.known_driver_versions(535)[0] == "535.309.01"


def test_rejects_r535_on_ubuntu_24_04(matrix):
    findings = matrix.check(os="ubuntu-24.04", driver="535.309.01", operator="v26.3.1", today=REVIEW_DAY)
    image = _only(findings, "driver-image-published")
    branch = _only(findings, "driver-branch-supported")
    assert image.level == branch.level == "mandatory"
    assert "R535 was never built for ubuntu24.04" in image.message
    assert "does not support driver branch R535" in branch.message
    assert "Ubuntu 24.04 needs R570/R580 or newer" in branch.message
    assert all(not v.startswith("535.") for v in image.nearest + branch.nearest)


def test_branch_only_driver_needs_precompiled_images(matrix):
    assert worst_level(matrix.driver_image("580", "ubuntu-24.04")) == "mandatory"


# --- precompiled drivers -------------------------------------------------------------------------------------


def test_rejects_precompiled_r535_under_v26_7_0(matrix):
    findings = matrix.check(os="ubuntu-22.04", driver="535", operator="v26.7.0", precompiled=True, today=REVIEW_DAY)
    finding = _only(findings, "driver-image-published")
    assert finding.level == "mandatory"
    assert "v26.7.0 builds precompiled drivers for R595, R580" in finding.message
    assert finding.nearest == ("595", "580")


def test_accepts_standard_535_309_01_under_v26_7_0_on_ubuntu_22_04_with_eol_advisory(matrix):
    findings = matrix.check(os="ubuntu-22.04", driver="535.309.01", operator="v26.7.0", today=REVIEW_DAY)
    assert worst_level(findings) == "advisory"
    assert [f.rule for f in _not_ok(findings)] == ["driver-branch-eol"]


def test_accepts_precompiled_r580_under_v26_7_0(matrix):
    findings = matrix.check(os="ubuntu-24.04", driver="580", operator="v26.7.0", precompiled=True, today=REVIEW_DAY)
    assert worst_level(findings) == "ok"


def test_warns_when_ci_stopped_building_a_precompiled_branch_the_operator_still_lists(matrix):
    findings = matrix.driver_image("570", "ubuntu-24.04", precompiled=True, operator="v26.3.1", today=REVIEW_DAY)
    assert worst_level(findings) == "advisory"
    assert "stopped building precompiled R570" in findings[0].message


def test_rejects_precompiled_image_for_a_kernel_flavour_nvidia_does_not_build(matrix):
    findings = matrix.driver_image(
        "580", "ubuntu-22.04", precompiled=True, operator="v26.7.0", kernel="6.8.0-1024-lowlatency", today=REVIEW_DAY
    )
    assert worst_level(findings) == "mandatory"
    assert "flavour lowlatency" in findings[0].message


def test_precompiled_image_reference_uses_branch_kernel_and_os_tag(matrix):
    ref = matrix.driver_image_ref("580.173.02", "ubuntu-22.04", precompiled=True, kernel="6.8.0-1024-aws")
    assert ref == "nvcr.io/nvidia/driver:580-6.8.0-1024-aws-ubuntu22.04"


# --- CUDA and driver -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("driver", ["535.309.01", "570.211.01"])
def test_rejects_cuda_13_on_r535_or_r570_without_forward_compat(matrix, driver):
    findings = matrix.cuda_driver(
        "13.0", driver, forward_compat_image=False, admitted_branches=None, data_center_gpu=True
    )
    finding = _only(findings, "cuda-driver-compatible")
    assert finding.level == "mandatory"
    # No image requirement to check: the container starts and CUDA initialisation fails (issue 17).
    assert "CUDA initialisation fails in it (cudaErrorInsufficientDriver without cuda-compat" in finding.message
    assert "580.65.06 or later" in finding.message


def test_nvidia_cuda_13_0_image_on_r535_data_center_gpu_is_advisory(matrix):
    image = matrix.image_cuda("nvidia/cuda:13.0.0-runtime-ubuntu22.04")
    assert image is not None
    assert (image.cuda, image.forward_compat) == ("13.0.0", True)
    assert image.admitted_branches is not None and 535 in image.admitted_branches
    findings = matrix.cuda_driver(
        image.cuda,
        "535.309.01",
        forward_compat_image=image.forward_compat,
        admitted_branches=image.admitted_branches,
        data_center_gpu=True,
    )
    assert _only(findings, "cuda-driver-compatible").level == "advisory"
    assert "forward compatibility" in findings[0].message


def test_forward_compat_does_not_help_a_consumer_gpu(matrix):
    findings = matrix.cuda_driver(
        "13.0.0", "535.309.01", forward_compat_image=True, admitted_branches=(535,), data_center_gpu=False
    )
    assert worst_level(findings) == "mandatory"
    assert "only on data-center GPUs" in findings[0].message


def test_forward_compat_rejects_a_branch_the_image_does_not_admit(matrix):
    findings = matrix.cuda_driver(
        "13.0.0", "525.147.05", forward_compat_image=True, admitted_branches=(535, 570), data_center_gpu=True
    )
    assert worst_level(findings) == "mandatory"
    # NVIDIA_REQUIRE_CUDA is checked first: the toolkit (legacy mode assumed) refuses the container.
    assert "NVIDIA_REQUIRE_CUDA asks cuda>=13.0 or one of R535, R570, and R525 is neither" in findings[0].message
    cdi = matrix.cuda_driver(
        "13.0.0", "525.147.05", forward_compat_image=True, admitted_branches=(535, 570), data_center_gpu=True,
        toolkit_mode="cdi",
    )
    assert worst_level(cdi) == "mandatory"
    assert "admits R535, R570, not R525 (the cuda-compat package of the image targets those branches)" in cdi[0].message


def test_cuda_12_8_on_r535_is_an_mvc_advisory_naming_what_breaks(matrix):
    findings = matrix.cuda_driver(
        "12.8", "535.309.01", forward_compat_image=False, admitted_branches=None, data_center_gpu=True
    )
    finding = _only(findings, "cuda-driver-compatible")
    assert finding.level == "advisory"
    assert "minor version compatibility" in finding.message
    assert "PTX JIT" in finding.message
    assert "cudaErrorCallRequiresNewerDriver" in finding.message
    assert "570.26" in finding.message


def test_cuda_below_the_mvc_floor_is_rejected(matrix):
    findings = matrix.cuda_driver(
        "12.2", "520.61.05", forward_compat_image=False, admitted_branches=None, data_center_gpu=True
    )
    assert worst_level(findings) == "mandatory"


def test_older_cuda_runs_on_a_newer_driver(matrix):
    findings = matrix.cuda_driver(
        "11.8", "580.173.02", forward_compat_image=False, admitted_branches=None, data_center_gpu=True
    )
    assert worst_level(findings) == "ok"


@pytest.mark.parametrize(
    ("cuda", "minimum"),
    [
        ("12.2.2", "535.104.05"),
        ("12.8", "570.26"),
        ("12.8.1", "570.124.06"),
        ("12.3.2", "545.23.08"),
        ("13.0", "580.65.06"),
    ],
)
def test_cuda_minimum_driver_comes_from_the_toolkit_table(matrix, cuda, minimum):
    assert matrix.cuda_min_driver(cuda) == minimum


def test_unknown_cuda_release_has_no_minimum(matrix):
    assert matrix.cuda_min_driver("12.7") is None


def test_dev_stack_triton_25_01_is_cuda_12_8(matrix):
    image = matrix.image_cuda("nvcr.io/nvidia/tritonserver:25.01-py3")
    assert image is not None
    assert image.cuda == "12.8.0"
    assert image.source.endswith("rel-25-01.html")


def test_image_cuda_of_unknown_images_is_none(matrix):
    assert matrix.image_cuda("nvcr.io/nvidia/tritonserver:99.01-py3") is None
    assert matrix.image_cuda("python:3.11") is None
    assert matrix.image_cuda("nvidia/cuda:latest") is None


def test_image_cuda_ignores_a_digest(matrix):
    image = matrix.image_cuda("nvcr.io/nvidia/cuda:12.2.2-runtime-ubuntu22.04@sha256:" + "0" * 64)
    assert image is not None and image.cuda == "12.2.2"


def test_cuda_architecture_needs_12_8_for_blackwell(matrix):
    assert worst_level(matrix.cuda_architecture("12.6", "p6-b200.48xlarge")) == "advisory"
    assert worst_level(matrix.cuda_architecture("12.8", "p6-b200.48xlarge")) == "ok"
    assert worst_level(matrix.cuda_architecture("11.7", "g6.xlarge")) == "advisory"


def test_cuda_13_does_not_support_volta(matrix):
    finding = _only(matrix.cuda_architecture("13.0", "p3.2xlarge"), "cuda-architecture-compatible")
    assert finding.level == "mandatory"


# --- GPU architecture and driver -----------------------------------------------------------------------------


def test_b200_needs_570_133_20(matrix):
    finding = _only(matrix.architecture_support("p6-b200.48xlarge", "570.124.06"), "gpu-architecture-supported")
    assert finding.level == "mandatory"
    assert "570.133.20" in finding.message
    assert finding.nearest[0] == "570.133.20"
    assert worst_level(matrix.architecture_support("p6-b200.48xlarge", "570.133.20")) == "ok"


def test_rtx_pro_6000_needs_575_57_08(matrix):
    assert worst_level(matrix.architecture_support("g7e.2xlarge", "570.211.01")) == "mandatory"
    assert worst_level(matrix.architecture_support("g7e.2xlarge", "575.57.08")) == "ok"


def test_v100_stops_at_r580(matrix):
    finding = _only(matrix.architecture_support("p3.2xlarge", "595.91.07"), "gpu-architecture-supported")
    assert finding.level == "mandatory"
    assert "R580" in finding.message
    assert all(v.startswith("580.") for v in finding.nearest)
    assert worst_level(matrix.architecture_support("p3.2xlarge", "580.173.02")) == "ok"


def test_drivers_for_v100_under_v26_7_0_exclude_the_r595_default(matrix):
    # v26.7.0's component matrix lists one R580 driver, 580.173.02 (580.178.04 is listed for v26.3.3 only).
    fitting = matrix.drivers(os="ubuntu-24.04", operator="v26.7.0", instance_type="p3dn.24xlarge", today=REVIEW_DAY)
    assert fitting == ["580.173.02"]


def test_drivers_on_ubuntu_22_04_include_r535_and_are_newest_first(matrix):
    fitting = matrix.drivers(os="ubuntu-22.04", operator="v26.7.0", today=REVIEW_DAY)
    assert fitting == ["595.91.07", "580.173.02", "610.57.04", "535.309.01"]  # ended branches last (issue 46)


def test_drivers_on_bottlerocket_are_the_baked_branch(matrix):
    assert matrix.drivers(os="bottlerocket", operator="v26.7.0", today=REVIEW_DAY) == ["580"]


# --- instances -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "gpus"), [("g5.xlarge", 1), ("g5.12xlarge", 4), ("p5.48xlarge", 8), ("g7e.12xlarge", 2)]
)
def test_gpu_count_per_instance_size(matrix, name, gpus):
    instance = matrix.instance_type(name)
    assert instance is not None
    assert instance.gpus == gpus


def test_instance_type_joins_gpu_facts(matrix):
    g5 = matrix.instance_type("g5.xlarge")
    assert g5 is not None
    assert (g5.gpu_model, g5.architecture, g5.compute_capability, g5.data_center) == ("A10G", "Ampere", "8.6", True)
    p3 = matrix.instance_type("p3.16xlarge")
    assert p3 is not None and p3.max_branch == 580


def test_non_gpu_and_unknown_instances_are_not_gpu_instances(matrix):
    assert not matrix.is_gpu_instance("m7i.large")
    assert not matrix.is_gpu_instance("g5.3xlarge")
    assert matrix.is_gpu_instance("g5g.xlarge")


def test_unknown_instance_size_names_the_family_sizes(matrix):
    finding = matrix.architecture_support("g5.3xlarge", "580.173.02")[0]
    assert finding.level == "mandatory"
    assert "g5.xlarge" in finding.nearest


# --- operator releases ---------------------------------------------------------------------------------------


def test_operator_lookup_accepts_a_missing_v(matrix):
    assert matrix.operator("26.7.0") is matrix.operator("v26.7.0")
    assert matrix.operator("v9.9.9") is None


def test_operator_kubernetes_support_per_os(matrix):
    assert worst_level(matrix.operator_kubernetes("v26.3.3", "1.32", "ubuntu-24.04")) == "ok"
    for os in ("ubuntu-22.04", "ubuntu-24.04"):  # Ubuntu 24.04 from 1.33 too: cloud-native-docs PR #490
        finding = matrix.operator_kubernetes("v26.7.0", "1.32", os)[0]
        assert finding.level == "mandatory"
        assert "1.33-1.37" in finding.message
        assert "v26.3.3" in finding.nearest


def test_operator_kubernetes_on_eks_uses_the_cloud_table(matrix):
    assert worst_level(matrix.operator_kubernetes("v25.10.0", "1.35")) == "mandatory"
    assert worst_level(matrix.operator_kubernetes("v25.10.0", "1.34")) == "ok"


def test_driver_outside_the_component_matrix_is_advisory(matrix):
    finding = matrix.operator_branch_support("v26.7.0", "ubuntu-24.04", "580.126.20")[0]
    assert finding.level == "advisory"
    assert "580.173.02" in finding.nearest


def test_unknown_operator_is_mandatory(matrix):
    assert worst_level(matrix.operator_branch_support("v1.0.0", "ubuntu-22.04", "580.173.02")) == "mandatory"


# --- Kubernetes, EKS and node images -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("control_plane", "kubelet", "level"),
    [("1.34", "1.32", "ok"), ("1.35", "1.36", "mandatory"), ("1.35", "1.31", "mandatory"), ("1.35", "1.32", "ok")],
)
def test_kubelet_skew(matrix, control_plane, kubelet, level):
    assert worst_level(matrix.kubelet_skew(control_plane, kubelet)) == level


@pytest.mark.parametrize(
    ("version", "level"),
    [("1.34", "ok"), ("1.35", "ok"), ("1.36", "ok"), ("1.33", "advisory"), ("1.32", "advisory"), ("1.31", "mandatory")],
)
def test_eks_lifecycle_on_the_review_day(matrix, version, level):
    assert worst_level(matrix.eks_lifecycle(version, REVIEW_DAY)) == level


def test_eks_1_31_is_past_extended_support(matrix):
    finding = matrix.eks_lifecycle("1.31", REVIEW_DAY)[0]
    assert "extended support ended on 2026-11-26" in finding.message


def test_unknown_eks_version_is_mandatory(matrix):
    assert worst_level(matrix.eks_lifecycle("1.20", REVIEW_DAY)) == "mandatory"


def test_ubuntu_ssm_paths_use_gp2_for_22_04_and_gp3_for_24_04(matrix):
    jammy = matrix.node_image("ubuntu-22.04", "1.32")
    noble = matrix.node_image("ubuntu-24.04", "1.35", "arm64")
    assert jammy is not None and noble is not None
    assert jammy.ssm_parameter == "/aws/service/canonical/ubuntu/eks/22.04/1.32/stable/current/amd64/hvm/ebs-gp2/ami-id"
    assert noble.ssm_parameter == "/aws/service/canonical/ubuntu/eks/24.04/1.35/stable/current/arm64/hvm/ebs-gp3/ami-id"


def test_free_ubuntu_22_04_images_stop_at_eks_1_32(matrix):
    image = matrix.node_image("ubuntu-22.04", "1.34")
    assert image is not None and not image.published
    finding = matrix.node_image_findings("ubuntu-22.04", "1.34")[0]
    assert finding.level == "mandatory"
    assert "1.32" in finding.nearest
    assert "ubuntu-24.04 (1.34)" in finding.message


def test_ubuntu_24_04_covers_eks_1_31_to_1_36(matrix):
    for minor in range(31, 37):
        image = matrix.node_image("ubuntu-24.04", f"1.{minor}")
        assert image is not None and image.published


def test_baked_driver_branch_follows_the_image_history(matrix):
    assert matrix.baked_driver_branch("bottlerocket", "1.34", REVIEW_DAY) == 580
    assert matrix.baked_driver_branch("bottlerocket", "1.30", date(2025, 6, 1)) == 570
    assert matrix.baked_driver_branch("al2023", "1.33", date(2025, 5, 1)) == 570
    assert matrix.baked_driver_branch("ubuntu-24.04", "1.33", REVIEW_DAY) is None


def test_check_flags_a_baked_branch_that_differs_from_the_image(matrix):
    findings = matrix.check(os="bottlerocket", driver="570", operator=None, kubernetes="1.34", today=REVIEW_DAY)
    finding = _only(findings, "baked-driver-branch")
    assert finding.level == "mandatory"
    assert finding.nearest == ("580",)


def test_check_accepts_bottlerocket_with_its_baked_branch(matrix):
    findings = matrix.check(
        os="bottlerocket", driver="580", operator=None, kubernetes="1.35", instance_type="g6.xlarge", today=REVIEW_DAY
    )
    assert worst_level(findings) == "ok"


def test_check_accepts_a_cuda_image_reference(matrix):
    findings = matrix.check(
        os="ubuntu-22.04",
        driver="535.309.01",
        operator="v26.3.1",
        instance_type="g5.xlarge",
        cuda="nvidia/cuda:13.0.0-runtime-ubuntu22.04",
        today=REVIEW_DAY,
    )
    assert _only(findings, "cuda-driver-compatible").level == "advisory"


def test_check_rejects_an_image_whose_cuda_is_unknown(matrix):
    findings = matrix.check(
        os="ubuntu-24.04", driver="580.173.02", operator="v26.7.0", cuda="example.com/app:1.0", today=REVIEW_DAY
    )
    assert _only(findings, "gpu-workload-cuda-declared").level == "mandatory"


def test_a_bare_branch_is_judged_by_its_first_known_release_not_as_x_0_0(matrix):
    # A Bottlerocket/AL2023 pool states only the branch its image bakes ("580"): CUDA 13.0 GA needs
    # 580.65.06, the first R580 release, so R580 runs it natively; R570 still cannot.
    baked_r580 = matrix.cuda_driver("13.0", "580", forward_compat_image=False, admitted_branches=None,
                                    data_center_gpu=True)
    assert worst_level(baked_r580) == "ok"
    baked_r570 = matrix.cuda_driver("13.0", "570", forward_compat_image=False, admitted_branches=None,
                                    data_center_gpu=True)
    assert worst_level(baked_r570) == "mandatory"
