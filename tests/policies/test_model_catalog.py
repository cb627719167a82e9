"""The model catalog: every row derived from its vendored config.json, checked against what its publisher states."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from policies.gpu_guard.models import all_models, close_matches, lookup
from policies.gpu_guard.models.catalog import (
    CATALOG_PATH,
    CONFIGS_DIR,
    CatalogError,
    CatalogRow,
    facts_of,
    parse_rows,
)
from policies.gpu_guard.models.derive import (
    ConfigShapeError,
    Provenance,
    derive_facts,
    max_model_len,
    text_config,
)

ROWS = parse_rows(CATALOG_PATH.read_text(encoding="utf-8"))
ROW_IDS = [row.repo_id for row in ROWS]


def _config(row_config: str) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((CONFIGS_DIR / row_config).read_bytes())
    return loaded


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_every_row_is_its_vendored_config(row: object) -> None:
    assert isinstance(row, CatalogRow)
    raw = (CONFIGS_DIR / row.config).read_bytes()
    assert hashlib.sha256(raw).hexdigest() == row.sha256
    cfg = json.loads(raw)
    facts = lookup(row.repo_id)
    assert facts is not None
    text = text_config(cfg)  # a multimodal model's text_config, with the keys it leaves out at their class defaults
    assert facts.layers == text["num_hidden_layers"]
    assert facts.hidden_size == text["hidden_size"]
    assert facts.attention_heads == text["num_attention_heads"]
    assert facts.kv_heads == text.get("num_key_value_heads", text["num_attention_heads"])
    assert facts.vocab_size == text["vocab_size"]
    assert facts.max_position_embeddings == text["max_position_embeddings"]
    assert facts.source_url == row.read_from.get("url") or facts.source_url == (
        f"https://github.com/{row.read_from['repo']}/blob/{row.read_from['commit']}/{row.read_from['path']}")
    assert facts.sha256 == row.sha256


@pytest.mark.parametrize("row", [r for r in ROWS if r.published_parameters], ids=lambda r: r.repo_id)
def test_parameters_agree_with_the_published_count_within_1_percent(row: object) -> None:
    assert isinstance(row, CatalogRow) and row.published_parameters and row.published_source
    facts = lookup(row.repo_id)
    assert facts is not None
    assert abs(facts.parameters - row.published_parameters) / row.published_parameters < 0.01


@pytest.mark.parametrize("row", [r for r in ROWS if r.safetensors_total_size], ids=lambda r: r.repo_id)
def test_weight_bytes_agree_with_the_checkpoint_total_size_within_2_percent(row: object) -> None:
    assert isinstance(row, CatalogRow) and row.safetensors_total_size and row.total_size_source
    facts = lookup(row.repo_id)
    assert facts is not None
    assert abs(facts.weight_bytes() - row.safetensors_total_size) / row.safetensors_total_size < 0.02


def test_the_catalog_holds_at_least_the_models_teams_serve_most() -> None:
    assert len(all_models()) >= 25


def test_lookup_is_case_sensitive_and_suggests_the_written_case() -> None:
    assert lookup("meta-llama/Llama-3.1-8B-Instruct") is not None
    assert lookup("meta-llama/llama-3.1-8b-instruct") is None
    assert close_matches("meta-llama/llama-3.1-8b-instruct")[0] == "meta-llama/Llama-3.1-8B-Instruct"


def test_lookup_with_a_revision_finds_only_a_row_pinned_at_it() -> None:
    facts = lookup("meta-llama/Llama-3.1-8B-Instruct")
    assert facts is not None and facts.revision is None
    assert lookup("meta-llama/Llama-3.1-8B-Instruct@0e9e39f") is None  # the catalog does not know that revision


def test_llama_3_1_8b_instruct_is_counted_as_its_checkpoint() -> None:
    facts = lookup("meta-llama/Llama-3.1-8B-Instruct")
    assert facts is not None
    assert facts.parameters == 8_030_261_248
    assert facts.weight_bytes() == 2 * 8_030_261_248
    assert (facts.layers, facts.kv_heads, facts.head_dim) == (32, 8, 128)
    assert facts.derived_max_model_len == 131_072  # llama3 rope: max_position_embeddings is already scaled


def test_gpt_oss_experts_count_at_4_25_bits_and_the_rest_at_16() -> None:
    facts = lookup("openai/gpt-oss-20b")
    assert facts is not None and facts.quantization == "mxfp4"
    experts = [g for g in facts.tensors if g.kind == "expert"]
    rest = facts.parameters - sum(g.parameters for g in experts)
    expert_bytes = sum(g.parameters for g in experts) * 4.25 / 8
    assert facts.weight_bytes() == pytest.approx(rest * 2 + expert_bytes, rel=1e-9)


def test_a_changed_vendored_file_is_refused_with_the_row_and_the_file(tmp_path: Path) -> None:
    row = ROWS[0]
    copy = tmp_path / row.config
    copy.parent.mkdir(parents=True)
    copy.write_bytes((CONFIGS_DIR / row.config).read_bytes() + b" ")
    with pytest.raises(CatalogError, match=rf"\({row.repo_id}\) config {row.config}: sha256 .* differs"):
        facts_of(row, tmp_path)


def test_a_row_without_provenance_is_refused() -> None:
    text = ("models:\n  - repo_id: a/b\n    config: a/b.json\n    sha256: x\n    license: mit\n"
            "    reviewed: 2026-12-07\n")
    with pytest.raises(CatalogError, match=r"models\[0\] \(a/b\): read_from is required"):
        parse_rows(text)


def test_an_unknown_model_type_is_refused_not_guessed() -> None:
    cfg = {"model_type": "mamba", "num_hidden_layers": 1}
    with pytest.raises(ConfigShapeError, match="model_type 'mamba' is not one the catalog counts"):
        derive_facts(cfg, Provenance("a/b", None, "u", "s", "a/b.json"))


@pytest.mark.parametrize(("rope", "expected"), [
    (None, (32768, 32768)),
    ({"rope_type": "linear", "factor": 4.0}, (131072, 131072)),
    ({"type": "dynamic", "factor": 2.0}, (65536, 65536)),
    ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}, (32768, 32768)),
    ({"rope_type": "llama3", "factor": 8.0}, (32768, 32768)),
])
def test_max_model_len_follows_vllms_rope_rules(rope: dict[str, object] | None, expected: tuple[int, int]) -> None:
    cfg = {"model_type": "llama", "max_position_embeddings": 32768, "rope_scaling": rope}
    assert max_model_len(cfg, "x")[:2] == expected


def test_longrope_defaults_to_the_original_length_and_allows_the_scaled_one() -> None:
    cfg = {"model_type": "phi3", "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
           "rope_scaling": {"type": "longrope", "long_factor": [1.0], "short_factor": [1.0]}}
    assert max_model_len(cfg, "x") == (131072, 4096, "max_position_embeddings")


def test_gemma3_rope_factor_is_not_applied_again() -> None:
    cfg = {"model_type": "gemma3_text", "max_position_embeddings": 131072,
           "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
    assert max_model_len(cfg, "x")[0] == 131072


def test_the_smallest_length_key_wins_and_model_max_length_overrides() -> None:
    assert max_model_len({"max_position_embeddings": 8192, "seq_length": 4096}, "x") == (4096, 4096, "seq_length")
    assert max_model_len({"max_position_embeddings": 8192, "model_max_length": 16384}, "x")[0] == 16384


def test_gemma3_keys_left_out_of_text_config_take_gemma3_text_configs_defaults() -> None:
    # transformers v4.50.0 Gemma3TextConfig: 8 heads, 4 KV heads, head_dim 256, vocab 262208, 131072 positions
    facts = lookup("google/gemma-3-4b-it")
    assert facts is not None and facts.multimodal
    assert (facts.attention_heads, facts.kv_heads, facts.head_dim) == (8, 4, 256)
    assert (facts.vocab_size, facts.max_position_embeddings, facts.derived_max_model_len) == (262_208, 131_072, 131_072)
