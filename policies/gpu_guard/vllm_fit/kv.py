"""The KV cache one request of `--max-model-len` tokens needs on one GPU, as vLLM v0.34.0 plans it.

- Per token and layer: K and V of the GPU's KV heads, `head_size` each, at the KV dtype's size
  (`FullAttentionSpec.page_size_bytes`, vllm/v1/kv_cache_interface.py:590-601).
- Per GPU: max(1, kv_heads // TP) heads; below TP vLLM replicates them (`ModelConfig.get_num_kv_heads`,
  vllm/config/model.py:1683-1703; QKVParallelLinear, vllm/model_executor/layers/linear.py:1114-1119).
- KV dtype `auto` is the model's compute dtype (`kv_cache_dtype_str_to_dtype`, vllm/utils/torch_utils.py:539-545);
  fp8 variants 1 byte.
- One request needs cdiv(max_model_len, block_size) blocks (`max_memory_usage_bytes`, kv_cache_planning.py:139-143;
  block size 16), and the pool keeps one null block back (kv_cache_planning.py:214-224, 1631-1640).
"""

from __future__ import annotations

from .inputs import GIB, ModelInput

BLOCK_SIZE = 16
KV_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "float32": 4}


def kv_dtype_bytes(kv_cache_dtype: str, compute_bytes: int) -> int | None:
    if kv_cache_dtype == "auto":
        return compute_bytes
    return KV_DTYPE_BYTES.get(kv_cache_dtype)


def kv_bytes_per_token(model: ModelInput, tensor_parallel: int, dtype_bytes: int) -> int:
    """K and V bytes of one token on one GPU of the replica."""
    if model.kv_bytes_replica is not None and model.layers is None:
        return model.kv_bytes_replica // tensor_parallel  # already at the KV dtype the annotation was written for
    assert model.layers is not None and model.kv_heads is not None and model.head_dim is not None
    heads = max(1, model.kv_heads // tensor_parallel)
    return 2 * model.layers * heads * model.head_dim * dtype_bytes


def one_request_gib(model: ModelInput, tensor_parallel: int, dtype_bytes: int, tokens: int) -> float:
    """GiB of KV cache per GPU for one request of `tokens` tokens, with the null block."""
    blocks = -(-tokens // BLOCK_SIZE) + 1
    return blocks * BLOCK_SIZE * kv_bytes_per_token(model, tensor_parallel, dtype_bytes) / GIB


def longest_fitting(model: ModelInput, tensor_parallel: int, dtype_bytes: int, kv_gib: float) -> int:
    """The longest max_model_len whose one request fits `kv_gib` per GPU (0 if none)."""
    per_block = BLOCK_SIZE * kv_bytes_per_token(model, tensor_parallel, dtype_bytes) / GIB
    blocks = int(kv_gib / per_block) - 1 if per_block > 0 else 0
    return max(0, blocks * BLOCK_SIZE)
