"""The two inputs of the fit arithmetic, each a small dataclass so that a declared `vllm.shape`, a catalog row
(`ModelFacts`) and a hand-written Deployment's arguments all feed the same arithmetic.

`ModelInput`: what the model is (its shape and weights). `ServingArgs`: how vLLM serves it (its flags).
"""

from __future__ import annotations

from dataclasses import dataclass, field

GIB = 1024**3

# Model types whose KV cache is not K and V of every layer's full context (sliding-window layers, MLA latents,
# linear attention): a full-attention count over-estimates it, so it is an upper bound only
# (vllm/v1/kv_cache_interface.py SlidingWindowSpec, MLAAttentionSpec, MambaSpec at v0.34.0).
NOT_FULL_ATTENTION_TYPES = frozenset({
    "gemma2", "gemma3", "gemma3_text", "cohere2", "gpt_oss", "deepseek_v2", "deepseek_v3", "kimi_k2",
    "qwen3_next", "jamba", "mamba", "falcon_h1", "granitemoehybrid", "minimax", "llama4",
})


@dataclass(frozen=True)
class ModelInput:
    """A model as the fit needs it. Weights: `fixed_gib` does not change with the compute dtype (quantized tensors,
    their scales), `float_gib` is held at the compute dtype (16-bit: 2 bytes; doubled where vLLM falls back to fp32).
    `extra_gib`: what the weights may hold beyond (an upper bound's slack, e.g. a quantized model's 16-bit embeddings
    when the shape does not give them)."""

    name: str
    fixed_gib: float | None = None
    float_gib: float = 0.0
    extra_gib: float = 0.0
    layers: int | None = None
    attention_heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    hidden_size: int | None = None
    intermediate_size: int | None = None
    vocab_size: int | None = None
    context_length: int | None = None  # the derived maximum model length (rope scaling, tokenizer cap applied)
    default_max_len: int | None = None  # what vLLM uses without --max-model-len (LongRoPE: the original length)
    model_type: str | None = None
    multimodal: bool = False
    experts: int | None = None
    experts_per_token: int | None = None  # MoE: the experts each token runs through (activations)
    # The annotation InferenceService wrote before the shape's keys: K and V bytes of one token over the replica's
    # GPUs together (each GPU max(1, kv_heads // TP) heads, at the KV dtype), so one GPU holds it / TP.
    kv_bytes_replica: int | None = None
    source: str = "declared"  # "declared" or the catalog's repo id

    @property
    def weights_known(self) -> bool:
        return self.fixed_gib is not None

    def weights_gib(self, compute_bytes: int = 2) -> float:
        return (self.fixed_gib or 0.0) + self.float_gib * compute_bytes / 2

    @property
    def kv_known(self) -> bool:
        return self.kv_bytes_replica is not None or None not in (self.layers, self.kv_heads, self.head_dim)

    @property
    def full_attention(self) -> bool:
        return self.model_type not in NOT_FULL_ATTENTION_TYPES


@dataclass(frozen=True)
class ServingArgs:
    """vLLM's flags for one replica (what the stack passes, or what a Deployment's container args say)."""

    tensor_parallel: int = 1
    max_model_len: int | None = None  # None: the model's derived maximum; -1: auto-fit
    gpu_memory_utilization: float | None = None
    kv_cache_dtype: str = "auto"
    dtype: str = "auto"  # --dtype
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    enforce_eager: bool = False
    allow_long_max_model_len: bool = False  # VLLM_ALLOW_LONG_MAX_MODEL_LEN
    image: str | None = None
    unmodelled: tuple[str, ...] = field(default=())  # flags the arithmetic does not model (LoRA, speculative, ...)
