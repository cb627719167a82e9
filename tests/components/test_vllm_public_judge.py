"""The public judge of runtime: vllm: the Kubernetes manifests vLLM's docs and ai-on-eks publish, compared with ours
on every flag, port, probe and metric name they set.

Each row records what the public manifest says (with repository, revision and line), what ours does, and either
`same` (the test asserts ours equals theirs) or the argued difference (the test asserts ours is what the argument
says, so a change on our side must revisit the argument). The manifests were read, not copied:
- vLLM docs: vllm-project/vllm @ v0.34.0 docs/deployment/k8s.md (the NVIDIA GPU Deployment, lines 196-258, and
  the Service, lines 110-122), the release the platform pins.
- ai-on-eks: awslabs/ai-on-eks-charts, the inference chart ai-on-eks deploys vLLM with:
  charts/inference-charts/templates/vllm-deployment.yaml @ 43db538f, values.yaml @ 7ec519cd,
  templates/_helpers.tpl @ 7c3e3d4a ("inference-charts.modelParameters"), and the GPU values file
  values-llama-4-maverick-17b-vllm.yaml @ e07eeb1a. (awslabs/ai-on-eks itself, snapshot 41a979ee of 2025-04-03,
  serves vLLM through Ray Serve, blueprints/inference/vllm-rayserve-gpu, not a vLLM server Deployment: no row of
  it applies.)
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config import InferenceServiceConfig
from components.inference import scaling, vllm, workload

REPO = Path(__file__).resolve().parents[2]
VLLM_DOCS = "vllm-project/vllm@v0.34.0 docs/deployment/k8s.md"
CHART = "awslabs/ai-on-eks-charts@43db538f charts/inference-charts/templates/vllm-deployment.yaml"
VALUES = "awslabs/ai-on-eks-charts@7ec519cd charts/inference-charts/values.yaml"
STARTUP = f"{VALUES} inference.modelServer.deployment.startupProbe"
HELPERS = "awslabs/ai-on-eks-charts@7c3e3d4a charts/inference-charts/templates/_helpers.tpl"
PARAMS = f"{HELPERS} define inference-charts.modelParameters"
GPU_VALUES = "awslabs/ai-on-eks-charts@e07eeb1a charts/inference-charts/values-llama-4-maverick-17b-vllm.yaml"


@dataclass(frozen=True)
class Row:
    source: str  # repository@revision path:line
    aspect: str
    theirs: Any
    ours: Any  # what our rendered dev vLLM service has
    argued: str | None = None  # None: the same; else why ours differs


@cache
def _service() -> InferenceServiceConfig:
    config = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())["config"]
    services = config["gpu-platform:inferenceServices"]
    raw = copy.deepcopy(next(s for s in services if s.get("runtime") == "vllm"))
    return InferenceServiceConfig.model_validate(raw)


def _container() -> dict[str, Any]:
    return workload.container(_service())


def _flag(name: str) -> str | None:
    args = _container()["args"]
    return args[args.index(name) + 1] if name in args else None


def _shm() -> dict[str, Any]:
    pod = workload.pod_spec(_service(), [], None)
    volume: dict[str, Any] = next(v for v in pod["volumes"] if v["name"] == "dshm")["emptyDir"]
    return volume


def rows() -> list[Row]:
    c = _container()
    return [
        # ---- vLLM's docs
        Row(f"{VLLM_DOCS}:229", "container port", 8000, c["ports"][0]["containerPort"]),
        Row(f"{VLLM_DOCS}:119-120", "Service port", 8000, workload.service(_service())["spec"]["ports"][0]["port"]),
        Row(f"{VLLM_DOCS}:245-247", "liveness probe", ("/health", 8000),
            (c["livenessProbe"]["httpGet"]["path"], _service().port)),
        Row(f"{VLLM_DOCS}:251-253", "readiness probe", ("/health", 8000),
            (c["readinessProbe"]["httpGet"]["path"], _service().port)),
        Row(f"{VLLM_DOCS}:248,254", "probe start delay", "initialDelaySeconds: 60", "startupProbe on /health",
            "a fixed 60 s delay restarts a replica whose weights take longer to read from a restored EBS volume; "
            "our startup probe holds liveness off for startupSeconds, which the config derives from the snapshot "
            "size and the volume's read rate (components/inference/budget.py), as the docs' own troubleshooting "
            "section (lines 475-480) advises"),
        Row(f"{VLLM_DOCS}:210-214", "/dev/shm", {"medium": "Memory", "sizeLimit": "2Gi"}, _shm()),
        Row(f"{VLLM_DOCS}:217", "image", "vllm/vllm-openai:latest", _service().image,
            "a moving tag hides which CUDA and architectures the image has; ours pins the release the matrix "
            "records (serving_images), so the pack can judge it"),
        Row(f"{VLLM_DOCS}:218-220", "command", "sh -c 'vllm serve <hub model> ...'", c["args"][0],
            "the image's entrypoint is already `vllm serve` (docker/Dockerfile:1386): ours passes the arguments "
            "only, with no shell, and the model is a directory on the restored volume, not a hub id"),
        Row(f"{VLLM_DOCS}:223-227", "HF_TOKEN env", "secretKeyRef hf-token-secret", "HF_HUB_OFFLINE=1",
            "the weights come from the EBS snapshot; the server never reaches the Hugging Face Hub, so it needs no "
            "token and is told to stay offline"),
        Row(f"{VLLM_DOCS}:234,238", "nvidia.com/gpu", "1", c["resources"]["limits"]["nvidia.com/gpu"]),
        Row(f"{VLLM_DOCS}:231-238", "cpu/memory", "requests 2/6G, limits 10/20G",
            (c["resources"]["requests"]["memory"], c["resources"]["limits"]["memory"]),
            "requests equal limits (Guaranteed QoS: a GPU replica is not the pod the kubelet evicts first), and "
            "the memory includes the in-memory /dev/shm, which counts against it"),
        # ---- ai-on-eks (its inference chart)
        Row(f"{CHART}:45-47", "container port and name", (8000, "http"),
            (c["ports"][0]["containerPort"], c["ports"][0]["name"])),
        Row(STARTUP, "startup probe", ("/health", 8000), (c["startupProbe"]["httpGet"]["path"],
                                                                       _service().port)),
        Row(STARTUP, "startup budget", "failureThreshold 60 x periodSeconds 10 = 600 s",
            c["startupProbe"]["failureThreshold"] * c["startupProbe"]["periodSeconds"],
            "ours is startupSeconds (600 s in dev) and the config refuses one shorter than the model read"),
        Row(f"{CHART}:54-56,94-97", "/dev/shm", "emptyDir medium Memory, no sizeLimit", _shm(),
            "an unbounded in-memory volume can take the node's memory; ours is bounded at 2 GiB per GPU and counted "
            "in the pod's memory limit"),
        Row(PARAMS, "--tensor-parallel-size", "the nvidia.com/gpu request",
            _flag("--tensor-parallel-size") == str(c["resources"]["limits"]["nvidia.com/gpu"]) and "the GPUs"),
        Row(PARAMS, "--served-model-name", "set when the model is a path",
            _flag("--served-model-name") is not None and "set"),
        Row(f"{GPU_VALUES}:7-9", "--gpu-memory-utilization", "0.9", _flag("--gpu-memory-utilization"),
            "unset in dev: vLLM v0.34.0 defaults to 1.0 with its extensible KV cache and advises leaving it unset "
            "unless something else shares the GPU (docs/configuration/optimization.md, GPU Memory Utilization)"),
        Row(f"{GPU_VALUES}:8", "--max-model-len", "8192", _flag("--max-model-len")),
        Row(f"{CHART}:40-44", "HUGGING_FACE_HUB_TOKEN env", "secretKeyRef hf-token/token", "HF_HUB_OFFLINE=1",
            "as for vLLM's docs: the weights come from the snapshot, so no hub and no token at run time"),
        Row(f"{CHART}:27-98", "probes", "startupProbe only", ("startupProbe", "readinessProbe", "livenessProbe"),
            "without readiness and liveness a replica whose engine died (/health 503) keeps its endpoints and is "
            "never restarted"),
    ]


def _the_same(row: Row) -> bool:
    if row.aspect == "--tensor-parallel-size":
        return bool(row.ours == "the GPUs")
    if row.aspect == "--served-model-name":
        return bool(row.ours == "set")
    return bool(row.ours == row.theirs)


ROWS = rows()


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.source.split('@')[0]}:{r.aspect}" for r in ROWS])
def test_ours_agrees_with_the_public_manifest_or_the_difference_is_argued(row: Row):
    if row.argued is None:
        assert _the_same(row), f"{row.source}: {row.aspect}: theirs {row.theirs!r}, ours {row.ours!r}"
    else:
        assert not _the_same(row), f"{row.source}: {row.aspect} is now the same: drop the argument"
        assert len(row.argued) > 40


def test_the_argued_differences_hold_on_our_side():
    c = _container()
    assert dict(e for e in ((x["name"], x.get("value")) for x in c["env"])).get("HF_HUB_OFFLINE") == "1"
    assert not any(e["name"].startswith("HF_TOKEN") or e["name"] == "HUGGING_FACE_HUB_TOKEN" for e in c["env"])
    assert "command" not in c and c["args"][0].startswith("/")
    assert c["resources"]["requests"] == c["resources"]["limits"]
    assert ":latest" not in _service().image


def test_every_metric_name_a_peer_or_vllms_docs_scale_on_is_one_the_pinned_release_exports():
    # Neither vLLM's k8s guide nor ai-on-eks's chart scales on a metric (no HPA or ScaledObject in either): the
    # names ours scale and chart on are checked against the release's loggers.py (components/inference/vllm.py;
    # tests/components/test_vllm.py checks the dashboard and the dev query), and scraped where the server serves
    # them, /metrics on the API port.
    for name in ("vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc",
                 "vllm:time_to_first_token_seconds_bucket", "vllm:generation_tokens_total"):
        assert vllm.exported(name), name
    assert scaling.service_monitor(_service())["spec"]["endpoints"][0] == {
        "port": "http", "path": "/metrics", "interval": scaling.SCRAPE_INTERVAL}
