"""`--phase analyze`: `pulumi policy analyze` over an existing state (tools/engine/analyze.py), and the remote
component's own registration, which the engine analyzes with `{}` props (tools/engine/view.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.result_view import entries
from tests.shared import REPO
from tools.engine.analyze import export_items, load_export, state_items
from tools.engine.records import RecordedResource
from tools.engine.view import engine_resources

EXPORT = REPO / "tests" / "tools" / "fixtures" / "exports" / "untainted-pool.json"
TODAY = ("--today", "2026-11-30")
POOL = "urn:pulumi:dev::gpu-platform::kubernetes:karpenter.sh/v1:NodePool::gpu"


def test_an_exported_state_is_analyzed_without_the_program_and_a_mandatory_violation_exits_1(run_preview):
    run = run_preview("--phase", "analyze", "--state", str(EXPORT), *TODAY, "--json")
    assert run.returncode == 1, run.explain()
    doc = run.json()
    assert doc["phase"] == "analyze" and doc["stack"] == "dev"
    mandatory = {(v["policy"], v["urn"]) for v in entries(doc) if v["enforcement"] == "mandatory"}
    assert ("gpu-nodes-tainted", POOL) in mandatory
    # The resource pending deletion is not analyzed (analyze_snapshot.go skips res.Delete).
    assert sorted(r["name"] for r in doc["resources"]) == ["default_4_34_2", "gpu", "gpu-platform-dev"]
    # An undecryptable secret reaches the pack as `[secret]`, as `pulumi policy analyze --file` sends it.
    provider = next(r for r in doc["resources"] if r["type"] == "pulumi:providers:kubernetes")
    assert provider["inputs"]["kubeconfig"] == "[secret]"
    assert doc["apiServer"] is None  # the objects exist: no request reaches the API server


def test_the_state_the_first_up_leaves_passes_for_our_stack(run_preview):
    run = run_preview("--phase", "analyze", *TODAY, "--json")
    assert run.returncode == 0, run.explain()
    doc = run.json()
    assert "ran over the state the first `pulumi up` leaves" in doc["policyPack"]["detail"]
    assert [v for v in entries(doc) if v["enforcement"] == "mandatory"] == []


def test_a_bad_export_is_refused_on_one_line(run_preview, tmp_path: Path):
    bad = tmp_path / "state.json"
    bad.write_text('{"deployment": {}}')
    run = run_preview("--phase", "analyze", "--state", str(bad))
    assert run.returncode == 2
    assert f"--state: {bad}: key 'deployment.resources' is missing or not a list" in run.stderr
    assert "Traceback" not in run.stderr
    run = run_preview("--phase", "preview", "--state", str(EXPORT))
    assert run.returncode == 2 and "is analyzed with --phase analyze, not --phase preview" in run.stderr


def test_every_resource_of_a_state_is_analyzed_with_its_inputs_and_stacked_with_its_outputs():
    _, _, resources = load_export(EXPORT)
    items = export_items(resources)
    assert all(item.analyzed for item in items)
    pool = next(i for i in items if i.res.urn == POOL)
    assert "status" not in pool.inputs.fields and "status" in pool.outputs.fields
    assert pool.provider_urn == "urn:pulumi:dev::gpu-platform::pulumi:providers:kubernetes::default_4_34_2"


def _remote() -> RecordedResource:
    inputs = {"version": "1.35", "skipDefaultNodeGroup": True}
    return RecordedResource(urn="urn:pulumi:dev::p::eks:index:Cluster::c", type="eks:index:Cluster", name="c",
                            parent=None, custom=False, inputs=inputs, properties=json.loads(json.dumps(inputs)),
                            remote=True, outputs={"kubeconfig": "k"})


def test_a_remote_components_own_registration_is_analyzed_with_empty_props_in_a_preview():
    [item] = engine_resources([_remote()], stack="dev", project="p", stack_config={})
    assert item.analyzed and dict(item.inputs.fields) == {}
    assert "kubeconfig" in item.outputs.fields


def test_in_the_state_up_leaves_the_remote_component_holds_what_its_provider_registered():
    # The state keeps the provider's registration of the component: `{}` as its inputs, its outputs.
    [item] = state_items([_remote()], stack="dev", project="p", stack_config={})
    assert item.analyzed and dict(item.inputs.fields) == {} and "kubeconfig" in item.outputs.fields

