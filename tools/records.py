"""What the offline preview records for each resource, and what the policy gate reports back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Enforcement = Literal["mandatory", "advisory"]


@dataclass(frozen=True)
class RecordedResource:
    """One resource as the program registered it with the (mock) engine.

    `inputs` are the plain Python values the program sent (secrets unwrapped, unknowns as
    `UNKNOWN`); `properties` is the same object as the protobuf Struct the engine receives, kept
    verbatim so the policy gate hands the pack exactly what `pulumi preview` would.
    """

    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    inputs: dict[str, Any]
    properties: Any = field(repr=False, compare=False)
    provider: str = ""
    protect: bool = False
    dependencies: tuple[str, ...] = ()
    property_dependencies: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Violation:
    """A policy diagnostic as `pulumi preview` prints it."""

    policy: str
    enforcement: Enforcement
    urn: str
    message: str

    def as_json(self) -> dict[str, str]:
        return {"policy": self.policy, "enforcement": self.enforcement, "urn": self.urn, "message": self.message}
