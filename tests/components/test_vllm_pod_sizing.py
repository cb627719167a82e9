"""vLLM's pods sized by vLLM's guidance, its telemetry off, its routes by task (issue 52).

vLLM v0.34.0 docs/configuration/optimization.md:508-526: 2 + N physical cores for N GPUs, 2 x (2 + N) vCPUs.
"""

from __future__ import annotations

import copy
from typing import Any

from components.config.loader import check_stack
from components.config.pod_sizing import allocatable_millicores, kube_reserved_millicores
from components.inference import ingress, vllm_workload
from tests.components.harness import TODAY
from tests.components.test_vllm import ACM, _dev, _service, _vllm_index


def _container(types: list[str], **changes: Any) -> dict[str, Any]:
    return vllm_workload.vllm_container(_service(**changes), "model", "tmp", types)


def _check(values: dict[str, Any]) -> tuple[list[str], list[str]]:
    _config, problems, advisories = check_stack(values, region="us-west-2", today=TODAY)
    return [p.render("dev") for p in problems], [a.render("dev") for a in advisories if a.path[-1] == "cpu"]


def test_the_kubelet_reserve_is_the_eks_images_formula():
    # 6 % of the first core, 1 % of the second, 0.5 % of the third and fourth, 0.25 % above (nodeadm config.go).
    assert [kube_reserved_millicores(n) for n in (1, 2, 4, 8, 48)] == [60, 70, 80, 90, 190]
    assert allocatable_millicores(4) == 3920


def test_the_default_cpu_is_vllms_guidance_capped_at_what_the_smallest_type_gives():
    # One GPU: 2 x (2 + 1) = 6 vCPUs; an xlarge has 4, less one for the kubelet and DaemonSets: 3 (before: 2).
    assert _container(["g6.xlarge", "g5.xlarge"])["resources"]["requests"]["cpu"] == "3"
    assert _container(["g6.2xlarge"])["resources"]["requests"]["cpu"] == "6"
    # Four GPUs: 2 x (2 + 4) = 12 vCPUs on a g6.12xlarge (48 vCPUs).
    container = _container(["g6.12xlarge"], gpusPerReplica=4)
    assert container["resources"]["requests"]["cpu"] == container["resources"]["limits"]["cpu"] == "12"
    assert _container(["g6.xlarge"], cpu="2")["resources"]["requests"]["cpu"] == "2"  # the stack's own value


def test_memory_grows_with_each_tensor_parallel_worker_not_only_shm():
    # 8 GiB (API server, engine core, first worker) + 4 GiB per further worker + 2 GiB of /dev/shm per GPU.
    assert _container(["g6.2xlarge"])["resources"]["limits"]["memory"] == "10Gi"
    assert _container(["g6.12xlarge"], gpusPerReplica=4)["resources"]["limits"]["memory"] == "28Gi"
    assert _container(["g6.12xlarge"], gpusPerReplica=4, memory="16Gi")["resources"]["limits"]["memory"] == "24Gi"


def test_a_shortfall_below_the_guidance_is_an_advisory_with_the_shortfall():
    problems, advisories = _check(_dev())  # dev: gpu-spot, every type an xlarge
    assert problems == []
    (advisory,) = advisories
    assert 'inferenceServices[1].cpu = "3": the replica gets 3 vCPUs' in advisory
    assert "3 short of vLLM's guidance for 1 GPU(s): 2 + N physical cores, 6 vCPUs" in advisory


def test_a_cpu_no_reachable_type_can_give_is_refused():
    problems, _ = _check(_dev(cpu="6"))
    (problem,) = problems
    assert ('inferenceServices[1].cpu = "6": the replica requests 6000 m of CPU, more than any instance type it can '
            "reach gives a pod (allocatable: g4dn.xlarge 3920 m, g5.xlarge 3920 m, g6.xlarge 3920 m") in problem
    assert "fix: set cpu to at most 3" in problem


def test_a_cpu_some_reachable_types_cannot_give_is_an_advisory_naming_them():
    values = _dev(cpu="6", nodePools=["gpu-spot"])
    values["karpenter"]["pools"][0]["instanceTypes"] = ["g6.xlarge", "g6.2xlarge"]
    values["karpenter"]["pools"][0]["maxGpus"] = 4
    problems, advisories = _check(values)
    assert problems == []
    assert any("more than g6.xlarge 3920 m (allocatable) gives a pod" in a for a in advisories)


def test_usage_telemetry_is_off_unless_the_stack_turns_it_on():
    env = {e["name"]: e.get("value") for e in _container(["g6.xlarge"])["env"]}
    assert env["VLLM_NO_USAGE_STATS"] == "1" and env["DO_NOT_TRACK"] == "1"
    names = {e["name"] for e in _container(["g6.xlarge"], vllm__usageStats=True)["env"]}
    assert "VLLM_NO_USAGE_STATS" not in names and "DO_NOT_TRACK" not in names


def test_an_embedding_model_is_routed_to_v1_embeddings_and_runs_the_pooling_runner():
    changes = {"vllm__runner": "pooling",
               "ingress": {"host": "llm.dev.example.com", "certificateArn": ACM, "scheme": "internal"}}
    svc = _service(**changes)
    assert svc.ingress is not None
    paths = [p["path"] for p in ingress.ingress_manifest(svc, svc.ingress)["spec"]["rules"][0]["http"]["paths"]]
    assert paths == ["/v1/embeddings", "/v1/models", "/health"]
    args = vllm_workload.vllm_args(svc)
    assert args[args.index("--runner") + 1] == "pooling"
    generate = _service(ingress=changes["ingress"])
    assert generate.ingress is not None
    routes = [p["path"] for p in ingress.ingress_manifest(generate, generate.ingress)["spec"]["rules"][0]["http"]
              ["paths"]]
    assert "/v1/responses" in routes and "/v1/embeddings" not in routes
    assert "--runner" not in vllm_workload.vllm_args(generate)


def test_the_dev_stack_keeps_its_vllm_service():
    assert _vllm_index(copy.deepcopy(_dev())) == 1
