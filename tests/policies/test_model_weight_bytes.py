"""ModelFacts.weight_bytes: each tensor class at the bytes its checkpoint stores and vLLM loads (facts.py's sources)."""

from __future__ import annotations

import pytest

from policies.gpu_guard.models import lookup
from policies.gpu_guard.models.derive import Provenance, derive_facts
from policies.gpu_guard.models.facts import ModelFacts, Quantization, TensorGroup

LINEAR = TensorGroup("q_proj", "linear", 4096, 4096, 1)
EMBED = TensorGroup("embed_tokens", "embedding", 128, 4096, 1)
NORM = TensorGroup("layer_norms", "norm", 1, 8192, 1)


def _facts(quant: Quantization | None, *groups: TensorGroup) -> ModelFacts:
    return ModelFacts(
        repo_id="a/b", revision=None, source_url="u", model_type="llama", architectures=(), layers=1,
        hidden_size=4096, intermediate_size=1, attention_heads=32, kv_heads=8, head_dim=128, vocab_size=128,
        tie_word_embeddings=True, max_position_embeddings=1, derived_max_model_len=1, torch_dtype="bfloat16",
        quantization=quant.method if quant else None, weight_bits=quant.bits if quant else 16,
        group_size=quant.group_size if quant else None, experts=None, experts_per_token=None, multimodal=False,
        parameters=sum(g.parameters for g in groups), tensors=groups, quant=quant)


def test_unquantized_tensors_take_the_compute_dtype() -> None:
    facts = _facts(None, LINEAR, EMBED, NORM)
    assert facts.weight_bytes() == 2 * facts.parameters
    assert facts.weight_bytes(compute_dtype_bytes=4) == 4 * facts.parameters  # the fp32 fallback doubles them


def test_awq_packs_4_bits_with_fp16_scales_and_packed_zeros_per_group_and_leaves_the_rest_at_16_bits() -> None:
    facts = _facts(Quantization("awq", 4, group_size=128), LINEAR, EMBED, NORM)
    groups = 4096 // 128
    linear = 4096 * 4096 // 2 + groups * 4096 * 2 + groups * 4096 // 2
    assert facts.weight_bytes() == linear + 2 * (EMBED.parameters + NORM.parameters)


def test_gptq_adds_g_idx_of_one_int32_per_input() -> None:
    awq = _facts(Quantization("awq", 4, group_size=128), LINEAR).weight_bytes()
    gptq = _facts(Quantization("gptq", 4, group_size=128), LINEAR).weight_bytes()
    assert gptq - awq == 4096 * 4


def test_a_gptq_group_size_of_minus_one_is_one_group_over_the_whole_input() -> None:
    facts = _facts(Quantization("gptq", 4, group_size=-1), LINEAR)
    assert facts.weight_bytes() == 4096 * 4096 // 2 + 4096 // 2 + 4096 * 2 + 4096 * 4


@pytest.mark.parametrize(("quant", "scales"), [
    (Quantization("fp8", 8, block=(128, 128)), 32 * 32 * 4),  # one fp32 weight_scale_inv per 128 x 128 block
    (Quantization("compressed-tensors", 8, per_channel=True, scale_bytes=2), 4096 * 2),  # one per output row
    (Quantization("fp8", 8), 2 * 4),  # per tensor: weight_scale and input_scale
])
def test_fp8_is_one_byte_a_weight_plus_its_scales(quant: Quantization, scales: int) -> None:
    assert _facts(quant, LINEAR).weight_bytes() == 4096 * 4096 + scales


def test_mxfp4_quantizes_only_the_experts_at_4_25_bits() -> None:
    expert = TensorGroup("experts_gate_up", "expert", 2880, 5760, 32)
    facts = _facts(Quantization("mxfp4", 4, group_size=32, scale_bytes=1), LINEAR, expert)
    assert facts.weight_bytes() == 2 * LINEAR.parameters + expert.parameters * 17 // 32


def test_qwen3_32b_fp8_keeps_embeddings_lm_head_and_norms_at_16_bits() -> None:
    fp8, bf16 = lookup("Qwen/Qwen3-32B-FP8"), lookup("Qwen/Qwen3-32B")
    assert fp8 is not None and bf16 is not None and fp8.parameters == bf16.parameters
    kept = sum(g.parameters for g in fp8.tensors if g.kind in ("embedding", "lm_head", "norm"))
    linear = fp8.parameters - kept
    assert linear + 2 * kept < fp8.weight_bytes() < 1.01 * (linear + 2 * kept)


def test_a_70b_awq_checkpoint_is_a_little_over_a_quarter_of_its_bf16_weights() -> None:
    awq, bf16 = lookup("PatronusAI/Llama-3.1-70B-Instruct-AWQ-INT4"), lookup("meta-llama/Llama-3.1-70B-Instruct")
    assert awq is not None and bf16 is not None and awq.quantization == "awq"
    assert awq.parameters == bf16.parameters
    assert 0.28 < awq.weight_bytes() / bf16.weight_bytes() < 0.29  # 4.16-bit linears, 16-bit embeddings and lm_head


def test_every_expert_of_a_moe_model_is_counted() -> None:
    facts = lookup("mistralai/Mixtral-8x7B-v0.1")
    assert facts is not None and facts.experts == 8 and facts.experts_per_token == 2
    experts = sum(g.parameters for g in facts.tensors if g.kind == "expert")
    assert experts == 32 * 8 * 3 * 4096 * 14336


def test_a_compressed_tensors_scheme_the_catalog_cannot_lay_out_is_refused() -> None:
    cfg = {"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 8, "intermediate_size": 8,
           "num_attention_heads": 1, "vocab_size": 8, "max_position_embeddings": 8,
           "quantization_config": {"quant_method": "compressed-tensors", "config_groups": {
               "group_0": {"weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group"}}}}}
    with pytest.raises(ValueError, match="compressed-tensors float4 \\(tensor_group\\) has no byte layout"):
        derive_facts(cfg, Provenance("a/b", None, "u", "s", "a/b.json"))
