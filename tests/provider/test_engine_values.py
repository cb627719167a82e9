"""Construct as the engine runs it, beyond known plain values: a preview (dryRun true) and an update (dryRun
false), inputs that are unknown in a preview or secret, and the component's outputs read back from the
ConstructResponse, as the consumer's SDK reads them (pulumi v3.259.0 proto/pulumi/provider.proto
ConstructRequest/ConstructResponse; the SDK's side: pulumi 3.272.0 pulumi/provider/server.py `_construct_inputs`,
`_select_value`, `_construct_response`)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import grpc
import pytest
from pulumi.runtime import rpc

from policies.gpu_guard.matrix import load_matrix
from tests.components.harness import TODAY, Run, _start, stack_values
from tests.provider.engine import MonitorServer, ProviderProcess
from tests.provider.test_round_trip import (
    CLUSTER,
    construct,
    engine_dependencies,
    input_property_errors,
    node_group_inputs,
    output_value,
    pool_inputs,
    service_inputs,
    system_inputs,
)
from tools.engine.mocks.monitor import RecordingMonitor
from tools.engine.records import UNKNOWN, RecordedResource

Engine = tuple[ProviderProcess, RecordingMonitor, str, list[tuple[int, str]]]  # ..., the engine's logs


def _engine(dry_run: bool) -> Iterator[Engine]:
    mocks, monitor = _start(stack_values("dev"), "dev", "us-west-2", preview=dry_run)
    mocks.dry_run = dry_run
    mocks.unknown_outputs = dry_run  # a first preview: the provider computes nothing yet
    server = MonitorServer(monitor)
    process = ProviderProcess(server.address, today=TODAY.isoformat())
    try:
        yield process, monitor, server.address, server.engine.logs
    finally:
        process.stop()
        server.stop()


@pytest.fixture(params=[True, False], ids=["preview", "update"])
def engine(request: pytest.FixtureRequest) -> Iterator[tuple[Engine, bool]]:
    for running in _engine(request.param):
        yield running, request.param


@pytest.fixture
def preview() -> Iterator[Engine]:
    yield from _engine(True)


def _state(response: Any) -> dict[str, Any]:
    """The component's outputs as the consumer's SDK deserializes the ConstructResponse."""
    return dict(rpc.deserialize_properties(response.state, keep_unknowns=True))


def _cluster_urn(program: Run) -> str:
    return next(r.urn for r in program.resources if (r.type, r.name) == CLUSTER)


def test_the_outputs_read_back_in_a_preview_and_an_update(engine, program, values) -> None:
    (process, monitor, address, _), dry_run = engine
    given = pool_inputs(values, program, monitor)
    response = construct(process, address, "gpu-platform:index:KarpenterGpuPool", "gpu-dev-gpu-spot", given,
                         engine_dependencies(program, given, seed=0), dry_run=dry_run)
    state = _state(response)
    pool = values["karpenter"]["pools"][0]
    node_pools = sorted(r.inputs["metadata"]["name"] for r in program.resources
                        if r.type == "kubernetes:karpenter.sh/v1:NodePool")
    assert state["nodeClassName"] == pool["name"]
    assert state["nodePoolNames"] == node_pools
    node_class = next(r for r in program.resources if r.type == "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    assert state["labels"] and set(state["labels"].items()) <= set(
        next(r for r in program.resources if r.type == "kubernetes:karpenter.sh/v1:NodePool")
        .inputs["spec"]["template"]["metadata"]["labels"].items()), (state["labels"], node_class.name)
    registered = [r for r in monitor.resources_in_order() if r.custom and r.type.startswith("kubernetes:karpenter")]
    assert registered
    # An update gets the provider's ids; a first preview gets none (pulumi pkg/resource/deploy/step.go).
    assert all(bool(r.id) for r in registered) is (not dry_run), [(r.name, r.id) for r in registered]


def _launch_template(monitor: RecordingMonitor) -> RecordedResource:
    return next(r for r in monitor.resources_in_order() if r.type == "aws:ec2/launchTemplate:LaunchTemplate")


def test_an_input_unknown_in_a_preview_flows_to_the_children_with_its_dependency(preview, program, values) -> None:
    """The cluster endpoint of a cluster this preview creates: unknown, depending on the cluster. Construct
    accepts it, and the node group's user data (the bootstrap call that names the endpoint) is unknown and
    depends on the cluster, as the program's own preview would register it."""
    process, monitor, address, _ = preview
    given = node_group_inputs(values, program, monitor)
    cluster = _cluster_urn(program)
    given["access"] = {**given["access"], "endpoint": output_value(None, [cluster], known=False)}
    construct(process, address, "gpu-platform:index:GpuManagedNodeGroup", "gpu-dev-l4-spot", given,
              engine_dependencies(program, given, seed=0), {"access": [cluster]})
    template = _launch_template(monitor)
    assert template.inputs["userData"] == UNKNOWN
    assert cluster in template.property_dependencies.get("userData", ())


def _is_secret(struct: Any, key: str) -> bool:
    value = struct.fields[key]
    if not value.HasField("struct_value"):
        return False
    fields = value.struct_value.fields
    sig = fields[rpc._special_sig_key].string_value if rpc._special_sig_key in fields else ""
    return sig == rpc._special_secret_sig or (sig == rpc._special_output_value_sig and "secret" in fields
                                              and fields["secret"].bool_value)


def test_a_secret_input_stays_secret_in_the_children(preview, program, values) -> None:
    """A kubeconfig from a secret (config.requireSecret): the Kubernetes provider Construct makes from it
    receives it as a secret, so it is encrypted in the state like the consumer's own value."""
    process, monitor, address, _ = preview
    given = pool_inputs(values, program, monitor)
    given["kubeconfig"] = output_value("{}", [], secret=True)
    construct(process, address, "gpu-platform:index:KarpenterGpuPool", "gpu-dev-gpu-spot", given,
              engine_dependencies(program, given, seed=0))
    provider = next(r for r in monitor.resources_in_order() if r.type == "pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == "{}"
    assert _is_secret(provider.properties, "kubeconfig")


def test_an_advisory_is_reported_once_per_construct(program, values) -> None:
    """A cluster kept in extended support, judged the week after standard support ends: Construct succeeds and
    the engine gets the advisory once (the check before the constructor and the constructor's own do not both
    report it)."""
    end = next(r.end_standard for r in load_matrix().data.eks_versions
               if r.version == values["cluster"]["kubernetesVersion"])
    assert end is not None
    _, monitor = _start(stack_values("dev"), "dev", "us-west-2")
    server = MonitorServer(monitor)
    process = ProviderProcess(server.address, today=(end + timedelta(days=7)).isoformat())
    try:
        given = system_inputs(values, program, monitor)
        given["cluster"] = {**given["cluster"], "supportType": "extended"}
        construct(process, server.address, "gpu-platform:index:SystemNodeGroup", "gpu-dev-system", given, [])
    finally:
        process.stop()
        server.stop()
    warnings = [m for severity, m in server.engine.logs if "extended support" in m]
    assert len(warnings) == 1, server.engine.logs
    assert warnings[0].startswith('SystemNodeGroup "gpu-dev-system": cluster.kubernetesVersion = "1.35": ')


CERT_URN = "urn:pulumi:dev::gpu-platform::aws:acm/certificate:Certificate::triton"
CERT_ARN = "arn:aws:acm:us-west-2:111122223333:certificate/11111111-2222-3333-4444-555555555555"


def _with_ingress(values, program, monitor, certificate: Any) -> dict[str, Any]:
    given = service_inputs(values, program, monitor)
    given["service"] = {**given["service"], "ingress": {"host": "triton.example.com", "certificateArn": certificate}}
    return given


def _ingress(monitor: RecordingMonitor) -> RecordedResource:
    return next(r for r in monitor.resources_in_order() if r.type == "kubernetes:networking.k8s.io/v1:Ingress")


def test_a_certificate_from_another_resource_feeds_the_ingress(preview, program, values) -> None:
    """The ARN of an ACM certificate the consumer's program creates: an input (not plain), validated when known,
    and handed on as the Output, so the Ingress depends on the certificate."""
    process, monitor, address, _ = preview
    given = _with_ingress(values, program, monitor, output_value(CERT_ARN, [CERT_URN]))
    construct(process, address, "gpu-platform:index:InferenceService", "triton-dev", given, [CERT_URN],
              {"service": [CERT_URN]})
    ingress = _ingress(monitor)
    annotations = ingress.inputs["metadata"]["annotations"]
    assert annotations["alb.ingress.kubernetes.io/certificate-arn"] == CERT_ARN
    assert CERT_URN in ingress.property_dependencies.get("metadata", ()), ingress.property_dependencies


def test_a_certificate_unknown_in_preview_is_left_unchecked_and_said_so(preview, program, values) -> None:
    process, monitor, address, logs = preview
    given = _with_ingress(values, program, monitor, output_value(None, [CERT_URN], known=False))
    construct(process, address, "gpu-platform:index:InferenceService", "triton-dev", given, [CERT_URN],
              {"service": [CERT_URN]})
    annotations = _ingress(monitor).inputs["metadata"]["annotations"]
    assert annotations["alb.ingress.kubernetes.io/certificate-arn"] == UNKNOWN
    said = [m for _, m in logs if "certificateArn" in m]
    assert said == ['InferenceService "triton-dev": service.ingress.certificateArn is unknown in this preview (it '
                    "comes from a resource not created yet), so it was not checked; it is checked when it is known "
                    "(pulumi up)"], logs


def test_a_known_bad_certificate_is_refused_with_the_stack_files_line(preview, program, values) -> None:
    process, monitor, address, _ = preview
    given = _with_ingress(values, program, monitor, output_value("arn:aws:acm:eu-west-1:1:cert/x", [CERT_URN]))
    with pytest.raises(grpc.RpcError) as caught:
        construct(process, address, "gpu-platform:index:InferenceService", "triton-dev", given, [CERT_URN],
                  {"service": [CERT_URN]})
    [(path, reason)] = input_property_errors(caught.value)
    assert path == "service.ingress.certificateArn"
    assert reason.startswith('InferenceService "triton-dev": service.ingress.certificateArn = '
                             '"arn:aws:acm:eu-west-1:1:cert/x": an ACM certificate ARN looks like '), reason


@pytest.mark.parametrize(("secret", "known", "state"), [
    (True, True, "(secret)"), (False, False, "(unknown until apply)")])
def test_a_plain_section_that_is_secret_or_unknown_is_refused_in_one_line(preview, program, values, secret, known,
                                                                         state) -> None:
    """An SDK without output values sends a section with dependencies as one Output: known and not secret, it is
    judged as usual; secret or unknown, the section cannot be judged or named with, and is refused."""
    process, monitor, address, _ = preview
    given = pool_inputs(values, program, monitor)
    given["cluster"] = output_value(given["cluster"], [], secret=secret, known=known)
    with pytest.raises(grpc.RpcError) as caught:
        construct(process, address, "gpu-platform:index:KarpenterGpuPool", "gpu-dev-gpu-spot", given,
                  engine_dependencies(program, given, seed=0))
    [(path, reason)] = input_property_errors(caught.value)
    assert path == "cluster"
    assert reason.startswith(f'KarpenterGpuPool "gpu-dev-gpu-spot": cluster = {state}: '), reason
    assert "\n" not in reason


def test_a_plain_section_sent_as_a_known_output_is_judged_as_usual(preview, program, values) -> None:
    process, monitor, address, _ = preview
    given = pool_inputs(values, program, monitor)
    cluster = _cluster_urn(program)
    given["cluster"] = output_value(given["cluster"], [cluster])
    response = construct(process, address, "gpu-platform:index:KarpenterGpuPool", "gpu-dev-gpu-spot", given,
                         engine_dependencies(program, given, seed=0), {"cluster": [cluster]})
    assert _state(response)["nodeClassName"] == values["karpenter"]["pools"][0]["name"]
