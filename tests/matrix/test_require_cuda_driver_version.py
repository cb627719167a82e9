"""Golden tests: NVIDIA_REQUIRE_CUDA's `cuda>=X.Y` clause is met by the CUDA version the driver reports.

The clause is compared with the driver's CUDA version at major.minor only: NVIDIA/libnvidia-container
src/driver.c (commit 06deb20d), driver_get_cuda_version_1_svc, reads nvmlSystemGetCudaDriverVersion as
`version / 1000` and `version % 100 / 10`, and driver_get_cuda_version prints it as "%u.%u"; the runtime hook
hands the variable to nvidia-container-cli whole (NVIDIA/nvidia-container-toolkit v1.20.0
internal/config/image/cuda_image.go:113, GetRequirements). 580.65.06, the CUDA 13.0 GA driver, reports 13.0, so a
CUDA 13.0.2 image's `cuda>=13.0` admits it although 13.0 Update 2 asks 580.95.05 for full support: the verdict is
the minor-version-compatibility advisory, not the toolkit's refusal.
"""

from __future__ import annotations

import pytest

from policies.gpu_guard.matrix import Matrix
from tests.matrix.test_audit_goldens import TODAY, check

TRITON_25_10 = "nvcr.io/nvidia/tritonserver:25.10-py3"  # CUDA 13.0.2 (matrix ngc_images)
CUDA_13_0_2 = "nvidia/cuda:13.0.2-runtime-ubuntu24.04"


def test_r580_reports_cuda_13_0(matrix: Matrix):
    assert matrix.driver_cuda(580) == (13, 0)
    assert matrix.driver_cuda(535) == (12, 2)


@pytest.mark.parametrize("image", [TRITON_25_10, CUDA_13_0_2])
@pytest.mark.parametrize("driver", ["580.65.06", "580"])
def test_cuda_13_0_2_on_the_13_0_ga_driver_meets_require_cuda_in_legacy_mode(capsys, image, driver):
    code, out = check(capsys, "--os", "bottlerocket", "--driver", driver, "--cuda", image, "--kubernetes", "1.35",
                      "--instance-type", "g6.xlarge", "--toolkit-mode", "legacy", *TODAY)
    assert code == 0, out
    assert "[mandatory]" not in out
    assert "cannot start" not in out
    assert (f"[advisory] cuda-driver-compatible: CUDA 13.0.2 runs on driver {driver} only through minor version "
            "compatibility (CUDA 13.x floor 580.65.06; full support needs 580.95.05)") in out
    assert "NVIDIA_REQUIRE_CUDA does not admit" not in out


def test_cuda_13_0_2_on_r580_is_ok_from_580_95_05(capsys):
    code, out = check(capsys, "--os", "bottlerocket", "--driver", "580.178.04", "--cuda", TRITON_25_10,
                      "--kubernetes", "1.35", "--instance-type", "g6.xlarge", "--toolkit-mode", "legacy", *TODAY)
    assert code == 0, out
    assert "[ok] cuda-driver-compatible: CUDA 13.0.2 needs driver 580.95.05+; 580.178.04 satisfies it" in out


def test_a_driver_reporting_an_older_cuda_is_still_refused_in_legacy_mode(capsys):
    # R545 reports a CUDA 12.x version, below cuda>=13.0, and is none of the image's admitted branches.
    code, out = check(capsys, "--os", "ubuntu-24.04", "--driver", "545.29.06", "--cuda", CUDA_13_0_2,
                      "--kubernetes", "1.35", "--toolkit-mode", "legacy", *TODAY)
    assert code == 1, out
    assert ("[mandatory] cuda-driver-compatible: CUDA 13.0.2 cannot start on driver 545.29.06: the image's "
            "NVIDIA_REQUIRE_CUDA asks cuda>=13.0 or one of R535, R550, R565, R570, R575, and R545 is neither.") in out


# Written from survivors of the mutation run (docs/testing.md).
def test_a_cuda_minor_with_no_recorded_tag_has_no_admitted_branches() -> None:
    from policies.gpu_guard.matrix import load_matrix  # noqa: PLC0415

    matrix = load_matrix()
    row = next(r for r in matrix.data.image_require_cuda if r.cuda == "13.0.2")
    assert matrix.require_cuda_branches("nvidia/cuda", "13.0.5") == row.admitted_branches  # newest 13.0 at or below
    assert matrix.require_cuda_branches("nvidia/cuda", "13.1.0") is None  # 13.0.2 is of another minor
    assert matrix.require_cuda_branches("nvidia/cuda", "13.0.1") is None  # the only 13.0 row is newer
    assert matrix.require_cuda_branches("someone/cuda", "13.0.2") is None


def test_a_toolkit_mode_the_matrix_does_not_record_checks_require_only_in_legacy_mode() -> None:
    import yaml  # noqa: PLC0415

    from policies.gpu_guard.matrix import MATRIX_PATH  # noqa: PLC0415
    from policies.gpu_guard.matrix.core import Matrix  # noqa: PLC0415
    from policies.gpu_guard.matrix.loader import parse_matrix  # noqa: PLC0415

    data = yaml.safe_load(MATRIX_PATH.read_text(encoding="utf-8"))
    data["toolkit_require_check"] = []
    matrix = Matrix(parse_matrix(yaml.safe_dump(data, sort_keys=False)))
    mvc = matrix.data.mvc[0].source
    assert [matrix.toolkit_checks_require(mode) for mode in ("legacy", "cdi", "jit-cdi")] == [
        (True, mvc), (False, mvc), (False, mvc)]
