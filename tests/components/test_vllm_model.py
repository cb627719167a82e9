"""`vllm.model: <repo id>`: the catalog fills the model's facts, declared values override them and say so, and a
model the catalog does not know is judged from declarations or left unjudged with the reason."""

from __future__ import annotations

from typing import Any

import pytest

from components.config import InferenceServiceConfig
from components.config.loader import check_stack
from components.config.vllm import GIB, VllmConfig
from components.config.vllm_model import model_advisories, resolve_model
from policies.gpu_guard.models import lookup
from tests.components.test_vllm import TODAY, _dev, _vllm_index

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"


def _vllm(**values: Any) -> VllmConfig:
    return VllmConfig.model_validate({"modelPath": "m", **values})


def _check(**changes: Any) -> tuple[list[str], list[str]]:
    _config, problems, advisories = check_stack(_dev(**changes), region="us-west-2", today=TODAY)
    return ([p.render("Pulumi.dev.yaml") for p in problems], [a.render("Pulumi.dev.yaml") for a in advisories])


def test_a_catalog_model_fills_weights_shape_and_context() -> None:
    resolved = resolve_model(_vllm(model=LLAMA_8B))
    facts = lookup(LLAMA_8B)
    assert resolved is not None and facts is not None
    assert resolved.weights_gib == pytest.approx(2 * 8_030_261_248 / GIB)
    assert resolved.shape is not None
    assert (resolved.shape.layers, resolved.shape.kv_heads, resolved.shape.head_dim) == (32, 8, 128)
    assert (resolved.max_model_len, resolved.derived_max_model_len) == (131_072, 131_072)
    assert resolved.overrides == () and resolved.unjudged is None


def test_no_model_key_resolves_to_nothing_and_the_declared_values_count_alone() -> None:
    assert resolve_model(_vllm(modelGiB=3)) is None


def test_declared_values_override_catalog_facts_and_each_override_is_named() -> None:
    resolved = resolve_model(_vllm(model=LLAMA_8B, modelGiB=20, shape={"layers": 32, "kvHeads": 4, "headDim": 128}))
    assert resolved is not None
    assert resolved.weights_gib == 20
    assert resolved.shape is not None and resolved.shape.kv_heads == 4
    assert [(o.key, o.catalog, o.declared) for o in resolved.overrides] == [
        ("modelGiB", "14.96 GiB", "20"), ("shape.kvHeads", "8", "4")]


def test_a_declared_value_equal_to_the_catalog_is_no_override() -> None:
    resolved = resolve_model(_vllm(model=LLAMA_8B, shape={"layers": 32, "kvHeads": 8, "headDim": 128}))
    assert resolved is not None and resolved.overrides == ()


def test_the_config_check_prints_the_override_as_an_advisory_naming_the_fact() -> None:
    problems, advisories = _check(vllm__model="Qwen/Qwen2.5-7B-Instruct", vllm__parametersBillions=None,
                                  vllm__modelGiB=3, vllm__shape=None, vllm__maxModelLen=4096)
    assert problems == []
    override = [a for a in advisories if "overrides the catalog" in a]
    assert override == [
        "Pulumi.dev.yaml: inferenceServices[1].vllm.modelGiB = 3.0: vllm.modelGiB 3 overrides the catalog's weights of "
        "Qwen/Qwen2.5-7B-Instruct (14.19 GiB): the fit is judged with the declared value; fix: remove vllm.modelGiB "
        "to use the catalog's value, or keep it if the checkpoint differs"]


def test_a_model_outside_the_catalog_without_a_declared_shape_is_unjudged_with_the_reason() -> None:
    resolved = resolve_model(_vllm(model="example-org/private-13b"))
    assert resolved is not None and resolved.facts is None
    assert resolved.unjudged == (
        "example-org/private-13b is not in the model catalog and vllm.modelGiB (or parametersBillions) and "
        "vllm.shape are not declared, so whether it fits is not judged. Declare modelGiB (or parametersBillions), "
        "shape, or name a catalog model (docs/serving.md, \"Naming the model\")")


def test_an_unknown_model_suggests_the_nearest_catalog_ids() -> None:
    resolved = resolve_model(_vllm(model="meta-llama/Llama-3.1-8B-Instruct-v2"))
    assert resolved is not None and resolved.unjudged is not None
    assert f"; nearest in the catalog: {LLAMA_8B}, " in resolved.unjudged


def test_a_model_outside_the_catalog_with_declared_size_and_shape_is_judged_from_them() -> None:
    resolved = resolve_model(_vllm(model="example-org/private-13b", modelGiB=26,
                                   shape={"layers": 40, "kvHeads": 8, "headDim": 128}))
    assert resolved is not None and resolved.unjudged is None and resolved.weights_gib == 26


def test_a_malformed_model_id_is_refused_with_the_key_the_value_and_the_fix() -> None:
    problems, _ = _check(vllm__model="llama-3.1-8b")
    index = _vllm_index(_dev())
    assert problems == [
        f"Pulumi.dev.yaml: inferenceServices[{index}].vllm.model = \"llama-3.1-8b\": vllm.model is a Hugging Face "
        "repository id: owner/name (letters, digits, '-', '_', '.'), optionally @revision; fix: write the id as "
        "the Hub shows it, for example meta-llama/Llama-3.1-8B-Instruct"]


def test_a_catalog_id_in_another_case_is_refused_naming_the_written_one() -> None:
    problems, _ = _check(vllm__model="meta-llama/llama-3.1-8b-instruct")
    assert len(problems) == 1
    assert problems[0].endswith(
        "meta-llama/llama-3.1-8b-instruct is the catalog's meta-llama/Llama-3.1-8B-Instruct in another case: "
        "Hugging Face ids are case-sensitive, and the catalog knows the model only as written on the Hub; nearest "
        "valid choice: meta-llama/Llama-3.1-8B-Instruct; fix: write meta-llama/Llama-3.1-8B-Instruct")


def test_an_empty_revision_is_refused() -> None:
    problems, _ = _check(vllm__model=f"{LLAMA_8B}@")
    assert len(problems) == 1 and "optionally @revision" in problems[0]


def test_model_advisories_are_empty_for_a_triton_service() -> None:
    values = _dev()
    triton = next(s for s in values["inferenceServices"] if s.get("runtime", "triton") == "triton")
    assert model_advisories(InferenceServiceConfig.model_validate(triton), ("inferenceServices", 0)) == []


def test_a_catalog_model_at_a_revision_the_catalog_did_not_pin_is_unjudged_saying_so() -> None:
    resolved = resolve_model(_vllm(model=f"{LLAMA_8B}@0e9e39f249a16976918f6564b8830bc894c89659"))
    assert resolved is not None and resolved.facts is None
    assert resolved.unjudged is not None and resolved.unjudged.startswith(
        f"the model catalog knows {LLAMA_8B} at revision unknown (not pinned), not at "
        "0e9e39f249a16976918f6564b8830bc894c89659")
