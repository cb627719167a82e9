"""vLLM's own startup refusals that follow from the model's shape, the flags and the GPU, at v0.34.0. Each returns
the message of a certain refusal (the arithmetic is exact) or None.

Sources (vllm-project/vllm @ v0.34.0):
- Attention heads not divisible by the tensor-parallel size: `ModelConfig.verify_with_parallel_config`
  raises (vllm/config/model.py:1577-1584).
- KV heads and TP that divide neither way: QKVParallelLinear `divide()` asserts (vllm/model_executor/layers/
  linear.py:1113-1119, vllm/distributed/utils.py:52-56).
- `--max-model-len` above the derived maximum (rope scaling, the tokenizer's model_max_length, LongRoPE's original
  length): `_get_and_verify_max_len` raises unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (vllm/config/model.py:2589-2730).
- An explicit `--dtype bfloat16` below compute capability 8.0 raises (vllm/platforms/cuda.py:679-697).
- Below compute capability 8.0 vLLM picks the Triton attention backend (FlashAttention and FlashInfer need 8.0,
  vllm/v1/attention/backends/flash_attn.py:458-459, flashinfer.py:698-706), which refuses an fp8 KV cache below 8.9
  and a bfloat16 KV cache below 8.0 (vllm/v1/attention/backends/triton_attn.py:513-534).
- Model types that refuse fp16 (gemma2, gemma3, gemma3_text, glm4: `_FLOAT16_NOT_SUPPORTED_MODELS`,
  vllm/config/model.py:2442-2453): with `--dtype auto` below 8.0 they run in fp32 (twice the weights and KV, counted
  by the fit); an explicit `--dtype half`/`float16` is refused.
"""

from __future__ import annotations

from .inputs import ModelInput, ServingArgs

SRC = "https://github.com/vllm-project/vllm/blob/v0.34.0/"
FP16_REFUSED_MODEL_TYPES = ("gemma2", "gemma3", "gemma3_text", "glm4")


def _cc(compute_capability: str) -> tuple[int, int]:
    major, _, minor = compute_capability.partition(".")
    return int(major), int(minor or 0)


def compute_dtype_bytes(model: ModelInput, args: ServingArgs, compute_capability: str) -> int:
    """Bytes of vLLM's compute dtype on this GPU: 4 where a model type that refuses fp16 falls back to fp32 below 8.0
    with --dtype auto (model.py:2488-2508), else 2."""
    if args.dtype in ("float32", "float"):
        return 4
    if (args.dtype == "auto" and _cc(compute_capability) < (8, 0)
            and model.model_type in FP16_REFUSED_MODEL_TYPES):
        return 4
    return 2


def shape_refusals(model: ModelInput, args: ServingArgs) -> list[tuple[str, str]]:
    """(key, message) for every refusal of the shape and the tensor-parallel size (any GPU)."""
    out: list[tuple[str, str]] = []
    tp = args.tensor_parallel
    if model.attention_heads is not None and model.attention_heads % tp:
        out.append(("gpusPerReplica",
                    f"{model.name} has {model.attention_heads} attention heads, not divisible by "
                    f"--tensor-parallel-size {tp}: vLLM refuses to start (\"Total number of attention heads ... "
                    f"must be divisible by tensor parallel size\", {SRC}vllm/config/model.py#L1577-L1584). Use a "
                    f"gpusPerReplica that divides {model.attention_heads}"))
    elif model.kv_heads is not None and (tp % model.kv_heads if tp >= model.kv_heads else model.kv_heads % tp):
        out.append(("gpusPerReplica",
                    f"{model.name} has {model.kv_heads} KV heads and --tensor-parallel-size {tp}: neither divides the "
                    f"other, and vLLM's QKV projection asserts it does ({SRC}vllm/model_executor/layers/linear.py"
                    f"#L1113-L1119). Use a gpusPerReplica that divides {model.kv_heads} or is a multiple of it"))
    limit = model.context_length
    if (limit is not None and args.max_model_len is not None and args.max_model_len > limit
            and not args.allow_long_max_model_len):
        out.append(("maxModelLen",
                    f"--max-model-len {args.max_model_len} is above {model.name}'s derived maximum of {limit} tokens: "
                    f"vLLM refuses to start (\"User-specified max_model_len ... is greater than the derived "
                    f"max_model_len\", {SRC}vllm/config/model.py#L2701-L2730). Lower maxModelLen to {limit} or less "
                    "(VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 overrides it at the risk of NaNs)"))
    if args.dtype in ("half", "float16") and model.model_type in FP16_REFUSED_MODEL_TYPES:
        out.append(("dtype", f"--dtype {args.dtype} with a {model.model_type} model: vLLM refuses float16 for it "
                             f"(numerical instability, {SRC}vllm/config/model.py#L2442-L2453). Use bfloat16 or "
                             "float32"))
    return out


def gpu_refusals(model: ModelInput, args: ServingArgs, gpu: str, compute_capability: str,
                 instance_type: str) -> list[tuple[str, str]]:
    """(key, message) for the refusals of the dtype and KV dtype on one GPU."""
    cc = _cc(compute_capability)
    out: list[tuple[str, str]] = []
    if args.dtype in ("bfloat16", "bf16") and cc < (8, 0):
        out.append(("dtype", f"--dtype bfloat16 on the {gpu} of {instance_type} (compute capability "
                             f"{compute_capability}): vLLM refuses bfloat16 below 8.0 ({SRC}vllm/platforms/cuda.py"
                             f"#L679-L697). Drop --dtype (vLLM then runs float16), or keep {instance_type} out of the "
                             "service's pools"))
    if args.kv_cache_dtype.startswith("fp8") and cc < (8, 0):
        out.append(("kvCacheDtype",
                    f"--kv-cache-dtype {args.kv_cache_dtype} on the {gpu} of {instance_type} (compute capability "
                    f"{compute_capability}): vLLM's attention backend there (Triton) refuses an fp8 KV cache below "
                    f"8.9 ({SRC}vllm/v1/attention/backends/triton_attn.py#L513-L527). Use kvCacheDtype auto "
                    f"(float16), or keep {instance_type} out of the service's pools"))
    if args.kv_cache_dtype == "bfloat16" and cc < (8, 0):
        out.append(("kvCacheDtype", f"--kv-cache-dtype bfloat16 on the {gpu} of {instance_type} (compute capability "
                                    f"{compute_capability}): vLLM's Triton attention backend refuses it below 8.0 "
                                    f"({SRC}vllm/v1/attention/backends/triton_attn.py#L528-L534). Use kvCacheDtype "
                                    "auto or float16"))
    return out
