"""What a vLLM service's model is, from the catalog and the stack file: `resolve_model`.

`vllm.model: <repo id>` fills the model's facts from the catalog (policies/gpu_guard/models): the weights' bytes by
tensor class, the shape that sizes the KV cache, and the context vLLM derives. A value the stack file declares
overrides the catalog's fact, and each override is reported (`ResolvedModel.overrides`, an advisory line from
`model_advisories`), so a stale declaration is seen. A model not in the catalog is judged from what the stack
declares; without a declared size or shape its fit is unjudged, and `ResolvedModel.unjudged` says why, for the
verdict to count ("cannot see, cannot pass").
"""

from __future__ import annotations

from dataclasses import dataclass

from components.config.issues import Path
from components.config.problems import Problem
from components.config.serving import InferenceServiceConfig
from components.config.vllm import GIB, ModelShapeConfig, VllmConfig
from policies.gpu_guard.models import ModelFacts, close_matches, lookup


@dataclass(frozen=True)
class Override:
    """A declared value that replaces a catalog fact."""

    key: str  # the stack key under inferenceServices[].vllm: "modelGiB", "shape.layers", ...
    fact: str  # the catalog fact it replaces, in words
    catalog: str
    declared: str
    value: object  # the declared value as the stack file has it

    def message(self, repo_id: str) -> str:
        return (f"vllm.{self.key} {self.declared} overrides the catalog's {self.fact} of {repo_id} ({self.catalog}): "
                "the fit is judged with the declared value")


@dataclass(frozen=True)
class ResolvedModel:
    """The effective model of a vLLM service: catalog facts with the stack's declarations on top."""

    repo_id: str
    facts: ModelFacts | None  # None: not in the catalog
    weights_gib: float | None  # what the GPUs hold for the weights (declared, else the catalog's)
    shape: ModelShapeConfig | None  # what sizes the KV cache (declared, else the catalog's)
    max_model_len: int | None  # vLLM's default context (--max-model-len unset), from the catalog
    derived_max_model_len: int | None  # the largest --max-model-len vLLM accepts, from the catalog
    overrides: tuple[Override, ...]
    unjudged: str | None  # why the fit cannot be judged (not in the catalog and not declared), else None

    @property
    def multimodal(self) -> bool:
        return self.facts is not None and self.facts.multimodal


def _gib(value: float) -> str:
    return f"{value:.2f} GiB"


def _declared_weights(vllm: VllmConfig) -> tuple[str, str] | None:
    if vllm.model_gib is not None:
        return "modelGiB", f"{vllm.model_gib:g}"
    if vllm.parameters_billions is not None:
        return "parametersBillions", f"{vllm.parameters_billions:g} ({vllm.precision})"
    return None


def resolve_model(vllm: VllmConfig) -> ResolvedModel | None:
    """The service's effective model, or None when `vllm.model` is not set (the declared values alone count)."""
    if vllm.model is None:
        return None
    repo_id = vllm.model
    facts = lookup(repo_id)
    declared_weights = _declared_weights(vllm)
    if facts is None:
        missing = [key for key, absent in (("modelGiB (or parametersBillions)", declared_weights is None),
                                           ("shape", vllm.shape is None)) if absent]
        unjudged = None
        name, _, revision = repo_id.partition("@")
        pinned = lookup(name)
        if missing and pinned is not None:
            unjudged = (f"the model catalog knows {name} at revision {pinned.revision or 'unknown (not pinned)'}, "
                        f"not at {revision}, and vllm.{' and vllm.'.join(missing)} "
                        f"{'is' if len(missing) == 1 else 'are'} not declared, so whether it fits is not judged. "
                        f"Name {name} without a revision to use the catalog's facts, or declare {', '.join(missing)}")
        elif missing:
            near = close_matches(repo_id)
            unjudged = (f"{repo_id} is not in the model catalog and vllm.{' and vllm.'.join(missing)} "
                        f"{'is' if len(missing) == 1 else 'are'} not declared, so whether it fits is not judged. "
                        f"Declare {', '.join(missing)}, or name a catalog model (docs/serving.md, \"Naming the "
                        "model\")" + (f"; nearest in the catalog: {', '.join(near)}" if near else ""))
        return ResolvedModel(repo_id, None, vllm.weights_gib, vllm.shape, None, None, (), unjudged)
    overrides: list[Override] = []
    catalog_gib = facts.weight_bytes() / GIB
    weights = catalog_gib
    if declared_weights is not None and vllm.weights_gib is not None:
        weights = vllm.weights_gib
        if abs(weights - catalog_gib) >= 0.005:
            value = vllm.model_gib if vllm.model_gib is not None else vllm.parameters_billions
            overrides.append(Override(declared_weights[0], "weights", _gib(catalog_gib), declared_weights[1], value))
    shape = ModelShapeConfig(layers=facts.layers, kvHeads=facts.kv_heads, headDim=facts.head_dim)
    if vllm.shape is not None:
        for key, fact, mine, theirs in (("shape.layers", "layer count", facts.layers, vllm.shape.layers),
                                        ("shape.kvHeads", "KV head count", facts.kv_heads, vllm.shape.kv_heads),
                                        ("shape.headDim", "head size", facts.head_dim, vllm.shape.head_dim)):
            if mine != theirs:
                overrides.append(Override(key, fact, str(mine), str(theirs), theirs))
        shape = vllm.shape
    return ResolvedModel(repo_id, facts, weights, shape, facts.default_max_model_len, facts.derived_max_model_len,
                         tuple(overrides), None)


def model_advisories(service: InferenceServiceConfig, at: Path) -> list[Problem]:
    """One advisory line per catalog fact the stack file overrides (the preview and the config check show it)."""
    if service.runtime != "vllm" or service.vllm is None:
        return []
    resolved = resolve_model(service.vllm)
    if resolved is None:
        return []
    return [Problem((*at, "vllm", *o.key.split(".")), o.value, o.message(resolved.repo_id),
                    fix=f"remove vllm.{o.key} to use the catalog's value, or keep it if the checkpoint differs")
            for o in resolved.overrides]
