"""The third matrix audit (issue 26), each fact through `tools.matrix check` at a pinned `today`."""

from __future__ import annotations

import pytest

from policies.gpu_guard.matrix import Matrix
from tests.matrix.test_audit_goldens import TODAY, check


def test_al2023_v20260917_publishes_no_1_29_image(capsys: pytest.CaptureFixture[str]):
    """No AL2023 1.29 image since v20260403 (CHANGELOG): the CLI used to print [ok] for this line."""
    code, out = check(capsys, "--os", "al2023", "--driver", "580", "--instance-type", "g5.xlarge",
                      "--kubernetes", "1.29", "--image-version", "v20260917", *TODAY)
    assert code == 1
    assert ("[mandatory] node-image-published: al2023 v20260917 publishes no AL2023 NVIDIA AMI for Kubernetes 1.29 "
            "(published there: 1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36)") in out
    assert "[ok] node-image-published" not in out


def test_al2023_v20260917_still_publishes_1_31_to_1_36(capsys: pytest.CaptureFixture[str]):
    """1.30 is unconfirmed since the fourth audit (tests/matrix/test_issue39_audit.py)."""
    for minor in ("1.31", "1.36"):
        _, out = check(capsys, "--os", "al2023", "--driver", "580", "--instance-type", "g5.xlarge",
                       "--kubernetes", minor, "--image-version", "v20260917", *TODAY)
        assert f"[ok] node-image-published: AL2023 NVIDIA AMI for Kubernetes {minor} is published in al2023 " \
               "v20260917" in out, out


def test_eks_1_36_was_available_by_the_al2023_release_that_first_published_it(matrix: Matrix):
    (row,) = [v for v in matrix.data.eks_versions if v.version == "1.36"]
    assert str(row.available_by) == "2026-06-10"
    assert row.source == "https://github.com/awslabs/amazon-eks-ami/releases/tag/v20260610"


def test_the_26_3_toolkit_split_is_exact(matrix: Matrix):
    toolkits = {r.version: r.toolkit for r in matrix.data.operators if r.version.startswith("v26.3.")}
    assert toolkits == {"v26.3.0": "v1.19.0", "v26.3.1": "v1.19.0", "v26.3.2": "v1.19.1", "v26.3.3": "v1.19.1"}
    assert not any("approximate" in (r.note or "") for r in matrix.data.operators)


def test_nvidia_cuda_12_8_1_admitted_branches_are_confirmed(matrix: Matrix):
    (row,) = [r for r in matrix.data.image_require_cuda if r.cuda == "12.8.1"]
    assert row.admitted_branches == (470, 535, 550, 560, 565) and row.confirmed


def test_cdi_off_on_a_toolkit_1_18_operator_is_judged_as_jit_cdi_by_check(capsys: pytest.CaptureFixture[str]):
    code, out = check(capsys, "--os", "ubuntu-22.04", "--driver", "525.147.05", "--cuda",
                      "nvidia/cuda:12.8.1-runtime-ubuntu22.04", "--toolkit-mode", "jit-cdi", *TODAY)
    assert code == 0 and "the toolkit in jit-cdi mode does not check it" in out, out


@pytest.mark.parametrize("instance_type", ["g6f.large", "g6f.xlarge", "g6f.2xlarge", "g6f.4xlarge", "gr6f.4xlarge"])
def test_g6f_and_gr6f_are_fractional_grid_l4_pools_and_r595_is_refused(capsys, instance_type):
    code, out = check(capsys, "--os", "al2023", "--driver", "595", "--instance-type", instance_type,
                      "--kubernetes", "1.35", "--image-version", "v20260917", *TODAY)
    assert code == 1
    assert f"[mandatory] gpu-architecture-supported: {instance_type}, a fractional L4 (" in out
    assert "on the GRID driver: driver R595 does not support the" in out
    code, out = check(capsys, "--os", "al2023", "--driver", "580", "--instance-type", instance_type,
                      "--kubernetes", "1.35", "--image-version", "v20260917", *TODAY)
    assert code == 0
    assert f"[advisory] gpu-instance-fractional: {instance_type} is a fractional L4" in out
    assert "EC2 reports one logical GPU (LogicalGpuCount 1, Count 0)" in out  # issue 39: not "no nvidia.com/gpu"


def test_fractional_shares_follow_karpenters_gpu_memory(matrix: Matrix):
    shares = {name: inst.fraction for name in ("g6f.large", "g6f.2xlarge", "g6f.4xlarge", "gr6f.4xlarge", "g6.xlarge")
              if (inst := matrix.instance_type(name)) is not None}
    assert shares == {"g6f.large": "1/8", "g6f.2xlarge": "1/4", "g6f.4xlarge": "1/2", "gr6f.4xlarge": "1/2",
                      "g6.xlarge": None}
    g6f = matrix.instance_type("g6f.xlarge")
    assert g6f is not None and (g6f.gpus, g6f.driver_kind, g6f.unsupported_branches) == (0, "grid", (595,))
