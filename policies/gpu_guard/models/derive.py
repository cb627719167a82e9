"""From a model's config.json to its `ModelFacts`: the shape, the tensors by class, the quantization, the context.

Keys a config.json leaves out take the default of Transformers' config class (the value `from_pretrained` would
give), which vLLM then reads:
- `tie_word_embeddings`: True (`PretrainedConfig.__init__`; the Gemma classes say True too);
- `num_key_value_heads`: `num_attention_heads` (LlamaConfig, Qwen2Config, MistralConfig ...);
- `head_dim`: `hidden_size // num_attention_heads` (vLLM's `ModelConfig.get_head_size`, vllm/config/model.py);
- `attention_bias` (llama): False; `mlp_bias` (llama): False.

Tensors per decoder layer (Transformers' modeling files of each model type, which vLLM's mirror):
- attention: q (hidden x heads*head_dim), k and v (hidden x kv_heads*head_dim), o (heads*head_dim x hidden); biases
  on q/k/v for qwen2 (always), on q/k/v/o where `attention_bias` (llama, gpt_oss); q/k RMSNorm of head_dim for
  qwen3, qwen3_moe and gemma3;
- MLP: gate, up (hidden x intermediate) and down (intermediate x hidden); MoE: that per expert, plus a router of
  hidden x experts (with a bias for gpt_oss, whose experts have biases too, and attention sinks per head);
- norms: 2 of hidden per layer (4 for gemma2/gemma3), and the final one.

The maximum context is vLLM v0.34.0's `_get_and_verify_max_len` (vllm/config/model.py:2589-2728) over
`derive_max_model_len_and_key` (vllm/transformers_utils/model_arch_config_convertor.py:375-408):
- the smallest of the keys it lists (max_position_embeddings, n_positions, max_seq_len, seq_length,
  model_max_length, max_target_positions, max_sequence_length, max_seq_length, seq_len), then `model_max_length`
  where set, read from the text config (`text_config` of a multimodal model, vllm/transformers_utils/config.py:1303);
- times the RoPE `factor` unless the rope type is su, longrope, llama3, yarn, deepseek_yarn or
  deepseek_llama_scaling (those leave max_position_embeddings already scaled), and never for gemma3
  (model.py:2642-2678);
- with `--max-model-len` unset, LongRoPE models start at `original_max_position_embeddings` (model.py:2680-2697).
The tokenizer's `model_max_length` caps it only for pooling models with absolute position embeddings
(model.py:2191-2202), none of which is in the catalog; a sliding window caps it only with
`--disable-sliding-window` (model.py:2605-2612), which the stack never passes.
Source: https://github.com/vllm-project/vllm/blob/v0.34.0/vllm/config/model.py#L2589-L2728
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .facts import ModelFacts, Quantization, TensorGroup

# Rope types whose max_position_embeddings is already the scaled context (model.py:2652-2666 at v0.34.0).
_SCALED_ROPE_TYPES = frozenset({"su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"})
_MAX_LEN_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                 "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")
# The model types this module can count; another needs its tensors written down before it joins the catalog.
SUPPORTED_MODEL_TYPES = frozenset({"llama", "mistral", "qwen2", "qwen3", "phi3", "gemma2", "gemma3", "gemma3_text",
                                   "mixtral", "qwen3_moe", "gpt_oss"})


# Keys Gemma 3's config.json leaves out of `text_config`, at Gemma3TextConfig's defaults (what `from_pretrained`
# fills in, and vLLM reads): transformers v4.50.0, the first release with Gemma 3.
# Source: https://github.com/huggingface/transformers/blob/v4.50.0/src/transformers/models/gemma3/configuration_gemma3.py#L172-L200
_CLASS_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {"vocab_size": 262_208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
                    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
                    "max_position_embeddings": 131_072, "tie_word_embeddings": True},
}


class ConfigShapeError(ValueError):
    """The config.json cannot be read into facts (a missing key, an unknown model type or quantization)."""


@dataclass(frozen=True)
class Provenance:
    """Where a catalog row's config.json was read, and what it is checked against."""

    repo_id: str
    revision: str | None
    source_url: str
    sha256: str
    config_path: str


def _require(cfg: Mapping[str, Any], key: str, where: str) -> Any:
    value = cfg.get(key)
    if value is None:
        raise ConfigShapeError(f"{where}: config.json has no {key!r}")
    return value


def text_config(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    """The language model's config: `text_config` of a multimodal model, else the config itself; keys it leaves out
    at its Transformers class's defaults where the catalog records them (`_CLASS_DEFAULTS`)."""
    inner = cfg.get("text_config")
    text = inner if isinstance(inner, Mapping) else cfg
    return {**_CLASS_DEFAULTS.get(str(text.get("model_type", "")), {}), **text}


def rope_parameters(text: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The rope settings vLLM iterates (`rope_parameters`, or the legacy `rope_scaling`), one per layer type."""
    params = text.get("rope_parameters") or text.get("rope_scaling")
    if not isinstance(params, Mapping) or not params:
        return []
    nested = [p for p in params.values() if isinstance(p, Mapping)]
    return [p for p in nested if p] if nested and len(nested) == len(params) else [params]


def _rope_type(params: Mapping[str, Any]) -> str:
    kind = params.get("rope_type", params.get("type", "default"))
    return "longrope" if kind == "su" else str(kind)


def max_model_len(cfg: Mapping[str, Any], where: str) -> tuple[int, int, str | None]:
    """(derived maximum, default when --max-model-len is unset, the key it comes from), as vLLM v0.34.0 derives."""
    text = text_config(cfg)
    derived: float = float("inf")
    key: str | None = None
    for name in _MAX_LEN_KEYS:
        value = text.get(name)
        if value is not None and value < derived:
            derived, key = value, name
    if text.get("model_max_length"):
        derived, key = text["model_max_length"], "model_max_length"
    if derived == float("inf"):
        raise ConfigShapeError(f"{where}: config.json has none of the keys vLLM reads the context from "
                               f"({', '.join(_MAX_LEN_KEYS)}); vLLM would assume 2048")
    rope = rope_parameters(text)
    model_type = str(text.get("model_type", cfg.get("model_type", "")))
    if rope and "gemma3" not in model_type:
        factor = 1.0
        for params in rope:
            if _rope_type(params) not in _SCALED_ROPE_TYPES:
                factor = params.get("factor", factor) or 1.0
        derived *= factor
    maximum = int(derived)
    default = maximum
    if any(_rope_type(p) == "longrope" for p in rope):
        default = int(text.get("original_max_position_embeddings", maximum))
    return maximum, default, key


def _quantization(cfg: Mapping[str, Any], where: str) -> Quantization | None:
    q = cfg.get("quantization_config")
    if not isinstance(q, Mapping):
        return None
    method = str(q.get("quant_method", ""))
    if method in ("awq", "gptq"):
        bits = int(q.get("bits", q.get("w_bit", 4)))
        group = int(q.get("group_size", q.get("q_group_size", 128)))
        return Quantization(method, bits, group_size=group, desc_act=bool(q.get("desc_act", False)))
    if method == "fp8":
        block = q.get("weight_block_size")
        return Quantization("fp8", 8, block=(int(block[0]), int(block[1])) if block else None)
    if method == "mxfp4":
        return Quantization("mxfp4", 4, group_size=32, scale_bytes=1)
    if method == "compressed-tensors":
        return _compressed_tensors(q, where)
    raise ConfigShapeError(f"{where}: quantization {method!r} has no byte layout in the catalog")


def _compressed_tensors(q: Mapping[str, Any], where: str) -> Quantization:
    groups = q.get("config_groups") or {}
    schemes = [g.get("weights") for g in groups.values() if isinstance(g, Mapping)]
    if len(schemes) != 1 or not isinstance(schemes[0], Mapping):
        raise ConfigShapeError(f"{where}: compressed-tensors with {len(schemes)} weight schemes is not counted")
    w = schemes[0]
    bits, strategy, kind = int(w["num_bits"]), str(w.get("strategy")), str(w.get("type"))
    if kind == "float" and bits == 8:
        return Quantization("compressed-tensors", 8, per_channel=strategy == "channel",
                            scale_bytes=2 if strategy == "channel" else 4)
    if kind == "int" and strategy == "group":
        return Quantization("compressed-tensors-int", bits, group_size=int(w["group_size"]))
    raise ConfigShapeError(f"{where}: compressed-tensors {kind}{bits} ({strategy}) has no byte layout")


def _decoder_tensors(text: Mapping[str, Any], shape: dict[str, int], model_type: str) -> list[TensorGroup]:
    h, n_layers = shape["hidden_size"], shape["layers"]
    q_out = shape["attention_heads"] * shape["head_dim"]
    kv_out = shape["kv_heads"] * shape["head_dim"]
    groups = [
        TensorGroup("q_proj", "linear", h, q_out, n_layers),
        TensorGroup("k_proj", "linear", h, kv_out, n_layers),
        TensorGroup("v_proj", "linear", h, kv_out, n_layers),
        TensorGroup("o_proj", "linear", q_out, h, n_layers),
    ]
    qkv_bias = model_type == "qwen2" or bool(text.get("attention_bias", False))
    if qkv_bias:
        groups.append(TensorGroup("qkv_bias", "bias", 1, q_out + 2 * kv_out, n_layers))
    if bool(text.get("attention_bias", False)) and model_type in ("llama", "gpt_oss"):
        groups.append(TensorGroup("o_bias", "bias", 1, h, n_layers))
    if model_type in ("qwen3", "qwen3_moe", "gemma3", "gemma3_text"):
        groups.append(TensorGroup("qk_norm", "norm", 1, 2 * shape["head_dim"], n_layers))
    norms_per_layer = 4 if model_type in ("gemma2", "gemma3", "gemma3_text") else 2
    groups.append(TensorGroup("layer_norms", "norm", 1, norms_per_layer * h, n_layers))
    groups.append(TensorGroup("final_norm", "norm", 1, h, 1))
    experts = shape.get("experts", 0)
    if experts:
        inter = shape["expert_intermediate_size"]
        groups += [
            TensorGroup("router", "router", h, experts, n_layers),
            TensorGroup("experts_gate_up", "expert", h, 2 * inter, n_layers * experts),
            TensorGroup("experts_down", "expert", inter, h, n_layers * experts),
        ]
        if model_type == "gpt_oss":
            groups += [
                TensorGroup("router_bias", "bias", 1, experts, n_layers),
                TensorGroup("experts_bias", "bias", 1, 2 * inter + h, n_layers * experts),
                TensorGroup("attention_sinks", "bias", 1, shape["attention_heads"], n_layers),
            ]
    else:
        inter = shape["intermediate_size"]
        groups += [
            TensorGroup("mlp_gate_up", "linear", h, 2 * inter, n_layers),
            TensorGroup("mlp_down", "linear", inter, h, n_layers),
        ]
        if bool(text.get("mlp_bias", False)):
            groups.append(TensorGroup("mlp_bias", "bias", 1, 2 * inter + h, n_layers))
    groups.append(TensorGroup("embed_tokens", "embedding", shape["vocab_size"], h, 1))
    if not shape["tie_word_embeddings"]:
        groups.append(TensorGroup("lm_head", "lm_head", h, shape["vocab_size"], 1))
    return groups


def _vision_tensors(vision: Mapping[str, Any], text_hidden: int, where: str) -> list[TensorGroup]:
    """A SigLIP vision tower and Gemma 3's projector (transformers siglip/modeling_siglip.py, gemma3's
    `Gemma3MultiModalProjector`): patch and position embeddings, per layer 4 attention linears with biases, 2
    LayerNorms (weight and bias) and a 2-layer MLP with biases, a post LayerNorm; the projector's matrix and norm."""
    if vision.get("model_type") != "siglip_vision_model":
        raise ConfigShapeError(f"{where}: vision tower {vision.get('model_type')!r} is not counted")
    h = int(_require(vision, "hidden_size", where))
    inter = int(_require(vision, "intermediate_size", where))
    n_layers = int(_require(vision, "num_hidden_layers", where))
    patch = int(_require(vision, "patch_size", where))
    image = int(_require(vision, "image_size", where))
    channels = int(vision.get("num_channels", 3))
    per_layer = 4 * (h * h + h) + 2 * 2 * h + (h * inter + inter) + (inter * h + h)
    total = (channels * patch * patch * h + h) + (image // patch) ** 2 * h + n_layers * per_layer + 2 * h
    total += h * text_hidden + h  # mm_input_projection_weight, mm_soft_emb_norm
    return [TensorGroup("vision_tower", "vision", 1, total, 1)]


def derive_facts(cfg: Mapping[str, Any], provenance: Provenance) -> ModelFacts:
    """Every fact of one catalog row from its config.json (module docstring)."""
    where = provenance.config_path
    text = text_config(cfg)
    model_type = str(text.get("model_type") or cfg.get("model_type") or "")
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise ConfigShapeError(f"{where}: model_type {model_type!r} is not one the catalog counts "
                               f"({', '.join(sorted(SUPPORTED_MODEL_TYPES))})")
    heads = int(_require(text, "num_attention_heads", where))
    hidden = int(_require(text, "hidden_size", where))
    experts = int(text.get("num_local_experts") or text.get("num_experts") or 0)
    shape = {
        "layers": int(_require(text, "num_hidden_layers", where)),
        "hidden_size": hidden,
        "intermediate_size": int(_require(text, "intermediate_size", where)),
        "attention_heads": heads,
        "kv_heads": int(text.get("num_key_value_heads") or heads),
        "head_dim": int(text.get("head_dim") or hidden // heads),
        "vocab_size": int(_require(text, "vocab_size", where)),
        "tie_word_embeddings": bool(cfg.get("tie_word_embeddings", text.get("tie_word_embeddings", True))),
        "experts": experts,
        "expert_intermediate_size": int(text.get("moe_intermediate_size") or text.get("intermediate_size") or 0),
    }
    if model_type == "qwen3_moe" and (text.get("mlp_only_layers") or int(text.get("decoder_sparse_step", 1)) != 1):
        raise ConfigShapeError(f"{where}: qwen3_moe with dense layers between the sparse ones is not counted")
    tensors = _decoder_tensors(text, shape, model_type)
    vision = cfg.get("vision_config")
    multimodal = isinstance(vision, Mapping)
    if isinstance(vision, Mapping):
        tensors += _vision_tensors(vision, hidden, where)
    quant = _quantization(cfg, where)
    maximum, default, key = max_model_len(cfg, where)
    dtype = cfg.get("torch_dtype") or cfg.get("dtype") or text.get("torch_dtype") or text.get("dtype")
    return ModelFacts(
        repo_id=provenance.repo_id,
        revision=provenance.revision,
        source_url=provenance.source_url,
        model_type=model_type,
        architectures=tuple(str(a) for a in cfg.get("architectures") or ()),
        layers=shape["layers"],
        hidden_size=hidden,
        intermediate_size=shape["expert_intermediate_size"] if experts else shape["intermediate_size"],
        attention_heads=heads,
        kv_heads=shape["kv_heads"],
        head_dim=shape["head_dim"],
        vocab_size=shape["vocab_size"],
        tie_word_embeddings=bool(shape["tie_word_embeddings"]),
        max_position_embeddings=int(_require(text, "max_position_embeddings", where)),
        derived_max_model_len=maximum,
        torch_dtype=str(dtype) if dtype else None,
        quantization="compressed-tensors" if quant and quant.method == "compressed-tensors-int" else
        (quant.method if quant else None),
        weight_bits=quant.bits if quant else 16,
        group_size=quant.group_size if quant else None,
        experts=experts or None,
        experts_per_token=int(text.get("num_experts_per_tok") or text.get("experts_per_token") or 0) or None,
        multimodal=multimodal,
        parameters=sum(g.parameters for g in tensors),
        default_max_model_len=default,
        max_len_key=key,
        sha256=provenance.sha256,
        config_path=provenance.config_path,
        tensors=tuple(tensors),
        quant=quant,
    )
