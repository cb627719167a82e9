"""Does a model fit the GPUs a replica asks for? The arithmetic of `serving-model-fits`, shared by the policy
(rules/serving_model_fits.py) and the config check (components/config/loader.py), so both give the same answer
with the same words before any resource exists.

vLLM (vllm-project/vllm @ v0.34.0) loads the weights, then gives the KV cache what is left of its memory budget:
- Tensor parallelism splits the model across the replica's GPUs, each holding 1/TP of the weights
  (docs/configuration/conserving_memory.md, "Tensor Parallelism (TP)").
- The budget per GPU is the GPU's memory as the driver reports it (`total_memory * gpu_memory_utilization`,
  vllm/v1/worker/utils.py:743; the matrix's usable_mib, below the GiB AWS lists) times `--gpu-memory-utilization`
  (vllm/config/cache.py:216-227; unset:
  1.0 with the extensible KV cache, the CUDA default, which then keeps a measured margin free;
  docs/configuration/optimization.md "GPU Memory Utilization").
- So the weights alone cannot fit when weights > TP x GPU memory x utilization: the load fails with CUDA out of
  memory after the weights were read. Activations, CUDA graphs and the KV cache need more on top: passing this
  check is necessary, not sufficient.
- The KV cache of one token is K and V of every layer's KV heads (vllm/v1/kv_cache_interface.py:590-601), each GPU
  holding max(1, KV heads // TP) of them (replicated below TP: vllm/config/model.py:1703; the declared bytes count it).
  vLLM refuses to start when the KV cache cannot hold one request of `--max-model-len` tokens ("To serve at least
  one request with the model's max seq len ... KV cache is needed, which is larger than the available KV cache memory",
  vllm/v1/core/kv_cache_planning.py:120-130). Activation memory is not known before a run, so the pack's estimate
  (budget - weights) is an upper bound: a shortfall is certain, room is not; hence a warning.
- A replica's tensor-parallel size cannot exceed the GPUs of the instance it lands on (one pod, one node).

Findings: `mandatory` states a fact from declared numbers; what the pack cannot compute is marked `unseen`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .matrix import Matrix

RULE = "serving-model-fits"
MEMORY_DOCS = "https://docs.vllm.ai/en/v0.34.0/configuration/conserving_memory.html"
GIB = 1024**3


@dataclass(frozen=True)
class FitFinding:
    level: str  # "mandatory" | "unseen" (not judged: says what would let it judge) | "advisory" (a warning)
    key: str  # what to change: "modelGiB" | "gpusPerReplica" | "nodePools" | "maxModelLen" | "shape"
    message: str
    instance_type: str | None = None


def _gib(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def fit_findings(
    matrix: Matrix,
    *,
    weights_gib: float | None,
    tensor_parallel: int,
    utilization: float | None,
    instance_types: Sequence[str],
    max_model_len: int | None = None,
    kv_bytes_per_token: int | None = None,
) -> list[FitFinding]:
    """Every finding for one replica shape on the instance types it can land on (each type judged once)."""
    util = 1.0 if utilization is None else utilization
    util_text = f"--gpu-memory-utilization {util:g}" + (" (vLLM's default)" if utilization is None else "")
    out: list[FitFinding] = []
    if weights_gib is None:
        out.append(FitFinding("unseen", "modelGiB",
                              "the size of the weights is not declared, so whether they fit the GPUs is not judged. "
                              "To let the pack judge it: declare it (vllm.modelGiB, or parametersBillions with "
                              "precision; annotation gpu-platform.io/model-gib)"))
    for name in dict.fromkeys(instance_types):
        inst = matrix.instance_type(name)
        if inst is None or inst.fraction is not None:
            continue  # an unknown type: gpu-architecture-supported; a fractional GPU: gpu-workload-schedulable
        if tensor_parallel > inst.gpus:
            out.append(FitFinding(
                "mandatory", "gpusPerReplica",
                f"--tensor-parallel-size {tensor_parallel} needs {tensor_parallel} GPUs on one node, and {name} has "
                f"{inst.gpus}: the replica never schedules there. Lower gpusPerReplica (the tensor-parallel size) to "
                f"{inst.gpus}, or keep {name} out of the service's pools", name))
            continue
        memory = matrix.gpu_memory_gib(inst)
        if memory is None:
            out.append(FitFinding("unseen", "nodePools",
                                  f"the memory of {name}'s {inst.gpu_model} is not in the matrix (gpu_memory), so "
                                  "whether the model fits it is not judged. To let the pack judge it: add the GPU's "
                                  "memory with its source to matrix.yaml gpu_memory", name))
            continue
        per_gpu, _source = memory
        budget = tensor_parallel * per_gpu * util
        if weights_gib is not None and weights_gib > budget:
            need = next((tp for tp in (2, 4, 8) if tp <= inst.gpus and weights_gib <= tp * per_gpu * util), None)
            fix = (f"raise gpusPerReplica to {need} (tensor parallelism shards the weights)" if need is not None
                   else "use an instance type with more GPU memory, or a smaller or quantized model")
            out.append(FitFinding(
                "mandatory", "modelGiB",
                f"the weights alone ({_gib(weights_gib)} GiB) cannot fit {tensor_parallel} x {inst.gpu_model} "
                f"({per_gpu:.2f} GiB each as the driver reports it) on {name} at {util_text}: {_gib(budget)} GiB in "
                "all, before activations and KV cache; the replica dies with CUDA out of memory after reading its "
                f"weights. {fix[0].upper()}"
                f"{fix[1:]} (vLLM memory: {MEMORY_DOCS})", name))
            continue
        if weights_gib is None:
            continue
        if kv_bytes_per_token is None or max_model_len is None:
            continue
        kv_gib = kv_bytes_per_token * max_model_len / GIB
        left = budget - weights_gib
        if kv_gib > left:
            out.append(FitFinding(
                "advisory", "maxModelLen",
                f"one request of --max-model-len {max_model_len} tokens needs {_gib(kv_gib)} GiB of KV cache, and at "
                f"most {_gib(left)} GiB is left on {tensor_parallel} x {inst.gpu_model} of {name} after the "
                f"{_gib(weights_gib)} GiB of weights (before activations): vLLM refuses to start. Lower maxModelLen, "
                "use kvCacheDtype fp8, or raise gpusPerReplica", name))
    refused = any(f.level == "mandatory" for f in out)
    if weights_gib is not None and not refused and (kv_bytes_per_token is None or max_model_len is None):
        out.append(FitFinding(
            "unseen", "shape",
            "the model's shape (layers, KV heads, head size) or maxModelLen is not declared, so whether the KV cache "
            "holds one full-length request is not judged (no guess is made). To let the pack judge it: declare "
            "vllm.shape and vllm.maxModelLen"))
    return out
