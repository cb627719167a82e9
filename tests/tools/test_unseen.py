"""What the offline gate cannot see makes the verdicts that could read it pending, never "none"
(tools/engine/unseen.py), and other stacks' outputs are given with `--stack-outputs` (split stacks)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.struct_pb2 import Struct

from policies.gpu_guard.dra import CLAIM_TYPES
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


def _cant_run(policy: str, urn: str, path: str) -> Violation:
    """pulumi-policy's advisory for a policy that read an unknown value (pulumi_policy/policy.py lines 1012-1021)."""
    return Violation(policy, "advisory", urn, f"can't run policy '{policy}' from policy pack 'gpu-platform@v0.0.1' "
                                              f"during preview: string value at .{path} can't be known during preview")


def test_what_reads_an_unanswered_stack_reference_is_pending_and_an_answer_lets_it_be_judged() -> None:
    """Issue 55: a finding the policy made from the Deployment's own known inputs keeps its level, as in the real
    preview; a policy that read a value from the other stack could not run: that is pending, naming the flag."""
    ref = _res("urn:s::pulumi:pulumi:StackReference::acme/infra/dev", "pulumi:pulumi:StackReference",
               inputs={"name": "acme/infra/dev"})
    provider = _res("urn:s::pulumi:providers:kubernetes::infra", "pulumi:providers:kubernetes", deps=(ref.urn,))
    deployment = replace(_res("urn:s::kubernetes:apps/v1:Deployment::triton", "kubernetes:apps/v1:Deployment",
                              provider=f"{provider.urn}::id-1", deps=(ref.urn,)),
                         property_dependencies={"spec": (ref.urn,)})
    found = Violation("gpu-workload-cuda-declared", "mandatory", deployment.urn, "d\nCUDA unknown")
    cant = _cant_run("gpu-workload-schedulable-resource", deployment.urn, "spec.template.spec.nodeSelector")
    out = _judge([ref, provider, deployment], [found, cant, NONE])
    assert out[f"{deployment.urn} gpu-workload-cuda-declared"] == found  # its known inputs: judged
    pending = out[f"{deployment.urn} gpu-workload-schedulable-resource-pending"]
    assert pending.enforcement == "advisory" and "--stack-outputs acme/infra/dev=FILE" in pending.message
    assert pending.message.endswith(cant.message)  # the pack's own words, the value it read
    assert out[f"{NONE.urn} {NONE.policy}"] == NONE  # the other stack is no more seen by the real engine
    assert _judge([ref, provider, deployment], [found, cant], answered={"acme/infra/dev": {}}) == {
        f"{deployment.urn} gpu-workload-cuda-declared": found,
        f"{deployment.urn} gpu-workload-schedulable-resource": cant}
    # Names resolve as the engine resolves them, never by a suffix: `infra/dev` is stack `dev` of organization `infra`
    # in this project, not acme's `infra` project (tools/engine/mocks/stack_refs.py).
    for other in ("infra/dev", "dev"):
        assert f"{deployment.urn} gpu-workload-schedulable-resource-pending" in _judge(
            [ref, provider, deployment], [cant], answered={other: {}})


VPC = _res("urn:s::awsx:ec2:Vpc::vpc", "awsx:ec2:Vpc", remote=True)
GROUP = replace(_res("urn:s::aws:eks/nodeGroup:NodeGroup::gpu", "aws:eks/nodeGroup:NodeGroup", deps=(VPC.urn,),
                     inputs={"subnetIds": ["04da6b54-80e4-46f7-96ec-b56ff0331ba9"], "version": UNKNOWN}),
                property_dependencies={"subnetIds": (VPC.urn,)})
STACK_ROOT = _res("urn:s::pulumi:pulumi:Stack::s", "pulumi:pulumi:Stack")


def test_a_resource_policy_finding_on_known_inputs_keeps_its_level_whatever_they_come_from() -> None:
    """Issue 55: an awsx VPC's subnets feed an untainted GPU node group. The taint is a known input: the real preview
    blocks (pulumi_policy/proxy.py raises only on reading an unknown), and so does the gate."""
    assert _judge([VPC, GROUP], [TAINT]) == {f"{TAINT.urn} gpu-nodes-tainted": TAINT}


def test_a_stack_policy_finding_on_what_it_saw_keeps_its_level_unless_a_component_may_hold_its_subject() -> None:
    """preinstalled-driver-exclusive on a pool whose subnets come from an awsx VPC: the VPC registers no pool,
    release or workload, so the conflict the pack saw stands; a NodeGroupV2 may hold a pool: pending."""
    stack = [*STACK, "preinstalled-driver-exclusive"]
    both = Violation("preinstalled-driver-exclusive", "mandatory", GROUP.urn, "d\ntwo drivers")
    unseen = unseen_sources([VPC, GROUP], answered_by({}, "o", "p"))
    assert pending_offline([both], stack, [VPC, GROUP], unseen) == (both,)
    v2 = _res("urn:s::eks:index:NodeGroupV2::system", "eks:index:NodeGroupV2", remote=True)
    more = unseen_sources([VPC, GROUP, v2], answered_by({}, "o", "p"))
    [out] = pending_offline([both], stack, [VPC, GROUP, v2], more)
    assert out.policy == "preinstalled-driver-exclusive-pending" and "'system'" in out.message


def test_a_policy_that_read_a_value_from_an_unseen_component_is_pending_naming_it() -> None:
    """The pack's "can't run" for the node group's `subnetIds` (an awsx output): pending, naming the VPC; for its
    `version`, which no other resource gives (the phase's own unknown), it stays the pack's advisory."""
    subnets = _cant_run("some-resource-policy", GROUP.urn, "subnetIds.0")
    version = _cant_run("some-resource-policy", GROUP.urn, "version")
    out = _judge([VPC, GROUP], [subnets, version])
    pending = out[f"{GROUP.urn} some-resource-policy-pending"]
    assert pending.enforcement == "advisory" and "awsx:ec2:Vpc 'vpc'" in pending.message
    assert out[f"{GROUP.urn} some-resource-policy"] == version


def test_a_stack_policy_that_read_a_value_from_an_unseen_component_is_pending_naming_it() -> None:
    """A stack policy's "can't run" has no URN (the engine puts it on the stack): the resources whose value at that
    path is unknown tell where it comes from."""
    subnets = _cant_run("system-node-group-present", STACK_ROOT.urn, "subnetIds")
    version = _cant_run("kubelet-version-skew", STACK_ROOT.urn, "version")
    out = _judge([STACK_ROOT, VPC, GROUP], [subnets, version])
    assert "awsx:ec2:Vpc 'vpc'" in out[f"{STACK_ROOT.urn} system-node-group-present-pending"].message
    assert out[f"{STACK_ROOT.urn} kubelet-version-skew"] == version


def _pack_type_tokens() -> set[str]:
    text = "\n".join(p.read_text() for p in (REPO / "policies" / "gpu_guard").rglob("*.py"))
    return set(re.findall(r'"((?:aws|kubernetes):[A-Za-z0-9./_-]+:[A-Za-z]+)"', text))


def test_every_type_the_pack_names_is_a_subject_the_unseen_check_knows() -> None:
    """The class check: a type a policy reads that SUBJECT_TYPES lacks would let a hidden one block."""
    assert _pack_type_tokens() - SUBJECT_TYPES == set()
    assert set(CLAIM_TYPES) - SUBJECT_TYPES == set()  # built, not written out: DRA's claims (dra.py)


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


UNSEEN_READS = FIXTURES / "unseen_reads_program"


@pytest.mark.parametrize("phase", ["preview", "update", "up"])
def test_a_driver_conflict_beside_an_awsx_vpc_blocks_in_every_phase(run_preview: RunPreview, phase: str) -> None:
    """Issue 55's preinstalled-driver twin: the GPU Operator's driver on an AL2023 NVIDIA pool whose subnets come
    from an awsx VPC. The pool and the release are known: the real preview refuses it, and so does the gate."""
    run = run_preview("--program", str(UNSEEN_READS), "--stack", "driver", "--phase", phase, *TODAY, "--json")
    assert run.returncode == 1, run.explain()
    [found] = [v for v in entries(run.json()) if v["enforcement"] == "mandatory"]
    assert found["policy"] == "preinstalled-driver-exclusive" and found["urn"].endswith("::gpu")
    assert "GPU Operator release 'gpu-operator' would also deploy its own there" in found["message"]


@pytest.mark.parametrize("phase", ["preview", "update", "up"])
def test_a_policy_that_reads_an_unseen_cluster_s_output_is_pending_in_every_phase(run_preview: RunPreview,
                                                                                  phase: str) -> None:
    """A GPU node group takes its version from a pulumi-eks Cluster the gate does not emulate: unknown in every phase
    offline (tools/engine/mocks/eks.py), so a policy that reads it cannot run, and says so as `-pending`, naming the
    Cluster; nothing blocks on a value the gate never had."""
    run = run_preview("--program", str(UNSEEN_READS), "--stack", "unknown", "--phase", phase, *TODAY, "--json")
    assert run.returncode == 0, run.explain()
    doc = run.json()
    assert [v for v in entries(doc) if v["enforcement"] == "mandatory"] == []
    read = [v for v in entries(doc) if "it read a value that comes from what the offline gate did not see"
            in v["message"]]
    assert read and all(v["enforcement"] == "advisory" and v["policy"].endswith("-pending") for v in read)
    assert all("eks:index:Cluster 'gpu'" in v["message"] and "string value at .version" in v["message"]
               for v in read)
    assert "awsx:ec2:Vpc" not in read[0]["message"]  # the version comes from the Cluster, whatever the Cluster reads


def test_an_eks_cluster_the_gate_does_not_emulate_answers_every_output_unknown() -> None:
    """tools/engine/mocks/eks.py: what the gate does not emulate it does not know, in any phase; an emulated Cluster
    with a default node group answers that group's ASG name unknown and the rest known."""
    from tools.engine.mocks.eks import answer_eks_cluster  # noqa: PLC0415
    from tools.engine.mocks.values import MockContext, ResourceRequest  # noqa: PLC0415

    def answer(inputs: dict[str, Any]) -> dict[str, Any]:
        return answer_eks_cluster(ResourceRequest(type="eks:index:Cluster", name="gpu", urn="urn:s::gpu",
                                                  inputs=inputs, custom=False, remote=True,
                                                  ctx=MockContext("us-west-2", "123456789012", "aws", {})))

    assert set(answer({"instanceRole": "arn:aws:iam::1:role/r"}).values()) == {UNKNOWN}
    partial = answer({"skipDefaultSecurityGroups": True, "authenticationMode": "API"})
    assert partial["defaultNodeGroupAsgName"] == UNKNOWN and partial["kubeconfig"] != UNKNOWN
    assert answer({"skipDefaultNodeGroup": True, "skipDefaultSecurityGroups": True})["defaultNodeGroupAsgName"] == ""
