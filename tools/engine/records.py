"""What the offline preview records for each resource, and what the policy gate reports back."""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Enforcement = Literal["mandatory", "advisory"]
# When a violation bites in a real `pulumi up`: a resource policy before the resource's step; a stack
# policy before anything is created when a preview reaches it and `up` previews first (the CLI default),
# else only after every step (`--skip-preview`, the Automation API; CONFIG.md section 3).
Blocks = Literal["before-create", "after-update"]

# What the engine sends for a value that is unknown during preview; the recorder keeps it verbatim.
# Source: https://github.com/pulumi/pulumi/blob/master/sdk/go/common/resource/plugin/rpc.go (UnknownStringValue)
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def has_unknown(value: Any) -> bool:
    """Whether an unknown output (UNKNOWN) sits anywhere in `value` (strings, mappings, lists and tuples)."""
    if isinstance(value, str):
        return value == UNKNOWN
    if isinstance(value, Mapping):
        return any(has_unknown(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(has_unknown(v) for v in value)
    return False


@dataclass(frozen=True)
class RecordedResource:
    """One resource as the program registered it with the (mock) engine.

    `inputs` are the plain Python values the program sent (secrets unwrapped, unknowns as
    `UNKNOWN`); `properties` is the same object as the protobuf Struct the engine receives, kept
    verbatim so the policy gate hands the pack exactly what `pulumi preview` would. `outputs` are
    the resource's final state as the engine stores it (plain Python, unknowns as `UNKNOWN`): a
    custom resource's inputs plus the provider's outputs, a component's registered outputs.
    `remote` marks a multi-language component (such as pulumi-eks's `eks:index:Cluster`), `read` a
    resource looked up with `.get()`, `emulated` a child a remote component's provider registers, emulated
    offline from its source. The options are the ones the engine hands an analyzer
    (`delete_before_replace` is None when the program left it unset) plus `retain_on_delete`, which
    the analyzer protocol has no field for.
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
    ignore_changes: tuple[str, ...] = ()
    delete_before_replace: bool | None = None
    additional_secret_outputs: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # alias URNs
    custom_timeouts: tuple[str, str, str] = ("", "", "")  # create, update, delete
    retain_on_delete: bool = False
    version: str = ""  # the provider version the SDK asked for
    # Registered by a remote component's provider and emulated offline (tools/engine/mocks/eks_children.py):
    # the URL of the source line it comes from; "" for what the program registered.
    emulated: str = ""

    def as_json(self) -> dict[str, Any]:
        """The resource as `python -m tools.preview --json` prints it, with the options that decide what the engine
        does with it (`protect`, `retainOnDelete`, `customTimeouts` in Go durations, `dependsOn` URNs,
        `ignoreChanges` property paths): a reviewer and a test read them in the document and resources.json."""
        create, update, delete = self.custom_timeouts
        options = {
            "protect": self.protect,
            "retainOnDelete": self.retain_on_delete,
            "customTimeouts": {k: v for k, v in (("create", create), ("update", update), ("delete", delete)) if v},
            "dependsOn": sorted(self.dependencies),
            "ignoreChanges": list(self.ignore_changes),
        }
        return {"urn": self.urn, "type": self.type, "name": self.name, "parent": self.parent, "inputs": self.inputs,
                "options": options}


@dataclass(frozen=True)
class Violation:
    """A policy diagnostic as `pulumi preview` prints it, and when it bites at `pulumi up`."""

    policy: str
    enforcement: Enforcement
    urn: str
    message: str
    blocks: Blocks = "before-create"
    # Reached only by the offline gate in this phase: a stack verdict on objects the engine sends as `{}`
    # (first preview); the real engine reaches it after every step of the first `pulumi up`.
    offline_only: bool = False

    def as_json(self) -> dict[str, str]:
        # The contract's keys (CONFIG.md section 3); the offline-only ones are listed apart (`offlineOnly`).
        return {"policy": self.policy, "enforcement": self.enforcement, "urn": self.urn, "message": self.message,
                "blocks": self.blocks}


def engine_order(resources: Sequence[RecordedResource]) -> list[RecordedResource]:
    """`resources` in one order that does not depend on which of Pulumi's threads finished first.

    The Python SDK sends each registration from a worker thread (`run_in_executor` in
    pulumi/runtime/resource.py), so two resources that wait on nothing of each other reach the monitor in either
    order from run to run. The engine's own order only ever puts a resource after its parent, its `dependsOn`,
    its inputs' dependencies and its provider (each must have a URN first); this is such an order, with ties
    broken by URN, so every list read from a recording (findings, pools, the API server's verdicts) prints the
    same on every run.
    """
    by_urn = {r.urn: r for r in resources}
    before: dict[str, set[str]] = {}
    for res in resources:
        needs = {res.parent or "", *res.dependencies, res.provider.rsplit("::", 1)[0] if res.provider else ""}
        needs.update(urn for urns in res.property_dependencies.values() for urn in urns)
        before[res.urn] = {urn for urn in needs if urn in by_urn and urn != res.urn}
    after: dict[str, list[str]] = {urn: [] for urn in by_urn}
    for urn, needs in before.items():
        for need in needs:
            after[need].append(urn)
    ready = [urn for urn, needs in before.items() if not needs]
    heapq.heapify(ready)
    ordered: list[RecordedResource] = []
    while ready:
        urn = heapq.heappop(ready)
        ordered.append(by_urn[urn])
        for waiting in after[urn]:
            before[waiting].discard(urn)
            if not before[waiting]:
                heapq.heappush(ready, waiting)
    # A cycle (none can register) would leave some behind: they follow in URN order, never dropped.
    placed = {r.urn for r in ordered}
    return ordered + sorted((r for r in resources if r.urn not in placed), key=lambda r: r.urn)
