"""The sixth audit of the matrix (issue 55): every unconfirmed fact says so where it is used, the stale facts
refreshed with their sources, suggestions a pool can take, and a short answer for an operator version out of range.
Each test failed on the matrix and code before issue 55."""

from __future__ import annotations

from datetime import date

import pytest

from policies.gpu_guard.matrix import UNJUDGED_MARK, Finding, Matrix

TODAY = date(2026, 11, 30)


def _by_rule(findings: list[Finding], rule: str) -> list[Finding]:
    return [f for f in findings if f.rule == rule]


def test_a_pb_pin_on_a_one_driver_bottlerocket_variant_is_not_judged_and_says_so(matrix: Matrix) -> None:
    # matrix.yaml's v1.68.0 note: branch selection on the 1.31-1.36 variants is UNCONFIRMED, so a pb pin is not judged
    findings = matrix.check(os="bottlerocket", driver="595", operator=None, branch_pin="pb", image_version="v1.68.0",
                            kubernetes="1.35", instance_type="g6.xlarge", today=TODAY)
    [branch] = _by_rule(findings, "baked-driver-branch")
    assert branch.level == "advisory"
    assert "UNCONFIRMED" in branch.message and UNJUDGED_MARK in branch.message
    # Without the pin the one driver the variant lists is a fact: declaring another branch is refused.
    plain = matrix.check(os="bottlerocket", driver="595", operator=None, image_version="v1.68.0", kubernetes="1.35",
                         instance_type="g6.xlarge", today=TODAY)
    assert [f.level for f in _by_rule(plain, "baked-driver-branch")] == ["mandatory"]


def test_the_cli_counts_an_unconfirmed_check_as_not_run(capsys: pytest.CaptureFixture[str]) -> None:
    from tools.matrix.cli import main  # noqa: PLC0415

    main(["check", "--os", "bottlerocket", "--driver", "595", "--driver-branch", "pb", "--image-version", "v1.68.0",
          "--kubernetes", "1.35", "--instance-type", "g6.xlarge", "--today", "2026-11-30"])
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("1 not run (below)")
    assert "not checked: baked-driver-branch (its fact is unconfirmed" in out


def test_the_ubuntu_26_04_image_for_eks_1_36_is_unconfirmed_where_it_is_used(matrix: Matrix) -> None:
    [unconfirmed] = matrix.node_image_findings("ubuntu-26.04", "1.36", today=TODAY)
    assert unconfirmed.level == "advisory" and "is UNCONFIRMED" in unconfirmed.message
    assert "is published" not in unconfirmed.message
    [confirmed] = matrix.node_image_findings("ubuntu-26.04", "1.35", today=TODAY)
    assert confirmed.level == "ok" and confirmed.message.endswith("is published")


def test_cuda_13_5_names_r620_and_says_its_minimum_is_unconfirmed(matrix: Matrix) -> None:
    findings = matrix.check(os="ubuntu-24.04", driver="595.91.07", operator="v26.7.0", cuda="13.5",
                            kubernetes="1.35", instance_type="g6.xlarge", today=TODAY)
    [mvc] = _by_rule(findings, "cuda-driver-compatible")
    assert "full support needs 620, UNCONFIRMED: no primary source read gives CUDA 13.5's minimum driver" in mvc.message
    assert "needs 615" not in mvc.message


def test_r620_carries_its_releases_and_cuda_13_5_with_sources(matrix: Matrix) -> None:
    r620 = matrix.branch(620)
    assert r620 is not None and r620.native_cuda == "13.5"
    assert r620.note is not None
    for release in ("620.70.06", "620.70.10"):
        assert release in r620.note
    assert "redistrib_620.70.06.json" in r620.note and "redistrib_620.70.10.json" in r620.note


@pytest.mark.parametrize(
    ("version", "answer"),
    [
        ("v26.7.1", "is unconfirmed: "),
        ("v23.9.0", "older than every release the matrix records (the oldest is v24.9.0)"),
        ("v25.4.0", "the nearest are v25.3.4 and v25.10.0"),
        ("latest", "is not a release version"),
    ],
)
def test_an_operator_version_out_of_range_gets_a_short_answer(matrix: Matrix, version: str, answer: str) -> None:
    text, nearest = matrix.unknown_operator_text(version)
    assert answer in text
    assert len(nearest) <= 2 and "v24.9.1" not in text  # never the whole list of releases
    [known] = _by_rule(matrix.check(os="ubuntu-24.04", driver="580.173.02", operator=version, today=TODAY),
                       "operator-known")
    assert known.level == "mandatory" and answer in known.message


def test_a_g7_bottlerocket_pool_is_not_told_to_declare_a_branch_its_gpu_refuses(matrix: Matrix) -> None:
    findings = matrix.check(os="bottlerocket", driver="595", operator=None, instance_type="g7.2xlarge",
                            kubernetes="1.37",
                            today=TODAY)
    [branch] = _by_rule(findings, "baked-driver-branch")
    assert "declare driver 580 for this pool" not in branch.message
    assert "so declaring driver 580 is no fix" in branch.message
    assert branch.nearest == ("v1.68.0", "v1.66.0")


def test_a_g6f_pool_with_an_operator_driver_is_offered_no_driver(matrix: Matrix) -> None:
    findings = matrix.check(os="ubuntu-24.04", driver="595.91.07", operator="v26.7.0", instance_type="g6f.xlarge",
                            kubernetes="1.35", pool_kind="karpenter-nodepool", today=TODAY)
    assert [f.nearest for f in findings if f.rule == "gpu-architecture-supported"] == [()]
    assert not any("580.173.02" in f.nearest for f in findings)
