"""GPUs allocated through DRA (policies/gpu_guard/dra.py), judged by public DRA examples (issue 55).

NVIDIA's DRA Driver for GPUs quickstart specs (tests/policies/dra/, vendored with their SOURCE) run on the stack
pulumi/examples aws-ts-eks-gpu-dra builds (dra/base.yaml): a tainted AL2023 NVIDIA p4d group, the GPU Operator with
its device plugin off, the DRA driver. The whole pack, in every engine phase, must find nothing mandatory there; and
the defects around it (a device plugin beside the DRA driver, no allocator, a claim of another vendor's class) are
judged for what they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from policies.gpu_guard.dra import Claims, claimed, read_claim
from tests.policies.harness import apply_patch
from tests.policies.test_foreign_designs import PHASES, run_pack

DRA = Path(__file__).parent / "dra"
SPECS = ("gpu-test1.yaml", "gpu-test1-v1beta1.yaml", "gpu-test4.yaml", "gpu-test5.yaml")


def _objects(name: str) -> list[dict[str, Any]]:
    """A vendored manifest's objects as the pack receives them: `kubernetes:<apiVersion>:<kind>` resources."""
    out = []
    for doc in yaml.safe_load_all((DRA / name).read_text()):
        if not doc or doc["kind"] == "Namespace":
            continue
        api = doc["apiVersion"] if "/" in doc["apiVersion"] else f"core/{doc['apiVersion']}"
        out.append({"type": f"kubernetes:{api}:{doc['kind']}", "name": f"{name}-{doc['metadata']['name']}",
                    "props": doc})
    return out


def _stack(spec: str, patch: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    base: list[dict[str, Any]] = yaml.safe_load((DRA / "base.yaml").read_text())["resources"]
    return apply_patch(base, patch or []) + _objects(spec)


def _mandatory(resources: list[dict[str, Any]], phase: str) -> list[str]:
    violations, _ = run_pack(resources, phase)
    return [f"{v.policy}: {v.message}" for v in violations if v.level == "mandatory"]


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("spec", SPECS)
def test_nvidia_s_quickstart_pods_on_a_dra_stack_get_no_mandatory_finding(spec: str, phase: str) -> None:
    """Before issue 55: every pod "tolerates the GPU taint ... but requests no nvidia.com/gpu", and the pool was
    "left with no device plugin"."""
    assert _mandatory(_stack(spec), phase) == []


def test_the_device_plugin_beside_the_dra_driver_is_refused() -> None:
    found = _mandatory(_stack("gpu-test1.yaml", [
        {"resource": "gpu-operator", "set": ["values", "devicePlugin", "enabled"], "value": True}]), "update")
    assert len(found) == 1 and found[0].startswith("preinstalled-driver-exclusive: GPU pool 'gpu' (al2023) would get "
                                                   "two GPU allocators")


def test_without_the_dra_driver_nothing_allocates_the_pool() -> None:
    found = _mandatory(_stack("gpu-test1.yaml", [{"remove": "nvidia-dra-driver"}]), "update")
    assert [f.split(":", 1)[0] for f in found] == ["preinstalled-driver-exclusive"]
    assert "left with no device plugin" in found[0]


def test_a_claim_of_another_vendor_s_device_class_is_no_gpu_request() -> None:
    """The same pods claiming a device class that is not NVIDIA's GPU (a NIC's) tolerate the GPU taint for nothing."""
    resources = _stack("gpu-test1.yaml")
    for r in resources:
        if r["type"].endswith(":ResourceClaimTemplate"):
            request = r["props"]["spec"]["spec"]["devices"]["requests"][0]
            request["exactly"]["deviceClassName"] = "efa.networking.k8s.aws"
    found = _mandatory(resources, "update")
    assert len(found) == 2 and all("requests no nvidia.com/gpu and claims no NVIDIA GPU" in f for f in found)


def _claims(spec: str) -> tuple[Claims, list[dict[str, Any]]]:
    objects = _objects(spec)
    claims = Claims(c for r in objects if (c := read_claim(r["type"], r["props"], r["name"])) is not None)
    return claims, [r for r in objects if not r["type"].endswith("ResourceClaimTemplate")]


@pytest.mark.parametrize(("spec", "gpus", "classes"), [
    ("gpu-test1.yaml", [1], ("gpu.nvidia.com",)),  # one container, one whole GPU (v1 `exactly`)
    ("gpu-test1-v1beta1.yaml", [1], ("gpu.nvidia.com",)),  # the same in v1beta1's flat form
    ("gpu-test4.yaml", [1, 1, 1, 1], ("mig.nvidia.com",)),  # a MIG slice each, on one parent GPU: 1 each
    ("gpu-test5.yaml", [1, 1, 1, 1], ("gpu.nvidia.com",)),  # each container names one request of the claim
])
def test_what_each_container_of_nvidia_s_quickstart_claims(spec: str, gpus: list[int],
                                                          classes: tuple[str, ...]) -> None:
    claims, workloads = _claims(spec)
    workload = workloads[0]["props"]
    pod = workload["spec"]["template"]["spec"] if workload["kind"] == "Deployment" else workload["spec"]
    namespace = workload["metadata"]["namespace"]
    got = [claimed(pod, c, claims, namespace) for c in pod["containers"]]
    assert [g.gpus for g in got] == gpus
    assert {k for g in got for k in g.classes} == set(classes) and not any(g.unresolved for g in got)


def test_a_container_that_names_the_whole_claim_counts_all_its_whole_gpus() -> None:
    claims, workloads = _claims("gpu-test5.yaml")
    pod = workloads[0]["props"]["spec"]
    container = {"name": "all", "resources": {"claims": [{"name": "shared-gpus"}]}}
    assert claimed(pod, container, claims, "gpu-test5").gpus == 2  # ts-gpu and mps-gpu: two devices
    assert claimed(pod, container, claims, "elsewhere").unresolved == ("shared-gpus",)  # another namespace's
