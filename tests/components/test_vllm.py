"""runtime: vllm: the shipped dev service, the manifests it renders, and the broken variants of issue 48, each refused
with exactly its finding naming the key to change (the config check; the pack's fixtures are under
tests/policies/fixtures/serving-model-fits, serving-image-architecture and cuda-driver-compatible-resource)."""

from __future__ import annotations

import copy
import json
import re
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config import InferenceServiceConfig
from components.config.loader import check_stack
from components.config.problems import Problem
from components.config.vllm_checks import service_args, service_model
from components.inference import dashboard, ingress, scaling, vllm, vllm_workload, workload
from policies.gpu_guard.vllm_fit.kv import kv_bytes_per_token, kv_dtype_bytes

REPO = Path(__file__).resolve().parents[2]
TODAY = date(2026, 12, 5)
ACM = "arn:aws:acm:us-west-2:111122223333:certificate/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"


@cache
def _dev_values() -> dict[str, Any]:
    config = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())["config"]
    return {k.split(":", 1)[1]: v for k, v in config.items() if k.startswith("gpu-platform:")}


def _vllm_index(values: dict[str, Any]) -> int:
    return next(i for i, s in enumerate(values["inferenceServices"]) if s.get("runtime") == "vllm")


def _dev(**changes: Any) -> dict[str, Any]:
    """The dev stack with the vLLM service changed: `key__sub=value` sets, `key__sub=None` deletes."""
    values = copy.deepcopy(_dev_values())
    svc = values["inferenceServices"][_vllm_index(values)]
    for key, value in changes.items():
        *parents, last = key.split("__")
        target = svc
        for part in parents:
            target = target.setdefault(part, {})
        if value is None:
            target.pop(last, None)
        else:
            target[last] = value
    return values


def _problems(values: dict[str, Any]) -> list[Problem]:
    config, problems, _ = check_stack(values, region="us-west-2", today=TODAY)
    assert (config is None) == bool(problems)
    return problems


def _only(values: dict[str, Any]) -> Problem:
    problems = _problems(values)
    assert len(problems) == 1, [p.render("Pulumi.dev.yaml") for p in problems]
    return problems[0]


def _service(**changes: Any) -> InferenceServiceConfig:
    values = _dev(**changes)
    return InferenceServiceConfig.model_validate(values["inferenceServices"][_vllm_index(values)])


def test_the_shipped_dev_stack_with_its_vllm_service_passes_every_check():
    assert _problems(_dev()) == []


# ----------------------------------------------------------------------- the broken variants of "Done when"

def test_a_70b_fp16_model_on_one_l4_is_refused_naming_the_weights_size():
    problem = _only(_dev(vllm__parametersBillions=70, vllm__precision="fp16", nodePools=["gpu-spot"]))
    assert problem.path == ("inferenceServices", 1, "vllm", "parametersBillions")
    assert problem.rule.startswith("the weights (130.4 GiB per GPU) and at least 1.2 GiB of vLLM's own memory exceed "
                                   "what vLLM may use of 1 x L4 of g6.xlarge (22.1-22.4 GiB each as CUDA reports it, "
                                   "estimated; vLLM v0.34.0) at --gpu-memory-utilization 1 (vLLM's default) (22.4 GiB "
                                   "at most): vLLM refuses to start")


def test_a_declared_model_size_is_the_key_named():
    problem = _only(_dev(vllm__parametersBillions=None, vllm__modelGiB=140))
    assert problem.path == ("inferenceServices", 1, "vllm", "modelGiB")


def test_tensor_parallel_4_on_one_gpu_instance_types_is_refused_naming_gpus_per_replica():
    problem = _only(_dev(gpusPerReplica=4))
    assert problem.path == ("inferenceServices", 1, "gpusPerReplica")
    assert problem.rule.startswith("--tensor-parallel-size 4 needs 4 GPUs on one node, and g6.xlarge has 1")


def test_a_keda_trigger_on_a_metric_vllm_does_not_export_is_refused_naming_the_query():
    query = 'sum(vllm:num_requests_queued{namespace="inference"})'
    problem = _only(_dev(autoscaling__query=query))
    assert problem.path == ("inferenceServices", 1, "autoscaling", "query")
    assert "vLLM v0.34.0 exports no series vllm:num_requests_queued" in problem.rule
    assert problem.nearest == ("vllm:num_requests_running",) or problem.nearest == ("vllm:num_requests_waiting",)


def test_a_public_vllm_service_with_neither_api_key_nor_oidc_is_refused_naming_the_api_key():
    public = {"host": "llm.dev.example.com", "certificateArn": ACM, "scheme": "internet-facing"}
    problem = _only(_dev(ingress=public))
    assert problem.path == ("inferenceServices", 1, "vllm", "apiKeySecret")
    assert problem.rule.startswith("a public OpenAI endpoint with no authentication lets anyone on the internet use "
                                   "the GPUs")
    # OIDC on the ALB is for browser sessions: the message says SDK clients need the key.
    assert "(ingress.oidc: browser sessions only; the ALB validates no Bearer token, so OpenAI SDK clients need the " \
           "key)" in problem.rule


@pytest.mark.parametrize("auth", [
    {"vllm__apiKeySecret": {"name": "vllm-api-key"}},
    {"ingress__oidc": {"issuer": "https://id.example.com", "authorizationEndpoint": "https://id.example.com/auth",
                       "tokenEndpoint": "https://id.example.com/token",
                       "userInfoEndpoint": "https://id.example.com/userinfo", "secretName": "llm-oidc"}},
])
def test_a_public_vllm_service_with_a_key_or_oidc_passes(auth):
    values = _dev(ingress={"host": "llm.dev.example.com", "certificateArn": ACM, "scheme": "internet-facing"})
    svc = values["inferenceServices"][_vllm_index(values)]
    for key, value in auth.items():
        first, second = key.split("__")
        svc.setdefault(first, {})[second] = value
    assert _problems(values) == []


def test_a_vllm_image_on_a_pool_whose_gpu_it_was_not_built_for_is_refused_naming_node_pools():
    # minReplicas 1 on a group that keeps one node: a scale-to-zero service needs a Karpenter pool (issue 52).
    values = _dev(nodePools=["arm"], minReplicas=1)
    values["gpuNodeGroups"].append({"name": "arm", "instanceTypes": ["g5g.xlarge"], "os": "ubuntu-24.04",
                                    "minSize": 0, "desiredSize": 1, "maxSize": 1, "diskSizeGiB": 100})
    problem = _only(values)
    assert problem.path == ("inferenceServices", 1, "nodePools")
    assert problem.rule.startswith("vllm/vllm-openai:v0.34.0 is compiled for 8.0 8.7 8.9 9.0 10.0 11.0 12.0 only "
                                   "(TORCH_CUDA_ARCH_LIST of its arm64 image at v0.34.0)")


def test_an_unrecorded_vllm_tag_must_declare_its_cuda():
    problem = _only(_dev(image="vllm/vllm-openai:v0.34.0-efa"))
    assert problem.path == ("inferenceServices", 1, "cudaVersion")


# ----------------------------------------------------------------------- the keys of one runtime

def test_runtime_vllm_needs_its_section():
    problem = _only(_dev(vllm=None))
    assert problem.path == ("inferenceServices", 1, "runtime")


def test_the_vllm_section_is_refused_on_triton():
    values = _dev()
    values["inferenceServices"][0]["vllm"] = {"modelPath": "m"}
    problem = _only(values)
    assert problem.path == ("inferenceServices", 0, "runtime")


def test_a_relative_model_path_needs_the_model_volume():
    problem = _only(_dev(modelVolume=None))
    assert problem.path == ("inferenceServices", 1, "vllm", "modelPath")


# ----------------------------------------------------------------------- the manifests

def test_vllm_serve_arguments_follow_the_config():
    svc = _service()
    assert vllm_workload.vllm_args(svc) == [
        "/models/Qwen2.5-1.5B-Instruct", "--served-model-name", "qwen2.5-1.5b-instruct", "--port", "8000",
        "--tensor-parallel-size", "1", "--max-model-len", "8192", "--shutdown-timeout", str(svc.drain_seconds)]
    # Dev leaves --gpu-memory-utilization to vLLM (1.0 with the extensible KV cache, v0.34.0 optimization.md); set, it
    # is passed as written.
    args = vllm_workload.vllm_args(_service(vllm__gpuMemoryUtilization=0.85))
    assert args[args.index("--gpu-memory-utilization") + 1] == "0.85"


def test_tensor_parallel_size_is_the_gpus_per_replica_and_shm_grows_with_it():
    svc = _service(gpusPerReplica=4)
    args = vllm_workload.vllm_args(svc)
    assert args[args.index("--tensor-parallel-size") + 1] == "4"
    pod = workload.pod_spec(svc, [], None)
    shm = next(v for v in pod["volumes"] if v["name"] == "dshm")
    assert shm["emptyDir"] == {"medium": "Memory", "sizeLimit": "8Gi"}
    # 8 GiB + 4 GiB for each of the 3 further workers (issue 52) + the in-memory /dev/shm
    assert pod["containers"][0]["resources"]["limits"]["memory"] == "28Gi"


def test_the_container_is_offline_probes_health_and_takes_the_key_from_a_secret():
    svc = _service(vllm__apiKeySecret={"name": "vllm-api-key", "key": "token"})
    container = workload.container(svc)
    env = {e["name"]: e for e in container["env"]}
    assert env["HF_HUB_OFFLINE"]["value"] == "1"
    assert env["VLLM_API_KEY"]["valueFrom"] == {"secretKeyRef": {"name": "vllm-api-key", "key": "token"}}
    assert not any("key" in a for a in container["args"] if a.startswith("--api"))
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/health", "port": "http"}
    assert container["startupProbe"]["failureThreshold"] * container["startupProbe"]["periodSeconds"] >= (
        svc.startup_seconds)
    assert [p["containerPort"] for p in container["ports"]] == [8000]


def test_the_service_and_network_policy_open_the_api_port_only():
    svc = _service()
    assert [p["port"] for p in workload.service(svc)["spec"]["ports"]] == [8000]
    assert [p["port"] for p in workload.network_policy(svc)["spec"]["ingress"][0]["ports"]] == [8000]
    assert scaling.service_monitor(svc)["spec"]["endpoints"][0]["port"] == "http"


def test_the_alb_forwards_the_openai_routes_only():
    svc = _service(ingress={"host": "llm.dev.example.com", "certificateArn": ACM, "scheme": "internal"})
    assert svc.ingress is not None
    manifest = ingress.ingress_manifest(svc, svc.ingress)
    paths = [(p["path"], p["pathType"]) for p in manifest["spec"]["rules"][0]["http"]["paths"]]
    assert paths == [("/v1/chat/completions", "Exact"), ("/v1/completions", "Exact"), ("/v1/responses", "Exact"),
                     ("/v1/models", "Exact"), ("/health", "Exact")]
    annotations = manifest["metadata"]["annotations"]
    assert annotations["alb.ingress.kubernetes.io/healthcheck-path"] == "/health"
    assert "alb.ingress.kubernetes.io/auth-type" not in annotations


def test_oidc_puts_the_alb_authentication_annotations():
    oidc = {"issuer": "https://id.example.com", "authorizationEndpoint": "https://id.example.com/auth",
            "tokenEndpoint": "https://id.example.com/token", "userInfoEndpoint": "https://id.example.com/userinfo",
            "secretName": "llm-oidc"}
    svc = _service(ingress={"host": "llm.dev.example.com", "certificateArn": ACM, "scheme": "internet-facing",
                            "oidc": oidc})
    assert svc.ingress is not None
    annotations = ingress.ingress_manifest(svc, svc.ingress)["metadata"]["annotations"]
    assert annotations["alb.ingress.kubernetes.io/auth-type"] == "oidc"
    assert json.loads(annotations["alb.ingress.kubernetes.io/auth-idp-oidc"]) == {
        "issuer": "https://id.example.com", "authorizationEndpoint": "https://id.example.com/auth",
        "tokenEndpoint": "https://id.example.com/token", "userInfoEndpoint": "https://id.example.com/userinfo",
        "secretName": "llm-oidc"}
    assert annotations["alb.ingress.kubernetes.io/auth-on-unauthenticated-request"] == "deny"


def test_the_deployment_tells_the_pack_the_declared_model_facts():
    # The pack reads the same facts the config check judges (vllm.declared_facts), not a derived number.
    svc = _service()
    annotations = workload.model_annotations(svc)
    assert annotations[workload.MODEL_GIB_ANNOTATION] == "2.87"  # 1.54e9 parameters x 2 bytes, in GiB
    assert json.loads(annotations[workload.MODEL_SHAPE_ANNOTATION]) == {
        "headDim": 128, "kvHeads": 2, "layers": 28, "parametersBillions": 1.54, "precision": "bf16",
        "tieWordEmbeddings": False}
    # 28 layers x 2 KV heads x 128 x 2 (K and V) x 2 bytes (bf16)
    assert kv_bytes_per_token(service_model(svc), 1, 2) == 28672


def test_every_vllm_series_the_dashboard_and_the_dev_query_read_is_exported_by_the_pinned_release():
    svc = _service()
    assert svc.autoscaling is not None
    exprs = [expr for expr, _unit in dashboard.queries(svc).values()] + [svc.autoscaling.query]
    read = {name for expr in exprs for name in vllm._METRIC.findall(expr)}
    assert {"vllm:generation_tokens_total", "vllm:time_to_first_token_seconds_bucket",
            "vllm:kv_cache_usage_perc", "vllm:num_requests_waiting"} <= read
    assert [name for name in read if not vllm.exported(name)] == []


def test_a_counter_read_without_its_total_suffix_is_not_exported():
    assert vllm.unknown_metrics("rate(vllm:generation_tokens[1m])") == ["vllm:generation_tokens"]
    assert vllm.unknown_metrics("rate(vllm:generation_tokens_total[1m])") == []


def _advisories(values: dict[str, Any]) -> list[Problem]:
    config, problems, advisories = check_stack(values, region="us-west-2", today=TODAY)
    assert config is not None and problems == [], [p.render("Pulumi.dev.yaml") for p in problems]
    return [a for a in advisories if a.path[-1] == "nodePools"]


def test_bf16_weights_on_a_pool_with_a_t4_are_an_advisory_not_a_refusal():
    # Dev's gpu-spot pool allows g4dn (T4, compute capability 7.5): vLLM v0.34.0 without --dtype falls back to fp16
    # there (vllm/config/model.py:2488-2508), so the replica starts; the config warns, naming nodePools.
    [advisory] = _advisories(_dev(nodePools=["gpu-spot"]))
    assert advisory.path == ("inferenceServices", 1, "nodePools")
    assert advisory.rule.startswith("bf16 weights run as fp16 on the T4 of g4dn.xlarge (compute capability 7.5")
    assert "gemma2, gemma3, gemma3_text, glm4 models fall back to fp32" in advisory.rule
    assert advisory.fix == "pin nodePools to pools without g4dn.xlarge (an A10G, L4 or newer) to serve bf16 as trained"


def test_fp16_weights_on_a_t4_and_bf16_on_an_l4_get_no_dtype_advisory():
    assert _advisories(_dev(nodePools=["gpu-spot"], vllm__precision="fp16")) == []
    assert _advisories(_dev(nodePools=["l4-spot"], minReplicas=1)) == []  # an L4 or A10G only


def test_fp32_weights_count_two_bytes_per_parameter_as_vllm_loads_them():
    # vLLM v0.34.0 downcasts an fp32 checkpoint to bf16/fp16 without --dtype (vllm/config/model.py:2484-2486):
    # a 7B fp32 model holds about 13 GiB, and fits one 24 GiB L4.
    svc = _service(vllm__modelGiB=None, vllm__parametersBillions=7, vllm__precision="fp32")
    assert svc.vllm is not None and round(svc.vllm.weights_gib or 0, 2) == 13.04
    assert _problems(_dev(vllm__modelGiB=None, vllm__parametersBillions=7, vllm__precision="fp32")) == []
    # 14B fp32: 26.1 GiB loaded, still refused on one L4, with the loaded size in the message.
    problem = _only(_dev(vllm__modelGiB=None, vllm__parametersBillions=14, vllm__precision="fp32"))
    assert problem.path == ("inferenceServices", 1, "vllm", "parametersBillions")
    assert problem.rule.startswith("the weights (26.1 GiB per GPU) and at least 1.2 GiB of vLLM's own memory exceed")


def test_kv_cache_auto_is_the_compute_dtype_two_bytes_even_for_fp8_weights():
    # `auto` is the model's compute dtype (vllm/utils/torch_utils.py:539-545 at v0.34.0): fp8 weights still compute
    # in bf16, so 2 bytes per element, and no --kv-cache-dtype is passed.
    svc = _service(vllm__precision="fp8")
    assert kv_dtype_bytes(service_args(svc).kv_cache_dtype, 2) == 2
    assert kv_bytes_per_token(service_model(svc), 1, 2) == 28672
    assert "--kv-cache-dtype" not in vllm_workload.vllm_args(svc)


def test_a_set_kv_cache_dtype_is_counted_and_passed_to_the_server():
    svc = _service(vllm__shape__kvCacheDtype="fp8_e4m3")
    bytes_ = kv_dtype_bytes(service_args(svc).kv_cache_dtype, 2)
    assert bytes_ == 1 and kv_bytes_per_token(service_model(svc), 1, bytes_) == 14336
    args = vllm_workload.vllm_args(svc)
    assert args[args.index("--kv-cache-dtype") + 1] == "fp8_e4m3"


def test_a_kv_cache_dtype_vllm_does_not_name_is_refused():
    # bf16 is our precision spelling, not one of vLLM's CacheDType values (vllm/config/cache.py:44-58).
    [problem] = _problems(_dev(vllm__shape__kvCacheDtype="bf16"))
    assert problem.path[-1] == "kvCacheDtype"
    assert "bfloat16" in problem.render("Pulumi.dev.yaml")


def test_the_budget_is_the_cuda_total_not_the_listed_24_gib():
    # vLLM budgets the CUDA total x utilization (vllm/v1/worker/utils.py:743 at v0.34.0); an L4's is at most EC2's
    # 22888 MiB (22.35 GiB). 20.5 GiB fits 24 x 0.9 = 21.6 but not 22.35 x 0.9 = 20.1.
    problem = _only(_dev(nodePools=["l4-spot"], minReplicas=1, vllm__parametersBillions=None, vllm__modelGiB=20.5,
                         vllm__gpuMemoryUtilization=0.9))
    assert problem.path == ("inferenceServices", 1, "vllm", "modelGiB")
    assert problem.rule.startswith("the weights (20.5 GiB per GPU) exceed what vLLM may use")
    assert "(22.1-22.4 GiB each as CUDA reports it, estimated; vLLM v0.34.0)" in problem.rule
    # 19.5 GiB leaves at best 0.6 GiB, enough for one 8192-token request (0.22 GiB): not refused (on an L4 or A10G
    # only: dev's vllm-dev runs on gpu-spot, which has a T4).
    assert _problems(_dev(nodePools=["l4-spot"], minReplicas=1, vllm__parametersBillions=None, vllm__modelGiB=19.5,
                          vllm__gpuMemoryUtilization=0.9)) == []


def test_series_registered_outside_loggers_py_are_accepted_by_the_query_check():
    # vllm:cache_config_info (loggers.py:1120, named through a variable), SpecDecodingProm
    # (vllm/v1/spec_decode/metrics.py), PerfMetricsProm (vllm/v1/metrics/perf.py), the NIXL connector and websockets.
    query = ("sum(vllm:cache_config_info) + sum(rate(vllm:estimated_flops_per_gpu_total[1m])) + "
             "sum(rate(vllm:spec_decode_num_accepted_tokens_total[1m])) + sum(vllm:nixl_xfer_time_seconds_count) + "
             "sum(vllm:websocket_connections_active)")
    assert vllm.unknown_metrics(query) == []
    assert _problems(_dev(autoscaling__query=query)) == []
    # A typo of a core name is still refused, naming the nearest exported series.
    problem = _only(_dev(autoscaling__query='sum(vllm:num_request_waiting{namespace="inference"})'))
    assert problem.path == ("inferenceServices", 1, "autoscaling", "query")
    assert problem.rule.startswith("vLLM v0.34.0 exports no series vllm:num_request_waiting (no metric of that tag's ")
    assert problem.nearest == ("vllm:num_requests_waiting",)


def test_the_container_overrides_the_images_root_user_with_its_vllm_user():
    # vllm/vllm-openai:v0.34.0 keeps USER root (docker/Dockerfile:873-875, `# USER vllm` at :1385); uid 2000, gid 0
    # is the vllm user it creates (:879-880): the pod sets both, so it never runs as the image's root.
    security = workload.container(_service())["securityContext"]
    assert (security["runAsUser"], security["runAsGroup"], security["runAsNonRoot"]) == (2000, 0, True)


def test_the_pod_selector_keeps_the_services_pods_and_no_longer_named_services():
    # PromQL anchors =~ (RE2 full match): `vllm-dev-.*` would also read a `vllm-dev-canary` Deployment's pods.
    svc = _service()
    assert svc.autoscaling is not None
    selectors = set(re.findall(r'pod=~"([^"]+)"', svc.autoscaling.query))
    selectors |= {m for expr, _unit in dashboard.queries(svc).values() for m in re.findall(r'pod=~"([^"]+)"', expr)}
    assert selectors == {dashboard.pod_regex("vllm-dev")} == {"vllm-dev-[a-z0-9]+-[a-z0-9]+"}
    for selector in selectors:
        assert re.fullmatch(selector, "vllm-dev-7c9d8b6f5d-x2k4q")
        assert not re.fullmatch(selector, "vllm-dev-canary-7c9d8b6f5d-x2k4q")


def test_kv_heads_fewer_than_gpus_are_replicated_one_per_gpu():
    # Qwen2.5-1.5B has 2 KV heads; at tensor-parallel 4 vLLM gives each GPU max(1, 2 // 4) = 1 head
    # (vllm/config/model.py:1703 at v0.34.0): 4 heads' worth of KV cache in all, twice the unsharded 28672 B.
    svc = _service(gpusPerReplica=4, nodePools=["gpu-spot"])
    assert kv_bytes_per_token(service_model(svc), 4, 2) == 14336  # per GPU: 57344 B over the 4 GPUs
    assert kv_bytes_per_token(service_model(_service()), 1, 2) == 28672


# dev's L4 group: vllm-dev itself runs on the Karpenter pool gpu-spot, whose T4 no 8B bf16 model fits.
L4: dict[str, Any] = {"nodePools": ["l4-spot"], "minReplicas": 1}


def test_a_fit_inside_the_error_bar_is_a_config_advisory_with_the_margin():
    # Llama 3.1 8B (the catalog's 15 GiB, 128 KiB of KV cache a token) at 32768 tokens on the dev pool's L4/A10G:
    # 4 GiB of KV cache fits the best case of vLLM's non-KV memory, not the worst: an advisory, not a refusal.
    values = _dev(**L4, vllm__model="meta-llama/Llama-3.1-8B-Instruct", vllm__parametersBillions=None, vllm__shape=None,
                  vllm__maxModelLen=32768)
    _config, problems, advisories = check_stack(values, region="us-west-2", today=TODAY)
    assert problems == []
    [fit] = [a for a in advisories if a.path[-1] == "maxModelLen"]
    assert fit.path == ("inferenceServices", 1, "vllm", "maxModelLen")
    assert "needs 4 GiB of KV cache per GPU" in fit.rule and "a margin of" in fit.rule and "short by" in fit.rule


def test_the_models_whole_context_is_judged_when_max_model_len_is_unset():
    # Unset maxModelLen is the catalog's 131072 tokens: 16 GiB of KV cache on top of 15 GiB of weights on one L4.
    problem = _only(_dev(**L4, vllm__model="meta-llama/Llama-3.1-8B-Instruct", vllm__parametersBillions=None,
                         vllm__shape=None, vllm__maxModelLen=None))
    assert problem.path == ("inferenceServices", 1, "vllm", "maxModelLen")
    assert problem.rule.startswith("one request of --max-model-len 131072 tokens (unset: the model's context length) "
                                   "needs 16 GiB of KV cache per GPU")
    assert "Fix: lower maxModelLen to " in problem.rule and "set maxModelLen -1: vLLM fits it to memory" in problem.rule
    # -1: vLLM fits the length to the memory left, so it is not a refusal.
    assert _problems(_dev(**L4, vllm__model="meta-llama/Llama-3.1-8B-Instruct", vllm__parametersBillions=None,
                          vllm__shape=None, vllm__maxModelLen=-1)) == []


def test_llama_70b_from_the_catalog_on_one_gpu_is_refused_naming_vllm_model():
    problem = _only(_dev(**L4, vllm__model="meta-llama/Llama-3.1-70B-Instruct", vllm__parametersBillions=None,
                         vllm__shape=None))
    assert problem.path == ("inferenceServices", 1, "vllm", "model")
    assert problem.rule.startswith("the weights (131.4 GiB per GPU) and at least 1.2 GiB of vLLM's own memory exceed")


def test_max_model_len_minus_one_on_a_release_without_auto_fit_is_one_clear_error():
    problem = _only(_dev(image="vllm/vllm-openai:v0.12.0", vllm__maxModelLen=-1))
    assert problem.path == ("inferenceServices", 1, "vllm", "maxModelLen")
    assert problem.rule == ("maxModelLen -1 (vLLM fits the length to memory) arrived in vLLM v0.14.0; "
                            "vllm/vllm-openai:v0.12.0 is v0.12.0, which has no auto-fit")
