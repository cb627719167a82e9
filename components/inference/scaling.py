"""Autoscaling and scraping of an inference service: the KEDA ScaledObject and Triton's ServiceMonitor.

- The ScaledObject is the only autoscaler of the Deployment: KEDA creates and owns its HPA
  (`keda-hpa-<name>`), so the platform never adds another. Below `activationThreshold` KEDA scales to
  `minReplicaCount` (zero allowed where the PDB, `maxUnavailable: 1`, asks no minimum); above it the
  HPA targets `threshold` per replica.
- A service with minReplicas >= 1 gets `fallback`: it holds a replica count when Prometheus cannot be queried
  three times in a row, instead of freezing at whatever count the last answer gave; `ignoreNullValues: "false"`
  makes a lost Triton scrape target such a failure instead of a 0 that scales the service in.
- A service that scales to zero gets no `fallback` and `ignoreNullValues: "true"`: at zero its `nv_*` query is
  empty, and KEDA v2.20.2 counts an active fallback as an active trigger in its polling loop, which scales the
  target from zero (kedacore/keda @ v2.20.2 pkg/fallback/fallback.go:142-170, pkg/scaling/scale_handler.go:1003,
  :1023, pkg/scaling/executor/scale_scaledobjects.go:63-73; commit e414cb457, since v2.19.0): it would never
  sleep (the advisory scaled-workload-wakes-fallback finds that in any stack). A lost scrape target then reads as 0.
- A service that scales to zero needs a trigger that can wake it (scaled-workload-wakes): `wakeSchedule`
  adds a cron window; the config refuses a service that cannot wake (components/config/serving.py).
- The ServiceMonitor selects the service's Service by its labels and scrapes the `metrics` port (Triton), or the
  `http` port (vLLM serves /metrics on its API port).

Sources:
- https://keda.sh/docs/2.20/reference/scaledobject-spec/ (fallback, cooldownPeriod, advanced)
- https://keda.sh/docs/2.20/scalers/prometheus/
- https://keda.sh/docs/2.20/concepts/scaling-deployments/ ("don't combine a ScaledObject with an HPA")
- Triton metrics: https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/user_guide/metrics.html
- ServiceMonitor: .upstream-cache/crds/monitoring/monitoring.coreos.com_servicemonitors.yaml (v0.93.0)
"""

from __future__ import annotations

from typing import Any

from components.config import AutoscalingConfig, InferenceServiceConfig
from components.inference.workload import service_labels

POLLING_SECONDS = 15
FALLBACK_FAILURES = 3
SCRAPE_INTERVAL = "15s"


def fallback_replicas(config: InferenceServiceConfig, autoscaling: AutoscalingConfig) -> int:
    if autoscaling.fallback_replicas is not None:
        return min(autoscaling.fallback_replicas, config.max_replicas)
    return max(config.min_replicas, 1)


def scaled_object(config: InferenceServiceConfig, autoscaling: AutoscalingConfig,
                  prometheus_url: str) -> dict[str, Any]:
    spec = config.scaled_object_spec(autoscaling, prometheus_url)
    fallback = ({"fallback": {"failureThreshold": FALLBACK_FAILURES,
                              "replicas": fallback_replicas(config, autoscaling)}}
                if config.min_replicas >= 1 else {})
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": config.name, "namespace": config.namespace, "labels": service_labels(config)},
        "spec": {
            "scaleTargetRef": spec["scaleTargetRef"],
            "minReplicaCount": spec["minReplicaCount"],
            "maxReplicaCount": spec["maxReplicaCount"],
            "pollingInterval": POLLING_SECONDS,
            "cooldownPeriod": autoscaling.cooldown_seconds,
            **fallback,
            "advanced": {"horizontalPodAutoscalerConfig": {"behavior": {"scaleDown": {
                # A GPU replica takes minutes to come back: scale in slowly.
                "stabilizationWindowSeconds": 300,
                "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}],
            }}}},
            "triggers": spec["triggers"],
        },
    }


def service_monitor(config: InferenceServiceConfig) -> dict[str, Any]:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": config.name, "namespace": config.namespace, "labels": service_labels(config)},
        "spec": {
            "selector": {"matchLabels": service_labels(config)},
            "namespaceSelector": {"matchNames": [config.namespace]},
            "endpoints": [{"port": "http" if config.runtime == "vllm" else "metrics", "path": "/metrics",
                           "interval": SCRAPE_INTERVAL}],
        },
    }
