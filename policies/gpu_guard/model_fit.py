"""Does a vLLM replica start on the GPUs it asks for? The shared front of `serving-model-fits`: the policy
(rules/serving_model_fits.py) and the config check (components/config/vllm_checks.py) both build the same two
inputs here and call the same arithmetic (policies/gpu_guard/vllm_fit/, computed as vLLM computes it at each admitted
release), so both give the same level with the same words before any resource exists.

- `declared_model(facts)`: a model from its declared facts (camelCase keys, as `vllm.shape` and the
  `gpu-platform.io/model-shape` annotation spell them), or from a catalog row.
- `serving_args(words, ...)`: vLLM's flags from a container's words (`vllm serve <model> --flag value ...`); the
  config check passes the same flags it writes.

Weights (vllm-project/vllm @ v0.34.0): 16-bit checkpoints are held at the compute dtype (bf16/fp16 2 bytes; fp32
checkpoints are downcast without --dtype, vllm/config/model.py:2484-2486); quantized checkpoints keep the embeddings,
lm_head and norms at 16 bits (they are not quantized: vllm/model_executor/layers/vocab_parallel_embedding.py,
quantization configs skip them), and int4 group quantization stores one 16-bit scale and one 4-bit zero per group of
128 weights (AWQ/GPTQ: 4.156 bits per weight).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .models import lookup
from .vllm_fit import GIB, FitFinding, ModelInput, ServingArgs, fit_findings

RULE = "serving-model-fits"
MODEL_ANNOTATION = "gpu-platform.io/model"
BYTES_PER_PARAMETER: dict[str, float] = {"fp32": 2, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}
INT4_GROUP_OVERHEAD = (16 + 4) / 128 / 4  # one fp16 scale and one 4-bit zero per 128 weights, over 4 bits
SHAPE_KEYS = {"layers": "layers", "kvHeads": "kv_heads", "headDim": "head_dim", "attentionHeads": "attention_heads",
              "hiddenSize": "hidden_size", "intermediateSize": "intermediate_size", "vocabSize": "vocab_size",
              "contextLength": "context_length", "experts": "experts", "expertsPerToken": "experts_per_token"}

__all__ = ["MODEL_ANNOTATION", "RULE", "FitFinding", "ModelInput", "ServingArgs", "declared_model", "fit_findings",
           "serving_args"]


def _num(value: object) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(str(value))
    except ValueError:
        return None


def declared_model(facts: Mapping[str, Any], name: str = "the model") -> ModelInput:
    """A model from declared facts: modelGiB, or parametersBillions with precision; the shape keys; modelType."""
    shape = {attr: int(v) for key, attr in SHAPE_KEYS.items() if (v := _num(facts.get(key))) is not None}
    precision = str(facts.get("precision") or "bf16")
    model_gib, params = _num(facts.get("modelGiB")), _num(facts.get("parametersBillions"))
    fixed: float | None = None
    floating = extra = 0.0
    quantized = precision in ("fp8", "int8", "int4")
    if model_gib is None and params is None and _num(facts.get("_fixedGiB")) is not None:  # a catalog row's weights
        fixed, floating = _num(facts.get("_fixedGiB")), _num(facts.get("_floatGiB")) or 0.0
    elif model_gib is not None:
        fixed, floating = (model_gib, 0.0) if quantized else (0.0, model_gib)
    elif params is not None:
        total = params * 1e9
        if not quantized:
            fixed, floating = 0.0, total * 2 / GIB
        else:
            per = BYTES_PER_PARAMETER[precision] * (1 + (INT4_GROUP_OVERHEAD if precision == "int4" else 0.0))
            vocab, hidden = shape.get("vocab_size"), shape.get("hidden_size")
            if vocab and hidden:
                embed = vocab * hidden * (1 if facts.get("tieWordEmbeddings") else 2)
                fixed, floating = (total - embed) * per / GIB, embed * 2 / GIB
            else:  # the 16-bit embeddings are not given: counted at the quantized size, up to a quarter at 16 bits
                fixed, extra = total * per / GIB, 0.25 * total * (2 - per) / GIB
    default_len = _num(facts.get("_defaultMaxModelLen"))
    legacy = _num(facts.get("kvBytesPerToken"))  # the annotation's earlier form
    if legacy is not None and "layers" not in shape:
        shape["kv_bytes_replica"] = int(legacy)
    return ModelInput(name=str(facts.get("name") or name), fixed_gib=fixed,
                      default_max_len=int(default_len) if default_len else None, float_gib=floating, extra_gib=extra,
                      model_type=(str(facts["modelType"]) if facts.get("modelType") else None),
                      multimodal=bool(facts.get("multimodal")), source=str(facts.get("source") or "declared"),
                      **shape)


def catalog_facts(repo_id: str) -> dict[str, Any] | None:
    """A catalog model's facts (policies/gpu_guard/models) in declared_model's keys; None when not in the catalog.
    Declared keys laid over them override them."""
    facts = lookup(repo_id)
    if facts is None:
        return None
    at16, at32 = facts.weight_bytes(2), facts.weight_bytes(4)
    floating = (at32 - at16) / GIB  # the tensors held at the compute dtype, at 2 bytes
    return {"name": facts.repo_id, "source": facts.repo_id, "_fixedGiB": at16 / GIB - floating, "_floatGiB": floating,
            "layers": facts.layers, "kvHeads": facts.kv_heads, "headDim": facts.head_dim,
            "attentionHeads": facts.attention_heads, "hiddenSize": facts.hidden_size,
            "intermediateSize": facts.intermediate_size, "vocabSize": facts.vocab_size,
            "contextLength": facts.derived_max_model_len,
            "_defaultMaxModelLen": facts.default_max_model_len or facts.derived_max_model_len,
            "modelType": facts.model_type, "multimodal": facts.multimodal, "experts": facts.experts,
            "expertsPerToken": facts.experts_per_token,
            "tieWordEmbeddings": facts.tie_word_embeddings}


def _human_int(value: str) -> int | None:
    """vLLM's human-readable integers (`human_readable_int`, vllm/utils/argparse_utils.py:30-75): 32k, 32K, -1, auto."""
    value = value.strip()
    if value == "auto":
        return -1
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgG])", value)
    if match:
        number, suffix = match.groups()
        mult = {"k": 10**3, "m": 10**6, "g": 10**9, "K": 2**10, "M": 2**20, "G": 2**30}[suffix]
        return int(float(number) * mult)
    try:
        return int(value)
    except ValueError:
        return None


def _flag(words: Sequence[str], *names: str) -> str | None:
    found: str | None = None
    for i, word in enumerate(words):
        for name in names:
            if word == name and i + 1 < len(words):
                found = words[i + 1]
            elif word.startswith(f"{name}="):
                found = word.split("=", 1)[1]
    return found


def _on(words: Sequence[str], name: str) -> bool:
    return any(w in (name, f"{name}=true", f"{name}=True") for w in words)


def serving_args(words: Sequence[str], *, image: str | None, env: Mapping[str, str] | None = None,
                 tensor_parallel: int | None = None) -> ServingArgs:
    """vLLM's flags from a container's words; what the arithmetic does not model goes to `unmodelled`."""
    env = env or {}
    tp = _num(_flag(words, "--tensor-parallel-size", "-tp"))
    unmodelled: list[str] = []
    for flag, label in (("--pipeline-parallel-size", "pipeline parallelism"), ("-pp", "pipeline parallelism"),
                        ("--data-parallel-size", "data parallelism"), ("-dp", "data parallelism")):
        if (_num(_flag(words, flag)) or 1) > 1 and label not in unmodelled:
            unmodelled.append(label)
    for flag, label in (("--enable-lora", "LoRA"), ("--enable-expert-parallel", "expert parallelism"),
                        ("-ep", "expert parallelism")):
        if _on(words, flag) and label not in unmodelled:
            unmodelled.append(label)
    for flag, label in (("--max-lora-rank", "LoRA"),
                        ("--speculative-config", "speculative decoding"),
                        ("--kv-cache-memory-bytes", "--kv-cache-memory-bytes"),
                        ("--kv-cache-memory", "--kv-cache-memory-bytes"),
                        ("--kv-offloading-size", "KV offloading")):
        if _flag(words, flag) is not None and label not in unmodelled:
            unmodelled.append(label)
    if (_num(_flag(words, "--cpu-offload-gb")) or 0) > 0:
        unmodelled.append("CPU offload (--cpu-offload-gb)")
    raw_len = _flag(words, "--max-model-len")
    return ServingArgs(
        tensor_parallel=int(tp) if tp else (tensor_parallel or 1),
        max_model_len=_human_int(raw_len) if raw_len is not None else None,
        gpu_memory_utilization=_num(_flag(words, "--gpu-memory-utilization", "--device-memory-utilization")),
        kv_cache_dtype=_flag(words, "--kv-cache-dtype") or "auto",
        dtype=_flag(words, "--dtype") or "auto",
        max_num_batched_tokens=_human_int(v) if (v := _flag(words, "--max-num-batched-tokens")) else None,
        max_num_seqs=_human_int(v) if (v := _flag(words, "--max-num-seqs")) else None,
        enforce_eager=_on(words, "--enforce-eager"),
        allow_long_max_model_len=str(env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "")).lower() in ("1", "true"),
        image=image, unmodelled=tuple(unmodelled))


def model_argument(words: Sequence[str]) -> str | None:
    """The model `vllm serve <model>` (or --model) names; with the image's own entrypoint (`vllm serve`,
    docker/Dockerfile:1386 at v0.34.0) the container's first argument."""
    for i, word in enumerate(words):
        if word == "vllm" and i + 2 < len(words) and words[i + 1] == "serve" and not words[i + 2].startswith("-"):
            return words[i + 2]
    flag = _flag(words, "--model")
    if flag is None and words and not words[0].startswith("-") and "/" in words[0] and not words[0].rsplit(
            "/", 1)[-1].startswith(("python", "vllm", "sh", "bash")):
        return words[0]
    return flag
