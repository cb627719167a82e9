"""What the offline preview records for each resource, and what the policy gate reports back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Enforcement = Literal["mandatory", "advisory"]

# What the engine sends for a value that is unknown during preview; the recorder keeps it verbatim.
# Source: https://github.com/pulumi/pulumi/blob/master/sdk/go/common/resource/plugin/rpc.go (UnknownStringValue)
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


@dataclass(frozen=True)
class RecordedResource:
    """One resource as the program registered it with the (mock) engine.

    `inputs` are the plain Python values the program sent (secrets unwrapped, unknowns as
    `UNKNOWN`); `properties` is the same object as the protobuf Struct the engine receives, kept
    verbatim so the policy gate hands the pack exactly what `pulumi preview` would. `outputs` are
    the values the mocks answered with (plain Python), `remote` marks a multi-language component
    (such as pulumi-eks's `eks:index:Cluster`), `read` a resource looked up with `.get()`.
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
    id: str = ""
    outputs: dict[str, Any] = field(default_factory=dict, compare=False)
    remote: bool = False
    read: bool = False

    def as_json(self) -> dict[str, Any]:
        """The resource as `python -m tools.preview --json` prints it."""
        return {"urn": self.urn, "type": self.type, "name": self.name, "parent": self.parent, "inputs": self.inputs}


@dataclass(frozen=True)
class Violation:
    """A policy diagnostic as `pulumi preview` prints it."""

    policy: str
    enforcement: Enforcement
    urn: str
    message: str

    def as_json(self) -> dict[str, str]:
        return {"policy": self.policy, "enforcement": self.enforcement, "urn": self.urn, "message": self.message}
