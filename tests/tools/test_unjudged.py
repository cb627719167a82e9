"""Pending, never none: every component whose children the offline gate did not build is unjudged, found or not
(tools/engine/coverage), helm v4 yaml components are built from local manifests (tools/engine/mocks/kubernetes_yaml.py),
and a pending message names every unseen source that hides its subject (tools/engine/unseen.py)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.struct_pb2 import Struct

from policies.gpu_guard.base import all_meta
from tests.conftest import RunPreview
from tests.result_view import entries
from tests.shared import REPO, upstream
from tools.apiserver.check import check_resources
from tools.engine.coverage.schema import TABLE, scan, schema_children
from tools.engine.coverage.subjects import NODE_AND_WORKLOAD_POLICIES, POLICY_SUBJECTS, policies_reading
from tools.engine.coverage.unjudged import Unjudged, unjudged_advisories, unjudged_components
from tools.engine.mocks.kubernetes_yaml import CONFIG_FILE, CONFIG_GROUP, NotEmulated, objects, type_token
from tools.engine.records import UNKNOWN, RecordedResource, Violation
from tools.engine.unseen import answered_by, pending_offline, unseen_sources
from tools.preview.model import GateReport
from tools.preview.render import verdict_line

PROGRAM = Path(__file__).parent / "fixtures" / "unjudged_program"
TODAY = ("--today", "2026-11-30")
NOTHING_BLOCKS = "nothing here blocks"


def _res(urn: str, type_: str, *, remote: bool = False, deps: tuple[str, ...] = (),
         inputs: dict[str, Any] | None = None, parent: str | None = None, emulated: str = "") -> RecordedResource:
    return RecordedResource(urn=urn, type=type_, name=urn.rsplit("::", 1)[-1], parent=parent, custom=not remote,
                            inputs=inputs or {}, properties=Struct(), remote=remote, dependencies=deps,
                            emulated=emulated)


NOTHING_ANSWERED = answered_by({}, "organization", "project")


def _unjudged(resources: list[RecordedResource]) -> dict[str, Unjudged]:
    return {u.type: u for u in unjudged_components(unseen_sources(resources, NOTHING_ANSWERED))}


# --- which policies could judge what a component registers ---------------------------------------------------------


def test_every_catalogue_policy_says_which_types_it_judges() -> None:
    """The class check: a policy the table lacks would never be named pending for an unjudged component."""
    catalogue = {n for n, m in all_meta().items() if m.companion_of is None and m.part_of is None}
    assert set(POLICY_SUBJECTS) == catalogue


def test_every_type_a_rule_module_names_is_among_its_policy_s_subjects() -> None:
    rules = REPO / "policies" / "gpu_guard" / "rules"
    for module in sorted(rules.glob("[a-z]*.py")):
        policy = module.stem.replace("_", "-").removesuffix("-resource")
        named = set(re.findall(r'"((?:aws|kubernetes|eks):[A-Za-z0-9./_-]+:[A-Za-z]+)"', module.read_text()))
        judged = set(policies_reading(named)) if named else {policy}
        assert policy in judged, (module.name, named)


def test_the_schema_table_is_what_the_pinned_sdks_say() -> None:
    """Regenerate with `python -m tools.engine.coverage.schema --write` after a pin moves."""
    assert json.loads(TABLE.read_text(encoding="utf-8")) == scan()
    assert schema_children("eks:index:ManagedNodeGroup") == ("aws:eks/nodeGroup:NodeGroup",)
    assert "aws:ec2/subnet:Subnet" in (schema_children("awsx:ec2:Vpc") or ())
    assert schema_children("kubernetes:helm.sh/v4:Chart") == ()  # `resources` is Any[]
    assert schema_children("eksext:index:AttachedNodeGroup") is None


def test_a_component_no_schema_knows_waits_on_every_node_and_workload_policy() -> None:
    found = _unjudged([_res("urn:s::eksext:index:AttachedNodeGroup::gpu", "eksext:index:AttachedNodeGroup",
                            remote=True)])["eksext:index:AttachedNodeGroup"]
    assert found.policies == NODE_AND_WORKLOAD_POLICIES
    assert {"gpu-nodes-tainted", "gpu-workload-schedulable", "system-node-group-present"} <= set(found.policies)
    assert "alb-https-only" not in found.policies and "eks-control-plane-hardened" not in found.policies
    assert found.basis == "no pinned schema knows it: every node and workload policy"


def test_a_schema_known_component_waits_only_on_the_policies_of_the_types_it_registers() -> None:
    found = _unjudged([
        _res("urn:s::awsx:ec2:Vpc::vpc", "awsx:ec2:Vpc", remote=True),
        _res("urn:s::eks:index:NodeGroupV2::ng", "eks:index:NodeGroupV2", remote=True),
        _res("urn:s::awsx:ecr:Repository::repo", "awsx:ecr:Repository", remote=True),
    ])
    # An awsx VPC registers subnets (the zones of the system pool) and NAT gateways (a line of the monthly estimate),
    # never a node group or a launch template.
    assert found["awsx:ec2:Vpc"].policies == ("cost-budget", "system-node-group-present")
    assert found["awsx:ec2:Vpc"].basis == "the types awsx 3.11.0's schema and source say it registers"
    assert {"gpu-nodes-tainted", "imdsv2-required", "system-node-group-present"} <= set(
        found["eks:index:NodeGroupV2"].policies)
    assert "awsx:ecr:Repository" not in found  # ECR only: no policy judges it, nothing is unjudged


def test_one_pending_advisory_per_component_and_policy() -> None:
    unjudged = [Unjudged("urn:s::x:index:A::a", "x:index:A", "w", ("gpu-nodes-tainted", "imdsv2-required"), "b"),
                Unjudged("urn:s::x:index:B::b", "x:index:B", "w", ("gpu-nodes-tainted",), "b")]
    found = unjudged_advisories(unjudged)
    assert [(v.urn.rsplit("::", 1)[-1], v.policy, v.enforcement) for v in found] == [
        ("a", "gpu-nodes-tainted-pending", "advisory"), ("a", "imdsv2-required-pending", "advisory"),
        ("b", "gpu-nodes-tainted-pending", "advisory")]
    assert found[0].message.startswith("gpu-nodes-tainted is pending offline: x:index:A 'a' is unjudged (w)")


# --- the verdict line ---------------------------------------------------------------------------------------------


def _report(*violations: Violation, unjudged: int) -> GateReport:
    items = tuple(Unjudged(f"urn:s::x:index:C::c{i}", "x:index:C", "w", ("gpu-nodes-tainted",), "b")
                  for i in range(unjudged))
    return GateReport(ran=True, detail="d", violations=(*violations, *unjudged_advisories(items)), unjudged=items)


def test_the_verdict_counts_unjudged_components_and_never_says_nothing_blocks_then() -> None:
    assert verdict_line(_report(unjudged=3)) == (
        "verdict: PASS offline; 3 components unjudged: `pulumi preview` judges them (exit 0: no mandatory finding in "
        "what the gate judged): 0 mandatory, 0 advisory finding(s), 0 pending")  # their pending: the unjudged count
    assert verdict_line(_report(unjudged=1)).startswith("verdict: PASS offline; 1 component unjudged: ")
    blocked = verdict_line(_report(Violation("gpu-nodes-tainted", "mandatory", "urn:s::a::b", "m"), unjudged=2))
    assert blocked.startswith("verdict: FAIL, exit 1 (a mandatory finding blocks `pulumi up`; 2 components unjudged")
    assert NOTHING_BLOCKS in verdict_line(_report(unjudged=0))


# --- a program: a community remote component, helm v4 yaml components ----------------------------------------------


def _doc(run_preview: RunPreview, stack: str, phase: str) -> tuple[Any, dict[str, Any]]:
    run = run_preview("--program", str(PROGRAM), "--stack", stack, "--phase", phase, *TODAY)
    doc = run_preview("--program", str(PROGRAM), "--stack", stack, "--phase", phase, *TODAY, "--json")
    return run, dict(doc.json())


@pytest.mark.parametrize("phase", ["preview", "update", "up"])
def test_a_remote_component_on_untainted_g5_is_pending_never_a_pass(run_preview: RunPreview, phase: str) -> None:
    run, doc = _doc(run_preview, "remote", phase)
    assert run.returncode == 0, run.explain()
    [component] = [r["urn"] for r in doc["resources"] if r["type"] == "eksext:index:AttachedNodeGroup"]
    pending = {(v["policy"], v["enforcement"]) for v in entries(doc) if v["urn"] == component}
    assert ("gpu-nodes-tainted-pending", "advisory") in pending
    assert [v for v in entries(doc) if v["enforcement"] == "mandatory"] == []
    verdict = run.stdout.splitlines()[-1]
    assert verdict.startswith("verdict: PASS offline; 1 component unjudged: `pulumi preview` judges them")
    assert NOTHING_BLOCKS not in run.stdout
    text = " ".join(run.stdout.split())
    assert "Unjudged eksext:index:AttachedNodeGroup 'gpu-attached': its provider registers its children" in text


def test_the_json_lists_each_unjudged_component_and_every_pair_as_a_pending_advisory(run_preview: RunPreview) -> None:
    _, doc = _doc(run_preview, "remote", "preview")
    [entry] = doc["unjudged"]
    assert set(entry) == {"urn", "type", "name", "why", "policies", "basis"}
    assert entry["type"] == "eksext:index:AttachedNodeGroup"
    assert entry["policies"] == list(NODE_AND_WORKLOAD_POLICIES)
    pairs = {(v["urn"], v["policy"]) for v in entries(doc) if v["enforcement"] == "advisory"}
    assert {(entry["urn"], f"{p}-pending") for p in entry["policies"]} <= pairs
    assert "unjudged" not in doc["policyPack"]  # nothing twice (issue 56)
    assert doc["counts"]["unjudged"] == 1 and doc["pending"] == []


@pytest.mark.parametrize("stack", ["configfile", "configgroup"])
def test_a_helm_v4_yaml_component_over_a_local_manifest_is_judged(run_preview: RunPreview, stack: str) -> None:
    """manifests/gpu-nodepool.yaml: a GPU NodePool on g5 with no taint, registered as pulumi-kubernetes registers it."""
    run, doc = _doc(run_preview, stack, "preview")
    assert run.returncode == 1, run.explain()
    assert doc["unjudged"] == []
    [pool] = [r for r in doc["resources"] if r["type"] == "kubernetes:karpenter.sh/v1:NodePool"]
    assert pool["urn"].endswith("::pools:gpu-untainted")
    assert pool["parent"].endswith(f"::{'kubernetes:yaml/v2:ConfigFile' if stack == 'configfile' else CONFIG_GROUP}"
                                   "::pools")
    [tainted] = [v for v in entries(doc) if v["policy"] == "gpu-nodes-tainted"]
    assert tainted["enforcement"] == "mandatory" and tainted["urn"] == pool["urn"]
    assert "GPU pool 'pools:gpu-untainted'" in tainted["message"]
    [child] = doc["emulatedChildren"]
    assert child["source"].startswith("https://github.com/pulumi/pulumi-kubernetes/blob/")
    assert doc["verdict"] == "FAIL"
    assert run.stdout.splitlines()[-1].startswith("verdict: FAIL, exit 1 (a mandatory finding blocks `pulumi up`)")


def test_a_manifest_fetched_over_the_network_leaves_the_component_unjudged(run_preview: RunPreview) -> None:
    run, doc = _doc(run_preview, "urlfile", "preview")
    assert run.returncode == 0, run.explain()
    [entry] = doc["unjudged"]
    assert entry["type"] == CONFIG_FILE
    assert "(the gate builds its objects only from a local file known in this phase)" in entry["why"]
    assert entry["basis"] == "kubernetes 4.34.2's schema names no child type: every node and workload policy"
    assert NOTHING_BLOCKS not in run.stdout


# --- the objects pulumi-kubernetes's yaml/v2 Construct registers ----------------------------------------------------


def test_yaml_objects_are_named_and_typed_as_the_provider_registers_them(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: n}}\n"
        "---\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n")
    found = objects(CONFIG_FILE, "cf", {"file": "a.yaml", "skipAwait": True}, tmp_path)
    assert [(o.type, o.name) for o in found] == [("kubernetes:core/v1:ConfigMap", "cf:n/c"),
                                                 ("kubernetes:apps/v1:Deployment", "cf:d")]
    assert found[1].inputs["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}
    group = objects(CONFIG_GROUP, "cg", {"files": ["*.yaml"], "resourcePrefix": "", "objs": [namespace]}, tmp_path)
    assert [o.name for o in group] == ["n/c", "d", "x"]  # an empty prefix is none
    assert type_token("karpenter.sh/v1", "NodePool") == "kubernetes:karpenter.sh/v1:NodePool"


@pytest.mark.parametrize(("inputs", "why"), [
    ({"file": "https://example.com/m.yaml"}, "fetched over the network"),
    ({"file": "missing.yaml"}, "cannot be read here"),
    ({"file": UNKNOWN}, "unknown in this phase"),
    ({"file": "noname.yaml"}, "lacks kind, apiVersion or metadata.name"),
])
def test_what_the_gate_cannot_build_says_why(tmp_path: Path, inputs: dict[str, Any], why: str) -> None:
    (tmp_path / "noname.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n")
    with pytest.raises(NotEmulated, match=why):
        objects(CONFIG_FILE, "cf", inputs, tmp_path)


# --- helm v4 Chart: values checked as the v3 Release path checks them ------------------------------------------------


def test_a_helm_v4_chart_s_values_are_checked_against_the_pinned_chart() -> None:
    cache = upstream()
    chart = _res("urn:s::kubernetes:helm.sh/v4:Chart::gpu-operator", "kubernetes:helm.sh/v4:Chart", remote=True,
                 inputs={"chart": "gpu-operator", "version": "v26.7.0",  # the pinned chart's version (issue 55)
                         "values": {"driver": {"enabled": True}, "drivr": {}}})
    report = check_resources([chart], cache)
    assert report.releases == 1
    assert [(f.rule, f.path) for f in report.findings] == [("helm-values", "drivr")]


# --- item 4: every unseen source that hides the subject is named ---------------------------------------------------


def test_a_stack_pending_message_names_every_component_that_may_hold_its_subject() -> None:
    """An awsx VPC and nine ManagedNodeGroups not built: the system pool may be in any of the nine (and the VPC holds
    the subnets, the zones), so the message names all ten, not the first one reached."""
    vpc = _res("urn:s::awsx:ec2:Vpc::vpc", "awsx:ec2:Vpc", remote=True)
    groups = [_res(f"urn:s::eks:index:ManagedNodeGroup::ng{i}", "eks:index:ManagedNodeGroup", remote=True,
                   deps=(vpc.urn,), inputs={"cluster": "not-a-cluster"}) for i in range(9)]
    repo = _res("urn:s::awsx:ecr:Repository::repo", "awsx:ecr:Repository", remote=True)
    none = Violation("system-node-group-present", "mandatory", "urn:s::stack", "d\nNode groups: none.")
    resources = [vpc, *groups, repo]
    [out] = pending_offline([none], ["system-node-group-present"], resources,
                            unseen_sources(resources, NOTHING_ANSWERED))
    assert out.policy == "system-node-group-present-pending"
    for name in ["vpc", *(f"ng{i}" for i in range(9))]:
        assert f"'{name}':" in out.message
    assert "'repo'" not in out.message  # ECR holds nothing the policy reads


def test_a_resource_pending_message_names_every_source_the_value_it_read_comes_from() -> None:
    """The policy read `subnetIds`, built from an awsx VPC's subnets and another stack's: both are named."""
    ref = _res("urn:s::pulumi:pulumi:StackReference::acme/infra/dev", "pulumi:pulumi:StackReference",
               inputs={"name": "acme/infra/dev"})
    vpc = _res("urn:s::awsx:ec2:Vpc::vpc", "awsx:ec2:Vpc", remote=True)
    group = replace(_res("urn:s::aws:eks/nodeGroup:NodeGroup::gpu", "aws:eks/nodeGroup:NodeGroup",
                         deps=(vpc.urn, ref.urn)), property_dependencies={"subnetIds": (vpc.urn, ref.urn)})
    cant = Violation("gpu-nodes-tainted", "advisory", group.urn, "can't run policy 'gpu-nodes-tainted' from policy "
                     "pack 'p@v1' during preview: array value at .subnetIds can't be known during preview")
    [out] = pending_offline([cant], [], [group, vpc, ref], unseen_sources([ref, vpc, group], NOTHING_ANSWERED))
    assert out.policy == "gpu-nodes-tainted-pending" and out.enforcement == "advisory"
    assert "awsx:ec2:Vpc 'vpc'" in out.message and "--stack-outputs acme/infra/dev=FILE" in out.message
