"""The memory vLLM holds on a GPU besides the weights and the KV cache, bounded low and high, and the KV cache memory
that leaves at a release's rules. All figures GiB per GPU.

What vLLM v0.34.0 counts (vllm/v1/worker/gpu_worker.py, vllm/utils/mem_utils.py):
- The budget: `ceil(total * utilization)` of the CUDA total (`request_memory`, vllm/v1/worker/utils.py:734-743).
- Taken before the memory snapshot, outside the budget's accounting: the CUDA context, NCCL's buffers for TP > 1 and
  the cuBLAS handles (gpu_worker.py:520-551). With the extensible KV cache it still occupies the device: the cache
  gets at most what is free after warmup (extensible_kv_cache.py:613-616).
- The profile run at `--max-num-batched-tokens` tokens: the weights, the activation peak (`transient_peak_headroom`)
  and what grew outside torch (`memory_profiling`, mem_utils.py:245-336; gpu_worker.py:726-780).
- CUDA graphs: estimated before the KV cache is sized (gpu_worker.py:742-779, from v0.21.0 by default), and measured
  after capture with the extensible cache.
- Extensible KV cache (v0.34.0): KV = min(budget - non_kv, free_after_warmup - margin) - peak, with margin =
  max(1 GiB, 0.75 x peak) (`measure_kv_cache_bytes`, extensible_kv_cache.py:592-618, :64-65).
- Earlier releases: KV = budget - weights - activation peak - non-torch growth [- CUDA graph estimate]
  (gpu_worker.py `determine_available_memory`).

The bounds. Low: what is certain from the code (the 1 GiB margin floor of v0.34.0, a CUDA context of at least
CONTEXT_LOW). High: what public startup logs and the device probe show at most (docs/serving.md, "Overhead data"),
rounded up. `--max-num-batched-tokens` defaults by the GPU's memory (vllm/engine/arg_utils.py:3007-3043): 16384 at
160 GiB or more, 8192 at 70 GiB or more (not A100), else 2048; `--max-num-seqs` 1024, 1024, 256.
"""

from __future__ import annotations

from dataclasses import dataclass

from .inputs import GIB, ModelInput, ServingArgs
from .releases import Release

# CUDA context + cuBLAS handle and workspace before the snapshot: 527 + 68 MiB measured on an H100
# (bench/probe_runs/2026-12-07-gpu-memory/h100-80gb-hbm3.json); smaller GPUs load fewer module images: at least 0.25.
CONTEXT_LOW = 0.25
CONTEXT_HIGH = 0.9
NCCL_HIGH = 0.6  # NCCL and custom all-reduce buffers, TP > 1
NON_TORCH_HIGH = 0.3  # non-torch growth during the profile run: 0.13-0.14 GiB measured at TP 1 ...
NON_TORCH_HIGH_TP = 0.8  # ... and 0.54-0.55 GiB at TP 2 (llm-d/llm-d-benchmark, docs/serving.md)
GRAPHS_HIGH = 1.5  # CUDA graphs at the default capture sizes: -0.88 to 1.42 GiB measured (docs/serving.md)
MARGIN_FLOOR = 1.0  # KV_CACHE_MARGIN_FLOOR_BYTES, extensible_kv_cache.py:64
MARGIN_FRACTION = 0.75  # KV_CACHE_MARGIN_FRACTION, extensible_kv_cache.py:65
ACTIVATION_SLACK = 1.15  # the formula below is 1.06-3.4x the peaks vLLM logged (docs/serving.md, "Overhead data")
DEFAULT_VOCAB = 262_144  # where the shape does not give the vocabulary: the largest of the catalog's models and more


def default_batched_tokens(gpu_total_gib: float, gpu_model: str) -> tuple[int, int]:
    """(--max-num-batched-tokens, --max-num-seqs) vLLM's API server picks on this GPU (arg_utils.py:3007-3043)."""
    if gpu_total_gib >= 160:
        return 16384, 1024
    if gpu_total_gib >= 70 and "A100" not in gpu_model:
        return 8192, 1024
    return 2048, 256


def activation_high(model: ModelInput, args: ServingArgs, gpu_total_gib: float, gpu_model: str,
                    compute_bytes: int) -> float:
    """An upper bound of the profile run's activation peak at --max-num-batched-tokens T: fp32 logits of T tokens
    over the vocabulary, plus the hidden states and MLP intermediates (gate_up and its product, sharded by TP), with
    a slack fitted to vLLM's logged peaks (docs/serving.md, "Overhead data"); the hidden sizes default to the
    vocabulary's share when the shape does not give them."""
    tokens, _seqs = default_batched_tokens(gpu_total_gib, gpu_model)
    tokens = args.max_num_batched_tokens or tokens
    vocab = model.vocab_size or DEFAULT_VOCAB
    hidden = model.hidden_size or 8192
    intermediate = (model.intermediate_size or 4 * hidden) * max(1, model.experts_per_token or (2 if model.experts
                                                                                               else 1))
    per_token = vocab * 4 + (8 * hidden + 3 * intermediate // args.tensor_parallel) * compute_bytes
    return ACTIVATION_SLACK * tokens * per_token / GIB + 0.25


@dataclass(frozen=True)
class Bounds:
    """KV cache memory per GPU, at the best case (`high`: most memory, least overhead) and the worst (`low`)."""

    kv_low: float
    kv_high: float
    overhead_low: float
    overhead_high: float
    activation_high: float


def kv_memory(release: Release, args: ServingArgs, *, total_low: float, total_high: float, weights_low: float,
              weights_high: float, activation: float) -> Bounds:
    util = release.default_utilization if args.gpu_memory_utilization is None else args.gpu_memory_utilization
    tp_extra = NCCL_HIGH if args.tensor_parallel > 1 else 0.0
    non_torch = NON_TORCH_HIGH_TP if args.tensor_parallel > 1 else NON_TORCH_HIGH
    graphs = 0.0 if args.enforce_eager or not release.graphs_counted else GRAPHS_HIGH
    if release.extensible:
        def kv(total: float, ctx: float, weights: float, *, act: float, graph: float, other: float) -> float:
            non_kv = weights + graph + other
            margin = max(MARGIN_FLOOR, MARGIN_FRACTION * act)
            return min(util * total - non_kv, total - ctx - non_kv - margin) - act
        high = kv(total_high, CONTEXT_LOW, weights_low, act=0.0, graph=0.0, other=0.0)
        low = kv(total_low, CONTEXT_HIGH + tp_extra, weights_high, act=activation, graph=graphs, other=non_torch)
    else:
        high = util * total_high - weights_low
        low = util * total_low - weights_high - activation - non_torch - graphs
    return Bounds(kv_low=low, kv_high=high, overhead_low=util * total_high - weights_low - high,
                  overhead_high=util * total_low - weights_high - low, activation_high=activation)
