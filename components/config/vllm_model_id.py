"""`vllm.model`: the form of a Hugging Face repository id, checked against the model catalog's spelling.

A model the catalog does not list is no error: its fit is judged from the declared values, or left unjudged and
counted (components/config/vllm_model.py). What is refused is an id that cannot be one (no owner/name form), and a
catalog model written in another case: the Hub's ids are case-sensitive as the catalog keeps them, and a near miss
would silently lose every catalog fact.
"""

from __future__ import annotations

from components.config.issues import ConfigIssue
from policies.gpu_guard.models import close_matches, lookup
from policies.gpu_guard.models.catalog import REPO_ID_PATTERN

EXAMPLE = "meta-llama/Llama-3.1-8B-Instruct"


def check_model_id(value: str) -> str:
    """`value` when it is an owner/name id (optionally @revision) not mistaking a catalog id's case."""
    name, at, revision = value.partition("@")
    if not REPO_ID_PATTERN.match(name) or (at and not revision):
        raise ConfigIssue(
            "vllm.model is a Hugging Face repository id: owner/name (letters, digits, '-', '_', '.'), optionally "
            "@revision", value=value, nearest=close_matches(name),
            fix=f"write the id as the Hub shows it, for example {EXAMPLE}")
    if lookup(name) is None:
        same_case = [c for c in close_matches(name) if c.lower() == name.lower()]
        if same_case:
            raise ConfigIssue(
                f"{name} is the catalog's {same_case[0]} in another case: Hugging Face ids are case-sensitive, "
                "and the catalog knows the model only as written on the Hub", value=value, nearest=same_case,
                fix=f"write {same_case[0]}{at}{revision}")
    return value
