"""vLLM's OpenAI-compatible server at the release the platform is written against: its command line, routes, port and
metric names, each read at that tag (the v0.34.0 sdist on PyPI, which is the tagged tree).

Sources (vllm-project/vllm @ v0.34.0):
- The image's entrypoint is `vllm serve` (docker/Dockerfile:1386, stage vllm-openai), so the container's args start
  with the model; `vllm serve [model_tag]` takes it as a positional argument (vllm/entrypoints/cli/serve.py:55-57,
  :169).
- Flags: `--served-model-name` (vllm/engine/arg_utils.py:1037-1039), `--tensor-parallel-size` (:1223-1225),
  `--max-model-len` (:998), `--gpu-memory-utilization` (:1403-1408), `--shutdown-timeout` (seconds the server waits
  for in-flight requests on shutdown; 0 aborts them: :1971-1976), `--port` default 8000
  (vllm/entrypoints/common/cli_args.py:296), `--api-key` (cli_args.py:336-346).
- `VLLM_API_KEY`: the server takes its key from `--api-key`, else from this variable
  (vllm/entrypoints/serve/middleware/register.py:32-33, vllm/envs.py:879), so the key comes from a Secret through
  the environment and never appears in the pod's arguments. The key guards only `/v1`, `/v2`, `/inference` and
  `/cohere`; `/invocations` stays open (cli_args.py:338-346), which the ALB allow-list keeps off the internet.
- Routes: `GET /health` answers 200 while the engine lives and 503 once it is dead
  (vllm/entrypoints/serve/instrumentator/health.py:22-33); `/v1/chat/completions`
  (vllm/entrypoints/openai/chat_completion/api_router.py:44), `/v1/completions` (completion/api_router.py:38),
  `GET /v1/models` (models/api_router.py:20); `/metrics` on the same port
  (vllm/entrypoints/serve/instrumentator/metrics.py:66-77).
- Metric names (vllm/v1/metrics/loggers.py): gauges `vllm:num_requests_running` (:528), `vllm:num_requests_waiting`
  (:538), `vllm:kv_cache_usage_perc` (:620, 1 = 100 percent); counters `vllm:prompt_tokens` (:748),
  `vllm:generation_tokens` (:799), `vllm:request_success` (:809); histograms `vllm:time_to_first_token_seconds`
  (:931), `vllm:inter_token_latency_seconds` (:941), `vllm:e2e_request_latency_seconds` (:961),
  `vllm:request_queue_time_seconds` (:971). Counters are `prometheus_client.Counter` (:475), which exposes
  `<name>_total`; histograms expose `_bucket`, `_sum` and `_count`
  (https://prometheus.github.io/client_python/instrumenting/counter/, .../histogram/). Every series carries the
  labels `model_name` (the served model name) and `engine` (:499).
- HF_HUB_OFFLINE=1: the weights come from the model volume, never from the Hugging Face Hub
  (https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables#hfhuboffline).
"""

from __future__ import annotations

import re

RELEASE = "v0.34.0"
IMAGE = f"vllm/vllm-openai:{RELEASE}"
PORT = 8000
HEALTH = "/health"
# The OpenAI routes the ALB forwards; everything else (/metrics, /tokenize, /invocations, LoRA loading, the
# development endpoints) stays inside the cluster.
PUBLIC_PATHS = ("/v1/chat/completions", "/v1/completions", "/v1/models", HEALTH)
API_KEY_ENV = "VLLM_API_KEY"
OFFLINE_ENV = ("HF_HUB_OFFLINE", "1")

GAUGES = ("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc")
COUNTERS = ("vllm:prompt_tokens", "vllm:generation_tokens", "vllm:request_success")
HISTOGRAMS = ("vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
              "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds")
# Every series name the server exports for the families above, as Prometheus scrapes them.
EXPORTED: frozenset[str] = frozenset(
    (*GAUGES, *(f"{c}_total" for c in COUNTERS),
     *(f"{h}{suffix}" for h in HISTOGRAMS for suffix in ("_bucket", "_sum", "_count"))))
# The other families loggers.py registers at v0.34.0 (names only, :528-1104): a query may read them too.
OTHER_FAMILIES = frozenset({
    "vllm:admission_rejections", "vllm:corrupted_requests", "vllm:engine_sleep_state",
    "vllm:external_prefix_cache_hits", "vllm:external_prefix_cache_queries", "vllm:iteration_tokens_total",
    "vllm:kv_block_idle_before_evict_seconds", "vllm:kv_block_lifetime_seconds", "vllm:kv_block_reuse_gap_seconds",
    "vllm:lora_requests_info", "vllm:mm_cache_hits", "vllm:mm_cache_queries", "vllm:num_preemptions",
    "vllm:num_requests_kv_fetch_by_stage", "vllm:num_requests_waiting_by_reason", "vllm:prefix_cache_hits",
    "vllm:prefix_cache_queries", "vllm:prompt_tokens_by_source", "vllm:prompt_tokens_cached",
    "vllm:prompt_tokens_cached_by_source", "vllm:request_decode_time_seconds", "vllm:request_generation_tokens",
    "vllm:request_inference_time_seconds", "vllm:request_max_num_generation_tokens", "vllm:request_num_preemptions",
    "vllm:request_params_max_tokens", "vllm:request_params_n", "vllm:request_prefill_kv_computed_tokens",
    "vllm:request_prefill_time_seconds", "vllm:request_prompt_tokens", "vllm:request_time_per_output_token_seconds",
    "vllm:watermark_requests",
})
_SUFFIXES = ("", "_total", "_bucket", "_sum", "_count", "_created")
_METRIC = re.compile(r"vllm:[a-zA-Z0-9_:]+")


def exported(name: str) -> bool:
    """Whether a series of this name exists on a vLLM server of the pinned release."""
    if name in EXPORTED:
        return True
    return any(name.removesuffix(s) in OTHER_FAMILIES for s in _SUFFIXES if name.endswith(s))


def unknown_metrics(query: str) -> list[str]:
    """The `vllm:` series names a PromQL query reads that the pinned release does not export."""
    return sorted({m for m in _METRIC.findall(query) if not exported(m)})


def nearest_metric(name: str) -> str:
    """The exported name closest to `name` (shared prefix, then length): what the user probably meant."""
    def score(candidate: str) -> tuple[int, int]:
        common = next((i for i, (a, b) in enumerate(zip(candidate, name, strict=False)) if a != b),
                      min(len(candidate), len(name)))
        return (-common, abs(len(candidate) - len(name)))
    return min(sorted(EXPORTED), key=score)
