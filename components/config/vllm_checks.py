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
    tensor-parallel size larger than an instance's GPUs. One problem per key (the first instance type that fails)."""
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
    # vLLM refuses bf16 weights on a GPU below compute capability 8.0 ("Bfloat16 is only supported on GPUs with
    # compute capability of at least 8.0", vllm-project/vllm @ v0.34.0 vllm/platforms/cuda.py:680-697).
    if vllm.precision == "bf16" and not problems:  # one problem per key: an arch refusal already names nodePools
        for name in types:
            inst = matrix.instance_type(name)
            if inst is not None and tuple(int(p) for p in inst.compute_capability.split(".")) < (8, 0):
                problems.append(Problem(
                    (*at, "nodePools"), list(service.node_pools),
                    f"vLLM refuses bf16 weights on the {inst.gpu_model} of {name} (compute capability "
                    f"{inst.compute_capability}; bf16 needs 8.0, vllm/platforms/cuda.py:680-697 at v0.34.0): the "
                    "replica exits at start",
                    fix=f"pin nodePools to pools without {name} (an A10G, L4 or newer), or serve fp16 weights"))
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
