"""The vLLM container of an inference service (runtime: vllm): arguments, environment, probes, shared memory.

Pure functions of the service config. The facts of the pinned vLLM release (flags, routes, port, metric names) are
in components/inference/vllm.py with their sources; the choices made here:

- Arguments: the model directory on the model volume first (the image's entrypoint is `vllm serve`), then
  `--served-model-name`, `--port`, `--tensor-parallel-size` = gpusPerReplica (one replica shards its weights over
  every GPU it holds), `--max-model-len` and `--gpu-memory-utilization` when configured, and `--shutdown-timeout` =
  drainSeconds (on SIGTERM the server waits that long for in-flight requests; 0 would abort them).
- Environment: HF_HUB_OFFLINE=1 (the weights come from the snapshot, never from a hub); HOME=/tmp (the root file
  system is read-only; vLLM, Triton-lang and FlashInfer keep their compile caches under $HOME/.cache); the API key,
  when set, as VLLM_API_KEY from the Secret (never in the arguments, which `kubectl describe` shows); usage
  telemetry off (VLLM_NO_USAGE_STATS=1, DO_NOT_TRACK=1) unless `vllm.usageStats`.
- CPU, when the stack sets no `cpu`: vLLM's guidance, 2 x (2 + N) vCPUs for N GPUs (components/inference/vllm.py),
  but never more than the smallest instance type the service can reach gives a pod: its vCPUs less one (EKS reserves
  60-80 m of a 4-vCPU node for the kubelet, and the GPU node's DaemonSets request the rest of that vCPU), so the
  default never makes the replica unschedulable. The config check advises the shortfall below the guidance, and
  refuses a `cpu` above every reachable type's allocatable CPU (components/config/pod_sizing.py).
- Memory, when the stack sets no `memory`: 8 GiB for the API server, the engine core and the first GPU worker, and
  WORKER_GIB more for each further tensor-parallel worker (each is a process of its own that loads PyTorch, the CUDA
  runtime and NCCL: the platform's estimate, not a measured figure), plus the in-memory /dev/shm.
- /dev/shm: an in-memory emptyDir. With tensor parallelism the worker processes exchange tensors through shared
  memory (NCCL's SHM transport and vLLM's shared-memory broadcast), and Docker's default /dev/shm is 64 MiB; vLLM's
  own Kubernetes guide mounts a Memory emptyDir there (docs/deployment/k8s.md:211-214 at v0.34.0, 2 GiB for one GPU).
  Sized 2 GiB per GPU of the replica; it counts against the pod's memory limit, which is raised by as much.
- Probes on GET /health (200 while the engine lives, 503 once it is dead): startup with the service's startup
  budget (the model read from the restored volume, components/inference/budget.py), then readiness and liveness.
- Overrides the image's root user with its `vllm` user (uid 2000, gid 0, created at docker/Dockerfile:879-880 at
  v0.34.0): the published `vllm-openai` target keeps `USER root` (Dockerfile:873-875, `# USER vllm` at :1385); only
  the opt-in `vllm-openai-nonroot` target sets `USER vllm` (:1403-1407).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from components import labels
from components.config import InferenceServiceConfig
from components.config.pod_sizing import cpu_request
from components.inference import vllm as facts

VLLM_UID = 2000  # user vllm the image creates but does not run as (docker/Dockerfile:879, :1385 at v0.34.0)
VLLM_GID = 0  # its group: the image makes its caches group-0 writable (OpenShift arbitrary-UID pattern)
SHM_GIB_PER_GPU = 2
TMP_SIZE = "8Gi"  # torch.compile, Triton-lang and FlashInfer JIT caches under $HOME
BASE_MEMORY_GIB = 8  # the API server, the engine core and one GPU worker (the `memory` default)
WORKER_GIB = 4  # each further tensor-parallel worker process (an estimate: module docstring)
HOME_DIR = "/tmp"


def model_dir(config: InferenceServiceConfig) -> str:
    """Where the model directory is inside the container: modelPath under the volume's mount, or absolute."""
    assert config.vllm is not None
    path = config.vllm.model_path
    if path.startswith("/"):
        return path
    mount = config.model_volume.mount_path if config.model_volume is not None else "/models"
    return f"{mount.rstrip('/')}/{path}"


def vllm_args(config: InferenceServiceConfig) -> list[str]:
    """`vllm serve`'s arguments (the image's entrypoint supplies `vllm serve`)."""
    assert config.vllm is not None
    args = [model_dir(config),
            "--served-model-name", config.vllm.served_name(),
            "--port", str(config.port),
            "--tensor-parallel-size", str(config.gpus_per_replica)]
    if config.vllm.max_model_len is not None:
        args += ["--max-model-len", str(config.vllm.max_model_len)]
    if config.vllm.gpu_memory_utilization is not None:
        args += ["--gpu-memory-utilization", f"{config.vllm.gpu_memory_utilization:g}"]
    if config.vllm.runner == "pooling":  # an embedding model: /v1/embeddings (components/inference/vllm.py)
        args += ["--runner", "pooling"]
    shape = config.vllm.shape
    if shape is not None and shape.kv_cache_dtype != "auto":  # what the KV-cache check counted, on the server too
        args += ["--kv-cache-dtype", shape.kv_cache_dtype]  # vllm/engine/arg_utils.py:1416 at v0.34.0
    args += ["--shutdown-timeout", str(config.drain_seconds)]
    return args


def shm_size(config: InferenceServiceConfig) -> str:
    return f"{SHM_GIB_PER_GPU * config.gpus_per_replica}Gi"


def memory_limit(config: InferenceServiceConfig) -> str:
    """The pod's memory: the configured memory (by default 8 GiB and WORKER_GIB per further tensor-parallel worker)
    plus the in-memory /dev/shm, which the kubelet counts against it."""
    value = config.memory
    if "memory" not in config.model_fields_set:
        value = f"{BASE_MEMORY_GIB + WORKER_GIB * (config.gpus_per_replica - 1)}Gi"
    for suffix, factor in (("Gi", 1), ("Mi", 1 / 1024)):
        if value.endswith(suffix) and value[: -len(suffix)].isdigit():
            gib = int(value[: -len(suffix)]) * factor + SHM_GIB_PER_GPU * config.gpus_per_replica
            return f"{math.ceil(gib)}Gi"
    return value


def _probe(period: int, failures: int) -> dict[str, Any]:
    return {"httpGet": {"path": facts.HEALTH, "port": "http"}, "periodSeconds": period, "timeoutSeconds": 5,
            "failureThreshold": failures}


def env(config: InferenceServiceConfig) -> list[dict[str, Any]]:
    assert config.vllm is not None
    out: list[dict[str, Any]] = [{"name": facts.OFFLINE_ENV[0], "value": facts.OFFLINE_ENV[1]},
                                 {"name": "HOME", "value": HOME_DIR}]
    if not config.vllm.usage_stats:
        out += [{"name": name, "value": value} for name, value in facts.USAGE_STATS_OFF_ENV]
    secret = config.vllm.api_key_secret
    if secret is not None:
        out.append({"name": facts.API_KEY_ENV,
                    "valueFrom": {"secretKeyRef": {"name": secret.name, "key": secret.key}}})
    return out


def vllm_container(config: InferenceServiceConfig, model_volume_name: str, tmp_volume_name: str,
                   instance_types: Sequence[str] = ()) -> dict[str, Any]:
    gpus = str(config.gpus_per_replica)
    memory = memory_limit(config)
    cpu = cpu_request(config, instance_types)
    mounts: list[dict[str, Any]] = [{"name": "dshm", "mountPath": "/dev/shm"},
                                    {"name": tmp_volume_name, "mountPath": "/tmp"}]
    if config.model_volume is not None:
        mounts.append({"name": model_volume_name, "mountPath": config.model_volume.mount_path, "readOnly": True})
    return {
        "name": "vllm",
        "image": config.image,
        "imagePullPolicy": "IfNotPresent",
        "args": vllm_args(config),
        "ports": [{"name": "http", "containerPort": config.port, "protocol": "TCP"}],
        "resources": {
            "requests": {"cpu": cpu, "memory": memory, labels.GPU_RESOURCE: gpus},
            "limits": {"cpu": cpu, "memory": memory, labels.GPU_RESOURCE: gpus},
        },
        "startupProbe": _probe(10, math.ceil(config.startup_seconds / 10)),
        "readinessProbe": _probe(5, 3),
        "livenessProbe": _probe(10, 3),
        "env": env(config),
        "volumeMounts": mounts,
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                            "readOnlyRootFilesystem": True, "runAsNonRoot": True, "runAsUser": VLLM_UID,
                            "runAsGroup": VLLM_GID},
    }
