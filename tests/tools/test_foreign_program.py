"""A real foreign Pulumi program through the offline gate, phase by phase: EKS Auto Mode with a GPU NodePool.

tests/policies/test_foreign_designs.py judges the corpus of foreign designs resource by resource; this runs one
of them as the program a platform team would write (tests/tools/fixtures/auto_mode_program: pulumi_aws's
`eks.Cluster(compute_config=...)`, a Kubernetes provider whose kubeconfig comes from the cluster, the NodePool as
a CustomResource on Auto Mode's NodeClass with a valueless taint, a Deployment selecting by eks.amazonaws.com
labels) and hands it to the real pack process the way the engine does (tools/engine/gate.py).
"""

from __future__ import annotations

import pytest

from tests.shared import REPO

PROGRAM = ("--program", str(REPO / "tests" / "tools" / "fixtures" / "auto_mode_program"), "--today", "2026-11-30")


def _mandatory(run) -> list[tuple[str, str]]:
    return [(v["policy"], v["message"]) for v in run.violations() if v["enforcement"] == "mandatory"]


@pytest.mark.parametrize("phase", ["preview", "update", "up"])
def test_a_correct_auto_mode_program_gets_no_mandatory_violation(run_preview, phase):
    run = run_preview(*PROGRAM, "--phase", phase, "--json")
    assert run.returncode == 0, run.explain()
    assert _mandatory(run) == []
    policies = {v["policy"] for v in run.violations()}
    if phase == "preview":  # the Kubernetes objects are not known yet: the stack policies say they wait
        assert "system-node-group-present-pending" in policies
    else:  # known: the pack says what it cannot judge under Auto Mode, at advisory level
        assert "cuda-driver-compatible-caveats" in policies


@pytest.mark.parametrize("phase", ["preview", "update", "up"])
def test_the_same_program_with_an_untainted_gpu_pool_is_stopped_in_every_phase(run_preview, phase):
    run = run_preview(*PROGRAM, "--stack", "untainted", "--phase", phase, "--json")
    assert run.returncode == 1, run.explain()
    assert [p for p, _ in _mandatory(run)] == ["gpu-nodes-tainted"]
    assert "GPU pool 'gpu' (karpenter-nodepool; GPU instance families ['g6', 'g6e']) must carry the GPU taint" in \
        _mandatory(run)[0][1]
