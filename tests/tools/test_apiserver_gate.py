"""`python -m tools.preview` gives the API server's and Helm's verdict on any program, in every phase, before
anything is created (tools/apiserver through tools/preview/command.py `api_server_verdict`)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.result_view import entries
from tests.shared import REPO, upstream

CRD_PROGRAM = ("--program", str(REPO / "tests" / "tools" / "fixtures" / "crd_program"), "--today", "2026-11-30")


@pytest.fixture(autouse=True)
def _the_whole_cache() -> None:
    """Every verdict here is the API server's, read from the pinned CRDs and chart values (skips without them)."""
    upstream()


def _api_violations(doc: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(policy, level, object, the API server's message): the finding's message and its fix, as the check words
    them (`<what>; fix: <how>`)."""
    return [(f["policy"], f["level"], f["object"]["name"], f["message"] + (f"; fix: {f['fix']}" if f["fix"] else ""))
            for f in doc["findings"] if f["policy"].startswith("apiserver-")]


@pytest.mark.parametrize("phase", ["preview", "update", "up"])
def test_a_second_root_volume_is_refused_with_the_crds_own_message_in_every_phase(run_preview, phase):
    run = run_preview(*CRD_PROGRAM, "--stack", "tworoots", "--phase", phase, "--json")
    assert run.returncode == 1, run.explain()
    doc = run.json()
    assert _api_violations(doc) == [(
        "apiserver-crd-cel", "mandatory", "gpu",
        "EC2NodeClass/-/gpu: spec.blockDeviceMappings: must have only one blockDeviceMappings with rootVolume; "
        "fix: change spec.blockDeviceMappings so that the CRD's rule holds: "
        "self.filter(x, has(x.rootVolume)?x.rootVolume==true:false).size() <= 1")]
    assert doc["apiServer"]["kubernetesVersion"] == "1.35"
    assert [v["blocks"] for v in entries(doc) if v["policy"] == "apiserver-crd-cel"] == ["before-create"]


def test_a_helm_value_key_the_chart_does_not_have_is_refused_the_same_way(run_preview):
    run = run_preview(*CRD_PROGRAM, "--stack", "badvalues", "--json")
    assert run.returncode == 1, run.explain()
    assert _api_violations(run.json()) == [(
        "apiserver-helm-values", "mandatory", "keda",
        "keda: operatr: unknown key 'operatr': the chart's values.yaml has no operatr; nearest: operator; "
        "fix: rename it to operator")]


def test_a_conformant_program_has_no_api_server_verdict_and_says_what_was_checked(run_preview):
    doc = run_preview(*CRD_PROGRAM, "--stack", "dev", "--json").json()
    assert _api_violations(doc) == []
    assert {k: doc["apiServer"][k] for k in ("objects", "releases", "rejected")} == {
        "objects": 2, "releases": 1, "rejected": []}


def test_the_human_summary_names_the_check_and_the_rejection(run_preview):
    run = run_preview(*CRD_PROGRAM, "--stack", "tworoots")
    assert run.returncode == 1
    text = " ".join(run.stdout.split())
    assert "API server and Helm: 2 objects checked against Kubernetes 1.35" in text
    assert ("mandatory apiserver-crd-cel [before-create] EC2NodeClass 'gpu': EC2NodeClass/-/gpu: "
            "spec.blockDeviceMappings: must have only one") in text
