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
from policies.gpu_guard.model_fit import fit_findings


def vllm_problems(matrix: Any, stack: StackConfig, service: InferenceServiceConfig, at: Path) -> list[Problem]:
    """Refusals for a vLLM service: an image not compiled for a reachable GPU, weights that cannot fit, a
    tensor-parallel size larger than an instance's GPUs (bf16 on an older GPU is an advisory: `vllm_advisories`).
    One problem per key (the first instance type that fails)."""
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
    size_key = "parametersBillions" if vllm.model_gib is None and vllm.parameters_billions is not None else "modelGiB"
    seen: set[str] = set()
    for finding in fit_findings(matrix, weights_gib=vllm.weights_gib, tensor_parallel=service.gpus_per_replica,
                                utilization=vllm.gpu_memory_utilization, instance_types=types):
        if finding.level != "mandatory" or finding.key in seen:
            continue
        seen.add(finding.key)
        if finding.key == "gpusPerReplica":
            problems.append(Problem((*at, "gpusPerReplica"), service.gpus_per_replica, finding.message))
        else:
            value = vllm.model_gib if size_key == "modelGiB" else vllm.parameters_billions
            problems.append(Problem((*at, "vllm", size_key), value, finding.message))
    return problems


# vLLM v0.34.0 without --dtype (the stack never passes it) resolves `auto` against the platform's dtypes: below
# compute capability 8.0 those are fp16 and fp32 (vllm/platforms/cuda.py:298-304), so bf16 weights load as fp16 with
# a logged "Falling back to torch.float16" (vllm/config/model.py:2488-2508); only an explicit `--dtype bfloat16`
# raises (cuda.py:679-697). Model types that refuse fp16 fall back to fp32 instead (`_FLOAT16_NOT_SUPPORTED_MODELS`,
# model.py:2442-2447), at twice the weight memory.
# Source: https://github.com/vllm-project/vllm/blob/v0.34.0/vllm/config/model.py#L2442-L2508
# Source: https://github.com/vllm-project/vllm/blob/v0.34.0/vllm/platforms/cuda.py#L298-L304
FP16_REFUSED_MODEL_TYPES = ("gemma2", "gemma3", "gemma3_text", "glm4")


def vllm_advisories(matrix: Any, stack: StackConfig, service: InferenceServiceConfig, at: Path) -> list[Problem]:
    """Warnings for a vLLM service that starts but not as declared: bf16 weights on a GPU without bf16 run as fp16
    (or fp32 for the model types that refuse fp16). One advisory per service (the first such instance type)."""
    vllm = service.vllm
    if service.runtime != "vllm" or vllm is None or vllm.precision != "bf16":
        return []
    pools = [p for p in stack.gpu_pools() if not service.node_pools or p.name in service.node_pools]
    for name in dict.fromkeys(t for p in pools for t in p.instance_types):
        inst = matrix.instance_type(name)
        if inst is None or tuple(int(p) for p in inst.compute_capability.split(".")) >= (8, 0):
            continue
        return [Problem(
            (*at, "nodePools"), list(service.node_pools),
            f"bf16 weights run as fp16 on the {inst.gpu_model} of {name} (compute capability "
            f"{inst.compute_capability}, no bf16): vLLM v0.34.0 casts them at load without --dtype "
            "(vllm/config/model.py:2488-2508), with a risk of fp16 overflow; "
            f"{', '.join(FP16_REFUSED_MODEL_TYPES)} models fall back to fp32 instead (model.py:2442-2447), at "
            "twice the weight memory the model-fit check counts",
            fix=f"pin nodePools to pools without {name} (an A10G, L4 or newer) to serve bf16 as trained")]
    return []
