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
- Metric names (vllm/v1/metrics/loggers.py; every other family of the tree: OTHER_FAMILIES): gauges
  `vllm:num_requests_running` (:528), `vllm:num_requests_waiting`
  (:538), `vllm:kv_cache_usage_perc` (:620, 1 = 100 percent); counters `vllm:prompt_tokens` (:748),
  `vllm:generation_tokens` (:799), `vllm:request_success` (:809); histograms `vllm:time_to_first_token_seconds`
  (:931), `vllm:inter_token_latency_seconds` (:941), `vllm:e2e_request_latency_seconds` (:961),
  `vllm:request_queue_time_seconds` (:971). Counters are `prometheus_client.Counter` (:475), which exposes
  `<name>_total`; histograms expose `_bucket`, `_sum` and `_count`
  (https://prometheus.github.io/client_python/instrumenting/counter/, .../histogram/). Every series carries the
  labels `model_name` (the served model name) and `engine` (:499).
- HF_HUB_OFFLINE=1: the weights come from the model volume, never from the Hugging Face Hub
  (https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables#hfhuboffline).
- Usage telemetry: the server reports usage data unless `VLLM_NO_USAGE_STATS=1`, `VLLM_DO_NOT_TRACK=1` or
  `DO_NOT_TRACK=1` is set, or a do_not_track file exists (vllm/usage/usage_lib.py:50-67; the variables are read at
  vllm/envs.py:892-896). The platform sets `VLLM_NO_USAGE_STATS=1` and `DO_NOT_TRACK=1` unless `vllm.usageStats`.
- CPU: vLLM V1 runs at least 2 + N processes for N GPUs (the API server, the engine core's busy loop, one worker per
  GPU), and its guidance is at least 2 + N physical cores, `2 x (2 + N)` vCPUs where hyperthreading is on (every
  EC2 GPU instance: 2 vCPUs a core); fewer cause contention that "significantly degrade[s] throughput and latency"
  (docs/configuration/optimization.md:508-526).
- Routes by task: a generating model serves `/v1/responses` beside chat and completions
  (vllm/entrypoints/launchers/api_server/routers.py:55-60, vllm/entrypoints/generate/api_router.py:21-32,
  vllm/entrypoints/openai/responses/api_router.py:49); an embedding (pooling) model serves `/v1/embeddings` and no
  generation route (routers.py:87-90, vllm/entrypoints/pooling/factories.py:110-139,
  vllm/entrypoints/pooling/embed/api_router.py:29). `--runner pooling` picks the pooling runner
  (vllm/engine/arg_utils.py:977; vllm/config/model.py:91, :169: default `auto`, from the architecture).
"""

from __future__ import annotations

import difflib
import re

RELEASE = "v0.34.0"
IMAGE = f"vllm/vllm-openai:{RELEASE}"
PORT = 8000
HEALTH = "/health"
# The OpenAI routes the ALB forwards; everything else (/metrics, /tokenize, /invocations, LoRA loading, the
# development endpoints) stays inside the cluster.
PUBLIC_PATHS = ("/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/models", HEALTH)
POOLING_PUBLIC_PATHS = ("/v1/embeddings", "/v1/models", HEALTH)
USAGE_STATS_OFF_ENV = (("VLLM_NO_USAGE_STATS", "1"), ("DO_NOT_TRACK", "1"))


def cpu_guidance(gpus: int) -> int:
    """vCPUs vLLM's guidance asks for N GPUs: 2 + N physical cores, two vCPUs each (module docstring)."""
    return 2 * (2 + gpus)
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
# Every other family the v0.34.0 tree registers (names only): each `"vllm:<name>"` literal under vllm/ (loggers.py
# :528-1128, including `vllm:cache_config_info`, built from a variable at :1120; SpecDecodingProm, instantiated at
# loggers.py:477, vllm/v1/spec_decode/metrics.py:177-240; PerfMetricsProm, loggers.py:480, vllm/v1/metrics/perf.py;
# the KV connectors (NIXL, Mooncake, offloading, HF3FS), sleep mode, RL weight updates, websockets), less the
# `vllm::` custom-op names and the two prefixes vllm/benchmarks/serve.py matches lines with. Read with
# `grep -rhoE "[\"']vllm:[a-zA-Z0-9_:]+" vllm` on the v0.34.0 sdist. Not here: the KVCR tier's names, which
# vllm/v1/kv_offload/tiering/kvcr/manager.py:120-140 builds from constants of the external `kvcr` package.
# Source: https://github.com/vllm-project/vllm/tree/v0.34.0/vllm
OTHER_FAMILIES = frozenset({
    "vllm:admission_rejections", "vllm:cache_config_info", "vllm:corrupted_requests",
    "vllm:diffusion_num_canvas_positions", "vllm:diffusion_num_committed_tokens", "vllm:diffusion_num_denoising_steps",
    "vllm:engine_sleep_state", "vllm:estimated_flops_per_gpu_total", "vllm:estimated_read_bytes_per_gpu_total",
    "vllm:estimated_write_bytes_per_gpu_total", "vllm:external_prefix_cache_hits", "vllm:external_prefix_cache_queries",
    "vllm:hf3fs_load_duration_seconds", "vllm:hf3fs_num_failed_load", "vllm:hf3fs_num_failed_save",
    "vllm:hf3fs_save_duration_seconds", "vllm:hisparse_cache_hits", "vllm:hisparse_cache_misses",
    "vllm:hisparse_host_block_idle_before_evict_seconds", "vllm:hisparse_host_block_lifetime_seconds",
    "vllm:hisparse_host_block_reuse_gap_seconds", "vllm:hisparse_host_cache_usage_perc",
    "vllm:hisparse_host_to_device_bytes", "vllm:hisparse_pending_page_transfers", "vllm:iteration_tokens_total",
    "vllm:kv_block_idle_before_evict_seconds", "vllm:kv_block_lifetime_seconds", "vllm:kv_block_reuse_gap_seconds",
    "vllm:kv_offload_allocation_failure", "vllm:kv_offload_config_info", "vllm:kv_offload_cpu_allocation_size",
    "vllm:kv_offload_cpu_cache_read_usage_perc", "vllm:kv_offload_cpu_cache_usage_perc",
    "vllm:kv_offload_cpu_cache_write_usage_perc", "vllm:kv_offload_load_bytes", "vllm:kv_offload_load_size",
    "vllm:kv_offload_load_time", "vllm:kv_offload_lookup_async_delay_seconds",
    "vllm:kv_offload_lookup_sync_delay_seconds", "vllm:kv_offload_size", "vllm:kv_offload_store_bytes",
    "vllm:kv_offload_store_size", "vllm:kv_offload_store_time", "vllm:kv_offload_stores_skipped",
    "vllm:kv_offload_tiering_active_cascade_jobs", "vllm:kv_offload_tiering_active_promotion_jobs",
    "vllm:kv_offload_tiering_backpressure_blocks_dropped", "vllm:kv_offload_tiering_backpressure_store_latency_ema",
    "vllm:kv_offload_tiering_backpressure_stores_dropped", "vllm:kv_offload_tiering_cascade_job_failures",
    "vllm:kv_offload_tiering_chunk_hits", "vllm:kv_offload_tiering_chunk_queries",
    "vllm:kv_offload_tiering_deferred_release_chunks", "vllm:kv_offload_tiering_deferred_release_hold_seconds",
    "vllm:kv_offload_tiering_lookup_async_delay_seconds", "vllm:kv_offload_tiering_lookup_sync_delay_seconds",
    "vllm:kv_offload_tiering_primary_read_usage_perc", "vllm:kv_offload_tiering_primary_write_usage_perc",
    "vllm:kv_offload_tiering_promotion_allocation_failures", "vllm:kv_offload_tiering_promotion_job_failures",
    "vllm:kv_offload_tiering_promotion_latency_seconds", "vllm:kv_offload_tiering_read_bytes",
    "vllm:kv_offload_tiering_read_time", "vllm:kv_offload_tiering_write_bytes", "vllm:kv_offload_tiering_write_time",
    "vllm:kv_offload_total_bytes", "vllm:kv_offload_total_time", "vllm:lora_requests_info", "vllm:mm_cache_hits",
    "vllm:mm_cache_queries", "vllm:mooncake_bytes_transferred", "vllm:mooncake_num_descriptors",
    "vllm:mooncake_num_failed_recvs", "vllm:mooncake_num_failed_transfers", "vllm:mooncake_num_kv_expired_reqs",
    "vllm:mooncake_store_operation_bytes_total", "vllm:mooncake_store_operation_failed_keys_total",
    "vllm:mooncake_store_operation_keys_total", "vllm:mooncake_store_operation_time_seconds",
    "vllm:mooncake_store_operation_total", "vllm:mooncake_xfer_time_seconds", "vllm:nixl_bytes_transferred",
    "vllm:nixl_num_descriptors", "vllm:nixl_num_failed_notifications", "vllm:nixl_num_failed_transfers",
    "vllm:nixl_num_kv_expired_reqs", "vllm:nixl_num_notifications_after_expiry", "vllm:nixl_post_time_seconds",
    "vllm:nixl_xfer_time_seconds", "vllm:num_preemptions", "vllm:num_requests_kv_fetch_by_stage",
    "vllm:num_requests_waiting_by_reason", "vllm:prefix_cache_hits", "vllm:prefix_cache_queries",
    "vllm:prompt_tokens_by_source", "vllm:prompt_tokens_cached", "vllm:prompt_tokens_cached_by_source",
    "vllm:request_decode_time_seconds", "vllm:request_generation_tokens", "vllm:request_inference_time_seconds",
    "vllm:request_max_num_generation_tokens", "vllm:request_num_preemptions", "vllm:request_params_max_tokens",
    "vllm:request_params_n", "vllm:request_prefill_kv_computed_tokens", "vllm:request_prefill_time_seconds",
    "vllm:request_prompt_tokens", "vllm:request_render_duration_seconds", "vllm:request_time_per_output_token_seconds",
    "vllm:rl_weight_update_operation_duration_seconds", "vllm:rl_weight_update_operations_in_flight",
    "vllm:simple_kv_offload_info", "vllm:simple_kv_offload_load_blocks_total",
    "vllm:simple_kv_offload_pending_store_blocks", "vllm:simple_kv_offload_save_outcomes_total",
    "vllm:simple_kv_offload_used_blocks", "vllm:sleep_mode_operation_duration_seconds",
    "vllm:sleep_mode_operations_in_flight", "vllm:spec_decode_num_accepted_tokens",
    "vllm:spec_decode_num_accepted_tokens_per_pos", "vllm:spec_decode_num_draft_tokens", "vllm:spec_decode_num_drafts",
    "vllm:tool_call_parser_invocations_total", "vllm:umbp_transfer_bytes_total", "vllm:umbp_transfer_completed_total",
    "vllm:umbp_transfer_failed_total", "vllm:umbp_transfer_submitted_total", "vllm:watermark_requests",
    "vllm:websocket_connection_duration_seconds", "vllm:websocket_connections_active",
    "vllm:websocket_connections_total"
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
    """The exported core name closest to `name` (difflib's ratio; ties: sorted order): what the user probably meant."""
    return max(sorted(EXPORTED), key=lambda candidate: difflib.SequenceMatcher(None, candidate, name).ratio())
