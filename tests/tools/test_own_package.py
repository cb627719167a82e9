"""Issue 52: a program that uses this repository's component package is judged like the repository's own stack.

The program (fixtures/own_package_program) uses the five components through the Python SDK `pulumi package add`
generates (tests/provider/languages/python_sdk.py, from the schema the plugin serves), which registers each with
`remote=True`. The gate builds them with the package's own plugin through Construct, as the engine does
(tools/engine/mocks/own_package.py): the children are registered under the component, the pack judges them, and no
component of ours is left unjudged. Before, each component was "unjudged" and a 4-way tensor-parallel service on a
1-GPU instance passed offline.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pulumi.runtime.proto import alias_pb2, resource_pb2

from tests.conftest import RunPreview
from tests.provider.languages.python_sdk import write_sdk
from tests.result_view import entries
from tools.engine.coverage.subjects import policies_reading
from tools.engine.coverage.unjudged import unjudged_components
from tools.engine.mocks.monitor import RecordingMocks, RecordingMonitor
from tools.engine.mocks.own_package import HOLDS, NOT_BUILT, OwnPackage, construct_request, is_own
from tools.engine.records import UNKNOWN, RecordedResource
from tools.engine.unseen import answered_by, unseen_sources

REPO = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "fixtures" / "own_package_program"
TODAY = ("--today", "2026-11-30")
OURS = ("SystemNodeGroup", "GpuManagedNodeGroup", "KarpenterGpuPool", "GpuOperatorRelease", "InferenceService")


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture program with its generated SDK beside it, as `pulumi package add` leaves a project."""
    from provider.host import schema  # noqa: PLC0415 - the plugin's schema, built once here

    folder = tmp_path_factory.mktemp("own_package") / "program"
    shutil.copytree(FIXTURE, folder)
    write_sdk(schema(), folder)
    return folder


def _run(run_preview: RunPreview, program: Path, stack: str, phase: str = "preview") -> tuple[Any, dict[str, Any]]:
    run = run_preview("--program", str(program), "--stack", stack, "--phase", phase, *TODAY, "--json")
    return run, (dict(run.json()) if run.returncode in (0, 1) else {})


def _mandatory(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for v in entries(doc):
        if v["enforcement"] == "mandatory":
            found.setdefault(v["policy"], []).append(v)
    return found


def _by_urn(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["urn"]: r for r in doc["resources"]}


def _component_of(urn: str, resources: dict[str, dict[str, Any]]) -> str:
    """The package component a resource sits under (its topmost `gpu-platform:index:` ancestor), or ""."""
    found = ""
    while urn in resources:
        if is_own(resources[urn]["type"]):
            found = urn
        urn = resources[urn]["parent"] or ""
    return found


@pytest.mark.parametrize("phase", ["preview", "update", "up", "analyze"])
def test_a_compliant_program_passes_with_none_of_our_components_unjudged(run_preview: RunPreview, program: Path,
                                                                         phase: str) -> None:
    run, doc = _run(run_preview, program, "compliant", phase)
    assert run.returncode == 0, run.explain()
    assert doc["unjudged"] == [] and _mandatory(doc) == {}
    resources = _by_urn(doc)
    components = {r["type"].rsplit(":", 1)[-1]: urn for urn, r in resources.items() if is_own(r["type"])}
    assert sorted(components) == sorted(OURS)
    # What each component registers is recorded under it, and the pack read it: the GPU pools and the service.
    under = {name: {r["type"] for u, r in resources.items() if _component_of(u, resources) == urn and u != urn}
             for name, urn in components.items()}
    assert {"aws:eks/nodeGroup:NodeGroup", "aws:ec2/launchTemplate:LaunchTemplate"} <= under["GpuManagedNodeGroup"]
    assert {"kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"} <= under[
        "KarpenterGpuPool"]
    assert "kubernetes:apps/v1:Deployment" in under["InferenceService"]


def test_children_have_the_urns_and_parents_the_engine_records(run_preview: RunPreview, program: Path) -> None:
    """The component is registered once, by the plugin, under the program's parent (the stack); the in-program
    component under it, and its resources under that, their types qualified by the whole parent chain."""
    _, doc = _run(run_preview, program, "compliant")
    resources = _by_urn(doc)
    stack = next(u for u, r in resources.items() if r["type"] == "pulumi:pulumi:Stack")
    service = "urn:pulumi:compliant::ownpkg::gpu-platform:index:InferenceService::vllm-own"
    assert resources[service]["parent"] == stack
    inner = ("urn:pulumi:compliant::ownpkg::gpu-platform:index:InferenceService$gpu-platform:inference:"
             "InferenceService::vllm-own")
    assert resources[inner]["parent"] == service
    deployment = ("urn:pulumi:compliant::ownpkg::gpu-platform:index:InferenceService$gpu-platform:inference:"
                  "InferenceService$kubernetes:apps/v1:Deployment::vllm-own-deployment")
    assert resources[deployment]["parent"] == inner
    assert [u for u in resources if u.endswith("::vllm-own") and "index:InferenceService::" in u] == [service]


def test_a_4_way_tensor_parallel_service_on_a_1_gpu_group_is_refused_as_the_plugin_refuses_it(
        run_preview: RunPreview, program: Path) -> None:
    run, _ = _run(run_preview, program, "tp4")
    assert run.returncode == 2, run.explain()
    [line] = [ln for ln in run.stderr.splitlines() if ln.startswith("error:")]
    assert line.startswith("error: gpu-platform:index:InferenceService resource 'vllm-own' has a problem: property "
                           "service.gpusPerReplica with value '4' has a problem: InferenceService \"vllm-own\": "
                           "service.gpusPerReplica = 4: --tensor-parallel-size 4 needs 4 GPUs on one node"), line
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("phase", ["preview", "up"])
def test_a_service_told_of_a_bigger_group_than_the_one_created_is_refused_by_the_pack(
        run_preview: RunPreview, program: Path, phase: str) -> None:
    """Each component's inputs pass its own checks; only the stack, which the children make, shows that the group
    the service's 4-way replica lands on is the 1-GPU g6.xlarge one."""
    run, doc = _run(run_preview, program, "tp4pack", phase)
    assert run.returncode == 1, run.explain()
    found = _mandatory(doc)
    [schedulable] = found["gpu-workload-schedulable"]
    assert schedulable["urn"].endswith("$kubernetes:apps/v1:Deployment::vllm-own-deployment")
    assert "gpu-platform:index:InferenceService" in schedulable["urn"]
    assert doc["unjudged"] == []


def test_a_driver_the_matrix_refuses_is_refused_by_the_component(run_preview: RunPreview, program: Path) -> None:
    run, _ = _run(run_preview, program, "driver")
    assert run.returncode == 2, run.explain()
    [line] = [ln for ln in run.stderr.splitlines() if ln.startswith("error:")]
    # The node group and the operator release are both given the section; whichever the program registers first is
    # refused, with the same line for the same input.
    assert re.match(r"error: gpu-platform:index:(GpuManagedNodeGroup|GpuOperatorRelease) resource '(l4|gpu-operator)' "
                    r"has a problem: property gpuOperator\.driverVersion with value '590\.48\.01' has a problem: "
                    r"(GpuManagedNodeGroup|GpuOperatorRelease) \"(l4|gpu-operator)\": gpuOperator\.driverVersion = "
                    r"\"590\.48\.01\": GPU Operator v26\.7\.0 does not support driver branch R590 \(driver "
                    r"590\.48\.01\) on ubuntu-24\.04", line), line


def test_an_operator_release_driver_that_lands_on_a_group_it_was_not_told_of_is_refused_by_the_pack(
        run_preview: RunPreview, program: Path) -> None:
    run, doc = _run(run_preview, program, "driverpack")
    assert run.returncode == 1, run.explain()
    found = _mandatory(doc)
    assert "gpu-driver-branch-supported" in found, sorted(found)
    assert all("GpuOperatorRelease" in v["urn"] for v in found["gpu-driver-branch-supported"])
    assert "590" in found["gpu-driver-branch-supported"][0]["message"] or any(
        "590" in v["message"] for v in found.get("gpu-driver-branch-supported-resource", []))


def test_a_third_party_component_still_counts_unjudged(run_preview: RunPreview, program: Path) -> None:
    run, doc = _run(run_preview, program, "thirdparty")
    assert run.returncode == 0, run.explain()
    assert [u["type"] for u in doc["unjudged"]] == ["eksext:index:AttachedNodeGroup"]
    text = run_preview("--program", str(program), "--stack", "thirdparty", *TODAY).stdout
    assert "verdict: PASS offline; 1 component unjudged" in text


def test_inputs_unknown_in_a_preview_stay_unknown_in_the_children(run_preview: RunPreview, program: Path) -> None:
    """The cluster endpoint comes from the program's cluster: unknown in a first preview, known in `up`. The node
    group's launch template, which bootstraps against it, holds it unknown, never a made-up value."""
    template = "gpu-platform:components:GpuManagedNodeGroup$aws:ec2/launchTemplate:LaunchTemplate::l4-launch-template"
    for phase, known in (("preview", False), ("up", True)):
        _, doc = _run(run_preview, program, "compliant", phase)
        [res] = [r for u, r in _by_urn(doc).items() if u.endswith(template)]
        assert (res["inputs"]["userData"] != UNKNOWN) is known, phase


# The program run alone, as the gate runs it, printing the stack outputs it exported (what it read from the components).
_OUTPUTS = """
import json, sys
from pathlib import Path
from tools.preview.command import run_program
from tools.preview.stack_files import load_project, load_stack_config
project = load_project(Path(sys.argv[1]))
config = load_stack_config(project.directory / f"Pulumi.{sys.argv[2]}.yaml", project.name, project.directory)
print(json.dumps(run_program(project, sys.argv[2], config, sys.argv[3]).stack_outputs))
"""


@pytest.mark.parametrize("phase", ["preview", "up"])
def test_outputs_the_program_reads_come_back_as_the_provider_returns_them(program: Path, phase: str) -> None:
    """ConstructResponse.state is the component's outputs (component.py lines 100-101); the engine hands it to the
    program as the registration's answer. In a first preview what the provider computes from unknowns is unknown."""
    proc = subprocess.run([sys.executable, "-c", _OUTPUTS, str(program), "compliant", phase], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outputs = json.loads(proc.stdout.strip().splitlines()[-1])
    assert outputs["endpoint"] == "http://vllm-own.inference.svc.cluster.local:8000"
    assert outputs["nodePools"] == ["gpu-spot"]
    assert outputs["nodeGroupName"] == "l4"  # the group's name is its input: known in every phase
    if phase == "up":
        assert str(outputs["launchTemplateId"]).startswith("lt-")
    else:  # EC2 assigns the launch template's id at create: unknown in a first preview, never made up
        assert outputs.get("launchTemplateId") in (None, UNKNOWN)


# --- the hook itself: the request as the engine's monitor receives it ------------------------------------------------


def test_the_construct_request_is_the_registration_as_the_engine_hands_it_on() -> None:
    """provider_plugin.go lines 2146-2187: inputs, parent, dependencies, property dependencies, providers and options
    go to Construct as the program sent them, with the deployment's project, stack, config and dry run."""
    from tools.engine.mocks.own_package import ConstructInfo  # noqa: PLC0415

    request = resource_pb2.RegisterResourceRequest(
        type="gpu-platform:index:KarpenterGpuPool", name="pool", parent="urn:pulumi:s::p::pulumi:pulumi:Stack::p-s",
        remote=True, protect=True, dependencies=["urn:a"], providers={"kubernetes": "urn:k::id"},
        ignoreChanges=["pool"], retainOnDelete=True, version="0.1.0",
        propertyDependencies={"kubeconfig": resource_pb2.RegisterResourceRequest.PropertyDependencies(urns=["urn:c"])},
        aliases=[alias_pb2.Alias(urn="urn:old")])
    request.object.update({"kubeconfig": UNKNOWN, "pool": {"name": "gpu"}})
    info = ConstructInfo(project="p", stack="s", organization="o", config={"aws:region": "us-west-2"},
                         secret_keys=("p:token",), dry_run=True)
    sent = construct_request(request, info, "127.0.0.1:1")
    assert (sent.type, sent.name, sent.parent) == (request.type, "pool", request.parent)
    assert dict(sent.inputs) == dict(request.object) and sent.inputs["kubeconfig"] == UNKNOWN
    assert list(sent.dependencies) == ["urn:a"] and list(sent.inputDependencies["kubeconfig"].urns) == ["urn:c"]
    assert dict(sent.providers) == {"kubernetes": "urn:k::id"} and sent.protect and sent.retainOnDelete
    assert list(sent.ignoreChanges) == ["pool"] and [a.urn for a in sent.aliases] == ["urn:old"]
    assert (sent.project, sent.stack, sent.organization, sent.dryRun) == ("p", "s", "o", True)
    assert dict(sent.config) == {"aws:region": "us-west-2"} and list(sent.configSecretKeys) == ["p:token"]
    assert sent.monitorEndpoint == "127.0.0.1:1"


def test_another_version_of_the_package_is_not_built_and_counts_unjudged() -> None:
    own = OwnPackage(monitor=RecordingMonitor(RecordingMocks()))
    try:
        request = resource_pb2.RegisterResourceRequest(type="gpu-platform:index:KarpenterGpuPool", name="p",
                                                       remote=True, version="9.9.9")
        why = own.not_built(request)
        assert why is not None and "gpu-platform 9.9.9" in why and f"gpu-platform {own.plugin_version}" in why
        assert own.not_built(resource_pb2.RegisterResourceRequest(version=own.plugin_version)) is None
        assert own.not_built(resource_pb2.RegisterResourceRequest(version="")) is None
    finally:
        own.close()
    urn = "urn:pulumi:s::p::gpu-platform:index:KarpenterGpuPool::p"
    record = RecordedResource(urn=urn, type="gpu-platform:index:KarpenterGpuPool", name="p", parent=None,
                              custom=False, inputs={}, properties=None, remote=True)
    [entry] = unjudged_components(unseen_sources([record], answered_by({}, "organization", "p")))
    assert entry.why == NOT_BUILT
    assert entry.policies == policies_reading(HOLDS["gpu-platform:index:KarpenterGpuPool"])
    assert "karpenter-gpu-limits" in entry.policies and "serving-model-fits" not in entry.policies


def test_what_each_component_registers_is_within_what_coverage_says_it_holds(run_preview: RunPreview,
                                                                             program: Path) -> None:
    _, doc = _run(run_preview, program, "compliant", "up")
    resources = _by_urn(doc)
    for urn, res in resources.items():
        top = _component_of(urn, resources)
        if not top or top == urn or not res.get("custom", True) or res["type"].startswith("gpu-platform:"):
            continue
        holds = HOLDS[resources[top]["type"]]
        assert any(res["type"].startswith(prefix) for prefix in holds), (res["type"], resources[top]["type"])
