"""The engine's unknowns in a preview, reproduced by the mocks (tools/engine/mocks/monitor.py, docs/gate.md):
a registration under an unconfigured provider gets `{}` back, so what reads its outputs is unknown; the update
phase of a changed stack ("the cluster is replaced", a changed resource's computed outputs)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.result_view import entries
from tests.shared import REPO
from tools.engine.records import UNKNOWN

PROGRAM = ("--program", str(REPO / "tests" / "tools" / "fixtures" / "crd_program"), "--stack", "provider",
           "--today", "2026-11-30")
CANT_RUN = "can't run policy 'gpu-workload-cuda-declared' from policy pack"


def _release(doc: dict[str, Any]) -> dict[str, Any]:
    return next(r["inputs"] for r in doc["resources"] if r["type"] == "kubernetes:helm.sh/v3:Release")


def _cant_run(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(v["policy"], v["urn"].rsplit("::", 1)[-1]) for v in entries(doc)
            if "can't run policy" in v["message"]]


@pytest.mark.parametrize("args", [("--phase", "preview"), ("--phase", "update", "--cluster-replaced"),
                                  ("--phase", "update", "--changed", "c")])
def test_an_output_of_an_object_under_the_unconfigured_provider_is_unknown_and_the_policy_cant_run(
        run_preview, args):
    run = run_preview(*PROGRAM, *args, "--json")
    assert run.returncode in (0, 1), run.explain()
    doc = run.json()
    # Release(namespace=ns.metadata.name): the Namespace answered `{}`, so its name is unknown to the program.
    assert _release(doc)["namespace"] == UNKNOWN
    # No policy needs a release's namespace to judge it: gpu-workload-cuda-declared, which reads only workloads, used
    # to abort on it with pulumi-policy's "can't run" (pulumi_policy/policy.py lines 1012-1021) because the inventory
    # read every value eagerly; it now reads lazily and judges (issue 45). tests/tools/test_no_version_cluster.py
    # shows the "can't run" of a policy that does read an unknown value, naming it.
    assert _cant_run(doc) == []
    # The offline-only verdicts are computed from the `up` recording, where the namespace is known: none of them
    # is a "can't run".
    verdicts = [f["message"] for f in doc["findings"] if f["offlineOnly"]]
    assert doc["pending"] and not [m for m in verdicts if "can't run" in m]


def test_an_unchanged_update_knows_every_output(run_preview):
    doc = run_preview(*PROGRAM, "--phase", "update", "--json").json()
    assert _release(doc)["namespace"] == "keda"
    assert _cant_run(doc) == []
    assert doc["change"] is None and doc["pending"] == [] and not [f for f in doc["findings"] if f["offlineOnly"]]


def test_a_replaced_cluster_is_named_in_the_document_with_its_unknown_endpoint(run_preview):
    doc = run_preview(*PROGRAM, "--phase", "update", "--cluster-replaced", "--json").json()
    assert doc["change"] == {"clusterReplaced": True, "changed": []}
    provider = next(r for r in doc["resources"] if r["type"] == "pulumi:providers:kubernetes")
    assert UNKNOWN in provider["inputs"]["kubeconfig"]


def test_a_change_needs_the_update_phase(run_preview):
    run = run_preview(*PROGRAM, "--phase", "preview", "--cluster-replaced")
    assert run.returncode == 2
    assert "they need --phase update, not --phase preview" in run.stderr
