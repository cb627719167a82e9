"""What the platform knows of one model: its shape, read from its `config.json`, and the bytes its weights take.

`ModelFacts` is one catalog row (catalog.yaml), derived from the vendored config.json by `derive.py`. The weights
are counted by tensor class (`TensorGroup`), because a quantized checkpoint does not store every tensor at the same
width: embeddings, `lm_head` and norms stay at 16 bits; linear layers take the quantized width plus their scales
(and zero points) per group.

Bytes per tensor class, per quantization method (each the layout the checkpoint stores and vLLM loads):
- none: every tensor at the compute dtype (2 bytes; an fp32 checkpoint is loaded as bf16/fp16, see
  components/config/vllm.py).
- awq (AutoAWQ GEMM layout): `qweight` in x out / (32 / bits) int32, `qzeros` in / group x out / (32 / bits) int32,
  `scales` in / group x out fp16 (vllm/model_executor/layers/quantization/auto_awq.py:424-502, `create_weights`,
  v0.34.0).
- gptq: `qweight` in / (32 / bits) x out int32, `qzeros` in / group x out / (32 / bits) int32, `scales` in / group x
  out fp16 and `g_idx` of in int32 (quantization/auto_gptq.py:339-449, `AutoGPTQLinearMethod.create_weights`).
- fp8 with `weight_block_size` [bn, bk]: the weight at 1 byte and one fp32 `weight_scale_inv` per bn x bk block
  (quantization/fp8.py:286-343, `create_weights`); per-tensor fp8 (modelopt,
  compressed-tensors "tensor" strategy): 1 byte a weight and fp32 scalars; per-channel: one scale per output row.
- mxfp4 (gpt-oss experts): 4-bit e2m1 values and one uint8 e8m0 scale per 32 values, 4.25 bits a weight
  (quantization/mxfp4.py:201-245, `create_weights`: `w13_weight` at
  hidden // 2 bytes, `w13_weight_scale` at hidden // 32); every other tensor of gpt-oss at 16 bits.
Source: https://github.com/vllm-project/vllm/tree/v0.34.0/vllm/model_executor/layers/quantization
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

TensorKind = Literal["embedding", "lm_head", "norm", "bias", "router", "linear", "expert", "vision"]
# The tensor classes a quantization method leaves at the compute dtype whatever it does to linear layers.
UNQUANTIZED_KINDS: frozenset[str] = frozenset({"embedding", "lm_head", "norm", "bias", "router", "vision"})


@dataclass(frozen=True)
class TensorGroup:
    """`count` tensors of one class and one shape: a linear layer is `in_features` x `out_features`, anything else a
    vector of `out_features` (in_features 1)."""

    name: str
    kind: TensorKind
    in_features: int
    out_features: int
    count: int

    @property
    def parameters(self) -> int:
        return self.in_features * self.out_features * self.count


@dataclass(frozen=True)
class Quantization:
    """The checkpoint's `quantization_config`, as far as the bytes go."""

    method: str  # "awq" | "gptq" | "fp8" | "mxfp4" | "compressed-tensors" | "modelopt"
    bits: int
    group_size: int | None = None  # awq/gptq: inputs per scale; None: one scale per output row or per tensor
    block: tuple[int, int] | None = None  # fp8 weight_block_size (rows, columns)
    scale_bytes: int = 4  # fp8 scales: fp32
    per_channel: bool = False  # fp8: one scale per output row
    desc_act: bool = False


@dataclass(frozen=True)
class ModelFacts:
    """One model of the catalog: the facts vLLM reads from its config.json, at a pinned revision."""

    repo_id: str
    revision: str | None  # the Hugging Face commit, where the copy we read names it
    source_url: str  # where the vendored config.json was read (a pinned GitHub permalink)
    model_type: str
    architectures: tuple[str, ...]
    layers: int
    hidden_size: int
    intermediate_size: int  # the dense MLP's; for MoE models each expert's (moe_intermediate_size where it differs)
    attention_heads: int
    kv_heads: int
    head_dim: int
    vocab_size: int
    tie_word_embeddings: bool
    max_position_embeddings: int
    derived_max_model_len: int  # the largest --max-model-len vLLM v0.34.0 accepts (without VLLM_ALLOW_LONG_...)
    torch_dtype: str | None
    quantization: str | None  # None | "awq" | "gptq" | "fp8" | "mxfp4" | "compressed-tensors" | "modelopt"
    weight_bits: int  # the width of the quantized linear layers; 16 when not quantized
    group_size: int | None
    experts: int | None
    experts_per_token: int | None
    multimodal: bool
    parameters: int
    default_max_model_len: int = 0  # what vLLM uses when --max-model-len is unset (LongRoPE: the original length)
    max_len_key: str | None = None  # the config key the derived length comes from
    sha256: str = ""  # of the vendored config.json
    config_path: str = ""  # the vendored file, relative to policies/gpu_guard/models/configs
    tensors: tuple[TensorGroup, ...] = field(default=(), repr=False)
    quant: Quantization | None = field(default=None, repr=False)

    def weight_bytes(self, compute_dtype_bytes: int = 2) -> int:
        """The bytes the GPUs hold for the weights, summed over tensor classes (module docstring)."""
        return sum(_group_bytes(group, self.quant, compute_dtype_bytes) for group in self.tensors)

    def kv_bytes_per_token(self, kv_dtype_bytes: int = 2) -> int:
        """K and V of every layer for one token at `kv_dtype_bytes` (no tensor parallelism, no sliding window)."""
        return 2 * self.layers * self.kv_heads * self.head_dim * kv_dtype_bytes


def _group_bytes(group: TensorGroup, quant: Quantization | None, dtype_bytes: int) -> int:
    n_in, n_out, count = group.in_features, group.out_features, group.count
    if quant is None or group.kind in UNQUANTIZED_KINDS:
        return group.parameters * dtype_bytes
    if quant.method == "mxfp4":
        if group.kind != "expert":  # gpt-oss quantizes the experts only (its modules_to_not_convert)
            return group.parameters * dtype_bytes
        # 4-bit values plus one byte of scale per 32 along the input dimension
        return count * (n_in * n_out // 2 + n_out * math.ceil(n_in / 32))
    if quant.method in ("awq", "gptq", "compressed-tensors-int"):
        group_size = quant.group_size if quant.group_size and quant.group_size > 0 else n_in
        groups = math.ceil(n_in / group_size)
        packed = n_in * n_out * quant.bits // 8
        zeros = groups * n_out * quant.bits // 8
        scales = groups * n_out * 2
        g_idx = n_in * 4 if quant.method == "gptq" else 0
        return count * (packed + zeros + scales + g_idx)
    if quant.bits == 8:  # fp8 (block, channel or tensor scales)
        if quant.block is not None:
            scales = math.ceil(n_out / quant.block[0]) * math.ceil(n_in / quant.block[1])
        elif quant.per_channel:
            scales = n_out
        else:
            scales = 2  # weight_scale and input_scale, per tensor
        return count * (n_in * n_out + scales * quant.scale_bytes)
    raise ValueError(f"no byte layout for quantization {quant.method!r} at {quant.bits} bits")
