"""What the offline gate cannot see makes the verdicts that could read it pending, never "none"
(tools/engine/unseen.py), and other stacks' outputs are given with `--stack-outputs` (split stacks)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.struct_pb2 import Struct

from tests.conftest import RunPreview
from tests.result_view import entries
from tests.shared import REPO
from tools.engine.records import UNKNOWN, RecordedResource, Violation
from tools.engine.unseen import SUBJECT_TYPES, answered_by, name_stack_outputs, pending_offline, unseen_sources

FIXTURES = Path(__file__).parent / "fixtures"
MNG = FIXTURES / "eks_mng_program"
SPLIT = FIXTURES / "split_stack_program"
OUTPUTS = SPLIT / "infra-dev.outputs.json"
TODAY = ("--today", "2026-11-30")


def _res(urn: str, type_: str, *, remote: bool = False, deps: tuple[str, ...] = (), provider: str = "",
         inputs: dict[str, Any] | None = None) -> RecordedResource:
    return RecordedResource(urn=urn, type=type_, name=urn.rsplit("::", 1)[-1], parent=None, custom=not remote,
                            inputs=inputs or {}, properties=Struct(), remote=remote, dependencies=deps,
                            provider=provider)


STACK = ["system-node-group-present", "karpenter-interruption-handling"]


def _judge(resources: list[RecordedResource], violations: list[Violation],
           answered: dict[str, Any] | None = None) -> dict[str, Violation]:
    unseen = unseen_sources(resources, answered_by(answered or {}, "organization", "p"))
    out = pending_offline(violations, STACK, resources, unseen)
    return {v.urn + " " + v.policy: v for v in out}


NONE = Violation("system-node-group-present", "mandatory", "urn:s::stack", "description\nNode groups: none.")
TAINT = Violation("gpu-nodes-tainted", "mandatory", "urn:s::aws:eks/nodeGroup:NodeGroup::gpu", "d\nuntainted")


def test_a_component_that_may_hold_node_groups_makes_a_stack_verdict_pending_not_a_resource_one() -> None:
    resources = [_res("urn:s::eks:index:NodeGroupV2::system", "eks:index:NodeGroupV2", remote=True)]
    out = _judge(resources, [NONE, TAINT])
    pending = out["urn:s::stack system-node-group-present-pending"]
    assert pending.enforcement == "advisory"
    assert "eks:index:NodeGroupV2 'system'" in pending.message
    assert pending.message.endswith("What the pack found in what the gate saw: Node groups: none.")
    assert out[f"{TAINT.urn} gpu-nodes-tainted"] == TAINT  # it judged a pool it saw


def test_a_component_that_holds_none_of_the_stack_policies_subjects_changes_nothing() -> None:
    """awsx's ECR repository registers ECR resources only: "Node groups: none" stands."""
    resources = [_res("urn:s::awsx:ecr:Repository::repo", "awsx:ecr:Repository", remote=True)]
    assert _judge(resources, [NONE]) == {f"{NONE.urn} {NONE.policy}": NONE}


@pytest.mark.parametrize("component", ["kubernetes:helm.sh/v4:Chart", "kubernetes:yaml/v2:ConfigGroup",
                                       "acme:index:Platform"])
def test_kubernetes_and_unknown_multi_language_components_may_hold_what_the_pack_reads(component: str) -> None:
    resources = [_res(f"urn:s::{component}::c", component, remote=True)]
    assert set(_judge(resources, [NONE])) == {"urn:s::stack system-node-group-present-pending"}


def test_what_reads_an_unanswered_stack_reference_is_pending_and_an_answer_lets_it_be_judged() -> None:
    ref = _res("urn:s::pulumi:pulumi:StackReference::acme/infra/dev", "pulumi:pulumi:StackReference",
               inputs={"name": "acme/infra/dev"})
    provider = _res("urn:s::pulumi:providers:kubernetes::infra", "pulumi:providers:kubernetes", deps=(ref.urn,))
    deployment = _res("urn:s::kubernetes:apps/v1:Deployment::triton", "kubernetes:apps/v1:Deployment",
                      provider=f"{provider.urn}::id-1")
    found = Violation("gpu-workload-cuda-declared", "mandatory", deployment.urn, "d\nCUDA unknown")
    out = _judge([ref, provider, deployment], [found, NONE])
    pending = out[f"{deployment.urn} gpu-workload-cuda-declared-pending"]
    assert "--stack-outputs acme/infra/dev=FILE" in pending.message
    assert out[f"{NONE.urn} {NONE.policy}"] == NONE  # the other stack is no more seen by the real engine
    assert _judge([ref, provider, deployment], [found], answered={"acme/infra/dev": {}}) == {
        f"{deployment.urn} gpu-workload-cuda-declared": found}
    # Names resolve as the engine resolves them, never by a suffix: `infra/dev` is stack `dev` of organization `infra`
    # in this project, not acme's `infra` project (tools/engine/mocks/stack_refs.py).
    for other in ("infra/dev", "dev"):
        assert f"{deployment.urn} gpu-workload-cuda-declared-pending" in _judge(
            [ref, provider, deployment], [found], answered={other: {}})


def _pack_type_tokens() -> set[str]:
    text = "\n".join(p.read_text() for p in (REPO / "policies" / "gpu_guard").rglob("*.py"))
    return set(re.findall(r'"((?:aws|kubernetes):[A-Za-z0-9./_-]+:[A-Za-z]+)"', text))


def test_every_type_the_pack_names_is_a_subject_the_unseen_check_knows() -> None:
    """The class check: a type a policy reads that SUBJECT_TYPES lacks would let a hidden one block."""
    assert _pack_type_tokens() - SUBJECT_TYPES == set()


def _doc(run: Any) -> dict[str, Any]:
    assert run.returncode in (0, 1), run.explain()
    return dict(run.json())


@pytest.mark.parametrize("phase", ["preview", "update", "up"])
def test_a_self_managed_system_group_is_pending_never_none(run_preview: RunPreview, phase: str) -> None:
    """pulumi-eks examples/nodegroup-py's NodeGroupV2: its launch template and ASG are not emulated offline."""
    doc = _doc(run_preview("--program", str(MNG), "--stack", "selfmanaged", "--phase", phase, *TODAY, "--json"))
    assert "system-node-group-present" not in {v["policy"] for v in entries(doc)}
    assert any("eks:index:NodeGroupV2 'system'" in v["message"] for v in entries(doc)
               if v["policy"] == "system-node-group-present-pending" and v["enforcement"] == "advisory")


@pytest.mark.parametrize("phase", ["preview", "update", "up"])
def test_a_split_stack_program_runs_in_every_phase_with_no_mandatory_finding(run_preview: RunPreview,
                                                                            phase: str) -> None:
    doc = _doc(run_preview("--program", str(SPLIT), "--phase", phase, *TODAY, "--json"))
    assert [v for v in entries(doc) if v["enforcement"] == "mandatory"] == []


@pytest.mark.parametrize("phase", ["update", "up"])
def test_with_the_other_stack_s_outputs_the_pack_judges_and_says_the_pools_live_there(run_preview: RunPreview,
                                                                                     phase: str) -> None:
    doc = _doc(run_preview("--program", str(SPLIT), "--phase", phase, *TODAY, "--stack-outputs",
                           f"acme/gpu-infra/dev={OUTPUTS}", "--json"))
    assert [v for v in entries(doc) if v["enforcement"] == "mandatory"] == []
    deployment = next(r for r in doc["resources"] if r["type"] == "kubernetes:apps/v1:Deployment")
    assert deployment["inputs"]["spec"]["template"]["spec"]["nodeSelector"] == {"eks.amazonaws.com/nodegroup": "gpu"}
    [elsewhere] = [v for v in entries(doc) if "through StackReference" in v["message"]]
    assert elsewhere["policy"] == "gpu-workload-schedulable-pending" and elsewhere["enforcement"] == "advisory"
    assert "'acme/gpu-infra/dev'" in elsewhere["message"]


def test_a_stack_outputs_file_that_is_not_the_cli_s_format_is_rejected_with_its_fix(run_preview: RunPreview,
                                                                                     tmp_path: Path) -> None:
    bad = tmp_path / "out.json"
    bad.write_text("[1, 2]")
    run = run_preview("--program", str(SPLIT), "--stack-outputs", f"acme/gpu-infra/dev={bad}", *TODAY, "--json")
    assert run.returncode == 2
    assert "holds a list, not an object of outputs" in run.stderr and "pulumi stack output --json" in run.stderr
    run = run_preview("--program", str(SPLIT), "--stack-outputs", "gpu-infra/dev", *TODAY, "--json")
    assert run.returncode == 2 and "not NAME=FILE" in run.stderr


@pytest.mark.parametrize("phase", ["preview", "update", "up"])
def test_a_remote_component_s_resource_output_read_by_the_program_does_not_crash_the_update(
        run_preview: RunPreview, phase: str) -> None:
    """flostadler/eks-pytorch-example's `ecr_repo.repository.repository_url` (pulumi-awsx) crashed phase `up` with
    "'NoneType' object has no attribute 'repository_url'": the mocks made the unknown output None. So did an `apply`
    over pulumi-docker-build's `ref`, which the mocks do not compute either."""
    doc = _doc(run_preview("--program", str(FIXTURES / "remote_outputs_program"), "--phase", phase, *TODAY, "--json"))
    job = next(r for r in doc["resources"] if r["type"] == "kubernetes:batch/v1:Job")
    assert [c["image"] for c in job["inputs"]["spec"]["template"]["spec"]["containers"]] == [UNKNOWN, UNKNOWN]
    # Each once: the component some policy could judge a child of is unjudged, the other not seen (issue 56).
    assert {n["type"] for n in doc["notSeenOffline"]} | {u["type"] for u in doc["unjudged"]} == {
        "awsx:ecr:Repository", "awsx:ecr:Image"}
    assert not {n["urn"] for n in doc["notSeenOffline"]} & {u["urn"] for u in doc["unjudged"]}


def test_a_provider_sdk_the_gate_s_interpreter_lacks_is_named_with_its_fix(run_preview: RunPreview,
                                                                           tmp_path: Path) -> None:
    """The gate runs the program in its own interpreter, under the mocks: a program importing pulumi-awsx where that
    interpreter lacks it exits 2 with the program's line and the package to install, not a bare import error."""
    (tmp_path / "Pulumi.yaml").write_text("name: needsawsx\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text("import pulumi\nimport pulumi_notinstalledsdk as awsx\n")
    run = run_preview("--program", str(tmp_path), *TODAY)
    assert run.returncode == 2
    assert "(at __main__.py:2)" in run.stderr
    assert "pip install pulumi-notinstalledsdk==<version>" in run.stderr


def test_in_up_without_the_other_stack_s_outputs_they_stay_unknown_and_the_program_runs(run_preview: RunPreview
                                                                                       ) -> None:
    """The program calls `str.lower` on another stack's output inside an `apply`: with the outputs None in `up` it
    crashed (exit 2, a traceback in the user's own code); unknown, the `apply` waits and what reads them is pending."""
    run = run_preview("--program", str(SPLIT), "--phase", "up", *TODAY, "--json")
    assert run.returncode == 0, run.explain()
    doc = run.json()
    deployment = next(r for r in doc["resources"] if r["type"] == "kubernetes:apps/v1:Deployment")
    assert deployment["inputs"]["metadata"].get("annotations", {}).get("gpu-platform.io/node-group") in (None, UNKNOWN)
    named = [v for v in entries(doc) if "--stack-outputs acme/gpu-infra/dev=FILE" in v["message"]]
    assert named and all(v["enforcement"] == "advisory" for v in named)


def test_a_redacted_secret_in_a_stack_outputs_file_is_refused_naming_show_secrets(run_preview: RunPreview,
                                                                                 tmp_path: Path) -> None:
    """`pulumi stack output --json` without --show-secrets writes "[secret]" for a secret output (pulumi/pulumi
    pkg/cmd/pulumi/stack/stack_output_test.go lines 174-181): taken as a value, an instance type of "[secret]"
    passed where the real one blocks."""
    redacted = tmp_path / "infra.json"
    redacted.write_text('{"gpuNodeGroup": "gpu", "node": {"instanceType": "[secret]"}}')
    run = run_preview("--program", str(SPLIT), "--stack-outputs", f"acme/gpu-infra/dev={redacted}", *TODAY, "--json")
    assert run.returncode == 2, run.explain()
    assert "node.instanceType hold '[secret]'" in run.stderr
    assert "pulumi stack output --json --show-secrets --stack acme/gpu-infra/dev" in run.stderr


@pytest.mark.parametrize(("given", "reference", "answers"), [
    ("dev", "dev", True),
    ("dev", "organization/p/dev", True),  # this org, this project
    ("dev", "acme/infra/dev", False),  # a bare name never answers every */dev
    ("acme/dev", "acme/p/dev", True),  # org/stack: this project
    ("infra/dev", "acme/infra/dev", False),  # org `infra`, not project `infra`
    ("acme/infra/dev", "acme/infra/dev", True),
    ("acme/infra/dev", "dev", False),  # this org is `organization` offline
])
def test_stack_reference_names_resolve_as_the_engine_resolves_them(given: str, reference: str, answers: bool) -> None:
    assert answered_by({given: {}}, "organization", "p")(reference) is answers


def test_a_cant_run_advisory_a_reference_may_cause_names_stack_outputs() -> None:
    ref = _res("urn:s::pulumi:pulumi:StackReference::infra", "pulumi:pulumi:StackReference",
               inputs={"name": "acme/infra/dev"})
    stack = _res("urn:s::pulumi:pulumi:Stack::s", "pulumi:pulumi:Stack")
    provider = _res("urn:s::pulumi:providers:kubernetes::infra", "pulumi:providers:kubernetes", deps=(ref.urn,))
    deployment = _res("urn:s::kubernetes:apps/v1:Deployment::triton", "kubernetes:apps/v1:Deployment",
                      provider=f"{provider.urn}::id-1")
    other = _res("urn:s::aws:eks/cluster:Cluster::gpu", "aws:eks/cluster:Cluster")
    resources = [stack, ref, provider, deployment, other]
    cant = "can't run policy 'p' from policy pack 'gpu-platform@v0.0.1' during preview: value at .x can't be known"
    found = [Violation(p, "advisory", urn, cant) for p, urn in
             (("on-deployment", deployment.urn), ("on-stack", stack.urn), ("on-cluster", other.urn))]
    out = {v.policy: v.message for v in name_stack_outputs(found, resources,
                                                           unseen_sources(resources, answered_by({}, "o", "p")))}
    assert "--stack-outputs acme/infra/dev=FILE" in out["on-deployment"]
    assert "--stack-outputs acme/infra/dev=FILE" in out["on-stack"]  # a stack policy may have read it
    assert out["on-cluster"] == cant  # reads nothing from the other stack
