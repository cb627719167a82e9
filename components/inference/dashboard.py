"""The Grafana dashboard of an inference service: a ConfigMap that Grafana's dashboard sidecar loads.

Panels, per service and per GPU pool:
- DCGM (the GPU Operator's dcgm-exporter): GPU utilisation `DCGM_FI_DEV_GPU_UTIL` (%), frame-buffer memory
  used `DCGM_FI_DEV_FB_USED` (MiB), temperature `DCGM_FI_DEV_GPU_TEMP` (C), power `DCGM_FI_DEV_POWER_USAGE` (W).
  dcgm-exporter labels each GPU with the pod using it; Prometheus renames a scraped `namespace`/`pod` that
  collides with its own target labels to `exported_namespace`/`exported_pod` (honorLabels false).
- Triton: request rate `nv_inference_request_success`, average latency
  `nv_inference_request_duration_us / nv_inference_count`, and queue time `nv_inference_queue_duration_us`.
- vLLM (runtime: vllm), by the names of the pinned release (components/inference/vllm.py): token throughput
  `vllm:prompt_tokens_total` and `vllm:generation_tokens_total`, requests running and waiting, time to first token
  (p50 and p95 of `vllm:time_to_first_token_seconds_bucket`, histogram_quantile), and KV-cache use
  `vllm:kv_cache_usage_perc` (1 = 100 percent). Source of histogram_quantile:
  https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile
- The pool comes from the node's `gpu-platform.io/pool` label, which kube-state-metrics exports as
  `kube_node_labels{label_gpu_platform_io_pool=...}` (components.addons.monitoring allows that label), joined
  through `kube_pod_info{node=...}` for Triton and through dcgm-exporter's `Hostname` (the node name) for DCGM.

Sources:
- DCGM field names: https://docs.nvidia.com/datacenter/dcgm/latest/dcgm-api/dcgm-api-field-ids.html and
  https://github.com/NVIDIA/dcgm-exporter/blob/main/etc/default-counters.csv
- Triton metrics: https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/user_guide/metrics.html
- Prometheus `honor_labels` (exported_ prefix): https://prometheus.io/docs/prometheus/latest/configuration/configuration/#scrape_config
- kube-state-metrics label allow-list: https://github.com/kubernetes/kube-state-metrics/blob/main/docs/metrics/cluster/node-metrics.md
- Grafana sidecar (`grafana_dashboard: "1"` ConfigMaps): https://github.com/grafana/helm-charts/tree/main/charts/grafana#sidecar-for-dashboards
- Dashboard JSON model: https://grafana.com/docs/grafana/latest/dashboards/build-dashboards/view-dashboard-json-model/
"""

from __future__ import annotations

import json
from typing import Any

from components.addons.monitoring import DASHBOARD_LABEL
from components.config import InferenceServiceConfig
from components.inference.workload import service_labels

POOL = "label_gpu_platform_io_pool"
WINDOW = "[5m]"


def _pool_of_node(node_label: str) -> str:
    """`kube_node_labels` with the node name under `node_label`, carrying the pool label."""
    if node_label == "node":
        return f"max by (node, {POOL}) (kube_node_labels)"
    return f'max by ({node_label}, {POOL}) (label_replace(kube_node_labels, "{node_label}", "$1", "node", "(.*)"))'


def pod_regex(name: str) -> str:
    """The names of a Deployment's pods, and no other workload's: `<name>-<pod-template-hash>-<5 random characters>`
    (the ReplicaSet is `<deployment>-<hash>`, its pods `generateName` it with a 5-character suffix:
    https://github.com/kubernetes/apiserver/blob/v0.36.3/pkg/storage/names/generate.go#L45). PromQL anchors the
    regex, so `vllm-[a-z0-9]+-[a-z0-9]+` does not match the pods of a `vllm-dev` Deployment (one more dash)."""
    return f"{name}-[a-z0-9]+-[a-z0-9]+"


def _dcgm(metric: str, config: InferenceServiceConfig) -> str:
    series = f'{metric}{{exported_namespace="{config.namespace}", exported_pod=~"{pod_regex(config.name)}"}}'
    return (f"avg by ({POOL}) ({series} * on (Hostname) group_left({POOL}) {_pool_of_node('Hostname')})")


def _triton(expr: str, *, keep: str = "", agg: str = "sum") -> str:
    """A series of the service's pods, labelled with the pool of the node each pod runs on."""
    pod_node = "max by (namespace, pod, node) (kube_pod_info)"
    by = f"{keep}, {POOL}" if keep else POOL
    return (f"{agg} by ({by}) (({expr}) * on (namespace, pod) group_left(node) {pod_node} "
            f"* on (node) group_left({POOL}) {_pool_of_node('node')})")


def _vllm_queries(config: InferenceServiceConfig) -> dict[str, tuple[str, str]]:
    own = f'namespace="{config.namespace}", pod=~"{pod_regex(config.name)}"'

    def rate(metric: str) -> str:
        return f"rate({metric}{{{own}}}{WINDOW})"

    def ttft(q: str) -> str:
        return f"histogram_quantile({q}, {_triton(rate('vllm:time_to_first_token_seconds_bucket'), keep='le')})"

    return {
        "Generated tokens/s": (_triton(rate("vllm:generation_tokens_total")), "short"),
        "Prompt tokens/s": (_triton(rate("vllm:prompt_tokens_total")), "short"),
        "Requests running": (_triton(f"vllm:num_requests_running{{{own}}}"), "short"),
        "Requests waiting": (_triton(f"vllm:num_requests_waiting{{{own}}}"), "short"),
        "Time to first token p50": (ttft("0.5"), "s"),
        "Time to first token p95": (ttft("0.95"), "s"),
        "KV-cache use": (_triton(f"vllm:kv_cache_usage_perc{{{own}}}", agg="avg"), "percentunit"),
    }


def queries(config: InferenceServiceConfig) -> dict[str, tuple[str, str]]:
    """Panel title -> (PromQL, unit)."""
    triton = f'namespace="{config.namespace}", pod=~"{pod_regex(config.name)}"'

    def rate(metric: str) -> str:
        return f"rate({metric}{{{triton}}}{WINDOW})"

    per_request = f"{rate('nv_inference_request_duration_us')} / {rate('nv_inference_count')}"
    queued = f"{rate('nv_inference_queue_duration_us')} / {rate('nv_inference_count')}"
    gpu = {
        "GPU utilisation": (_dcgm("DCGM_FI_DEV_GPU_UTIL", config), "percent"),
        "GPU memory used": (_dcgm("DCGM_FI_DEV_FB_USED", config), "decmbytes"),
        "GPU temperature": (_dcgm("DCGM_FI_DEV_GPU_TEMP", config), "celsius"),
        "GPU power": (_dcgm("DCGM_FI_DEV_POWER_USAGE", config), "watt"),
    }
    if config.runtime == "vllm":
        return {**gpu, **_vllm_queries(config)}
    return {
        **gpu,
        "Request rate": (_triton(rate("nv_inference_request_success")), "reqps"),
        "Request latency": (_triton(per_request), "µs"),
        "Queue time": (_triton(queued), "µs"),
    }


def dashboard(config: InferenceServiceConfig) -> dict[str, Any]:
    """The dashboard JSON model: one time-series panel per query, two per row, legend by pool."""
    panels = []
    for i, (title, (expr, unit)) in enumerate(queries(config).items()):
        panels.append({
            "id": i + 1,
            "type": "timeseries",
            "title": title,
            "datasource": {"type": "prometheus", "uid": "prometheus"},
            "gridPos": {"h": 8, "w": 12, "x": 12 * (i % 2), "y": 8 * (i // 2)},
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "targets": [{"refId": "A", "expr": expr, "legendFormat": "{{" + POOL + "}}"}],
        })
    return {
        "uid": f"gpu-platform-{config.namespace}-{config.name}"[:40],
        "title": f"Inference: {config.namespace}/{config.name}",
        "tags": ["gpu-platform", "inference"],
        "schemaVersion": 39,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s",
        "panels": panels,
    }


def dashboard_config_map(config: InferenceServiceConfig) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{config.name}-dashboard", "namespace": config.namespace,
                     "labels": {**service_labels(config), DASHBOARD_LABEL[0]: DASHBOARD_LABEL[1]}},
        "data": {f"{config.name}.json": json.dumps(dashboard(config), sort_keys=True)},
    }
