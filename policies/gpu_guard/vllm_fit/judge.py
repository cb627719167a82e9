"""Will this vLLM replica start on these instance types? Each outcome at the level its certainty earns:
- mandatory: vLLM refuses for certain: a startup refusal (refusals.py), or the KV cache cannot hold one request of
  --max-model-len tokens (or the weights do not fit) even at the best case (most memory, least overhead);
- advisory: it fits at the best case only: the margin lies inside the overhead's error bar, given in GiB;
- nothing: it fits at the worst case;
- unseen: what the arithmetic does not model or cannot see (an unread release, LoRA, an undeclared model, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .inputs import ModelInput, ServingArgs
from .kv import kv_dtype_bytes, longest_fitting, one_request_gib
from .memory import gpu_memory
from .overhead import CONTEXT_LOW, Bounds, activation_high, kv_memory
from .refusals import compute_dtype_bytes, gpu_refusals, shape_refusals
from .releases import PINNED, RELEASES, Release, release_of_image

MEMORY_DOCS = "https://docs.vllm.ai/en/v0.34.0/configuration/conserving_memory.html"


@dataclass(frozen=True)
class FitFinding:
    level: str  # "mandatory" | "advisory" | "unseen"
    key: str  # what to change: modelGiB, gpusPerReplica, nodePools, maxModelLen, kvCacheDtype, dtype, shape, image
    message: str
    instance_type: str | None = None
    margin_gib: float | None = None


def _gib(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _round_len(tokens: int) -> int:
    """A max_model_len to suggest: the fitting length rounded down to 1024 (or 256 below 4096)."""
    step = 1024 if tokens >= 4096 else 256
    return max(step, tokens // step * step) if tokens >= step else tokens


def _release(args: ServingArgs, default_pinned: bool) -> Release | None:
    found = release_of_image(args.image)
    if found is None and default_pinned and not args.image:
        return RELEASES[PINNED]
    return found


def fit_findings(matrix: Any, model: ModelInput | None, args: ServingArgs, instance_types: Sequence[str],
                 *, default_pinned: bool = True) -> list[FitFinding]:
    """Every finding for one replica shape on the instance types it can land on (each type judged once)."""
    out: list[FitFinding] = []
    release = _release(args, default_pinned)
    judged = True
    if release is None:
        judged = False
        out.append(FitFinding("unseen", "image",
                              f"the vLLM release of image {args.image!r} is not one whose startup rules were read "
                              f"(v0.12.0 to {PINNED}, docs/serving.md), so whether the model fits is not judged for "
                              "it. "
                              "To let the pack judge it: use an admitted vllm/vllm-openai release tag"))
    if args.unmodelled:
        judged = False
        out.append(FitFinding("unseen", "shape",
                              f"{', '.join(args.unmodelled)}: memory the fit arithmetic does not model, so whether the "
                              "model fits is not judged (the startup refusals still are). To let the pack judge it: "
                              "serve without them (docs/serving.md, \"What the fit does not judge\")"))
    if model is None or not model.weights_known:
        judged = False
        out.append(FitFinding("unseen", "modelGiB",
                              "the size of the weights is not declared, so whether they fit the GPUs is not judged. "
                              "To let the pack judge it: name a catalog model (vllm.model, annotation "
                              "gpu-platform.io/model), or declare it (vllm.modelGiB, or parametersBillions with "
                              "precision; annotation gpu-platform.io/model-gib)"))
    if model is not None and model.multimodal:
        judged = False
        out.append(FitFinding("unseen", "shape", f"{model.name} is multimodal: its encoder's memory is not modelled, "
                                                 "so whether it fits is not judged. To let the pack judge it: serve "
                                                 "a text-only model (docs/serving.md)"))
    if model is not None:
        for key, message in shape_refusals(model, args):
            out.append(FitFinding("mandatory", key, message))
    if release is not None and args.max_model_len == -1 and not release.auto_fit:
        judged = False
        out.append(FitFinding("unseen", "maxModelLen", f"--max-model-len -1 (fit to memory) arrived in vLLM v0.14.0; "
                                                        f"{release.tag} has no auto-fit, so the fit is not judged. To "
                                                        "let the pack judge it: set maxModelLen, or use v0.14.0 or "
                                                        "later"))
    shape_said = False
    for name in dict.fromkeys(instance_types):
        inst = matrix.instance_type(name)
        if inst is None or inst.fraction is not None:
            continue  # an unknown type: gpu-architecture-supported; a fractional GPU: gpu-workload-schedulable
        tp = args.tensor_parallel
        if tp > inst.gpus:
            out.append(FitFinding(
                "mandatory", "gpusPerReplica",
                f"--tensor-parallel-size {tp} needs {tp} GPUs on one node, and {name} has {inst.gpus}: the replica "
                f"never schedules there. Lower gpusPerReplica (the tensor-parallel size) to {inst.gpus}, or keep "
                f"{name} out of the service's pools", name))
            continue
        if model is not None:
            for key, message in gpu_refusals(model, args, inst.gpu_model, inst.compute_capability, name):
                out.append(FitFinding("mandatory", key, message, name))
        memory = gpu_memory(matrix, inst)
        if memory is None:
            out.append(FitFinding("unseen", "nodePools",
                                  f"the memory of {name}'s {inst.gpu_model} is not in the matrix (gpu_memory), so "
                                  "whether the model fits it is not judged. To let the pack judge it: add the GPU's "
                                  "memory with its source to matrix.yaml gpu_memory", name))
            continue
        if not judged or model is None or release is None:
            continue
        found, shape_missing = _fit_one(model, args, release, inst, memory)
        out.extend(found)
        if shape_missing and not shape_said and not any(f.level == "mandatory" for f in found):
            shape_said = True
            out.append(FitFinding(
                "unseen", "shape",
                "the model's shape (layers, KV heads, head size) or maxModelLen (or its context length) is not "
                "declared, so whether the KV cache holds one full-length request is not judged (no guess is made). "
                "To let the pack judge it: name a catalog model, or declare vllm.shape and vllm.maxModelLen"))
    return out


def _fit_one(model: ModelInput, args: ServingArgs, release: Release, inst: Any, memory: Any
             ) -> tuple[list[FitFinding], bool]:
    name, tp = inst.name, args.tensor_parallel
    compute = compute_dtype_bytes(model, args, inst.compute_capability)
    weights_low = model.weights_gib(compute) / tp
    weights_high = (model.weights_gib(compute) + model.extra_gib) / tp
    act = activation_high(model, args, memory.low_gib, inst.gpu_model, compute)
    bounds = kv_memory(release, args, total_low=memory.low_gib, total_high=memory.high_gib,
                       weights_low=weights_low, weights_high=weights_high, activation=act)
    fp32 = ", in fp32: vLLM's fallback for this model type below compute capability 8.0" if compute == 4 else ""
    where = (f"{tp} x {inst.gpu_model} of {name} ({_gib(memory.low_gib)}"
             + (f"-{_gib(memory.high_gib)}" if _gib(memory.high_gib) != _gib(memory.low_gib) else "")
             + " GiB each as CUDA reports it"
             + (", estimated" if memory.estimate else "") + f"; vLLM {release.tag})")
    util = release.default_utilization if args.gpu_memory_utilization is None else args.gpu_memory_utilization
    util_text = f"--gpu-memory-utilization {util:g}" + (" (vLLM's default)" if args.gpu_memory_utilization is None
                                                        else "")
    own = (f" and at least {_gib(bounds.overhead_low)} GiB of vLLM's own memory" if bounds.overhead_low >= 0.05
           else "")
    # Without the extensible KV cache the budget must be free when the worker starts, after the CUDA context.
    if not release.extensible and util > 1 - CONTEXT_LOW / memory.high_gib:
        return [FitFinding("mandatory", "gpuMemoryUtilization",
                           f"{util_text} asks for {_gib(util * memory.low_gib)} GiB or more of each GPU of {where}, "
                           f"and the CUDA context alone takes at least {CONTEXT_LOW:g} GiB before vLLM measures what "
                           "is free: vLLM refuses to start (\"Free memory on device ... is less than desired GPU "
                           "memory utilization\", vllm/v1/worker/utils.py:783-797 at v0.34.0, its check without the "
                           "extensible KV cache; vllm/v1/worker/gpu_worker.py:237-247 at v0.12.0). Fix: lower "
                           f"gpuMemoryUtilization to {release.default_utilization:g} (the release's default)", name,
                           None)], False
    # Not even the weights and vLLM's own memory fit.
    if bounds.kv_high <= 0:
        need_tp = next((t for t in (2, 4, 8) if tp < t <= inst.gpus), None)
        fix = (f"Raise gpusPerReplica to {need_tp} (tensor parallelism shards the weights), or use an instance type "
               "with more GPU memory, or a smaller or quantized model" if need_tp else
               "Use an instance type with more GPU memory, or a smaller or quantized model")
        return [FitFinding("mandatory", "modelGiB",
                           f"the weights ({_gib(weights_low)} GiB per GPU{fp32}){own} exceed what vLLM may use of "
                           f"{where} at {util_text} ({_gib(util * memory.high_gib)} GiB at most): vLLM refuses to "
                           f"start (CUDA out of memory, or \"No available memory for the cache blocks\"). {fix} "
                           f"(vLLM memory: {MEMORY_DOCS})", name, bounds.kv_high)], False
    kv_bytes = kv_dtype_bytes(args.kv_cache_dtype, compute)
    tokens = args.max_model_len if args.max_model_len is not None else (model.default_max_len or model.context_length)
    if not model.kv_known or tokens is None or kv_bytes is None:
        if bounds.kv_low <= 0:
            return [FitFinding("advisory", "modelGiB",
                               f"the weights ({_gib(weights_low)} GiB per GPU{fp32}) may leave no KV cache on {where}: "
                               f"{_gib(bounds.kv_high)} GiB at best, short by {_gib(-bounds.kv_low)} GiB at worst "
                               "(vLLM's non-KV memory, docs/serving.md)", name, bounds.kv_high)], True
        return [], True
    if tokens == -1:
        need_low = need_high = one_request_gib(model, tp, kv_bytes, 1)
        what = "one token (--max-model-len -1 fits the context to memory)"
    else:
        need_high = one_request_gib(model, tp, kv_bytes, tokens)
        need_low = need_high if model.full_attention else 0.0
        what = f"one request of --max-model-len {tokens} tokens" + ("" if args.max_model_len is not None else
                                                                     " (unset: the model's context length)")
    if bounds.kv_high < need_low:
        return [FitFinding("mandatory", "maxModelLen",
                           f"{what} needs {_gib(need_high)} GiB of KV cache per GPU{fp32}, and at most "
                           f"{_gib(bounds.kv_high)} GiB is left on {where} at {util_text} after the "
                           f"{_gib(weights_low)} GiB of weights{own}: vLLM refuses to start "
                           f"(\"To serve at least one request with the model's max seq len\", "
                           "vllm/v1/core/kv_cache_planning.py:108-130). "
                           + _kv_fix(model, args, release, inst, memory, bounds=bounds, kv_bytes=kv_bytes,
                                     compute=compute), name,
                           bounds.kv_high - need_low)], False
    if bounds.kv_low < need_high:
        return [FitFinding("advisory", "maxModelLen",
                           f"{what} needs {_gib(need_high)} GiB of KV cache per GPU{fp32}; {where} leaves "
                           f"{_gib(bounds.kv_low)} to {_gib(bounds.kv_high)} GiB after the weights, by vLLM's non-KV "
                           f"memory's error bar: a margin of {_gib(bounds.kv_high - need_high)} GiB at best, short by "
                           f"{_gib(need_high - bounds.kv_low)} GiB at worst (docs/serving.md, \"Overhead data\")",
                           name, bounds.kv_high - need_high)], False
    return [], False


def _kv_fix(model: ModelInput, args: ServingArgs, release: Release, inst: Any, memory: Any, *, bounds: Bounds,
            kv_bytes: int, compute: int) -> str:
    fixes: list[str] = []
    longest = longest_fitting(model, args.tensor_parallel, kv_bytes, max(bounds.kv_low, 0.0))
    if longest >= 256:
        fixes.append(f"lower maxModelLen to {_round_len(longest)}")
    legacy = model.kv_bytes_replica is not None and model.layers is None  # its bytes are for this TP only
    for tp in () if legacy else (2, 4, 8):
        if not args.tensor_parallel < tp <= inst.gpus:
            continue
        wider = ServingArgs(**{**args.__dict__, "tensor_parallel": tp})
        if shape_refusals(model, wider):
            continue
        b = kv_memory(release, wider, total_low=memory.low_gib, total_high=memory.high_gib,
                      weights_low=model.weights_gib(compute) / tp,
                      weights_high=(model.weights_gib(compute) + model.extra_gib) / tp,
                      activation=bounds.activation_high)
        tokens = args.max_model_len if args.max_model_len is not None else (
            model.default_max_len or model.context_length or 0)
        if b.kv_low >= one_request_gib(model, tp, kv_bytes, tokens):
            fixes.append(f"raise gpusPerReplica to {tp}")
            break
    cc = tuple(int(p) for p in inst.compute_capability.split("."))
    if kv_bytes > 1 and cc >= (8, 0):
        fixes.append("use kvCacheDtype fp8 (half the KV cache)")
    if release.auto_fit:
        fixes.append("set maxModelLen -1: vLLM fits it to memory")
    if not fixes:
        fixes.append("use an instance type with more GPU memory")
    return "Fix: " + ", or ".join(fixes)
