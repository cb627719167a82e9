"""Our own judge of serving-model-fits: vLLM service shapes whose outcome is derived by hand from vLLM's source
(v0.34.0 unless the case names another admitted release; docs/serving.md "How vLLM sizes its memory"), each run
through BOTH the config check (components/config/vllm_checks.py) and the pack (the real serving-model-fits policies
over the Deployment InferenceService renders), which must give the same level:

- refused: vLLM refuses to start for certain -> a mandatory finding in both;
- starts: it starts even at the worst case of the overhead's error bar -> no finding at all;
- advisory: the margin lies inside the error bar -> an advisory with the margin, no mandatory;
- unjudged: the arithmetic does not model it -> an unseen finding, never a silent pass.

Numbers used in the derivations (GiB per GPU): CUDA totals T4 14.58; A10G and L4 22.1-22.35; L40S 44.2-44.7;
A100 39.6-40 (p4d) and 79.1-80 (p4de); H100 79.10-79.18; H200 139.4-141; B200 177-179. v0.34.0 with the default
utilization (1.0, extensible KV cache) keeps at least 1.25 GiB besides the weights (a CUDA context of 0.25 and the
1 GiB margin floor, vllm/v1/worker/extensible_kv_cache.py:64, 613-617); the KV cache of one request is
cdiv(len, 16) + 1 blocks of 16 tokens of 2 x layers x max(1, kv_heads // TP) x head_dim x 2 bytes
(vllm/v1/core/kv_cache_planning.py:108-143, 214-224). Catalog weights: policies/gpu_guard/models (Llama-3.1-8B 15.0,
70B 131.4, 405B 756.0, Llama-3.2-1B 2.3, Qwen2.5-7B 14.2, Qwen3-30B-A3B 56.9, Qwen3-32B-FP8 32.0, Mixtral-8x7B 87.0,
phi-4 27.3).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config import InferenceServiceConfig
from components.config.models import GpuPool
from components.config.vllm_checks import service_args, service_model
from components.inference import workload
from policies.gpu_guard.base import all_policies, companions_of
from policies.gpu_guard.matrix import load_matrix
from policies.gpu_guard.model_fit import MODEL_ANNOTATION, fit_findings
from tests.policies.harness import run_with_caveats

REPO = Path(__file__).resolve().parents[2]
POLICIES = {p.name: p for p in all_policies()}
L8, L70 = "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct"
L405 = "meta-llama/Meta-Llama-3.1-405B"
L1, Q7, PHI4 = "meta-llama/Llama-3.2-1B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "microsoft/phi-4"
QMOE, Q32FP8, MIX = "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-32B-FP8", "mistralai/Mixtral-8x7B-v0.1"
G9, G4, AWQ70 = "google/gemma-2-9b-it", "google/gemma-3-4b-it", "PatronusAI/Llama-3.1-70B-Instruct-AWQ-INT4"
CODER = "Qwen/Qwen3-Coder-480B-A35B-Instruct"
# Qwen2.5-32B-Instruct-AWQ as declared (config.json: 64 layers, 8 KV heads, 40 heads, hidden 5120, vocab 152064,
# untied; 32.8e9 parameters, AWQ 4-bit group 128): 16-bit embeddings and lm_head 2.9 GiB + 31.2e9 x 4.16 bits 15.1
# GiB = 18.0 GiB, not the 15.3 GiB of parameters x 0.5 bytes.
AWQ32 = {"parametersBillions": 32.8, "precision": "int4", "shape": {
    "layers": 64, "kvHeads": 8, "headDim": 128, "attentionHeads": 40, "hiddenSize": 5120, "vocabSize": 152064,
    "intermediateSize": 27648, "contextLength": 32768}}
# A gemma2 of 3.8e9 parameters (7.1 GiB in bf16): below compute capability 8.0 vLLM runs it in fp32
# (vllm/config/model.py:2442-2508), 14.2 GiB, which a T4 (14.58) cannot hold with its 1.25 GiB floor.
GEMMA = {"parametersBillions": 3.8, "shape": {"layers": 26, "kvHeads": 4, "headDim": 256, "attentionHeads": 8,
                                              "modelType": "gemma2", "contextLength": 8192}}


@dataclass(frozen=True)
class Case:
    id: str
    expect: str  # refused | starts | advisory | unjudged
    instance: str
    model: str | None = None  # a catalog repo id
    declared: dict[str, Any] = field(default_factory=dict)  # vllm.* keys
    tp: int = 1
    max_len: int | None = None
    util: float | None = None
    kv: str | None = None
    image: str = "vllm/vllm-openai:v0.34.0"
    extra_args: tuple[str, ...] = ()  # pack only: flags the stack file cannot set
    env: dict[str, str] = field(default_factory=dict)  # pack only
    why: str = ""


CASES = [
    Case("70b-bf16-one-l40s", "refused", "g6e.xlarge", L70, why="131.4 GiB of weights > 44.7 GiB"),
    Case("70b-bf16-one-h100", "refused", "p5.4xlarge", L70, why="131.4 GiB > 79.18 GiB"),
    Case("70b-bf16-tp2-h100-unset-len", "refused", "p5.48xlarge", L70, tp=2,
         why="65.7/GPU + 131072 x 160 KiB = 20 GiB/GPU + 1.25 = 87 > 79.18"),
    Case("70b-bf16-tp4-h100-unset-len", "starts", "p5.48xlarge", L70, tp=4,
         why="32.9/GPU + 10 GiB KV; worst overhead (8192-token activations 6.3, margin 4.7, context+NCCL 1.5, "
             "graphs 1.5, non-torch 0.8) 14.8: 79.1 - 32.9 - 14.8 = 31.4 >= 10"),
    Case("70b-bf16-tp4-l40s-32k", "starts", "g6e.12xlarge", L70, tp=4, max_len=32768,
         why="32.9/GPU + 2.5 GiB KV; worst overhead 6.9: 44.2 - 32.9 - 6.9 = 4.4 >= 2.5"),
    Case("70b-bf16-tp8-a100-40", "starts", "p4d.24xlarge", L70, tp=8,
         why="16.4/GPU + 5 GiB KV at 131072; worst overhead about 7: 39.6 - 16.4 - 7 = 16 >= 5"),
    Case("70b-bf16-tp2-a100-80-unset-len", "refused", "p4de.24xlarge", L70, tp=2,
         why="65.7 + 20 GiB KV + 1.25 = 87 > 80"),
    Case("70b-bf16-tp2-a100-80-8k", "starts", "p4de.24xlarge", L70, tp=2, max_len=8192,
         why="65.7 + 1.25 GiB KV; worst overhead about 7 (A100: 2048 batched tokens): 79.1 - 65.7 - 7 = 6.4 >= 1.25"),
    Case("70b-bf16-one-h200-32k", "refused", "p5e.48xlarge", L70, max_len=32768,
         why="131.4 + 10 GiB KV + 1.25 = 142.7 > 141 (EC2's figure, the most the CUDA total can be)"),
    Case("405b-bf16-tp8-h100", "refused", "p5.48xlarge", L405, tp=8, why="756 / 8 = 94.5 GiB/GPU > 79.18"),
    Case("405b-bf16-tp8-b200", "starts", "p6-b200.48xlarge", L405, tp=8,
         why="94.5/GPU + 7.9 GiB KV (126 layers, 1 KV head/GPU, 131072); worst overhead 29.4 (16384 batched "
             "tokens): 177 - 94.5 - 29.4 = 53 >= 7.9"),
    Case("8b-l4-unset-len", "refused", "g6.xlarge", L8,
         why="unset maxModelLen is 131072: 16 GiB KV + 15 GiB + 1.25 = 32.3 > 22.35"),
    Case("8b-l4-8k", "starts", "g6.xlarge", L8, max_len=8192,
         why="15 + 1 GiB KV; worst overhead 5.7 (activations 1.7, margin 1.3, context 0.9, graphs 1.5, non-torch "
             "0.3): 22.1 - 15 - 5.7 = 1.4 >= 1"),
    Case("8b-l4-32k", "advisory", "g6.xlarge", L8, max_len=32768,
         why="4 GiB KV: fits the best case (22.35 - 0.25 - 15 - 1 = 6.1), not the worst (1.4)"),
    Case("8b-l4-auto", "starts", "g6.xlarge", L8, max_len=-1,
         why="-1: vLLM fits the length to memory (kv_cache_planning.py:1381-1512); one token fits"),
    Case("8b-l4-util-0.7", "refused", "g6.xlarge", L8, max_len=8192, util=0.7,
         why="0.7 x 22.35 = 15.6 - 15 = 0.65 < 1 GiB of KV"),
    Case("8b-t4", "refused", "g4dn.xlarge", L8, max_len=4096, why="15 GiB of weights > 14.58"),
    Case("8b-a10g-0.9-8k", "starts", "g5.xlarge", L8, max_len=8192, util=0.9,
         why="worst: min(0.9 x 22.1 - 15 - 1.8, 22.1 - 0.9 - 16.8 - 1.3) - 1.7 = 1.4 >= 1"),
    Case("8b-h100-unset-len", "starts", "p5.4xlarge", L8,
         why="15 + 16 GiB KV; worst overhead 13.4: 79.1 - 15 - 13.4 = 50.7 >= 16"),
    Case("8b-tp3", "refused", "g5.12xlarge", L8, tp=3, max_len=8192, why="32 attention heads % 3 != 0 (model.py:1577)"),
    Case("8b-tp8-a10g", "starts", "g5.48xlarge", L8, tp=8, max_len=8192, why="32 % 8 == 0, 8 KV heads / 8"),
    Case("qwen7b-tp8", "refused", "g5.48xlarge", Q7, tp=8, why="28 attention heads % 8 != 0"),
    Case("qwen7b-tp4", "starts", "g5.12xlarge", Q7, tp=4, why="28 / 4, 4 KV heads / 4; 3.6/GPU"),
    Case("qwen7b-len-above-context", "refused", "g6e.xlarge", Q7, max_len=65536,
         why="65536 > derived 32768 (model.py:2701-2730)"),
    Case("qwen7b-len-above-context-allowed", "starts", "g6e.xlarge", Q7, max_len=65536,
         env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"},
         why="VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 lifts it; 14.2 + 3.5 GiB KV on 44.2"),
    Case("8b-len-above-context", "refused", "p5.4xlarge", L8, max_len=200000, why="200000 > 131072"),
    Case("phi4-tp4", "refused", "g5.12xlarge", PHI4, tp=4,
         why="10 KV heads and TP 4: neither divides (linear.py:1113)"),
    Case("phi4-tp8", "refused", "g5.48xlarge", PHI4, tp=8, why="40 heads / 8 but 10 KV heads % 8 != 0"),
    Case("phi4-tp2-a10g", "starts", "g5.12xlarge", PHI4, tp=2,
         why="13.7/GPU + 1.6 GiB KV (16384); worst overhead 6.3: 22.1 - 13.7 - 6.3 = 2.1 >= 1.6"),
    Case("1b-t4-8k", "starts", "g4dn.xlarge", L1, max_len=8192, why="2.3 GiB + 0.25 GiB KV on 14.58"),
    Case("1b-t4-unset-len", "starts", "g4dn.xlarge", L1,
         why="2.3 + 4 GiB KV (131072 x 32 KiB); worst overhead 5.4: 14.58 - 2.3 - 5.4 = 6.9 >= 4"),
    Case("1b-t4-fp8-kv", "refused", "g4dn.xlarge", L1, max_len=8192, kv="fp8",
         why="Triton (the backend below 8.0) refuses fp8 KV below 8.9 (triton_attn.py:513-527)"),
    Case("1b-t4-bf16-kv", "refused", "g4dn.xlarge", L1, max_len=8192, kv="bfloat16",
         why="Triton refuses a bfloat16 KV cache below 8.0 (triton_attn.py:528-534)"),
    Case("1b-l4-fp8-kv", "starts", "g6.xlarge", L1, max_len=8192, kv="fp8", why="8.9: fp8 KV runs"),
    Case("1b-t4-dtype-bf16", "refused", "g4dn.xlarge", L1, max_len=8192, extra_args=("--dtype", "bfloat16"),
         why="explicit --dtype bfloat16 below 8.0 (cuda.py:679-697)"),
    Case("gemma2-fp32-on-t4", "refused", "g4dn.xlarge", declared=GEMMA, max_len=4096,
         why="fp32 fallback: 14.2 GiB + 1.25 > 14.58"),
    Case("gemma2-bf16-on-l4", "starts", "g6.xlarge", declared=GEMMA, max_len=4096, why="7.1 GiB in bf16 on 22.1"),
    Case("awq32-l4-16k", "refused", "g6.xlarge", declared=AWQ32, max_len=16384,
         why="18.0 GiB (16-bit embeddings counted) + 4 GiB KV + 1.25 = 23.3 > 22.35; params x bytes would pass"),
    Case("awq32-l40s-16k", "starts", "g6e.xlarge", declared=AWQ32, max_len=16384,
         why="18 + 4 GiB KV; worst overhead 6.6: 44.2 - 18 - 6.6 = 19.6 >= 4"),
    Case("mixtral-one-h100", "refused", "p5.4xlarge", MIX, why="every expert counts: 87.0 GiB > 79.18"),
    Case("mixtral-tp4-l40s", "starts", "g6e.12xlarge", MIX, tp=4,
         why="21.8/GPU + 1 GiB KV (32768, 2 KV heads/GPU); worst overhead about 7: 44.2 - 21.8 - 7 >= 1"),
    Case("qwen3-moe-one-l40s", "refused", "g6e.xlarge", QMOE, why="56.9 GiB > 44.7"),
    Case("qwen3-moe-one-h100-32k", "starts", "p5.4xlarge", QMOE, max_len=32768,
         why="56.9 + 3 GiB KV; worst overhead 16 (top-8 expert activations): 79.1 - 56.9 - 16 = 6 >= 3"),
    Case("qwen3-32b-fp8-one-a10g", "refused", "g5.xlarge", Q32FP8, max_len=8192, why="32.0 GiB > 22.35"),
    Case("qwen3-32b-fp8-one-l40s-16k", "starts", "g6e.xlarge", Q32FP8, max_len=16384,
         why="32 + 4 GiB KV; worst overhead 6.4: 44.2 - 32 - 6.4 = 5.8 >= 4"),
    Case("gemma2-9b-one-t4", "refused", "g4dn.xlarge", G9,
         why="17.2 GiB in bf16, 34.4 in vLLM's fp32 fallback > 14.58"),
    Case("gemma2-9b-one-l4", "advisory", "g6.xlarge", G9,
         why="17.2 + 1.25 fits 22.35; half its layers slide (4096), so the full-attention 2.7 GiB of KV cache is an "
             "upper bound only: it cannot refuse, and the worst case (activations over a 256000 vocabulary) does not "
             "fit"),
    Case("gemma3-4b-multimodal", "unjudged", "g6.xlarge", G4, max_len=8192, why="its vision encoder is not modelled"),
    Case("70b-awq-one-l40s-unset-len", "refused", "g6e.xlarge", AWQ70,
         why="37.0 GiB (16-bit embeddings, lm_head and norms; 4-bit layers with group scales) + 40 GiB of KV cache "
             "at 131072 > 44.7"),
    Case("70b-awq-one-l40s-8k", "advisory", "g6e.xlarge", AWQ70, max_len=8192,
         why="37 + 2.5 GiB KV: 6.5 GiB left at best, 0.3 at worst"),
    Case("coder-480b-tp8-h100", "refused", "p5.48xlarge", CODER, tp=8, max_len=32768,
         why="every expert counts: 894.4 / 8 = 111.8 GiB/GPU > 79.18"),
    Case("tp4-on-one-gpu", "refused", "g6.xlarge", L1, tp=4, max_len=8192, why="TP 4 needs 4 GPUs; g6.xlarge has 1"),
    Case("v0.20-8b-l4-8k", "starts", "g6.xlarge", L8, max_len=8192, image="vllm/vllm-openai:v0.20.0",
         why="v0.20.0: 0.92 default, no extensible cache, graphs outside the budget: 0.92 x 22.1 - 15 - 1.7 - 0.3 = "
             "3.3 >= 1"),
    Case("v0.12-8b-l4-8k", "starts", "g6.xlarge", L8, max_len=8192, image="vllm/vllm-openai:v0.12.0",
         why="v0.12.0: 0.9 default: 0.9 x 22.1 - 15 - 2 = 2.9 >= 1"),
    Case("v0.12-8b-l4-unset-len", "refused", "g6.xlarge", L8, image="vllm/vllm-openai:v0.12.0",
         why="0.9 x 22.35 - 15 = 5.1 < 16 GiB of KV at 131072"),
    Case("v0.20-util-1.0", "refused", "g6.xlarge", L1, max_len=8192, util=1.0, image="vllm/vllm-openai:v0.20.0",
         why="before v0.34.0 the budget (1.0 x total) must be free at start, and the CUDA context is not "
             "(vllm/v1/worker/utils.py request_memory)"),
    Case("v0.34-util-1.0", "starts", "g6.xlarge", L1, max_len=8192, util=1.0,
         why="with the extensible KV cache the budget is a cap (utils.py:783-788): 1.0 is the default"),
    Case("v0.12-auto-len", "unjudged", "g6.xlarge", L8, max_len=-1, image="vllm/vllm-openai:v0.12.0",
         why="-1 arrived in v0.14.0: not modelled before"),
    Case("unread-release", "unjudged", "g6.xlarge", L8, max_len=8192, image="vllm/vllm-openai:v0.11.0",
         why="v0.11.0 is no admitted release whose rules were read"),
    Case("lora", "unjudged", "g6.xlarge", L8, max_len=8192, extra_args=("--enable-lora", "--max-lora-rank", "64"),
         why="LoRA memory is not modelled"),
    Case("speculative", "unjudged", "g6.xlarge", L8, max_len=8192,
         extra_args=("--speculative-config", '{"method": "ngram"}'), why="speculative decoding is not modelled"),
    Case("pipeline-parallel", "unjudged", "g5.12xlarge", L8, max_len=8192,
         extra_args=("--pipeline-parallel-size", "2"), why="pipeline parallelism is not modelled"),
    Case("cpu-offload", "unjudged", "g6.xlarge", L8, max_len=8192, extra_args=("--cpu-offload-gb", "8"),
         why="CPU offload is not modelled"),
    Case("kv-cache-memory-bytes", "unjudged", "g6.xlarge", L8, max_len=8192,
         extra_args=("--kv-cache-memory-bytes", "4000000000"), why="--kv-cache-memory-bytes is not modelled"),
    Case("no-model-facts", "unjudged", "g6.xlarge", why="neither a catalog model nor a declared size"),
]


@cache
def _dev_service() -> dict[str, Any]:
    config = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())["config"]
    return next(s for s in config["gpu-platform:inferenceServices"] if s.get("runtime") == "vllm")


def _service(case: Case) -> InferenceServiceConfig:
    raw = copy.deepcopy(_dev_service())
    raw["image"] = case.image
    raw["gpusPerReplica"] = case.tp
    raw["nodePools"] = ["p"]
    vllm = {k: v for k, v in raw["vllm"].items() if k in ("modelPath", "servedModelName")}
    if case.model is not None:
        vllm["model"] = case.model  # the catalog's facts; InferenceService writes gpu-platform.io/model
    vllm.update(copy.deepcopy(case.declared))
    if case.max_len is not None:
        vllm["maxModelLen"] = case.max_len
    if case.util is not None:
        vllm["gpuMemoryUtilization"] = case.util
    if case.kv is not None:
        vllm.setdefault("shape", {"layers": 16, "kvHeads": 8, "headDim": 64})["kvCacheDtype"] = case.kv
    raw["vllm"] = vllm
    return InferenceServiceConfig.model_validate(raw)


def _config_findings(case: Case, service: InferenceServiceConfig) -> list[Any]:
    return fit_findings(load_matrix(), service_model(service), service_args(service), [case.instance])


def _config_levels(case: Case, service: InferenceServiceConfig) -> set[str]:
    return {f.level for f in _config_findings(case, service)}


def _pack_levels(case: Case, service: InferenceServiceConfig) -> tuple[set[str], list[str]]:
    pool = GpuPool(name="p", kind="karpenter", os="bottlerocket", driver_version="580", kubelet_version="1.35",
                   instance_types=(case.instance,), use_precompiled=False, path=("nodePools", 0),
                   driver_path=("nodePools", 0))
    manifest = workload.deployment(service, [pool], "12.9", None)
    assert manifest["metadata"]["annotations"].get(MODEL_ANNOTATION) == case.model
    container = manifest["spec"]["template"]["spec"]["containers"][0]
    container["args"] = [*container["args"], *case.extra_args]
    container["env"] = [*container.get("env", []), *({"name": k, "value": v} for k, v in case.env.items())]
    resources = [{"type": "kubernetes:apps/v1:Deployment", "name": service.name, "props": manifest}]
    policy = POLICIES["serving-model-fits"]
    outcome = run_with_caveats(policy, list(companions_of(policy.name)), resources, None)
    levels = {"unseen" if v.policy.endswith("-unseen") else "advisory" if v.policy.endswith("-caveats") else "mandatory"
              for v in outcome.violations}
    return levels, list(outcome.messages)


EXPECTED = {"refused": lambda s: "mandatory" in s, "starts": lambda s: not s,
            "advisory": lambda s: "advisory" in s and "mandatory" not in s,
            "unjudged": lambda s: "unseen" in s and "mandatory" not in s}


def test_the_table_has_at_least_40_cases_with_both_outcomes() -> None:
    assert len(CASES) >= 40
    assert len({c.id for c in CASES}) == len(CASES)
    kinds = [c.expect for c in CASES]
    assert kinds.count("refused") >= 15 and kinds.count("starts") >= 15


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_each_case_gets_its_level_from_the_pack_and_the_config_check_alike(case: Case) -> None:
    service = _service(case)
    pack, messages = _pack_levels(case, service)
    assert EXPECTED[case.expect](pack), f"{case.id} ({case.why}): pack gave {pack}: {json.dumps(messages, indent=1)}"
    if case.extra_args or case.env:
        return  # flags the stack file cannot set: the pack alone judges them
    config = _config_levels(case, service)
    assert config == pack, f"{case.id}: config check {config} != pack {pack}"
    # The same words: each pack message is "<workload>: <the config check's message>".
    words = {f.message for f in _config_findings(case, service)}
    assert {m.split("): ", 1)[1] for m in messages} == words, case.id
