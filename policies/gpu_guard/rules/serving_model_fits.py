"""serving-model-fits: a vLLM replica's weights fit the GPUs it asks for, on every instance type it can land on.

Judged on the workload alone, before it is created, from what it declares: the pools it can reach
(`gpu-platform.io/reachable-pools`, rules/_reach_annotation.py), the weights' size (`gpu-platform.io/model-gib`,
GiB), optionally the KV cache of one token (`gpu-platform.io/model-shape`: `{"kvBytesPerToken": N}`), and vLLM's
own flags in the container's arguments (`--tensor-parallel-size`, `--gpu-memory-utilization`, `--max-model-len`).
The arithmetic and its sources (vLLM's memory docs at v0.34.0) are in policies/gpu_guard/model_fit.py, shared
with the config check so the stack file and the pack give the same words.

Mandatory: weights larger than TP x GPU memory x utilization; a tensor-parallel size larger than an instance type's
GPUs. Its advisory twin `serving-model-fits-unseen` says what it could not judge (no declared size, a GPU whose
memory the matrix lacks, no declared shape: said once) and what would let it; `serving-model-fits-caveats` warns
when the KV cache left cannot hold one request of --max-model-len tokens (vLLM refuses to start then; the
activation memory the estimate leaves out only makes it worse).
A vLLM workload that declares no reachable pools is not judged here, and the -unseen twin says so (its reach is
judged by gpu-workload-schedulable and the CUDA policies once the stack is known).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pulumi_policy import ResourceValidationArgs

from ..base import (
    CAVEAT_MARK,
    UNSEEN_MARK,
    UNSEEN_SUFFIX,
    EnforcementLevel,
    ReportViolation,
    _split_by_mark,
    resource_policy,
)
from ..matrix import load_matrix
from ..model_fit import fit_findings
from ..props import get
from ._reach_annotation import REACHABLE_POOLS_ANNOTATION, declared_reach
from ._serving import MODEL_GIB_ANNOTATION, MODEL_SHAPE_ANNOTATION, serving_containers

NAME = "serving-model-fits"
CAVEATS_SUFFIX = "-caveats"


def _number(value: object) -> float | None:
    try:
        return float(str(value))
    except ValueError:
        return None


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    containers = list(serving_containers(args.resource_type, args.props, matrix, vllm_only=True))
    if not containers:
        return
    annotations = get(args.props, "metadata", "annotations", default={}) or {}
    raw_gib = annotations.get(MODEL_GIB_ANNOTATION) if isinstance(annotations, Mapping) else None
    weights = _number(raw_gib) if raw_gib is not None else None
    kv_bytes: int | None = None
    raw_shape = annotations.get(MODEL_SHAPE_ANNOTATION) if isinstance(annotations, Mapping) else None
    if raw_shape is not None:
        try:
            kv_bytes = int(json.loads(str(raw_shape))["kvBytesPerToken"])
        except (ValueError, KeyError, TypeError):
            report(f"{UNSEEN_MARK}annotation {MODEL_SHAPE_ANNOTATION} is not {{\"kvBytesPerToken\": <int>}}: "
                   f"{raw_shape!r}; the KV cache is not judged. To let the pack judge it: write it as "
                   "InferenceService does (K and V bytes of one token over all layers)", args.urn)
    reaches = list(declared_reach(args))
    if not reaches:
        name = get(args.props, "metadata", "name", default=args.name)
        report(f"{UNSEEN_MARK}{args.resource_type.rsplit(':', 1)[-1]} {name!r} runs vLLM but declares no GPU pools it "
               "can reach, so whether its model fits their GPUs is not judged. To let the pack judge it: annotate it "
               f"with {REACHABLE_POOLS_ANNOTATION} as InferenceService does (rules/_reach_annotation.py)", args.urn)
    for reach in reaches:
        types = [t for pool in reach.pools for t in pool.instance_types]
        for container in containers:
            tp = int(_number(container.flag("--tensor-parallel-size", "-tp")) or 1)
            util = _number(container.flag("--gpu-memory-utilization", "--device-memory-utilization"))
            max_len = _number(container.flag("--max-model-len"))
            where = f"{reach.workload.kind} {reach.workload.name!r} container {container.name!r} ({container.image})"
            for finding in fit_findings(matrix, weights_gib=weights, tensor_parallel=tp, utilization=util,
                                        instance_types=types, max_model_len=int(max_len) if max_len else None,
                                        kv_bytes_per_token=kv_bytes):
                mark = {"mandatory": "", "unseen": UNSEEN_MARK}.get(finding.level, CAVEAT_MARK)
                report(f"{mark}{where}: {finding.message}", args.urn)


# One rule, three policies: the engine gives each policy one level (base.py: `_split_by_mark`).
_SEEN, _UNSEEN = _split_by_mark(UNSEEN_MARK, _validate, _validate)
_BLOCKING, _CAVEATS = _split_by_mark(CAVEAT_MARK, _SEEN, _SEEN)


resource_policy(
    NAME,
    "A vLLM replica's weights fit tensor-parallel-size x GPU memory x gpu-memory-utilization on every instance type "
    "it can reach, and its tensor-parallel size is at most the GPUs of each; judged on the workload alone.",
    _BLOCKING,
    enforcement=EnforcementLevel.MANDATORY,
)
resource_policy(
    f"{NAME}{UNSEEN_SUFFIX}",
    "Advisory twin of serving-model-fits: what it cannot judge (weights' size not declared, GPU memory not in the "
    "matrix, model shape not declared, said once), and what would let it judge.",
    _UNSEEN,
    enforcement=EnforcementLevel.ADVISORY,
    companion_of=NAME,
)
resource_policy(
    f"{NAME}{CAVEATS_SUFFIX}",
    "Advisory twin of serving-model-fits: the KV cache left after the weights cannot hold one request of "
    "--max-model-len tokens (vLLM refuses to start; activation memory, unknown before a run, only makes it worse).",
    _CAVEATS,
    enforcement=EnforcementLevel.ADVISORY,
    companion_of=NAME,
)
