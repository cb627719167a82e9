"""A pool's CUDA as `Matrix.check` judges it: a version, an nvidia/cuda tag or an NGC image, with or without
an instance type. Findings are compared whole, so the rule, the level, the source and the choices offered
are pinned, not only a fragment of the message. Facts: the matrix rows each finding cites.
"""

from __future__ import annotations

from datetime import date

import pytest

from policies.gpu_guard.matrix import load_matrix

TODAY = date(2026, 11, 29)
MATRIX = load_matrix()
NGC_2212 = "https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-22-12.html"
ASSUMED = " [no instance type given: judged as a data-center GPU (forward compatibility needs one)]"
R570_ON_13 = (
    "CUDA 13.0 cannot run on driver 570.211.01 (R570 runs CUDA 12.x natively): the image does not carry the "
    "cuda-compat forward-compatibility package. The container starts, and CUDA initialisation fails in it "
    "(cudaErrorInsufficientDriver without cuda-compat; cudaErrorCompatNotSupportedOnDevice for forward "
    "compatibility on a non-data-center GPU). Use driver 580.65.06 or later: 580.173.02, 595.71.05.")
MVC_535 = (
    "CUDA 12.8 runs on driver 535.309.01 only through minor version compatibility (CUDA 12.x floor 525.60.13; "
    "full support needs 570.26). Not covered: APIs that need the newer driver fail with "
    "cudaErrorCallRequiresNewerDriver; PTX JIT does not work: device code shipped as PTX fails with "
    "cudaErrorUnsupportedPtxVersion (Triton, FlashInfer and similar emit PTX); only SASS compiled for the real "
    "GPU architecture (nvcc -arch=sm_xx) runs. Upgrade the driver to 570.26 or later for PTX JIT workloads: "
    "580.173.02, 595.71.05.")
# The suggestions (issue 46): drivers GPU Operator v26.3.1 lists with an image for ubuntu-22.04, on a branch in
# support on TODAY (R570 ended February 2026, R610 August 2026), each passing `check` itself; before, the newest
# known release per branch (580.178.04, 595.91.07: not in v26.3.1's list) and ended branches (570, 610).


def _cuda(driver: str, cuda: str, instance_type: str | None = None,
          operator: str = "v26.3.1") -> list[tuple[object, ...]]:
    findings = MATRIX.check(os="ubuntu-22.04", driver=driver, operator=operator, cuda=cuda,
                            instance_type=instance_type, today=TODAY)
    return [(f.level, f.rule, f.message, f.source, f.nearest) for f in findings
            if f.rule in ("cuda-driver-compatible", "gpu-workload-cuda-declared")]


@pytest.mark.parametrize("image", ["nvcr.io/nvidia/unknown:1.0", "foo:bar", "a/b"])
def test_an_image_whose_cuda_the_matrix_does_not_know_must_declare_it(image: str) -> None:
    assert _cuda("580.105.08", image) == [(
        "mandatory", "gpu-workload-cuda-declared",
        f"the CUDA runtime of image {image} is unknown (not an nvidia/cuda tag nor an NGC release in the matrix); "
        "declare it with the gpu-platform.io/cuda label, e.g. 12.8.", NGC_2212, ())]


def test_an_nvidia_cuda_tag_is_read_for_its_version() -> None:
    assert _cuda("580.105.08", "nvidia/cuda:13.0.0-base-ubuntu24.04") == [(
        "ok", "cuda-driver-compatible", "CUDA 13.0 needs driver 580.65.06+; 580.105.08 satisfies it",
        "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html", ())]


def test_forward_compatibility_without_an_instance_type_says_what_it_assumed() -> None:
    (without,) = _cuda("570.211.01", "13.0")
    (with_type,) = _cuda("570.211.01", "13.0", "g6.xlarge")
    assert without[:2] == with_type[:2] == ("mandatory", "cuda-driver-compatible")
    assert with_type[2] == R570_ON_13
    assert without[2] == R570_ON_13 + ASSUMED
    assert without[3:] == with_type[3:] == (
        "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html",
        ("580.173.02", "595.71.05"))


@pytest.mark.parametrize("instance_type", [None, "g6.xlarge"])
def test_a_minor_version_advisory_never_carries_the_forward_compatibility_assumption(
        instance_type: str | None) -> None:
    assert _cuda("535.309.01", "12.8", instance_type) == [(
        "advisory", "cuda-driver-compatible", MVC_535,
        "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html",
        ("580.173.02", "595.71.05"))]


def test_cuda_suggestions_are_what_the_operator_lists_in_support_and_pass_check() -> None:
    """Issue 46: for a GPU Operator v26.7.0 pool the fix named 570.211.01 (R570 is not in v26.7.0's list: the same
    tool refuses it) and 610.57.04 (R610 past end of life)."""
    for driver, cuda in (("535.309.01", "12.8"), ("570.211.01", "13.0")):
        (finding,) = [f for f in MATRIX.check(os="ubuntu-24.04", driver=driver, operator="v26.7.0", cuda=cuda,
                                              instance_type="g6.xlarge", today=date(2026, 12, 5))
                      if f.rule == "cuda-driver-compatible"]
        assert finding.nearest == ("580.173.02", "595.91.07")
        for candidate in finding.nearest:
            again = MATRIX.check(os="ubuntu-24.04", driver=candidate, operator="v26.7.0", cuda=cuda,
                                 instance_type="g6.xlarge", today=date(2026, 12, 5))
            assert [f.rule for f in again if f.level != "ok"] == []


def test_no_cuda_suggestion_for_the_pool_says_why_not_none() -> None:
    """A pool with nothing at the CUDA release's level: the sentence says what is true (no 'none')."""
    findings = MATRIX.cuda_driver("13.0", "570.211.01", forward_compat_image=False, admitted_branches=None,
                                  data_center_gpu=True, pool=lambda version: None, today=TODAY)
    (finding,) = findings
    assert finding.nearest == ()
    assert "none" not in finding.message
    assert finding.message.endswith(
        "Use driver 580.65.06 or later; no driver at that level that this pool can take (in its GPU Operator "
        "release's list, with an image for its OS, on a branch in support, passing `tools.matrix check`) is "
        "recorded in the matrix; change the pool's operator release or node OS first.")
