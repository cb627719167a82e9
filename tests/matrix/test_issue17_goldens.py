"""Golden tests for the facts of issue 17 (the matrix after August 2026), each through `tools.matrix check`
and through the pack (the policy over its fixture baseline), judged at a pinned `today`.
"""

from __future__ import annotations

from datetime import date

import pytest

from policies.gpu_guard.matrix import Matrix
from tests.matrix.test_audit_goldens import TODAY, check, pack

DAY = date(2026, 11, 30)


def al2023_karpenter_pool(alias: str, instance_types: list[str]) -> list[dict[str, object]]:
    return [
        {"resource": "gpu-bottlerocket", "set": ["spec", "amiSelectorTerms", 0, "alias"], "value": alias},
        {"resource": "gpu-spot", "set": ["spec", "template", "metadata", "labels", "gpu-platform.io/os"],
         "value": "al2023"},
        {"resource": "gpu-spot", "delete": ["spec", "template", "metadata", "labels", "gpu-platform.io/driver"]},
        {"resource": "gpu-spot", "set": ["spec", "template", "spec", "requirements", 0, "values"],
         "value": instance_types},
    ]


# --- 1. AL2023 NVIDIA images carry R580 and R595 from v20260917 (amazon-eks-ami PR #2819) -------------------


def g7_al2023(capsys: pytest.CaptureFixture[str], driver: str, release: str) -> tuple[int, str]:
    return check(capsys, "--os", "al2023", "--instance-type", "g7.2xlarge", "--driver", driver, "--operator",
                 "v26.7.0", "--kubernetes", "1.35", "--image-version", release, *TODAY)


def test_g7_on_al2023_before_v20260917_cannot_pass_by_check(capsys):
    code, out = g7_al2023(capsys, "580", "v20260714")
    assert code == 1
    assert "needs driver 595 or later; driver 580 is older" in out
    code, out = g7_al2023(capsys, "595", "v20260714")
    assert code == 1
    assert "[mandatory] baked-driver-branch: al2023 v20260714 ships one driver, 580.159.03, not R595" in out


def test_g7_on_al2023_from_v20260917_passes_with_595_by_check(capsys):
    code, out = g7_al2023(capsys, "595", "v20260917")
    assert code == 0
    assert ("[ok] baked-driver-branch: al2023 v20260917: the RTX PRO 4500 Blackwell Server Edition of g7.2xlarge "
            "is absent from R580's open supported-devices list and present in R595's, so the node loads the R595 "
            "tree; R595 as declared") in out
    assert "source: https://github.com/awslabs/amazon-eks-ami/pull/2819" in out
    code, out = g7_al2023(capsys, "580", "al2023@v20260917")
    assert code == 1
    assert "so the node loads the R595 tree, not R580; declare driver 595 for this pool" in out


@pytest.mark.parametrize(
    ("image_version", "instance_type", "branch"),
    [
        ("v20260714", "g7.2xlarge", 580),
        ("v20260917", "g7.2xlarge", 595),
        ("al2023@v20260917", "g6.xlarge", 580),
        ("1.35.2-20261001", "g7.12xlarge", 595),  # a later release is judged by the v20260917 step
        ("v20260917", "g5.xlarge", 580),  # g4dn/g5/g5g always load the LTS tree
        ("v20260917", None, 580),  # no instance type: the default tree
        (None, "g7.2xlarge", 595),  # unpinned: the newest recorded release as of DAY
    ],
)
def test_driver_branch_for_image(matrix: Matrix, image_version, instance_type, branch):
    assert matrix.driver_branch_for_image("al2023", image_version, instance_type, "1.35", today=DAY) == branch


def test_g7_al2023_pool_before_v20260917_is_rejected_by_the_pack():
    violations = pack("gpu-architecture-supported", al2023_karpenter_pool("al2023@v20260714", ["g7.2xlarge"]))
    assert [level for level, _ in violations] == ["mandatory"]
    assert "may launch g7.2xlarge with driver 580 baked into the al2023 v20260714 image" in violations[0][1]


def test_g7_al2023_pool_from_v20260917_passes_the_pack():
    patch = al2023_karpenter_pool("al2023@v20260917", ["g6.xlarge", "g7.2xlarge"])
    assert pack("gpu-architecture-supported", patch) == ()
