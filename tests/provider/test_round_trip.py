"""The package through the provider protocol: GetSchema, then Construct of a KarpenterGpuPool and an
InferenceService from the dev stack's own sections, under the recording mock monitor. The children the plugin
registers are the ones the program registers for the same sections (type, name, inputs), the policy pack
gives them the same verdicts, and a bad input is refused with the stack file's one line, adapted to the input.
"""

from __future__ import annotations

import base64
import json
import random
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
from tests.components.harness import TODAY, Run, _start, stack_values
from tests.policies.harness import run_policy
from tests.provider.engine import MonitorServer, ProviderProcess
from tools.engine.mocks.monitor import RecordingMonitor
from tools.engine.records import RecordedResource

STACK_URN = "urn:pulumi:dev::gpu-platform::pulumi:pulumi:Stack::gpu-platform-dev"
assert hosted.COMPONENTS  # builds every Args type, so RENAMED covers the nested models
RENAMED = renamed_aliases()
RELEASE = "kubernetes:helm.sh/v3:Release"


def schema_keys(value: Any) -> Any:
    """Stack-file keys as a consumer's SDK sends them (the schema's spelling: diskSizeGiB -> diskSizeGib)."""
    if isinstance(value, dict):
        return {RENAMED.get(k, k): schema_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [schema_keys(v) for v in value]
    return value


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
              dependencies: list[str], input_dependencies: Mapping[str, list[str]] | None = None, *,
              dry_run: bool = True) -> Any:
    """Construct as the engine sends it: `dependencies` is dependsOn plus every input's dependencies (the
    engine's set, in no fixed order); a resource-reference input depends on the resource it references."""
    deps = {key: list(urns) for key, urns in (input_dependencies or {}).items()}
    for key, value in inputs.items():
        if isinstance(value, dict) and value.get(rpc._special_sig_key) == rpc._special_resource_sig:
            deps.setdefault(key, []).append(value["urn"])
    request = provider_pb2.ConstructRequest(
        project="gpu-platform", stack="dev", dryRun=dry_run, parallel=4, monitorEndpoint=monitor_address,
        type=type_, name=name, parent=STACK_URN, dependencies=dependencies, config={"aws:region": "us-west-2"},
        inputs=_sync_await(rpc.serialize_properties(dict(inputs), {})),
        inputDependencies={k: provider_pb2.ConstructRequest.PropertyDependencies(urns=v) for k, v in deps.items()})
    return process.stub.Construct(request)


def output_value(value: Any, dependencies: list[str], *, secret: bool = False, known: bool = True) -> dict[str, Any]:
    """An input that is another resource's Output, as an SDK with output values sends it (pulumi/runtime/rpc.py
    `_special_output_value_sig`; deserialize_output_value reads `value` (absent: unknown), `secret`, `dependencies`)."""
    out: dict[str, Any] = {rpc._special_sig_key: rpc._special_output_value_sig, "dependencies": dependencies}
    if known:
        out["value"] = value
    if secret:
        out["secret"] = True
    return out


def reference(res: RecordedResource, monitor: RecordingMonitor | None = None, *,
              package_version: str = "") -> dict[str, Any]:
    """A resource-reference input as the engine sends one (pulumi/runtime/rpc.py `_special_resource_sig`); the
    plugin reads the resource back through the monitor (getResource), so `monitor` learns it first."""
    if monitor is not None:
        monitor.resources[res.urn] = monitor.ResourceRegistration(res.urn, res.id or "", dict(res.outputs or {}))
    return {rpc._special_sig_key: rpc._special_resource_sig, "urn": res.urn, "id": res.id or "",
            "packageVersion": package_version}


def descendants(resources: list[RecordedResource], root: RecordedResource) -> list[RecordedResource]:
    """Everything below `root` by parent links, in whatever order `resources` lists them (a child may come before
    its parent: tests/components/harness.py lists them in no registration order)."""
    children: dict[str, list[RecordedResource]] = {}
    for res in resources:
        children.setdefault(res.parent or "", []).append(res)
    found, todo = [], [root.urn]
    while todo:
        for res in children.get(todo.pop(), []):
            found.append(res)
            todo.append(res.urn)
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


def pool_inputs(values: Mapping[str, Any], program: Run, monitor: RecordingMonitor | None = None) -> dict[str, Any]:
    node_class = next(r for r in program.resources if r.type == "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    return dict(schema_keys({
        "karpenterRelease": reference(_one(program, RELEASE, "karpenter-controller"), monitor),
        "karpenterCrdRelease": reference(_one(program, RELEASE, "karpenter-crd"), monitor),
        "cluster": values["cluster"], "karpenterVersion": values["karpenter"]["version"],
        "pool": values["karpenter"]["pools"][0], "gpuOperator": values["gpuOperator"],
        "access": {"endpoint": "https://example.eks.amazonaws.com", "certificateAuthorityData": "Y2E=",
                   "serviceIpv4Cidr": "172.20.0.0/16", "privateSubnetIds": ["subnet-1", "subnet-2"],
                   "clusterSecurityGroupId": "sg-1"},
        "instanceProfileName": node_class.inputs["spec"]["instanceProfile"], "kubeconfig": "{}",
    }))


def service_inputs(values: Mapping[str, Any], program: Run, monitor: RecordingMonitor | None = None) -> dict[str, Any]:
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


def system_inputs(values: Mapping[str, Any], program: Run, monitor: RecordingMonitor | None = None) -> dict[str, Any]:
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


def node_group_inputs(values: Mapping[str, Any], program: Run,
                      monitor: RecordingMonitor | None = None) -> dict[str, Any]:
    group = _one(program, "aws:eks/nodeGroup:NodeGroup", "gpu-dev-l4-spot-node-group")
    flags = bootstrap_flags(program, "gpu-dev-l4-spot-launch-template")
    return dict(schema_keys({
        "systemNodes": reference(_one(program, "aws:eks/nodeGroup:NodeGroup", "gpu-dev-system-node-group"),
                                     monitor),
        "cluster": values["cluster"], "nodeGroup": values["gpuNodeGroups"][0], "gpuOperator": values["gpuOperator"],
        "access": {"endpoint": flags["--apiserver-endpoint"], "certificateAuthorityData": flags["--b64-cluster-ca"],
                   "serviceIpv4Cidr": "172.20.0.0/16", "privateSubnetIds": group.inputs["subnetIds"],
                   "clusterSecurityGroupId": "sg-unused", "nodeRoleArn": group.inputs["nodeRoleArn"]},
    }))


def operator_inputs(values: Mapping[str, Any], program: Run, monitor: RecordingMonitor | None = None) -> dict[str, Any]:
    return dict(schema_keys({
        "cluster": values["cluster"], "gpuOperator": values["gpuOperator"], "nodeGroups": values["gpuNodeGroups"],
        "karpenterVersion": values["karpenter"]["version"], "pools": values["karpenter"]["pools"], "kubeconfig": "{}",
    }))


CLUSTER = ("eks:index:Cluster", "gpu-dev-eks")
NODE_ROLE = ("aws:iam/role:Role", "gpu-dev-node-role")


def engine_dependencies(program: Run, inputs: Mapping[str, Any], seed: int) -> list[str]:
    """What the engine sends as `dependencies`: the references' URNs and other input dependencies (the cluster,
    the node role), in an order of no meaning (here shuffled, reproducibly)."""
    urns = {v["urn"] for v in inputs.values()
            if isinstance(v, dict) and v.get(rpc._special_sig_key) == rpc._special_resource_sig}
    urns |= {r.urn for r in program.resources if (r.type, r.name) in (CLUSTER, NODE_ROLE)}
    ordered = sorted(urns)
    random.Random(seed).shuffle(ordered)
    return ordered


def test_get_schema_answers_the_inferred_schema(plugin) -> None:
    process, _ = plugin
    schema = json.loads(process.schema())
    assert sorted(schema["resources"]) == sorted(
        f"gpu-platform:index:{n}" for n in ("SystemNodeGroup", "GpuManagedNodeGroup", "KarpenterGpuPool",
                                            "GpuOperatorRelease", "InferenceService"))


@pytest.mark.parametrize(("kind", "name", "inner", "inputs"), [
    ("KarpenterGpuPool", "gpu-dev-gpu-spot", "gpu-platform:components:KarpenterGpuPool", pool_inputs),
    ("InferenceService", "triton-dev", "gpu-platform:inference:InferenceService", service_inputs),
    ("SystemNodeGroup", "gpu-dev-system", "gpu-platform:components:SystemNodeGroup", system_inputs),
    ("GpuManagedNodeGroup", "gpu-dev-l4-spot", "gpu-platform:components:GpuManagedNodeGroup", node_group_inputs),
    ("GpuOperatorRelease", "gpu-operator", "gpu-platform:components:GpuOperatorRelease", operator_inputs),
])
def test_construct_registers_the_children_the_program_registers(plugin, program, values, kind, name, inner,
                                                                inputs) -> None:
    process, monitor = plugin
    address = plugin[0].process.args[-1]
    given = inputs(values, program, monitor)
    response = construct(process, address, f"gpu-platform:index:{kind}", name, given,
                         engine_dependencies(program, given, seed=0))
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


def _waits_for(resources: list[RecordedResource], type_: str) -> list[set[str]]:
    return [set(r.dependencies) for r in resources if r.type == type_]


@pytest.mark.parametrize("seed", range(4))
def test_shuffled_and_extra_dependencies_never_put_karpenter_objects_before_their_crds(plugin, program, values,
                                                                                       seed) -> None:
    """Dependencies in any order, with the cluster and the node role among them and as input dependencies of
    `access` and `instanceProfileName`: the EC2NodeClass and the NodePool wait for both Karpenter releases."""
    process, monitor = plugin
    given = pool_inputs(values, program, monitor)
    releases = {given["karpenterRelease"]["urn"], given["karpenterCrdRelease"]["urn"]}
    others = [r.urn for r in program.resources if (r.type, r.name) in (CLUSTER, NODE_ROLE)]
    given["access"] = {**given["access"], "endpoint": output_value(given["access"]["endpoint"], others)}
    given["instanceProfileName"] = output_value(given["instanceProfileName"], others[::-1])
    construct(process, process.process.args[-1], "gpu-platform:index:KarpenterGpuPool", "gpu-dev-gpu-spot", given,
              engine_dependencies(program, given, seed), {"access": others, "instanceProfileName": others[::-1]})
    registered = monitor.resources_in_order()
    for type_ in ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "kubernetes:karpenter.sh/v1:NodePool"):
        [waits] = _waits_for(registered, type_)
        assert releases <= waits, (type_, sorted(waits))


def test_references_from_a_newer_sdk_still_order_the_karpenter_objects(plugin, program, values) -> None:
    """A consumer's @pulumi/kubernetes newer than the plugin's: the SDK hands the reference over as the id,
    depending on the URN (pulumi/runtime/rpc.py `deserialize_resource`); the objects still wait for it."""
    process, monitor = plugin
    given = pool_inputs(values, program, monitor)
    for key, release in (("karpenterRelease", "karpenter-controller"), ("karpenterCrdRelease", "karpenter-crd")):
        given[key] = reference(_one(program, RELEASE, release), monitor, package_version="4.999.0")
    releases = {given["karpenterRelease"]["urn"], given["karpenterCrdRelease"]["urn"]}
    construct(process, process.process.args[-1], "gpu-platform:index:KarpenterGpuPool", "gpu-dev-gpu-spot", given,
              engine_dependencies(program, given, seed=5))
    [waits] = _waits_for(monitor.resources_in_order(), "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    assert releases <= waits, sorted(waits)


def test_a_gpu_node_group_joins_after_the_system_node_group_it_references(plugin, program, values) -> None:
    process, monitor = plugin
    given = node_group_inputs(values, program, monitor)
    construct(process, process.process.args[-1], "gpu-platform:index:GpuManagedNodeGroup", "gpu-dev-l4-spot", given,
              engine_dependencies(program, given, seed=1))
    [waits] = _waits_for(monitor.resources_in_order(), "aws:eks/nodeGroup:NodeGroup")
    assert given["systemNodes"]["urn"] in waits


BAD_POOLS = [
    ({"maxGpus": 0}, "maxGpus"),  # a model bound
    ({"os": "bottlerockt"}, "os"),  # a choice, with the nearest one
    ({"instanceTypes": ["g6.xlarge", "p5.48xlarge"], "maxGpus": 4}, "maxGpus"),  # the matrix: 8 GPUs > limit 4
]


@pytest.mark.parametrize(("change", "key"), BAD_POOLS)
def test_a_bad_input_gets_the_stack_files_line_adapted_to_the_input(plugin, program, values, change, key) -> None:
    process, monitor = plugin
    stack = {**values, "karpenter": {**values["karpenter"],
                                     "pools": [{**values["karpenter"]["pools"][0], **change}]}}
    with pytest.raises(ConfigError) as from_file:
        load_stack_config(stack, stack_file="Pulumi.dev.yaml", today=TODAY)
    file_line = str(from_file.value)
    assert file_line.startswith(f"Pulumi.dev.yaml: karpenter.pools[0].{key} = ") and "\n" not in file_line
    bad = pool_inputs(values, program, monitor)
    bad["pool"] = {**bad["pool"], **change}
    with pytest.raises(grpc.RpcError) as caught:
        construct(process, process.process.args[-1], "gpu-platform:index:KarpenterGpuPool", "gpu-dev-gpu-spot", bad,
                  engine_dependencies(program, bad, seed=0))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    errors = input_property_errors(caught.value)
    assert errors == [(f"pool.{key}", file_line.replace(
        "Pulumi.dev.yaml: karpenter.pools[0].", 'KarpenterGpuPool "gpu-dev-gpu-spot": pool.'))]


def test_dependencies_do_not_stand_for_the_karpenter_release(plugin, program, values) -> None:
    """Without the reference the schema requires, the pool is refused, whatever dependsOn holds."""
    process, monitor = plugin
    before = len(monitor.resources_in_order())
    given = pool_inputs(values, program, monitor)
    urns = engine_dependencies(program, given, seed=2)
    del given["karpenterRelease"]
    with pytest.raises(grpc.RpcError) as caught:
        construct(process, process.process.args[-1], "gpu-platform:index:KarpenterGpuPool", "gpu-dev-gpu-spot",
                  given, urns)
    assert input_property_errors(caught.value) == [
        ("karpenterRelease", "Missing required input 'karpenterRelease' on 'KarpenterGpuPool'")]
    assert len(monitor.resources_in_order()) == before


def test_a_reference_to_another_type_of_resource_is_refused(plugin, program, values) -> None:
    process, monitor = plugin
    given = pool_inputs(values, program, monitor)
    given["karpenterRelease"] = reference(_one(program, "aws:eks/nodeGroup:NodeGroup", "gpu-dev-system-node-group"),
                                          monitor)
    with pytest.raises(grpc.RpcError) as caught:
        construct(process, process.process.args[-1], "gpu-platform:index:KarpenterGpuPool", "gpu-dev-gpu-spot",
                  given, engine_dependencies(program, given, seed=3))
    [(path, reason)] = input_property_errors(caught.value)
    assert path == "karpenterRelease"
    assert reason.startswith('KarpenterGpuPool "gpu-dev-gpu-spot": karpenterRelease = aws:eks/nodeGroup:NodeGroup: '
                             "not Karpenter's controller Helm release; fix: "), reason


def test_a_node_group_without_its_node_role_is_refused(plugin, program, values) -> None:
    process, monitor = plugin
    inputs = node_group_inputs(values, program, monitor)
    del inputs["access"]["nodeRoleArn"]
    with pytest.raises(grpc.RpcError) as caught:
        construct(process, process.process.args[-1], "gpu-platform:index:GpuManagedNodeGroup", "gpu-dev-l4-spot",
                  inputs, engine_dependencies(program, inputs, seed=0))
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
