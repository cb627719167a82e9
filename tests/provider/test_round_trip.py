"""The package through the provider protocol: GetSchema, then Construct of a KarpenterGpuPool and an
InferenceService from the dev stack's own sections, under the recording mock monitor. The children the plugin
registers are the ones the program registers for the same sections (type, name, inputs), the policy pack
gives them the same verdicts, and a bad input is refused with the stack file's one line, adapted to the input.
"""

from __future__ import annotations

import base64
import json
import shlex
from collections.abc import Iterator, Mapping
from datetime import timedelta
from typing import Any

import grpc
import pytest
from pulumi.runtime import rpc
from pulumi.runtime.proto import errors_pb2, provider_pb2, status_pb2
from pulumi.runtime.sync_await import _sync_await

from components.config import ConfigError, load_stack_config
from policies.gpu_guard.base import all_policies
from policies.gpu_guard.matrix import load_matrix
from provider import hosted
from provider.args import renamed_aliases
from tests.components.harness import TODAY, Run, _start, run, stack_values
from tests.policies.harness import run_policy
from tests.provider.engine import MonitorServer, ProviderProcess
from tools.engine.mocks.monitor import RecordingMonitor
from tools.engine.records import RecordedResource

STACK_URN = "urn:pulumi:dev::gpu-platform::pulumi:pulumi:Stack::gpu-platform-dev"
assert hosted.COMPONENTS  # builds every Args type, so RENAMED covers the nested models
RENAMED = renamed_aliases()
KARPENTER_URN = "urn:pulumi:dev::gpu-platform::gpu-platform:components:KarpenterController::karpenter"


def schema_keys(value: Any) -> Any:
    """Stack-file keys as a consumer's SDK sends them (the schema's spelling: diskSizeGiB -> diskSizeGib)."""
    if isinstance(value, dict):
        return {RENAMED.get(k, k): schema_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [schema_keys(v) for v in value]
    return value


@pytest.fixture(scope="module")
def program() -> Run:
    return run(stack_values("dev"))


@pytest.fixture(scope="module")
def values() -> dict[str, Any]:
    return stack_values("dev")


@pytest.fixture
def plugin(program: Run) -> Iterator[tuple[ProviderProcess, RecordingMonitor]]:
    _, monitor = _start(stack_values("dev"), "dev", "us-west-2")
    server = MonitorServer(monitor)
    process = ProviderProcess(server.address, today=TODAY.isoformat())
    try:
        yield process, monitor
    finally:
        process.stop()
        server.stop()


def construct(process: ProviderProcess, monitor_address: str, type_: str, name: str, inputs: Mapping[str, Any],
              dependencies: list[str]) -> Any:
    request = provider_pb2.ConstructRequest(
        project="gpu-platform", stack="dev", dryRun=True, parallel=4, monitorEndpoint=monitor_address,
        type=type_, name=name, parent=STACK_URN, dependencies=dependencies, config={"aws:region": "us-west-2"},
        inputs=_sync_await(rpc.serialize_properties(dict(inputs), {})))
    return process.stub.Construct(request)


def descendants(resources: list[RecordedResource], root: RecordedResource) -> list[RecordedResource]:
    below = {root.urn}
    found = []
    for res in resources:
        if res.parent in below:
            below.add(res.urn)
            found.append(res)
    return found


def shape(resources: list[RecordedResource]) -> list[tuple[str, str, str]]:
    """(type, name, inputs) of each resource; an input that is a sibling's cloud-assigned id names the sibling
    (the mocks derive ids from URNs, and the package's children sit one component deeper)."""
    ids = {r.id: f"<id of {r.name}>" for r in resources if r.id}

    def named(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: named(v) for k, v in value.items()}
        if isinstance(value, list):
            return [named(v) for v in value]
        return ids.get(value, value) if isinstance(value, str) else value

    return sorted((r.type, r.name, json.dumps(named(r.inputs), sort_keys=True)) for r in resources)


def verdicts(resources: list[RecordedResource]) -> dict[str, list[str]]:
    """Every policy's messages over the resources, as the pack judges a stack (custom resources, protect)."""
    fixture = [{"type": r.type, "name": r.name, "props": r.inputs, "protect": r.protect}
               for r in resources if r.custom]
    out: dict[str, list[str]] = {}
    for policy in all_policies():
        outcome = run_policy(policy, fixture, None)
        if outcome.messages:
            out[policy.name] = sorted(outcome.messages)
    return out


def _component(program: Run, type_: str, name: str) -> RecordedResource:
    return next(r for r in program.resources if r.type == type_ and r.name == name)


def pool_inputs(values: Mapping[str, Any], program: Run) -> dict[str, Any]:
    node_class = next(r for r in program.resources if r.type == "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    return dict(schema_keys({
        "cluster": values["cluster"], "karpenterVersion": values["karpenter"]["version"],
        "pool": values["karpenter"]["pools"][0], "gpuOperator": values["gpuOperator"],
        "access": {"endpoint": "https://example.eks.amazonaws.com", "certificateAuthorityData": "Y2E=",
                   "serviceIpv4Cidr": "172.20.0.0/16", "privateSubnetIds": ["subnet-1", "subnet-2"],
                   "clusterSecurityGroupId": "sg-1"},
        "instanceProfileName": node_class.inputs["spec"]["instanceProfile"], "kubeconfig": "{}",
    }))


def service_inputs(values: Mapping[str, Any], program: Run) -> dict[str, Any]:
    scaled = next(r for r in program.resources if r.type == "kubernetes:keda.sh/v1alpha1:ScaledObject")
    return dict(schema_keys({
        "cluster": values["cluster"], "service": values["inferenceServices"][0], "gpuOperator": values["gpuOperator"],
        "karpenterVersion": values["karpenter"]["version"], "pools": values["karpenter"]["pools"],
        "nodeGroups": values["gpuNodeGroups"], "zones": ["us-west-2a", "us-west-2b"],
        "prometheusUrl": next(t for t in scaled.inputs["spec"]["triggers"]
                              if t["type"] == "prometheus")["metadata"]["serverAddress"], "kubeconfig": "{}",
    }))


def _one(program: Run, type_: str, name: str) -> RecordedResource:
    return next(r for r in program.resources if r.type == type_ and r.name == name)


def system_inputs(values: Mapping[str, Any], program: Run) -> dict[str, Any]:
    group = _one(program, "aws:eks/nodeGroup:NodeGroup", "gpu-dev-system-node-group")
    return dict(schema_keys({
        "cluster": values["cluster"], "systemNodeGroup": values.get("systemNodeGroup", {}),
        "nodeRoleArn": group.inputs["nodeRoleArn"], "subnetIds": group.inputs["subnetIds"],
    }))


def bootstrap_flags(program: Run, template: str) -> dict[str, str]:
    """The flags of the bootstrap.sh call in a launch template's user data (what the cluster handed the pool)."""
    user_data = base64.b64decode(_one(program, "aws:ec2/launchTemplate:LaunchTemplate", template).inputs["userData"])
    words = shlex.split(user_data.decode().replace("\\\n", " "))
    return {words[i]: words[i + 1] for i in range(len(words) - 1) if words[i].startswith("--")}


def node_group_inputs(values: Mapping[str, Any], program: Run) -> dict[str, Any]:
    group = _one(program, "aws:eks/nodeGroup:NodeGroup", "gpu-dev-l4-spot-node-group")
    flags = bootstrap_flags(program, "gpu-dev-l4-spot-launch-template")
    return dict(schema_keys({
        "cluster": values["cluster"], "nodeGroup": values["gpuNodeGroups"][0], "gpuOperator": values["gpuOperator"],
        "access": {"endpoint": flags["--apiserver-endpoint"], "certificateAuthorityData": flags["--b64-cluster-ca"],
                   "serviceIpv4Cidr": "172.20.0.0/16", "privateSubnetIds": group.inputs["subnetIds"],
                   "clusterSecurityGroupId": "sg-unused", "nodeRoleArn": group.inputs["nodeRoleArn"]},
    }))


def operator_inputs(values: Mapping[str, Any], program: Run) -> dict[str, Any]:
    return dict(schema_keys({
        "cluster": values["cluster"], "gpuOperator": values["gpuOperator"], "nodeGroups": values["gpuNodeGroups"],
        "karpenterVersion": values["karpenter"]["version"], "pools": values["karpenter"]["pools"], "kubeconfig": "{}",
    }))


SYSTEM_URN = ("urn:pulumi:dev::gpu-platform::gpu-platform:components:Cluster$gpu-platform:components:SystemNodeGroup"
              "::gpu-dev-system")


def test_get_schema_answers_the_inferred_schema(plugin) -> None:
    process, _ = plugin
    schema = json.loads(process.schema())
    assert sorted(schema["resources"]) == sorted(
        f"gpu-platform:index:{n}" for n in ("SystemNodeGroup", "GpuManagedNodeGroup", "KarpenterGpuPool",
                                            "GpuOperatorRelease", "InferenceService"))


@pytest.mark.parametrize(("kind", "name", "inner", "inputs", "dependencies"), [
    ("KarpenterGpuPool", "gpu-dev-gpu-spot", "gpu-platform:components:KarpenterGpuPool", pool_inputs,
     [KARPENTER_URN]),
    ("InferenceService", "triton-dev", "gpu-platform:inference:InferenceService", service_inputs, []),
    ("SystemNodeGroup", "gpu-dev-system", "gpu-platform:components:SystemNodeGroup", system_inputs, []),
    ("GpuManagedNodeGroup", "gpu-dev-l4-spot", "gpu-platform:components:GpuManagedNodeGroup", node_group_inputs,
     [SYSTEM_URN]),
    ("GpuOperatorRelease", "gpu-operator", "gpu-platform:components:GpuOperatorRelease", operator_inputs, []),
])
def test_construct_registers_the_children_the_program_registers(plugin, program, values, kind, name, inner, inputs,
                                                                dependencies) -> None:
    process, monitor = plugin
    address = plugin[0].process.args[-1]
    response = construct(process, address, f"gpu-platform:index:{kind}", name, inputs(values, program), dependencies)
    assert response.urn == f"urn:pulumi:dev::gpu-platform::gpu-platform:index:{kind}::{name}"
    registered = monitor.resources_in_order()
    wrapper_inner = next(r for r in registered if r.type == inner and r.name == name)
    constructed = descendants(registered, wrapper_inner)
    in_program = descendants(program.resources, _component(program, inner, name))
    assert constructed, "Construct registered no children"
    assert shape(constructed) == shape(in_program)
    # The dev stack as the program builds it, and with this component's children as Construct registered them:
    # the pack gives the same verdicts (protect, retainOnDelete and every input travelled through Construct).
    rest = [r for r in program.resources if r not in in_program]
    assert verdicts(rest + constructed) == verdicts(program.resources)
    assert [(r.protect, r.retain_on_delete, r.ignore_changes) for r in sorted(constructed, key=lambda r: r.name)] == [
        (r.protect, r.retain_on_delete, r.ignore_changes) for r in sorted(in_program, key=lambda r: r.name)]


BAD_POOLS = [
    ({"maxGpus": 0}, "maxGpus"),  # a model bound
    ({"os": "bottlerockt"}, "os"),  # a choice, with the nearest one
    ({"instanceTypes": ["g6.xlarge", "p5.48xlarge"], "maxGpus": 4}, "maxGpus"),  # the matrix: 8 GPUs > limit 4
]


@pytest.mark.parametrize(("change", "key"), BAD_POOLS)
def test_a_bad_input_gets_the_stack_files_line_adapted_to_the_input(plugin, program, values, change, key) -> None:
    process, _ = plugin
    stack = {**values, "karpenter": {**values["karpenter"],
                                     "pools": [{**values["karpenter"]["pools"][0], **change}]}}
    with pytest.raises(ConfigError) as from_file:
        load_stack_config(stack, stack_file="Pulumi.dev.yaml", today=TODAY)
    file_line = str(from_file.value)
    assert file_line.startswith(f"Pulumi.dev.yaml: karpenter.pools[0].{key} = ") and "\n" not in file_line
    bad = pool_inputs(values, program)
    bad["pool"] = {**bad["pool"], **change}
    with pytest.raises(grpc.RpcError) as caught:
        construct(process, process.process.args[-1], "gpu-platform:index:KarpenterGpuPool", "gpu-dev-gpu-spot", bad,
                  [KARPENTER_URN])
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    errors = input_property_errors(caught.value)
    assert errors == [(f"pool.{key}", file_line.replace(
        "Pulumi.dev.yaml: karpenter.pools[0].", 'KarpenterGpuPool "gpu-dev-gpu-spot": pool.'))]


def test_a_missing_dependency_is_refused_before_anything_is_registered(plugin, program, values) -> None:
    process, monitor = plugin
    before = len(monitor.resources_in_order())
    with pytest.raises(grpc.RpcError) as caught:
        construct(process, process.process.args[-1], "gpu-platform:index:KarpenterGpuPool", "gpu-dev-gpu-spot",
                  pool_inputs(values, program), [])
    assert input_property_errors(caught.value) == [("dependsOn", (
        'KarpenterGpuPool "gpu-dev-gpu-spot": dependsOn = []: Karpenter\'s CRDs and controller release must exist '
        "first; fix: set dependsOn to Karpenter's CRDs and controller release"))]
    assert len(monitor.resources_in_order()) == before


def test_a_node_group_without_its_node_role_is_refused(plugin, program, values) -> None:
    process, _ = plugin
    inputs = node_group_inputs(values, program)
    del inputs["access"]["nodeRoleArn"]
    with pytest.raises(grpc.RpcError) as caught:
        construct(process, process.process.args[-1], "gpu-platform:index:GpuManagedNodeGroup", "gpu-dev-l4-spot",
                  inputs, [SYSTEM_URN])
    [(path, reason)] = input_property_errors(caught.value)
    assert path == "access.nodeRoleArn"
    assert reason.startswith('GpuManagedNodeGroup "gpu-dev-l4-spot": access.nodeRoleArn = (missing): ')


def input_property_errors(error: grpc.RpcError) -> list[tuple[str, str]]:
    """The (property path, reason) pairs of the InputPropertiesError detail, what the CLI prints per property
    (pulumi v3.259.0 pkg/resource/deploy/source_eval.go:2190-2212)."""
    metadata = dict(error.trailing_metadata() or ())
    status = status_pb2.Status.FromString(metadata["grpc-status-details-bin"])
    found: list[tuple[str, str]] = []
    for detail in status.details:
        errors = errors_pb2.InputPropertiesError()
        assert detail.Unpack(errors)
        found += [(e.property_path, e.reason) for e in errors.errors]
    return found


def test_the_plugin_judges_lifecycles_on_the_day_it_is_given(program, values) -> None:
    """The day reaches the plugin as the `pulumi` command's environment does (GPU_PLATFORM_TODAY): the day after
    EKS 1.35 leaves standard support, the same inputs that construct above are refused with the stack file's line."""
    end = next(r.end_standard for r in load_matrix().data.eks_versions
               if r.version == values["cluster"]["kubernetesVersion"])
    assert end is not None
    _, monitor = _start(stack_values("dev"), "dev", "us-west-2")
    server = MonitorServer(monitor)
    process = ProviderProcess(server.address, today=(end + timedelta(days=1)).isoformat())
    try:
        with pytest.raises(grpc.RpcError) as caught:
            construct(process, server.address, "gpu-platform:index:SystemNodeGroup", "gpu-dev-system",
                      system_inputs(values, program), [])
    finally:
        process.stop()
        server.stop()
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    [(path, reason)] = input_property_errors(caught.value)
    assert path == "cluster.kubernetesVersion"
    assert f"left standard support on {end.isoformat()}" in reason, reason
