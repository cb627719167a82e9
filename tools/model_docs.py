"""`.venv/bin/python -m tools.model_docs [--check]`: the model catalog's table in docs/serving.md ("Naming the model").

One row per catalog model (policies/gpu_guard/models/catalog.yaml), every figure derived from its vendored
config.json as the pack derives it: parameters, the weights' GiB at a 16-bit compute dtype, the quantization,
the KV cache's shape and bytes per token (bf16), the largest `--max-model-len` vLLM v0.34.0 accepts and the one it
uses unset, and where the config was read. `--check` writes nothing and exits 1 when the page is stale
(tests/tools/test_model_docs.py runs the same check).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from policies.gpu_guard.models import ModelFacts, all_models

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "serving.md"
BEGIN = "<!-- model-catalog:begin (.venv/bin/python -m tools.model_docs writes this table) -->"
END = "<!-- model-catalog:end -->"
GIB = 1024**3


def _source(facts: ModelFacts) -> str:
    host = "Hub page" if facts.source_url.startswith("https://huggingface.co/") else facts.source_url.split("/")[4]
    return f"[{host}]({facts.source_url})"


def _quant(facts: ModelFacts) -> str:
    if facts.quantization is None:
        return facts.torch_dtype or "bf16"
    group = f", g{facts.group_size}" if facts.group_size and facts.quantization in ("awq", "gptq") else ""
    return f"{facts.quantization} ({facts.weight_bits}-bit{group})"


def _row(facts: ModelFacts) -> str:
    moe = f", MoE {facts.experts}x{facts.experts_per_token}" if facts.experts else ""
    kind = f"{facts.model_type}{moe}{', multimodal' if facts.multimodal else ''}"
    context = f"{facts.derived_max_model_len:,}"
    if facts.default_max_model_len != facts.derived_max_model_len:
        context += f" (unset: {facts.default_max_model_len:,})"
    return (f"| `{facts.repo_id}` | {kind} | {facts.parameters / 1e9:.2f} | {facts.weight_bytes() / GIB:.1f} | "
            f"{_quant(facts)} | {facts.layers} x {facts.kv_heads} x {facts.head_dim} | "
            f"{facts.kv_bytes_per_token() // 1024} | {context} | {_source(facts)} |")


def render(models: Iterable[ModelFacts]) -> str:
    """The table, between its markers."""
    head = ["| Model (`vllm.model`) | Type | Parameters (B) | Weights (GiB) | Weights stored as | "
            "Layers x KV heads x head size | KV cache per token (KiB, bf16) | Max `maxModelLen` | "
            "config.json read from |",
            "|---|---|--:|--:|---|---|--:|--:|---|"]
    return "\n".join([BEGIN, *head, *(_row(m) for m in models), END])


def rewrite(text: str, table: str) -> str:
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + table + text[end:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.model_docs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/serving.md's table is stale")
    args = parser.parse_args(argv)
    current = DOCS.read_text(encoding="utf-8")
    wanted = rewrite(current, render(all_models()))
    if args.check:
        if wanted != current:
            print(f"{DOCS.relative_to(REPO)}: the model catalog table is stale; run "
                  ".venv/bin/python -m tools.model_docs", file=sys.stderr)
            return 1
        return 0
    DOCS.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
