"""What the security tests read: the recorded resources of both stacks and every IAM policy document in them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from tests.components.harness import Run, run, stack_values

STACKS = ("dev", "prod")


@cache
def stack_run(stack: str) -> Run:
    return run(stack_values(stack), stack=stack)


@dataclass(frozen=True)
class PolicyDocument:
    """One IAM policy document found in a resource's inputs: where it sits and what it says."""

    stack: str
    resource: str
    key: str
    document: dict[str, Any]

    @property
    def is_trust_or_resource_policy(self) -> bool:
        """Trust and resource policies name a Principal and, by the IAM grammar, no Resource."""
        return any("Principal" in s or "NotPrincipal" in s for s in statements(self.document))

    @property
    def where(self) -> str:
        return f"{self.stack}: {self.resource} {self.key}"


def statements(document: dict[str, Any]) -> list[dict[str, Any]]:
    found = document.get("Statement", [])
    return [found] if isinstance(found, dict) else list(found)


def _documents_in(value: Any, key: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every policy document under `value`: a JSON string or a mapping with a Statement, at any depth."""
    if isinstance(value, str) and '"Statement"' in value:
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return
        if isinstance(parsed, dict) and "Statement" in parsed:
            yield key, parsed
    elif isinstance(value, dict):
        if "Statement" in value:
            yield key, value
            return
        for child, item in value.items():
            yield from _documents_in(item, f"{key}.{child}" if key else str(child))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _documents_in(item, f"{key}[{index}]")


def policy_documents(stack: str) -> list[PolicyDocument]:
    """Every IAM policy document the program produces for `stack` (trust, identity, key and queue policies)."""
    return [PolicyDocument(stack, resource.name, key, document)
            for resource in stack_run(stack).resources
            for key, document in _documents_in(resource.inputs, "")]
