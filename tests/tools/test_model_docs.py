"""docs/serving.md's model catalog table is what the catalog derives (python -m tools.model_docs writes it)."""

from __future__ import annotations

from policies.gpu_guard.models import all_models
from tools.model_docs import BEGIN, DOCS, END, main, render, rewrite


def test_the_serving_page_lists_every_catalog_model_as_derived() -> None:
    assert main(["--check"]) == 0
    text = DOCS.read_text(encoding="utf-8")
    table = text[text.index(BEGIN):text.index(END) + len(END)]
    assert table == render(all_models())
    assert all(f"| `{m.repo_id}` |" in table for m in all_models())


def test_a_stale_row_is_found_and_rewritten() -> None:
    text = DOCS.read_text(encoding="utf-8")
    stale = text.replace("| `Qwen/Qwen3-8B` | qwen3 | 8.19 |", "| `Qwen/Qwen3-8B` | qwen3 | 8.00 |")
    assert stale != text
    assert rewrite(stale, render(all_models())) == text


def test_the_row_gives_weights_kv_bytes_and_context_of_llama_3_1_8b() -> None:
    row = next(line for line in render(all_models()).splitlines() if "`meta-llama/Llama-3.1-8B-Instruct`" in line)
    # 8,030,261,248 bf16 parameters = 14.96 GiB; 2 x 32 layers x 8 KV heads x 128 x 2 bytes = 128 KiB a token
    assert "| 8.03 | 15.0 | bfloat16 | 32 x 8 x 128 | 128 | 131,072 |" in row
