"""The checks of a vLLM service that need the matrix and the stack's pools: run by the config loader before any
resource exists, with the same rules and words as the pack's serving-image-architecture and serving-model-fits
(policies/gpu_guard/matrix/serving_images.py, policies/gpu_guard/model_fit.py), so a stack file never reaches a
preview the pack would refuse for these reasons.
"""

from __future__ import annotations

from typing import Any

from components.config.issues import Path
from components.config.models import StackConfig
from components.config.problems import Problem
from components.config.serving import InferenceServiceConfig
from policies.gpu_guard.model_fit import ServingArgs, catalog_facts, declared_model, fit_findings
from policies.gpu_guard.vllm_fit.refusals import FP16_REFUSED_MODEL_TYPES
from policies.gpu_guard.vllm_fit.releases import release_of_image

# The config key each finding names (policies/gpu_guard/vllm_fit/judge.py FitFinding.key), under the service.
_KEY_PATHS: dict[str, tuple[str, ...]] = {
    "gpusPerReplica": ("gpusPerReplica",), "nodePools": ("nodePools",), "maxModelLen": ("vllm", "maxModelLen"),
    "kvCacheDtype": ("vllm", "shape", "kvCacheDtype"), "dtype": ("image",), "image": ("image",),
    "shape": ("vllm", "shape"), "gpuMemoryUtilization": ("vllm", "gpuMemoryUtilization"),
}


def service_model(service: InferenceServiceConfig) -> Any:
    """The model the service declares: the catalog's facts for vllm.model, with the declared keys laid over them
    (declared values override a fact: components/config/vllm_model.py says so), as serving-model-fits reads them
    from the Deployment's annotations."""
    vllm = service.vllm
    assert vllm is not None
    repo = vllm.model
    known = catalog_facts(str(repo)) if repo else None
    facts: dict[str, object] = dict(known or {})
    facts.update(vllm.declared_facts())
    if set(facts) == {"precision"}:
        return None
    return declared_model(facts, str(repo) if known else "the model")


def service_args(service: InferenceServiceConfig) -> ServingArgs:
    """vLLM's flags as the stack writes them (components/inference/vllm_workload.py `vllm_args`)."""
    vllm = service.vllm
    assert vllm is not None
    return ServingArgs(tensor_parallel=service.gpus_per_replica, max_model_len=vllm.max_model_len,
                       gpu_memory_utilization=vllm.gpu_memory_utilization,
                       kv_cache_dtype=vllm.shape.kv_cache_dtype if vllm.shape is not None else "auto",
                       image=service.image)


def vllm_problems(matrix: Any, stack: StackConfig, service: InferenceServiceConfig, at: Path) -> list[Problem]:
    """Refusals for a vLLM service: an image not compiled for a reachable GPU, and every certain refusal of
    serving-model-fits (policies/gpu_guard/vllm_fit: the weights or one request's KV cache do not fit, vLLM's own
    startup refusals, a tensor-parallel size larger than an instance's GPUs). One problem per key (the first
    instance type that fails)."""
    vllm = service.vllm
    if service.runtime != "vllm" or vllm is None:
        return []
    pools = [p for p in stack.gpu_pools() if not service.node_pools or p.name in service.node_pools]
    types = list(dict.fromkeys(t for p in pools for t in p.instance_types))
    problems: list[Problem] = []
    for name in types:
        refused = [f for f in matrix.image_architecture(service.image, name) if f.level == "mandatory"]
        if refused:
            problems.append(Problem((*at, "nodePools"), list(service.node_pools), refused[0].message,
                                    fix=f"pin nodePools to pools without {name}, or use an image built for its GPU"))
            break
    release = release_of_image(service.image)
    if vllm.max_model_len == -1 and release is not None and not release.auto_fit:
        problems.append(Problem((*at, "vllm", "maxModelLen"), -1,
                                f"maxModelLen -1 (vLLM fits the length to memory) arrived in vLLM v0.14.0; "
                                f"{service.image} is {release.tag}, which has no auto-fit",
                                fix="set maxModelLen to a length, or use a vLLM v0.14.0 or later image"))
    size_key = "parametersBillions" if vllm.model_gib is None and vllm.parameters_billions is not None else "modelGiB"
    seen: set[str] = set()
    for finding in fit_findings(matrix, service_model(service), service_args(service), types):
        if finding.level != "mandatory" or finding.key in seen:
            continue
        seen.add(finding.key)
        if finding.key == "modelGiB":
            if vllm.model_gib is None and vllm.parameters_billions is None and vllm.model:
                problems.append(Problem((*at, "vllm", "model"), vllm.model, finding.message))
            else:
                size = vllm.model_gib if size_key == "modelGiB" else vllm.parameters_billions
                problems.append(Problem((*at, "vllm", size_key), size, finding.message))
            continue
        path = _KEY_PATHS.get(finding.key, ("vllm",))
        value: Any = {"gpusPerReplica": service.gpus_per_replica, "nodePools": list(service.node_pools),
                      "maxModelLen": vllm.max_model_len, "image": service.image, "dtype": service.image,
                      "gpuMemoryUtilization": vllm.gpu_memory_utilization,
                      "kvCacheDtype": vllm.shape.kv_cache_dtype if vllm.shape else None}.get(finding.key)
        problems.append(Problem((*at, *path), value, finding.message))
    return problems


# vLLM v0.34.0 without --dtype (the stack never passes it) resolves `auto` against the platform's dtypes: below
# compute capability 8.0 those are fp16 and fp32 (vllm/platforms/cuda.py:298-304), so bf16 weights load as fp16 with
# a logged "Falling back to torch.float16" (vllm/config/model.py:2488-2508); only an explicit `--dtype bfloat16`
# raises (cuda.py:679-697). Model types that refuse fp16 fall back to fp32 instead (`_FLOAT16_NOT_SUPPORTED_MODELS`,
# model.py:2442-2447), at twice the weight memory.
# Source: https://github.com/vllm-project/vllm/blob/v0.34.0/vllm/config/model.py#L2442-L2508
# Source: https://github.com/vllm-project/vllm/blob/v0.34.0/vllm/platforms/cuda.py#L298-L304


def vllm_advisories(matrix: Any, stack: StackConfig, service: InferenceServiceConfig, at: Path) -> list[Problem]:
    """Warnings for a vLLM service that starts but not as declared: bf16 weights on a GPU without bf16 run as fp16
    (or fp32 for the model types that refuse fp16). One advisory per service (the first such instance type)."""
    vllm = service.vllm
    if service.runtime != "vllm" or vllm is None:
        return []
    pools = [p for p in stack.gpu_pools() if not service.node_pools or p.name in service.node_pools]
    types = list(dict.fromkeys(t for p in pools for t in p.instance_types))
    fit = next((f for f in fit_findings(matrix, service_model(service), service_args(service), types)
                if f.level == "advisory"), None)
    out = [Problem((*at, *_KEY_PATHS.get(fit.key, ("vllm",))), vllm.max_model_len if fit.key == "maxModelLen"
                   else None, fit.message)] if fit is not None else []
    if vllm.precision != "bf16":
        return out
    for name in types:
        inst = matrix.instance_type(name)
        if inst is None or tuple(int(p) for p in inst.compute_capability.split(".")) >= (8, 0):
            continue
        return [*out, Problem(
            (*at, "nodePools"), list(service.node_pools),
            f"bf16 weights run as fp16 on the {inst.gpu_model} of {name} (compute capability "
            f"{inst.compute_capability}, no bf16): vLLM v0.34.0 casts them at load without --dtype "
            "(vllm/config/model.py:2488-2508), with a risk of fp16 overflow; "
            f"{', '.join(FP16_REFUSED_MODEL_TYPES)} models fall back to fp32 instead (model.py:2442-2447), at "
            "twice the weight and KV memory (the fit counts it when the shape's modelType says so)",
            fix=f"pin nodePools to pools without {name} (an A10G, L4 or newer) to serve bf16 as trained")]
    return out
