"""The workload of an inference service as Kubernetes manifests: Deployment, Service, PodDisruptionBudget.

Triton's container is built here; vLLM's in components/inference/vllm_workload.py (runtime: vllm).

Pure functions of the service config and the pools it may use, so tests read them without mocks.

Sources:
- Triton health endpoints (`/v2/health/live`, `/v2/health/ready`) and ports (8000 HTTP, 8001 gRPC, 8002 metrics):
  https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/protocol/extension_health.html
  https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/customization_guide/deploy.html
- Triton `--exit-timeout-secs` (on SIGTERM it stops taking new requests and waits up to this long for
  in-flight ones): https://github.com/triton-inference-server/server/blob/main/src/command_line_parser.cc
- Pod termination (preStop, then SIGTERM, within terminationGracePeriodSeconds):
  https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination
- Startup probes for slow starts: https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/
- Topology spread: https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/
- PDB `unhealthyPodEvictionPolicy: AlwaysAllow`: https://kubernetes.io/docs/tasks/run-application/configure-pdb/#unhealthy-pod-eviction-policy
- Triton's image creates user triton-server, uid and gid 1000, to run the server as non-root, with a bare
  `useradd` (no `-m`): it has no home directory (triton-inference-server/server @ v2.62.0 build.py:1333-1343). The
  image's default user is root; the pod runs it as 1000, so HOME points at the writable /tmp (the root filesystem
  is read-only) and fsGroup 1000 makes the restored model files readable by that group.
  checkov skip annotations: https://www.checkov.io/2.Basics/Suppressing%20and%20Skipping%20Policies.html
- fsGroup: the kubelet changes the group of the volume's files to it when it mounts a volume that supports
  ownership management (an EBS ext4 volume does); `OnRootMismatch` skips the walk when the root already has it:
  https://kubernetes.io/docs/tasks/configure-pod-container/security-context/#configure-volume-permission-and-ownership-change-policy-for-pods
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from components import labels
from components.config import GpuPool, InferenceServiceConfig
from components.inference import vllm_workload

HEALTH_LIVE = "/v2/health/live"
HEALTH_READY = "/v2/health/ready"
ZONE_KEY = "topology.kubernetes.io/zone"
SERVICE_LABEL = "gpu-platform.io/service"
# What the Deployment tells a resource policy about the pools it can reach (label contract values of
# each pool), so the CUDA / driver / GPU-count verdicts can be given from the Deployment's own inputs in
# a first preview, where stack policies see no Kubernetes properties (policies/.../_reach_annotation.py).
REACHABLE_POOLS_ANNOTATION = "gpu-platform.io/reachable-pools"
# What a vLLM Deployment tells serving-model-fits about its model (policies/gpu_guard/rules/serving_model_fits.py):
# the weights' size in GiB, and the shape that sizes one token's KV cache.
MODEL_GIB_ANNOTATION = "gpu-platform.io/model-gib"
MODEL_SHAPE_ANNOTATION = "gpu-platform.io/model-shape"
MODEL_ANNOTATION = "gpu-platform.io/model"  # a catalog repo id (policies/gpu_guard/models)
# Seconds between the pod leaving the Service's endpoints / the ALB target group starting to deregister it
# and Triton receiving SIGTERM: endpoint removal propagates asynchronously, so without this pause new
# requests still arrive at a server that has stopped accepting them.
# Source: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/deploy/pod_readiness_gate/
PRE_STOP_SECONDS = 15
SHM_SIZE = "1Gi"  # Triton passes tensors between backends through /dev/shm; the container default is 64 MiB
MODEL_VOLUME = "model"
TRITON_UID = 1000  # triton-server in Triton's image (build.py above)
# The root filesystem is read-only: Triton and its Python backend write scratch files under /tmp only.
TMP_VOLUME, TMP_SIZE = "tmp", "1Gi"
HOME_DIR = "/tmp"
# checkov findings kept on purpose, each with its reason on the Deployment (tests/security/test_checkov.py).
CHECKOV_SKIPS = {
    "checkov.io/skip1": "CKV_K8S_43=the image is pinned by its NGC release tag in the stack file, which the "
                        "serving policies read for its CUDA version; a digest may be given there instead",
    "checkov.io/skip2": "CKV_K8S_15=IfNotPresent on purpose: a Triton image is many GiB and a pinned release tag "
                        "does not move, so a scale-out must not wait on or fail with the registry",
    "checkov.io/skip3": "CKV_K8S_40=runs as uid 1000, the user triton-server that Triton's image creates to run "
                        "non-root and owns the server's files with; a uid above 10000 would own none of them",
}


VLLM_CHECKOV_SKIPS = {
    **{k: v for k, v in CHECKOV_SKIPS.items() if k != "checkov.io/skip3"},
    "checkov.io/skip2": "CKV_K8S_15=IfNotPresent on purpose: a vLLM image is many GiB and a pinned release tag "
                        "does not move, so a scale-out must not wait on or fail with the registry",
    "checkov.io/skip3": "CKV_K8S_40=runs as uid 2000, the user vllm that vLLM's image creates for non-root runs "
                        "and gives its caches to; a uid above 10000 would own none of them",
}


def selector_labels(config: InferenceServiceConfig) -> dict[str, str]:
    """The labels that select the service's pods (Deployment, Service, PDB, topology spread)."""
    return {"app.kubernetes.io/name": config.name, SERVICE_LABEL: config.name}


def service_labels(config: InferenceServiceConfig) -> dict[str, str]:
    """Labels of every object of the service; the ServiceMonitor selects the Service by them."""
    return {**selector_labels(config), "app.kubernetes.io/component": "inference",
            "app.kubernetes.io/part-of": "gpu-platform"}


def reachable_pools(config: InferenceServiceConfig, pools: Sequence[GpuPool]) -> list[GpuPool]:
    """The pools the service may be scheduled on: its `nodePools`, or every GPU pool."""
    if not config.node_pools:
        return list(pools)
    by_name = {p.name: p for p in pools}
    return [by_name[name] for name in config.node_pools]


def reachable_pools_annotation(pools: Sequence[GpuPool]) -> str:
    """JSON list of the reachable pools as their nodes are labelled (pool, os, driver, driver source, types), with
    the nodes' Kubernetes version and the pinned node image release, which decide what a baked branch ships."""
    return json.dumps([
        {"pool": p.name, "os": p.os, "driver": p.driver_version, "driverSource": p.driver_source,
         "instanceTypes": list(p.instance_types), "kubernetes": p.kubelet_version,
         **({"imageVersion": p.image_version} if p.image_version else {})}
        for p in pools
    ], sort_keys=True)


def termination_grace_seconds(config: InferenceServiceConfig) -> int:
    """preStop pause + Triton's drain of in-flight requests + a margin for its own shutdown."""
    return PRE_STOP_SECONDS + config.drain_seconds + 15


def triton_args(config: InferenceServiceConfig) -> list[str]:
    """Triton's command line. The public path is restricted by the Ingress (components/inference/ingress.py):
    in-cluster clients keep every API on the ClusterIP Service."""
    return [
        "tritonserver",
        f"--model-repository={config.repository}",
        f"--http-port={config.port}",
        f"--grpc-port={config.grpc_port}",
        f"--metrics-port={config.metrics_port}",
        "--allow-metrics=true",
        "--allow-gpu-metrics=true",
        f"--exit-timeout-secs={config.drain_seconds}",
    ]


def _probe(path: str, period: int, failures: int) -> dict[str, Any]:
    return {"httpGet": {"path": path, "port": "http"}, "periodSeconds": period, "timeoutSeconds": 5,
            "failureThreshold": failures}


def triton_container(config: InferenceServiceConfig) -> dict[str, Any]:
    gpus = str(config.gpus_per_replica)
    mounts: list[dict[str, Any]] = [{"name": "dshm", "mountPath": "/dev/shm"},
                                    {"name": TMP_VOLUME, "mountPath": "/tmp"}]
    if config.model_volume is not None:
        mounts.append({"name": MODEL_VOLUME, "mountPath": config.model_volume.mount_path, "readOnly": True})
    return {
        "name": "triton",
        "image": config.image,
        "imagePullPolicy": "IfNotPresent",
        "args": triton_args(config),
        "ports": [
            {"name": "http", "containerPort": config.port, "protocol": "TCP"},
            {"name": "grpc", "containerPort": config.grpc_port, "protocol": "TCP"},
            {"name": "metrics", "containerPort": config.metrics_port, "protocol": "TCP"},
        ],
        "resources": {
            "requests": {"cpu": config.cpu, "memory": config.memory, labels.GPU_RESOURCE: gpus},
            "limits": {"cpu": config.cpu, "memory": config.memory, labels.GPU_RESOURCE: gpus},
        },
        # Model loading can take minutes: the startup probe holds liveness off until the server is ready.
        "startupProbe": _probe(HEALTH_READY, 10, math.ceil(config.startup_seconds / 10)),
        "readinessProbe": _probe(HEALTH_READY, 5, 3),
        "livenessProbe": _probe(HEALTH_LIVE, 10, 3),
        "lifecycle": {"preStop": {"sleep": {"seconds": PRE_STOP_SECONDS}}},
        # triton-server has no home directory and the root filesystem is read-only: Python backends and
        # libraries that write under $HOME (caches, config) get the writable /tmp.
        "env": [{"name": "HOME", "value": HOME_DIR}],
        "volumeMounts": mounts,
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                            "readOnlyRootFilesystem": True, "runAsNonRoot": True, "runAsUser": TRITON_UID,
                            "runAsGroup": TRITON_UID},
    }


def container(config: InferenceServiceConfig, pools: Sequence[GpuPool] = ()) -> dict[str, Any]:
    """The serving container of the service's runtime (vLLM's CPU is sized for the pools' smallest instance type)."""
    if config.runtime == "vllm":
        types = [t for p in pools for t in p.instance_types]
        out = vllm_workload.vllm_container(config, MODEL_VOLUME, TMP_VOLUME, types)
        out["lifecycle"] = {"preStop": {"sleep": {"seconds": PRE_STOP_SECONDS}}}
        return out
    return triton_container(config)


def pod_spec(config: InferenceServiceConfig, pools: Sequence[GpuPool],
             model_volume: dict[str, Any] | None) -> dict[str, Any]:
    vllm = config.runtime == "vllm"
    shm = vllm_workload.shm_size(config) if vllm else SHM_SIZE
    tmp = vllm_workload.TMP_SIZE if vllm else TMP_SIZE
    uid = vllm_workload.VLLM_UID if vllm else TRITON_UID
    volumes: list[dict[str, Any]] = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": shm}},
                                     {"name": TMP_VOLUME, "emptyDir": {"sizeLimit": tmp}}]
    if model_volume is not None:
        volumes.append(model_volume)
    return {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": labels.POOL_LABEL, "operator": "In",
                                   "values": [p.name for p in pools]}]},
        ]}}},
        "tolerations": [labels.GPU_TAINT.toleration()],
        # ScheduleAnyway: a zone out of GPU capacity must not stop a scale-out; the scheduler still prefers
        # the zone with the fewest replicas.
        "topologySpreadConstraints": [{
            "maxSkew": 1, "topologyKey": ZONE_KEY, "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": selector_labels(config)}, "matchLabelKeys": ["pod-template-hash"],
        }],
        "terminationGracePeriodSeconds": termination_grace_seconds(config),
        "automountServiceAccountToken": False,
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}, "fsGroup": uid,
                            "fsGroupChangePolicy": "OnRootMismatch"},
        "containers": [container(config, pools)],
        "volumes": volumes,
    }


def deployment(config: InferenceServiceConfig, pools: Sequence[GpuPool], cuda: str,
               model_volume: dict[str, Any] | None) -> dict[str, Any]:
    """The Deployment. With autoscaling, `replicas` is left to KEDA's HPA (no second owner)."""
    reach = reachable_pools(config, pools)
    annotations = {REACHABLE_POOLS_ANNOTATION: reachable_pools_annotation(reach), **model_annotations(config)}
    if config.autoscaling is not None and config.min_replicas == 0:
        # A service that scales to zero is not expected to be Ready at deploy time (no GPU node may be up).
        annotations["pulumi.com/skipAwait"] = "true"
    spec: dict[str, Any] = {
        "selector": {"matchLabels": selector_labels(config)},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        "revisionHistoryLimit": 5,
        "template": {
            "metadata": {"labels": {**service_labels(config), **labels.cuda_workload_labels(cuda)}},
            "spec": pod_spec(config, reach, model_volume),
        },
    }
    if config.autoscaling is None:
        spec["replicas"] = config.max_replicas
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": config.name, "namespace": config.namespace, "labels": service_labels(config),
                     "annotations": {**annotations,
                                     **(VLLM_CHECKOV_SKIPS if config.runtime == "vllm" else CHECKOV_SKIPS)}},
        "spec": spec,
    }


def model_annotations(config: InferenceServiceConfig) -> dict[str, str]:
    """The model facts serving-model-fits reads from the Deployment (vLLM only; none when not declared)."""
    if config.vllm is None:
        return {}
    out: dict[str, str] = {}
    weights = config.vllm.weights_gib
    if weights is not None:
        out[MODEL_GIB_ANNOTATION] = f"{weights:.2f}"
    facts = config.vllm.declared_facts()
    if set(facts) != {"precision"}:
        out[MODEL_SHAPE_ANNOTATION] = json.dumps(facts, sort_keys=True)
    if config.vllm.model:
        out[MODEL_ANNOTATION] = config.vllm.model
    return out


def service_ports(config: InferenceServiceConfig) -> list[int]:
    """The container ports clients and Prometheus reach: vLLM serves its API and /metrics on one port."""
    if config.runtime == "vllm":
        return [config.port]
    return [config.port, config.grpc_port, config.metrics_port]


def service(config: InferenceServiceConfig) -> dict[str, Any]:
    """ClusterIP Service: HTTP (and Triton's gRPC) for clients, metrics for the ServiceMonitor."""
    if config.runtime == "vllm":
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": config.name, "namespace": config.namespace, "labels": service_labels(config)},
            "spec": {"type": "ClusterIP", "selector": selector_labels(config),
                     "ports": [{"name": "http", "port": config.port, "targetPort": "http", "protocol": "TCP"}]},
        }
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": config.name, "namespace": config.namespace, "labels": service_labels(config)},
        "spec": {
            "type": "ClusterIP",
            "selector": selector_labels(config),
            "ports": [
                {"name": "http", "port": config.port, "targetPort": "http", "protocol": "TCP"},
                {"name": "grpc", "port": config.grpc_port, "targetPort": "grpc", "protocol": "TCP",
                 "appProtocol": "grpc"},
                {"name": "metrics", "port": config.metrics_port, "targetPort": "metrics", "protocol": "TCP"},
            ],
        },
    }


def pod_disruption_budget(config: InferenceServiceConfig) -> dict[str, Any]:
    """At most one replica voluntarily disrupted at a time (node drains, Karpenter consolidation, upgrades).

    `maxUnavailable: 1` rather than a `minAvailable`: it never blocks a drain forever (a single replica
    can still move), and it asks nothing of a service that KEDA has scaled to zero.
    """
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": config.name, "namespace": config.namespace, "labels": service_labels(config)},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": selector_labels(config)},
                 "unhealthyPodEvictionPolicy": "AlwaysAllow"},
    }


def network_policy(config: InferenceServiceConfig) -> dict[str, Any]:
    """Ingress to the replicas on their three ports only (HTTP and gRPC from clients and the ALB's IP targets,
    metrics for Prometheus); any other port is refused where the cluster enforces NetworkPolicy. Egress is left
    open: a service may load its model from a registry at start.
    Source: https://kubernetes.io/docs/concepts/services-networking/network-policies/
    """
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": config.name, "namespace": config.namespace, "labels": service_labels(config)},
        "spec": {
            "podSelector": {"matchLabels": selector_labels(config)},
            "policyTypes": ["Ingress"],
            "ingress": [{"ports": [{"port": port, "protocol": "TCP"}
                                   for port in service_ports(config)]}],
        },
    }
