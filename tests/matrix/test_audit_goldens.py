"""Golden tests for the facts the 2026-11 audit found wrong (issue 9), each through `tools.matrix check`
and, where a policy judges it, through the pack (the policy run over its fixture baseline, as
tests/policies/harness.py runs it). Every lifecycle is judged at a pinned `today`.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
import yaml

from policies.gpu_guard.base import all_policies, companions_of
from policies.gpu_guard.matrix import Matrix, worst_level
from tests.policies.harness import FIXTURES, apply_patch, run_with_caveats
from tools.matrix.cli import main

TODAY = ["--today", "2026-11-30"]
POLICIES = {p.name: p for p in all_policies()}


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    return code, capsys.readouterr().out


def pack(policy: str, patch: list[dict[str, Any]]) -> tuple[tuple[str, str], ...]:
    """(level, message) of each violation of `policy` and its caveats twin over its baseline with `patch` applied."""
    baseline = yaml.safe_load((FIXTURES / policy / "baseline.yaml").read_text(encoding="utf-8"))
    resources = apply_patch(baseline["resources"], patch)
    outcome = run_with_caveats(POLICIES[policy], companions_of(policy), resources, baseline.get("config"))
    assert outcome.unknown is None
    return tuple((v.level, v.message) for v in outcome.violations)


def operator(version: str | None = None, driver: str | None = None) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    if version is not None:
        ops.append({"resource": "gpu-operator", "set": ["version"], "value": version})
    if driver is not None:
        ops.append({"resource": "gpu-operator", "set": ["values", "driver", "version"], "value": driver})
        ops.append({"resource": "gpu-dev-a10g", "set": ["labels", "gpu-platform.io/driver"], "value": driver})
    return ops


# --- 1. g7 (RTX PRO 4500 Blackwell Server Edition) needs R595 ---------------------------------------------------


def test_g7_on_r580_is_rejected_by_check(capsys):
    code, out = check(capsys, "--os", "ubuntu-24.04", "--driver", "580.173.02", "--operator", "v26.7.0",
                      "--instance-type", "g7.2xlarge", *TODAY)
    assert code == 1
    assert "[mandatory] gpu-architecture-supported: g7.2xlarge has RTX PRO 4500 Blackwell Server Edition" in out
    assert "needs driver 595 or later" in out
    assert "source: https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html" in out


def test_g7_on_r595_is_compatible_by_check(capsys):
    code, _ = check(capsys, "--os", "ubuntu-24.04", "--driver", "595.91.07", "--operator", "v26.7.0",
                    "--instance-type", "g7.2xlarge", *TODAY)
    assert code == 0


def test_g7_on_r580_is_rejected_by_the_pack():
    messages = pack("gpu-architecture-supported",
                    [{"resource": "gpu-dev-a10g", "set": ["instanceTypes"], "value": ["g7.2xlarge"]}])
    assert any(level == "mandatory" and "g7.2xlarge has RTX PRO 4500 Blackwell Server Edition (Blackwell), which "
               "needs driver 595 or later" in m for level, m in messages), messages


def test_g7_on_r595_passes_the_pack():
    patch = [
        {"resource": "gpu-dev-a10g", "set": ["instanceTypes"], "value": ["g7.2xlarge"]},
        *operator(None, "595.91.07"),
    ]
    assert pack("gpu-architecture-supported", patch) == ()


# --- 2. v26.3.0 / v26.3.1 stop at Kubernetes 1.35; 1.36 came with v26.3.2 ---------------------------------------


def test_v26_3_1_on_eks_1_36_is_rejected_by_check(capsys):
    code, out = check(capsys, "--os", "ubuntu-24.04", "--driver", "580.173.02", "--operator", "v26.3.1",
                      "--kubernetes", "1.36", *TODAY)
    assert code == 1
    assert "GPU Operator v26.3.1 supports Kubernetes 1.32-1.35 on ubuntu-24.04, not 1.36" in out


@pytest.mark.parametrize("release", ["v26.3.0", "v26.3.1"])
def test_v26_3_0_and_v26_3_1_on_1_36_are_rejected_by_the_pack(release):
    patch = [*operator(release), {"resource": "gpu-dev", "set": ["version"], "value": "1.36"}]
    messages = pack("gpu-operator-kubernetes-supported", patch)
    assert any(
        level == "mandatory" and f"GPU Operator {release} supports Kubernetes 1.32-1.35 on Amazon EKS, not 1.36" in m
        for level, m in messages
    ), messages


def test_v26_3_2_on_1_36_passes_the_pack():
    patch = [*operator("v26.3.2"), {"resource": "gpu-dev", "set": ["version"], "value": "1.36"}]
    assert pack("gpu-operator-kubernetes-supported", patch) == ()


# --- 3. driver images missing from the list --------------------------------------------------------------------


@pytest.mark.parametrize(("os_name", "driver"), [("ubuntu-24.04", "570.86.15"), ("ubuntu-24.04", "570.133.20"),
                                                  ("ubuntu-22.04", "570.133.20"), ("ubuntu-22.04", "525.147.05")])
def test_builds_from_the_ci_history_are_published_images(matrix: Matrix, os_name, driver):
    assert worst_level(matrix.driver_image(driver, os_name, today=date(2026, 11, 30))) == "ok"


def test_570_86_15_on_ubuntu_24_04_under_v25_3_0_is_listed_and_published_by_check(capsys):
    code, out = check(capsys, "--os", "ubuntu-24.04", "--driver", "570.86.15", "--operator", "v25.3.0", *TODAY)
    assert "[ok] driver-image-published: nvcr.io/nvidia/driver:570.86.15-ubuntu24.04 is published" in out
    assert "[ok] driver-branch-supported: GPU Operator v25.3.0 lists driver 570.86.15 (R570) for ubuntu-24.04" in out
    assert code == 0


# --- 4. operator driver lists ----------------------------------------------------------------------------------


def test_580_178_04_is_listed_by_v26_3_3_by_check(capsys):
    code, out = check(capsys, "--os", "ubuntu-24.04", "--driver", "580.178.04", "--operator", "v26.3.3", *TODAY)
    assert code == 0
    assert "[ok] driver-branch-supported: GPU Operator v26.3.3 lists driver 580.178.04 (R580)" in out


def test_580_178_04_with_v26_3_3_passes_the_pack_and_is_a_caveat_under_v26_7_0():
    assert pack("gpu-driver-branch-supported", operator("v26.3.3", "580.178.04")) == ()
    messages = pack("gpu-driver-branch-supported", operator("v26.7.0", "580.178.04"))
    assert messages == (
        ("advisory",
        "GPU pool 'a10g' (ubuntu-24.04) runs driver 580.178.04 under GPU Operator v26.7.0: driver "
        "580.178.04 is in a supported branch (R580) but not in GPU Operator v26.7.0's component matrix; "
        "NVIDIA tested: 580.173.02, 595.91.07, 610.57.04. "
        "(source: https://github.com/NVIDIA/cloud-native-docs/blob/main/gpu-operator/life-cycle-policy.rst)"),
    )


@pytest.mark.parametrize("driver", ["590.48.01", "580.126.16", "580.126.09", "570.211.01"])
def test_v25_10_1_lists_its_recommended_updates(matrix: Matrix, driver):
    assert worst_level(matrix.operator_branch_support("v25.10.1", "ubuntu-22.04", driver)) == "ok"


def test_v25_10_1_runs_on_kubernetes_1_35_and_v25_10_0_does_not(capsys):
    assert check(capsys, "--os", "ubuntu-24.04", "--driver", "580.126.16", "--operator", "v25.10.1",
                 "--kubernetes", "1.35", "--today", "2026-02-01")[0] == 0
    code, out = check(capsys, "--os", "ubuntu-24.04", "--driver", "580.95.05", "--operator", "v25.10.0",
                      "--kubernetes", "1.35", "--today", "2026-02-01")
    assert code == 1
    assert "GPU Operator v25.10.0 supports Kubernetes 1.30-1.34 on ubuntu-24.04, not 1.35" in out


# --- 5. v25.3.x on EKS -------------------------------------------------------------------------------------------


def test_v25_3_x_on_eks_follows_the_last_published_range_and_the_release_that_added_1_33(matrix: Matrix):
    assert worst_level(matrix.operator_kubernetes("v25.3.0", "1.33")) == "mandatory"
    assert worst_level(matrix.operator_kubernetes("v25.3.1", "1.33")) == "ok"
    assert worst_level(matrix.operator_kubernetes("v25.3.4", "1.29")) == "ok"


# --- 6. precompiled branches over time ---------------------------------------------------------------------------


def test_precompiled_r535_on_ubuntu_22_04_stopped_on_2026_05_29_by_check(capsys):
    code, out = check(capsys, "--os", "ubuntu-22.04", "--driver", "535", "--precompiled", "--today", "2026-06-15")
    assert code == 1
    assert "NVIDIA CI builds R595, R580 since 2026-05-29" in out


def test_precompiled_r570_on_ubuntu_24_04_stopped_on_2026_02_23(matrix: Matrix):
    findings = matrix.driver_image("570", "ubuntu-24.04", precompiled=True, today=date(2026, 2, 24))
    assert worst_level(findings) == "mandatory"
    assert "since 2026-02-23" in findings[0].message
    assert worst_level(matrix.driver_image("570", "ubuntu-24.04", precompiled=True, today=date(2026, 2, 22))) == "ok"


# --- also wrong: Bottlerocket and AL2023 baked drivers; missing CUDA releases -------------------------------------


def test_bottlerocket_shipped_r535_until_pr_4499_on_2025_04_29_by_check(capsys):
    code, out = check(capsys, "--os", "bottlerocket", "--driver", "570", "--today", "2025-04-15")
    assert code == 1
    assert "bottlerocket NVIDIA images ship driver branch R535 (as of 2025-04-15), not R570" in out
    assert check(capsys, "--os", "bottlerocket", "--driver", "570", "--today", "2025-04-30")[0] == 0


@pytest.mark.parametrize(
    ("kubernetes", "today", "branch"),
    [
        ("1.33", date(2025, 7, 20), 575),  # v20250715 shipped 575.57.08
        ("1.33", date(2025, 8, 10), 570),  # v20250807 went back to 570
        ("1.34", date(2025, 10, 24), 580),  # v20251023: R580 for 1.34+
        ("1.33", date(2025, 10, 24), 570),
        ("1.33", date(2025, 10, 30), 580),  # v20251029
        ("1.32", date(2025, 11, 1), 570),
        ("1.31", date(2025, 11, 9), 580),  # v20251108
        ("1.30", date(2025, 11, 9), 570),
        ("1.29", date(2025, 11, 21), 580),  # v20251120
    ],
)
def test_al2023_baked_branch_per_eks_version_and_date(matrix: Matrix, kubernetes, today, branch):
    assert matrix.baked_driver_branch("al2023", kubernetes, today) == branch


def test_al2023_on_eks_1_33_still_shipped_r570_on_2025_10_24_by_check(capsys):
    code, out = check(capsys, "--os", "al2023", "--driver", "580", "--kubernetes", "1.33", "--today", "2025-10-24")
    assert code == 1
    assert "al2023 NVIDIA images ship driver branch R570 (as of 2025-10-24), not R580" in out


@pytest.mark.parametrize(
    ("cuda", "minimum"), [("13.1.1", "590.48.01"), ("13.2.2", "595.71.05"), ("13.2.0", "595.45.04")]
)
def test_cuda_minimum_drivers_of_the_audit(matrix: Matrix, cuda, minimum):
    assert matrix.cuda_min_driver(cuda) == minimum


def test_cuda_13_5_on_r580_runs_through_minor_version_compatibility_by_check(capsys):
    # Measured on an H200 with 580.159.04 (research/matrix_facts.md section 9): a 13.5 runtime runs, PTX JIT does not.
    code, out = check(capsys, "--os", "ubuntu-24.04", "--driver", "580.159.04", "--instance-type", "p5e.48xlarge",
                      "--cuda", "13.5", *TODAY)
    assert code == 0
    assert "[advisory] cuda-driver-compatible: CUDA 13.5 runs on driver 580.159.04 only through minor version" in out


def test_570_86_15_on_ubuntu_24_04_is_a_published_image_for_the_pack():
    # Before the audit the ubuntu24.04 list lacked 570.86.15 (first built 2025-01-27): the pack blocked it.
    assert pack("gpu-driver-image-published", operator("v25.3.0", "570.86.15")) == ()
    messages = pack("gpu-driver-image-published", operator("v25.3.0", "570.86.16"))
    assert any(level == "mandatory" and "driver 570.86.16 has no published image" in m for level, m in messages)
