"""The fourth matrix audit (issue 39): the eight answers of `tools.matrix check` that misled, each as it reads now.

Every command is the issue's own, at the issue's day (2026-12-02). The class behind them (a suggestion the same tool
would refuse) is tests/matrix/test_suggestion_grid.py.
"""

from __future__ import annotations

import pytest

from policies.gpu_guard.matrix import Matrix
from tests.matrix.test_audit_goldens import check
from tools.matrix.cli import main

DAY = ("--today", "2026-12-02")


def lines(out: str, rule: str) -> list[str]:
    return [line for line in out.splitlines() if f"] {rule}: " in line]


def test_1_g6f_on_al2023_says_one_logical_gpu_and_which_pool_kind_gets_what(capsys: pytest.CaptureFixture[str]):
    code, out = check(capsys, "--os", "al2023", "--driver", "580", "--kubernetes", "1.35",
                      "--instance-type", "g6f.xlarge", *DAY)
    assert code == 0
    assert "advertises no nvidia.com/gpu" not in out
    (line,) = lines(out, "gpu-instance-fractional")
    assert line == (
        "  [advisory] gpu-instance-fractional: g6f.xlarge is a fractional L4 (1/8 of one GPU), served by the GRID "
        "driver. EC2 reports one logical GPU (LogicalGpuCount 1, Count 0) and the node's device plugin advertises one "
        "nvidia.com/gpu: in a managed or self-managed node group a pod requesting nvidia.com/gpu: 1 schedules on it "
        "and gets the share (request one GPU, not more). Karpenter v1.14.1 reads Count (0): a Karpenter NodePool "
        "never launches it for a pod requesting nvidia.com/gpu, may launch it for a pod that requests none (such a "
        "pod gets no GPU device), and its nvidia.com/gpu limit does not bound it; keep g6f and gr6f out of Karpenter "
        "NodePools."
    )
    assert "select the pool by its labels" not in out
    assert "source: https://github.com/aws/karpenter-provider-aws/issues/8368" in out


def test_1_a_karpenter_nodepool_of_g6f_is_refused_a_node_group_is_told(capsys: pytest.CaptureFixture[str]):
    code, out = check(capsys, "--os", "al2023", "--driver", "580", "--kubernetes", "1.35",
                      "--instance-type", "g6f.xlarge", "--pool-kind", "karpenter-nodepool", *DAY)
    assert code == 1
    (line,) = lines(out, "gpu-instance-fractional")
    assert line.startswith("  [mandatory] gpu-instance-fractional: g6f.xlarge is a fractional L4 (1/8 of one GPU)")
    assert line.endswith(", but Karpenter v1.14.1 reads Count (0): a Karpenter NodePool never launches it for a pod "
                         "requesting nvidia.com/gpu, may launch it for a pod that requests none (such a pod gets no "
                         "GPU device), and its nvidia.com/gpu limit does not bound it; keep g6f and gr6f out of "
                         "Karpenter NodePools.")
    code, out = check(capsys, "--os", "al2023", "--driver", "580", "--kubernetes", "1.35",
                      "--instance-type", "g6f.xlarge", "--pool-kind", "managed-node-group", *DAY)
    assert code == 0
    (line,) = lines(out, "gpu-instance-fractional")
    assert line.endswith("in a managed or self-managed node group a pod requesting nvidia.com/gpu: 1 schedules on it "
                         "and gets the share (request one GPU, not more).")


def test_2_bottlerocket_g6f_r595_is_not_told_to_pin_pb(capsys: pytest.CaptureFixture[str]):
    code, out = check(capsys, "--os", "bottlerocket", "--driver", "595", "--image-version", "v1.68.0",
                      "--kubernetes", "1.37", "--instance-type", "g6f.xlarge", *DAY)
    assert code == 1
    assert "nvidiaDriverBranch" not in out and "'pb'" not in out
    (baked,) = lines(out, "baked-driver-branch")
    assert baked == ("  [mandatory] baked-driver-branch: bottlerocket v1.68.0: the L4 of g6f.xlarge loads the default "
                     "R580 tree, not R595; declare driver 580 for this pool, or pin an image release whose driver it "
                     "needs.")
    (arch,) = lines(out, "gpu-architecture-supported")
    assert arch.endswith("driver R595 does not support the g6f family, so driver 595 cannot drive it. Use another "
                         "branch: 580.")


def test_3_al2023_g6f_r595_suggests_the_baked_branch_only(capsys: pytest.CaptureFixture[str]):
    code, out = check(capsys, "--os", "al2023", "--driver", "595", "--kubernetes", "1.35",
                      "--instance-type", "g6f.xlarge", *DAY)
    assert code == 1
    for absent in ("610.57.04", "590.48.01", "580.178.04"):  # no full version on a baked image, no EOL, no R610
        assert absent not in out
    (arch,) = lines(out, "gpu-architecture-supported")
    assert arch.endswith("Use another branch: 580.")
    assert out.count("      nearest valid: 580\n") == 2


def test_4_g6f_with_the_operators_datacenter_driver_is_refused_naming_the_grid_path(
    capsys: pytest.CaptureFixture[str],
):
    code, out = check(capsys, "--os", "ubuntu-24.04", "--driver", "580.173.02", "--operator", "v26.7.0",
                      "--kubernetes", "1.35", "--instance-type", "g6f.xlarge", *DAY)
    assert code == 1
    assert out.startswith("verdict: INCOMPATIBLE\n")
    (line,) = lines(out, "gpu-driver-kind")
    assert line == (
        "  [mandatory] gpu-driver-kind: g6f.xlarge is a fractional L4 (1/8 of one GPU) and needs NVIDIA's GRID (vGPU "
        "guest) driver; the GPU Operator installs nvcr.io/nvidia/driver:580.173.02-<os>, the data-center (Tesla) "
        "driver, which does not drive it. Run g6f on the AL2023 NVIDIA AMI (os: al2023; its loader picks "
        "nvidia-open-grid for these GPUs, R580), or on an image with AWS's GRID driver installed "
        "(https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/install-nvidia-driver.html#nvidia-driver-types), not "
        "with an operator-installed driver."
    )
    code, out = check(capsys, "--os", "ubuntu-22.04", "--driver", "580.173.02", "--operator", "v26.7.0",
                      "--kubernetes", "1.35", "--instance-type", "gr6f.4xlarge", *DAY)
    assert code == 1 and len(lines(out, "gpu-driver-kind")) == 1


def test_5_operator_v26_7_0_on_ubuntu_24_04_starts_at_kubernetes_1_33(capsys: pytest.CaptureFixture[str]):
    code, out = check(capsys, "--os", "ubuntu-24.04", "--driver", "595.91.07", "--operator", "v26.7.0",
                      "--kubernetes", "1.32", *DAY)
    assert code == 1
    assert "[ok] operator-kubernetes-supported" not in out
    (line,) = lines(out, "operator-kubernetes-supported")
    # the range cut to what EKS offers (issue 46: EKS has no 1.37)
    assert line == ("  [mandatory] operator-kubernetes-supported: GPU Operator v26.7.0 supports Kubernetes 1.33-1.36 "
                    "on ubuntu-24.04 (NVIDIA lists 1.33-1.37; the rest is not an Amazon EKS version), not 1.32; use "
                    "Kubernetes 1.33-1.36 or an operator release that supports 1.32: "
                    "v26.3.3, v26.3.2, v26.3.1, v26.3.0.")


def test_6_al2023_v20260917_on_1_30_is_never_ok(capsys: pytest.CaptureFixture[str]):
    code, out = check(capsys, "--os", "al2023", "--driver", "580", "--image-version", "v20260917",
                      "--kubernetes", "1.30", *DAY)
    assert code == 1
    assert "[ok] node-image-published" not in out
    (line,) = lines(out, "node-image-published")
    assert line == ("  [advisory] node-image-published: whether al2023 v20260917 publishes AL2023 NVIDIA AMI for "
                    "Kubernetes 1.30 is unconfirmed: no release note of v20260917 read shows it. Pin a release whose "
                    "notes do: v20260714, v20260610, v20260403, or use a Kubernetes version it confirms.")
    assert ("[mandatory] kubernetes-version-lifecycle: EKS 1.30 is not supported: extended support ended on "
            "2026-07-23") in out


def test_7_bottlerocket_v1_66_0_picks_lts_for_an_l40s_and_the_pin_can_be_asked(capsys: pytest.CaptureFixture[str]):
    args = ("--os", "bottlerocket", "--driver", "595", "--image-version", "v1.66.0", "--kubernetes", "1.37",
            "--instance-type", "g6e.xlarge", *DAY)
    _, out = check(capsys, *args)
    assert "no primary source says" not in out
    (line,) = lines(out, "baked-driver-branch")
    assert line == ("  [mandatory] baked-driver-branch: bottlerocket v1.66.0: the L40S of g6e.xlarge loads the default "
                    "R580 tree, not R595; declare driver 580 for this pool, set the pool's nvidiaDriverBranch to pb "
                    "(settings.kernel.drivers.nvidia.branch = 'pb'), or pin an image release whose driver it needs.")
    assert "source: https://github.com/bottlerocket-os/bottlerocket/pull/4946" in out
    _, out = check(capsys, *args, "--driver-branch", "pb")
    (line,) = lines(out, "baked-driver-branch")
    assert line == ("  [ok] baked-driver-branch: bottlerocket v1.66.0 carries R580 (580.178.04) and R595 (595.91.07); "
                    "settings.kernel.drivers.nvidia.branch = 'pb' activates 595.91.07 at boot whatever the GPU; R595 "
                    "as declared")


def test_7_driver_branch_is_bottlerocket_only_and_lts_or_pb(capsys: pytest.CaptureFixture[str]):
    assert main(["check", "--os", "bottlerocket", "--driver", "580", "--driver-branch", "open", *DAY]) == 2
    assert capsys.readouterr().err == "error: --driver-branch 'open' is not a branch setting; use lts or pb\n"
    assert main(["check", "--os", "al2023", "--driver", "580", "--driver-branch", "pb", *DAY]) == 2
    assert capsys.readouterr().err == (
        "error: --driver-branch applies to bottlerocket (settings.kernel.drivers.nvidia.branch), not al2023\n"
    )


def test_8_ubuntu_26_04_end_of_life_advice_names_only_what_26_04_has(capsys: pytest.CaptureFixture[str]):
    code, out = check(capsys, "--os", "ubuntu-26.04", "--driver", "610.57.04", "--operator", "v26.7.0",
                      "--kubernetes", "1.36", *DAY)
    assert code == 0
    (line,) = lines(out, "driver-branch-eol")
    assert line == ("  [advisory] driver-branch-eol: R610 reached end of life in August 2026: driver 610.57.04 gets no "
                    "more bug or security fixes. Move to a supported branch: R595.")
    assert "R580" not in out
    assert "      nearest valid: 595.91.07\n" in out


def test_the_g6f_row_carries_its_logical_gpu_and_grid_facts(matrix: Matrix):
    g6f = matrix.instance_type("g6f.xlarge")
    assert g6f is not None
    assert (g6f.gpus, g6f.logical_gpus, g6f.known_branches, g6f.unsupported_branches) == (0, 1, (580,), (595,))
    assert g6f.grid_driver_source == (
        "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/install-nvidia-driver.html#nvidia-driver-types")
    assert not matrix.drives(g6f, "610.57.04") and matrix.drives(g6f, "580") and not matrix.drives(g6f, "595")


def test_every_gpu_family_has_ebs_bandwidth_or_says_why_not(matrix: Matrix):
    for row in matrix.data.instance_families:
        if row.ebs_mbps:
            assert row.ebs_source is not None and row.ebs_source.startswith("https://"), row.family
        else:
            assert row.ebs_note is not None and "no size recorded" in row.ebs_note, row.family
    g5 = matrix.instance_type("g5.xlarge")
    assert g5 is not None and (g5.ebs_mbps, g5.ebs_confirmed) == ((700, 3500), True)
    assert g5.ebs_source == ("https://github.com/awsdocs/amazon-ec2-user-guide/blob/e3707c431483ec0ffffcabebd36cf799"
                             "ba682cd0/doc_source/ebs-optimized.md#L630-L688")
    # A confirmed row names its source; an unconfirmed one says so in its note.
    confirmed = {row.family for row in matrix.data.instance_families if row.ebs_confirmed}
    assert confirmed == {"g4dn", "g5", "g5g", "p3", "p3dn", "p4d", "p4de"}
    for row in matrix.data.instance_families:
        if row.ebs_mbps and not row.ebs_confirmed:
            assert row.ebs_note is not None and "UNCONFIRMED" in row.ebs_note, row.family
        if row.ebs_confirmed:
            assert row.ebs_note is not None and "UNCONFIRMED" not in row.ebs_note, row.family
    assert matrix.instance_type("g6.2xlarge").ebs_mbps == (2000, 5000)  # type: ignore[union-attr]
    assert matrix.instance_type("p5.48xlarge").ebs_mbps == (80000, 80000)  # type: ignore[union-attr]
    assert matrix.instance_type("g6f.xlarge").ebs_mbps is None  # type: ignore[union-attr]
    families = {row.family for row in matrix.data.instance_families if not row.ebs_mbps}
    assert families == {"g6f", "g7", "p6e-gb200", "p2", "g3", "g3s", "g2"}


def test_an_ebs_row_must_name_real_sizes_and_baseline_at_most_maximum():
    from policies.gpu_guard.matrix import InstanceFamily  # noqa: PLC0415

    base = {"family": "g9", "gpu_model": "L4", "cpu_arch": "x86_64", "sizes": {"xlarge": 1},
            "source": "https://example.invalid/", "reviewed": "2026-12-02", "ebs_source": "https://example.invalid/"}
    assert InstanceFamily.model_validate({**base, "ebs_mbps": {"xlarge": [700, 3500]}}).ebs_mbps == {
        "xlarge": (700, 3500)}
    with pytest.raises(ValueError, match=r"ebs_mbps\[xlarge\] = \[3500, 700\]: need 0 < baseline <= maximum"):
        InstanceFamily.model_validate({**base, "ebs_mbps": {"xlarge": [3500, 700]}})
    with pytest.raises(ValueError, match=r"ebs_mbps names size '2xlarge', not a size of g9 \(xlarge\)"):
        InstanceFamily.model_validate({**base, "ebs_mbps": {"2xlarge": [700, 3500]}})
    with pytest.raises(ValueError, match=r"g9: ebs_mbps needs ebs_source"):
        InstanceFamily.model_validate({**base, "ebs_source": None, "ebs_mbps": {"xlarge": [700, 3500]}})
