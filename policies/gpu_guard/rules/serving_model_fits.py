"""serving-model-fits: a vLLM replica starts on every instance type it can land on, judged as vLLM v0.34.0 (or the
image's own admitted release) computes its startup: the weights, vLLM's own memory, one request's KV cache, and
vLLM's startup refusals (heads and tensor parallelism, --max-model-len above the model's maximum, a dtype or KV dtype
the GPU's backend refuses).

Judged on the workload alone, before it is created, from what it declares: the pools it can reach
(`gpu-platform.io/reachable-pools`, rules/_reach_annotation.py), the model (`gpu-platform.io/model`: a catalog repo
id; or the `vllm serve <model>` argument when it names one), its declared facts (`gpu-platform.io/model-gib`,
`gpu-platform.io/model-shape`: the JSON of vllm.shape's keys and the weights), and vLLM's own flags in the
container's words (--tensor-parallel-size, --max-model-len, --gpu-memory-utilization, --kv-cache-dtype, --dtype,
--max-num-batched-tokens, --max-num-seqs, --enforce-eager, and the unmodelled ones: LoRA, speculative decoding,
pipeline/data/expert parallelism, CPU offload, --kv-cache-memory-bytes) and VLLM_ALLOW_LONG_MAX_MODEL_LEN.
The arithmetic is policies/gpu_guard/vllm_fit/ (front: model_fit.py), shared with the config check so the stack
file and the pack give the same level and words.

Mandatory: what vLLM refuses for certain (even at the best case of the overhead's error bar). Its advisory twin
`serving-model-fits-unseen` says what it could not judge (said once per cause) and what would let it;
`serving-model-fits-caveats` warns when the fit lies inside the error bar, with the margin in GiB.
A hand-written workload without the annotation is judged on the instance types it pins itself to
(`node.kubernetes.io/instance-type` in its nodeSelector or every required node-affinity term); one that declares
neither is not judged here, and the -unseen twin says so.
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
from ..inventory import POD_TEMPLATE_PATHS, build_inventory
from ..matrix import load_matrix
from ..model_fit import (
    MODEL_ANNOTATION,
    ModelInput,
    catalog_facts,
    declared_model,
    fit_findings,
    model_argument,
    serving_args,
)
from ..props import as_list, get
from ..scheduling import INSTANCE_TYPE_LABEL
from ..views import Workload
from ._reach_annotation import REACHABLE_POOLS_ANNOTATION, DeclaredPool, DeclaredReach, declared_reach
from ._serving import MODEL_GIB_ANNOTATION, MODEL_SHAPE_ANNOTATION, serving_containers

NAME = "serving-model-fits"
CAVEATS_SUFFIX = "-caveats"


def _model(annotations: Mapping[str, object], served: str | None) -> tuple[ModelInput | None, str | None]:
    """The model from the annotations (declared facts override the catalog's), and a problem reading them."""
    facts: dict[str, object] = {}
    problem = None
    repo = annotations.get(MODEL_ANNOTATION) or served
    known = catalog_facts(str(repo)) if repo else None
    facts.update(known or {})
    raw_shape = annotations.get(MODEL_SHAPE_ANNOTATION)
    if raw_shape is not None:
        try:
            shape = json.loads(str(raw_shape))
            if not isinstance(shape, dict):
                raise TypeError
            facts.update(shape)
        except (ValueError, TypeError):
            problem = (f"annotation {MODEL_SHAPE_ANNOTATION} is not a JSON object of vllm.shape's keys: "
                       f"{raw_shape!r}; the KV cache is not judged. To let the pack judge it: write it as "
                       "InferenceService does")
    raw_gib = annotations.get(MODEL_GIB_ANNOTATION)
    if raw_gib is not None and "modelGiB" not in facts and "parametersBillions" not in facts:
        facts["modelGiB"] = raw_gib
    if not facts:
        return None, problem
    return declared_model(facts, str(repo) if known else "the model"), problem


def _env(args: ResourceValidationArgs, container_name: str) -> dict[str, str]:
    path = POD_TEMPLATE_PATHS.get(args.resource_type)
    template = get(args.props, *path) if path else args.props
    for c in as_list(get(template, "spec", "containers")):
        if str(get(c, "name", default="")) == container_name:
            return {str(get(e, "name", default="")): str(get(e, "value", default=""))
                    for e in as_list(get(c, "env"))}
    return {}


def _pinned_instance_types(workload: Workload) -> tuple[str, ...]:
    """The instance types a hand-written workload pins itself to (nodeSelector node.kubernetes.io/instance-type, or
    every required node-affinity term an `In` on it): where it can only land, whatever the pools."""
    if INSTANCE_TYPE_LABEL in workload.node_selector:
        return (workload.node_selector[INSTANCE_TYPE_LABEL],)
    found: list[str] = []
    for term in workload.required_terms or ():
        values = [v for e in as_list(get(term, "matchExpressions")) if get(e, "key") == INSTANCE_TYPE_LABEL
                  and get(e, "operator") == "In" for v in as_list(get(e, "values"))]
        if not values:
            return ()  # a term that does not pin the type: it can land elsewhere
        found += [str(v) for v in values]
    return tuple(dict.fromkeys(found))


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    containers = list(serving_containers(args.resource_type, args.props, matrix, vllm_only=True))
    if not containers:
        return
    annotations = get(args.props, "metadata", "annotations", default={}) or {}
    if not isinstance(annotations, Mapping):
        annotations = {}
    reaches: list[DeclaredReach] = list(declared_reach(args))
    if not reaches:  # a hand-written workload: the instance types it pins itself to, if any
        reaches = [DeclaredReach(w, (DeclaredPool("(instance-type selector)", "", "", "", pinned),))
                   for w in build_inventory([args]).workloads if (pinned := _pinned_instance_types(w))]
    if not reaches:
        name = get(args.props, "metadata", "name", default=args.name)
        report(f"{UNSEEN_MARK}{args.resource_type.rsplit(':', 1)[-1]} {name!r} runs vLLM but declares no GPU pools it "
               "can reach, so whether its model fits their GPUs is not judged. To let the pack judge it: annotate it "
               f"with {REACHABLE_POOLS_ANNOTATION} as InferenceService does (rules/_reach_annotation.py), or pin "
               "node.kubernetes.io/instance-type", args.urn)
    said: set[str] = set()
    for reach in reaches:
        types = [t for pool in reach.pools for t in pool.instance_types]
        for container in containers:
            model, problem = _model(annotations, model_argument(container.words))
            if problem:
                report(f"{UNSEEN_MARK}{problem}", args.urn)
            flags = serving_args(container.words, image=container.image, env=_env(args, container.name))
            where = f"{reach.workload.kind} {reach.workload.name!r} container {container.name!r} ({container.image})"
            for finding in fit_findings(matrix, model, flags, types, default_pinned=False):
                mark = {"mandatory": "", "unseen": UNSEEN_MARK}.get(finding.level, CAVEAT_MARK)
                text = f"{mark}{where}: {finding.message}"
                if text not in said:
                    said.add(text)
                    report(text, args.urn)


# One rule, three policies: the engine gives each policy one level (base.py: `_split_by_mark`).
_SEEN, _UNSEEN = _split_by_mark(UNSEEN_MARK, _validate, _validate)
_BLOCKING, _CAVEATS = _split_by_mark(CAVEAT_MARK, _SEEN, _SEEN)


resource_policy(
    NAME,
    "A vLLM replica starts on every instance type it can reach, as vLLM computes it: weights, its own memory and one "
    "request's KV cache fit the CUDA total, its tensor-parallel size fits the node and divides the heads, "
    "--max-model-len is within the model's maximum, the GPU's backend takes the dtype and KV dtype.",
    _BLOCKING,
    enforcement=EnforcementLevel.MANDATORY,
)
resource_policy(
    f"{NAME}{UNSEEN_SUFFIX}",
    "Advisory twin of serving-model-fits: what it cannot judge (model not declared nor in the catalog, an unread vLLM "
    "release, LoRA, speculative decoding, pipeline/data/expert parallelism, CPU offload, multimodal), and what would "
    "let it judge.",
    _UNSEEN,
    enforcement=EnforcementLevel.ADVISORY,
    companion_of=NAME,
)
resource_policy(
    f"{NAME}{CAVEATS_SUFFIX}",
    "Advisory twin of serving-model-fits: the fit lies inside the error bar of vLLM's non-KV memory (it fits at the "
    "best case, not at the worst), with the margin in GiB.",
    _CAVEATS,
    enforcement=EnforcementLevel.ADVISORY,
    companion_of=NAME,
)
