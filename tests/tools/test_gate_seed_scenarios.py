"""The seed scenarios of issue 3 through the real policy gate, end to end.

tests/policies/test_seed_scenarios*.py run the same stacks through each policy in-process. Here each
stack goes the way `pulumi preview --policy-pack policies` sends it: the pack in `policies/` is started
as its own process (`python -m pulumi.policy`), configured over the analyzer gRPC protocol, asked about
every resource and then the stack (tools.engine.gate.run_gate). What is asserted is what the engine would
print: each violation's policy, enforcement level, the resource it blames and what it says. Advisory
findings of a mandatory matrix policy arrive under its `<policy>-caveats` twin, as the pack reports them.

One gate run (one pack process) per scenario and phase. Hand-written resources carry no unknowns, so
every scenario keeps its verdict in all three phases; what the phase changes is when a violation bites
at `pulumi up`: a resource policy's before the resource's step, a stack policy's after every step.
Source: pulumi/pulumi pkg/resource/deploy/step_generator.go line 1469 (analyzeAll, before the step) and
pkg/resource/deploy/deployment_executor.go line 410 (AnalyzeResources, once every step is done).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, cast

import pytest
from google.protobuf import json_format, struct_pb2

from policies.gpu_guard.base import all_policies
from tests.policies.test_seed_scenarios import stack, with_bottlerocket_pool
from tests.policies.test_seed_scenarios_infra import _CLUSTER, _GPU
from tests.shared import REPO
from tools.engine.gate import PHASES, GateResult, Phase, run_gate
from tools.engine.records import RecordedResource

TODAY = "2026-11-29"
STACK = "seed"
PROJECT = "gpu-platform"

# Every policy whose config schema takes `today` (the lifecycle and matrix policies and their `-caveats`
# twins) judges on the same day, so end-of-life verdicts do not drift with the clock.
POLICY_CONFIG: dict[str, Any] = {
    policy.name: {"today": TODAY}
    for policy in all_policies()
    if policy.config_schema is not None and "today" in policy.config_schema.properties
}

# (policy, enforcement, name of the resource the violation blames) -> a substring of its message.
Expected = Mapping[tuple[str, str, str], str]

R535_EOL = "R535 reached end of life in June 2026"
EOL_ADVISORY = {("gpu-driver-branch-lifecycle", "advisory", "gpu-operator"): R535_EOL}
CUDA_13_WITHOUT_COMPAT = "the image does not carry the cuda-compat forward-compatibility package"
NO_CUDA_COMPAT_IMAGE = "registry.example.com/llm/server:1.4.0"


def recorded(resources: list[dict[str, Any]]) -> list[RecordedResource]:
    """The seed resources (`type`, `name`, `props`) as the offline preview records them."""
    return [
        RecordedResource(
            urn=f"urn:pulumi:{STACK}::{PROJECT}::{r['type']}::{r['name']}",
            type=r["type"],
            name=r["name"],
            parent=None,
            custom=True,
            inputs=r["props"],
            properties=json_format.ParseDict(r["props"], struct_pb2.Struct()),
        )
        for r in resources
    ]


def gate(resources: list[dict[str, Any]], phase: Phase = "update") -> GateResult:
    return run_gate(recorded(resources), pack_dir=REPO / "policies", stack=STACK, project=PROJECT,
                    policy_config=POLICY_CONFIG, phase=phase)


def assert_verdicts(result: GateResult, expected: Expected) -> None:
    """The gate reported exactly `expected`: no more, no fewer (policy, level, resource), each saying its text."""
    reported: dict[tuple[str, str, str], list[str]] = {}
    for v in result.violations:
        reported.setdefault((v.policy, v.enforcement, v.urn.rsplit("::", 1)[-1]), []).append(v.message)
    assert set(reported) == set(expected), f"the gate reported {reported}"
    for key, text in expected.items():
        assert any(text in message for message in reported[key]), f"{key}: {text!r} not in {reported[key]}"


def test_blog_stack_r535_on_ubuntu_22_04_with_cuda_12_2_2_passes_with_the_eol_advisory() -> None:
    result = gate(stack())

    assert result.mandatory == ()
    assert_verdicts(result, {("gpu-driver-branch-lifecycle", "advisory", "gpu-operator"):
                             f"(judged on {TODAY}): {R535_EOL}: driver 535.309.01 gets no more bug or security fixes"})
    lifecycle = next(p for p in result.policies if p.name == "gpu-driver-branch-lifecycle")
    assert (lifecycle.default_enforcement, lifecycle.enforcement) == ("advisory", "advisory")


def test_rejects_driver_535_15_04_whose_image_was_never_published() -> None:
    result = gate(stack(driver="535.15.04"))

    assert_verdicts(result, {
        # Before create: the pool's own labels and the release's own values each name the unpublished driver.
        ("gpu-driver-image-published-resource", "mandatory", "seed-gpu"):
            "GPU pool 'seed-gpu' (ubuntu-22.04, gpu-platform.io/driver=535.15.04): no published driver image",
        ("gpu-driver-image-published-resource", "mandatory", "gpu-operator"):
            "values driver.version 535.15.04: no published driver image for any OS the GPU Operator builds",
        ("gpu-driver-image-published", "mandatory", "gpu-operator"):
            "driver 535.15.04 has no published image nvcr.io/nvidia/driver:535.15.04-ubuntu22.04",
        ("gpu-driver-branch-supported-caveats", "advisory", "gpu-operator"):
            "not in GPU Operator v26.3.1's component matrix",
        ("cuda-driver-compatible-caveats", "advisory", "cuda-app"):
            "CUDA 12.2.2 runs on driver 535.15.04 only through min",
        ("gpu-driver-branch-lifecycle", "advisory", "gpu-operator"): R535_EOL,
    })


def test_rejects_r535_on_ubuntu_24_04() -> None:
    result = gate(stack(os="ubuntu-24.04", kubelet="1.34"))

    assert_verdicts(result, {
        ("gpu-driver-branch-supported-resource", "mandatory", "seed-gpu"):
            "no GPU Operator release supports this driver branch on ubuntu-24.04",
        ("gpu-driver-image-published-resource", "mandatory", "seed-gpu"):
            "no published image nvcr.io/nvidia/driver:535.309.01-ubuntu24.04",
        ("gpu-driver-image-published", "mandatory", "gpu-operator"):
            "no published image nvcr.io/nvidia/driver:535.309.01-ubuntu24.04",
        ("gpu-driver-branch-supported", "mandatory", "gpu-operator"):
            "GPU Operator v26.3.1 does not support driver branch R535 (driver 535.309.01) on ubuntu-24.04",
        **EOL_ADVISORY,
    })


def test_rejects_precompiled_r535_under_operator_v26_7_0() -> None:
    result = gate(stack(operator="v26.7.0", driver="535", precompiled=True))

    assert_verdicts(result, {
        ("gpu-driver-image-published", "mandatory", "gpu-operator"):
            "precompiled driver R535 is not built for ubuntu-22.04 under GPU Operator v26.7.0",
        ("cuda-driver-compatible-caveats", "advisory", "cuda-app"): "judged as 535.54.03, the branch's first release",
        ("gpu-driver-branch-lifecycle", "advisory", "gpu-operator"): R535_EOL,
    })


def test_standard_535_309_01_under_operator_v26_7_0_passes_with_the_eol_advisory() -> None:
    result = gate(stack(operator="v26.7.0"))

    assert result.mandatory == ()
    assert_verdicts(result, EOL_ADVISORY)


def test_rejects_cuda_13_without_forward_compat_package_on_r535() -> None:
    result = gate(stack(image=NO_CUDA_COMPAT_IMAGE, cuda_label="13.0"))

    assert_verdicts(result, {
        ("cuda-driver-compatible", "mandatory", "cuda-app"):
            f"CUDA 13.0 cannot run on driver 535.309.01 (R535 runs CUDA 12.x natively): {CUDA_13_WITHOUT_COMPAT}",
        **EOL_ADVISORY,
    })


def test_rejects_cuda_13_without_forward_compat_package_on_r570() -> None:
    result = gate(stack(driver="570.211.01", image=NO_CUDA_COMPAT_IMAGE, cuda_label="13.0"))

    assert_verdicts(result, {
        ("cuda-driver-compatible", "mandatory", "cuda-app"):
            f"CUDA 13.0 cannot run on driver 570.211.01 (R570 runs CUDA 12.x natively): {CUDA_13_WITHOUT_COMPAT}",
        ("gpu-driver-branch-lifecycle", "advisory", "gpu-operator"): "R570 reached end of life in February 2026",
    })


def test_nvidia_cuda_13_0_0_on_r535_data_center_gpu_passes_with_a_forward_compat_advisory() -> None:
    result = gate(stack(image="nvidia/cuda:13.0.0-runtime-ubuntu22.04"))

    assert result.mandatory == ()
    assert_verdicts(result, {
        ("cuda-driver-compatible-caveats", "advisory", "cuda-app"): "runs only through forward compatibility",
        **EOL_ADVISORY,
    })


def test_cuda_12_8_on_r535_is_a_minor_version_compatibility_advisory() -> None:
    result = gate(stack(image="nvcr.io/nvidia/tritonserver:25.01-py3"))

    assert result.mandatory == ()
    assert_verdicts(result, {
        ("cuda-driver-compatible-caveats", "advisory", "cuda-app"):
            "CUDA 12.8 runs on driver 535.309.01 only through minor version compatibility",
        **EOL_ADVISORY,
    })


def test_rejects_bottlerocket_pool_without_the_operator_operands_switched_off() -> None:
    current = stack(kubelet="1.34", os="ubuntu-24.04", operator="v26.7.0", driver="580.173.02",
                    image="nvcr.io/nvidia/tritonserver:25.01-py3")
    result = gate(with_bottlerocket_pool(current, exclusions=False))

    assert_verdicts(result, {
        ("preinstalled-driver-exclusive", "mandatory", "gpu-spot"):
            "GPU Operator release 'gpu-operator' would also deploy its own there (missing "
            "nvidia.com/gpu.deploy.driver=false",
        # The NodePool's own labels already say so, before it is created.
        ("preinstalled-driver-exclusive-resource", "mandatory", "gpu-spot"):
            "GPU pool 'gpu-spot' (bottlerocket) runs the driver baked into its image",
        # The seed stack holds Karpenter's NodePool but neither its controller nor a queue: where Karpenter's queue
        # lives the pack cannot see (cannot see, cannot block), a caveat.
        ("karpenter-interruption-handling-caveats", "advisory", "gpu-spot"):
            "but its controller is not, nor an SQS interruption queue",
    })


def test_rejects_a_gpu_only_cluster() -> None:
    result = gate([cast(dict[str, Any], _CLUSTER), cast(dict[str, Any], _GPU)])

    assert_verdicts(result, {
        ("system-node-group-present", "mandatory", "gpu-dev"):
            "No untainted, non-GPU node group with minSize >= 1 exists",
        # The two-resource seed has no gpu-operator release for its operator-driver pool either.
        ("one-driver-per-pool", "mandatory", "gpu-dev-a10g"): "the stack has no gpu-operator Helm release",
    })


def test_rejects_read_only_many_on_ebs() -> None:
    storage_class = {"type": "kubernetes:storage.k8s.io/v1:StorageClass", "name": "ebs-gp3",
                     "props": {"metadata": {"name": "ebs-gp3"}, "provisioner": "ebs.csi.aws.com",
                               "parameters": {"type": "gp3", "encrypted": "true"}}}
    claim = {"type": "kubernetes:core/v1:PersistentVolumeClaim", "name": "models",
             "props": {"metadata": {"name": "models", "namespace": "inference"},
                       "spec": {"accessModes": ["ReadOnlyMany"], "storageClassName": "ebs-gp3",
                                "resources": {"requests": {"storage": "100Gi"}}}}}
    result = gate([storage_class, claim])

    assert_verdicts(result, {
        ("ebs-access-mode-supported", "mandatory", "models"):
            "asks for ReadOnlyMany, which the EBS CSI driver rejects",
    })


def test_rejects_a_v1beta1_nodepool() -> None:
    nodepool = {"type": "kubernetes:karpenter.sh/v1beta1:NodePool", "name": "default",
                "props": {"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool", "metadata": {"name": "default"},
                          "spec": {"template": {"spec": {"nodeClassRef": {"name": "default"}, "requirements": []}},
                                   "disruption": {"consolidationPolicy": "WhenUnderutilized"}}}}
    result = gate([nodepool])

    assert_verdicts(result, {
        ("karpenter-v1-api", "mandatory", "default"):
            "NodePool 'default' uses karpenter.sh/v1beta1; Karpenter v1 serves only karpenter.sh/v1",
        # A NodePool means Karpenter runs elsewhere, with a queue this one-object stack cannot see: a caveat.
        ("karpenter-interruption-handling-caveats", "advisory", "default"):
            "but its controller is not, nor an SQS interruption queue",
    })


def test_rejects_an_unquoted_listen_ports_annotation() -> None:
    ingress = {"type": "kubernetes:networking.k8s.io/v1:Ingress", "name": "gpu-inference",
               "props": {"metadata": {"name": "gpu-inference", "annotations": {
                   "alb.ingress.kubernetes.io/scheme": "internet-facing",
                   "alb.ingress.kubernetes.io/listen-ports": "[{HTTP: 80}, {HTTPS: 443}]",
                   "alb.ingress.kubernetes.io/certificate-arn": "arn:aws:acm:us-west-2:111122223333:certificate/x",
                   "alb.ingress.kubernetes.io/ssl-redirect": "443",
                   "alb.ingress.kubernetes.io/ssl-policy": "ELBSecurityPolicy-TLS13-1-2-2021-06"}},
                         "spec": {"ingressClassName": "alb"}}}
    result = gate([ingress])

    assert_verdicts(result, {
        ("alb-https-only", "mandatory", "gpu-inference"):
            "listen-ports '[{HTTP: 80}, {HTTPS: 443}]', which is not valid JSON (keys must be quoted)",
        # The seed Ingress names no WAF web ACL; its IngressClassParams or Firewall Manager may: advisory.
        ("alb-waf-attached-unseen", "advisory", "gpu-inference"): "sets no alb.ingress.kubernetes.io/wafv2-acl-arn",
    })


def _untainted_gpu_pool() -> list[dict[str, Any]]:
    resources = copy.deepcopy(stack(driver="580.173.02", os="ubuntu-24.04", kubelet="1.34", operator="v26.7.0",
                                    image="nvcr.io/nvidia/tritonserver:25.01-py3"))
    gpu = next(r for r in resources if r["name"] == "seed-gpu")
    del gpu["props"]["taints"]
    return resources


SCENARIOS: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "blog stack": stack,
    "driver 535.15.04": lambda: stack(driver="535.15.04"),
    "R535 on Ubuntu 24.04": lambda: stack(os="ubuntu-24.04", kubelet="1.34"),
    "precompiled R535 under v26.7.0": lambda: stack(operator="v26.7.0", driver="535", precompiled=True),
    "CUDA 13 without cuda-compat": lambda: stack(image=NO_CUDA_COMPAT_IMAGE, cuda_label="13.0"),
    "Bottlerocket without exclusions": lambda: with_bottlerocket_pool(
        stack(kubelet="1.34", os="ubuntu-24.04", operator="v26.7.0", driver="580.173.02",
              image="nvcr.io/nvidia/tritonserver:25.01-py3"), exclusions=False),
    "GPU-only cluster": lambda: [cast(dict[str, Any], _CLUSTER), cast(dict[str, Any], _GPU)],
    "untainted GPU node group": _untainted_gpu_pool,
}


def _verdicts(result: GateResult) -> set[tuple[str, str, str, str, str]]:
    return {(v.policy, v.enforcement, v.urn, v.message, v.blocks) for v in result.violations}


def _judged(result: GateResult) -> set[tuple[str, str, str, str]]:
    """The verdicts the engine reaches, without `blocks` and the first preview's `<policy>-pending` advisories."""
    return {(v.policy, v.enforcement, v.urn, v.message) for v in result.violations
            if not v.policy.endswith("-pending") and not v.offline_only}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_seed_scenario_keeps_its_verdict_in_all_three_phases(scenario: str) -> None:
    resources = SCENARIOS[scenario]()
    by_phase = {phase: gate(resources, phase) for phase in PHASES}
    preview, update, up = (_judged(by_phase[p]) for p in PHASES)

    assert preview == update, (preview, update)
    if not by_phase["up"].cancelled_at:
        assert up == update, (up, update)
    else:
        # At `up` the first mandatory resource violation cancels the run: what the update reports is what the
        # preview reported up to that resource (pulumi/pulumi deployment_executor.go lines 309-315).
        assert up <= update and any(v[2] == by_phase["up"].cancelled_at and v[1] == "mandatory" for v in up), up


@pytest.mark.parametrize(("scenario", "policy", "blamed"), [
    ("driver 535.15.04", "gpu-driver-image-published-resource", "seed-gpu"),
    ("R535 on Ubuntu 24.04", "gpu-driver-branch-supported-resource", "seed-gpu"),
    ("R535 on Ubuntu 24.04", "gpu-driver-image-published-resource", "seed-gpu"),
    ("untainted GPU node group", "gpu-nodes-tainted", "seed-gpu"),
])
def test_at_up_a_broken_pool_is_refused_before_it_is_created(scenario: str, policy: str, blamed: str) -> None:
    result = gate(SCENARIOS[scenario](), "up")

    blocking = [v for v in result.mandatory if v.policy == policy and v.urn.rsplit("::", 1)[-1] == blamed]
    assert [v.blocks for v in blocking] == ["before-create"], result.violations


def test_at_up_a_mandatory_resource_violation_cancels_the_run_and_nothing_after_it_is_analyzed() -> None:
    # analyze_snapshot.go lines 78-81, step_generator.go lines 1476-1477, deployment_executor.go lines 309-315:
    # the resource is invalid, the step generator bails, later resources and AnalyzeStack never run.
    preview, up = gate(SCENARIOS["driver 535.15.04"](), "preview"), gate(SCENARIOS["driver 535.15.04"](), "up")

    assert up.cancelled_at.endswith("::seed-gpu"), up.violations
    assert any(v.urn.endswith("::gpu-operator") and v.enforcement == "mandatory" for v in preview.violations)
    assert not [v for v in up.violations if v.urn.endswith("::gpu-operator")], up.violations
    assert not [v for v in up.violations if v.blocks == "after-update"], up.violations


def test_at_up_a_stack_policy_speaks_only_after_every_step() -> None:
    result = gate(SCENARIOS["GPU-only cluster"](), "up")

    stack_level = [v for v in result.mandatory if v.policy == "system-node-group-present"]
    assert [v.blocks for v in stack_level] == ["after-update"], result.violations
