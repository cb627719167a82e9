"""Components the offline gate left unjudged: pending, never "none", even where nothing was found.

In a real preview the children a component's provider registers reach the pack like any other resource
(pulumi/pulumi@1b5949891b pkg/resource/deploy/source_eval.go lines 2826-2882: Construct's registrations go through
the same resource monitor). Offline, only the children the gate builds are judged: pulumi-eks's and pulumi-kubernetes's
emulated from their source (tools/engine/mocks: each child recorded with `emulated`, its source), and this
repository's own package (`gpu-platform:index:*`), which its own plugin builds through Construct as the engine does
(tools/engine/mocks/own_package.py: the component is then registered by the plugin, no remote component remains).
Every other remote component (`tools.engine.unseen.unseen_sources`: a pulumi-eks shape not emulated, awsx,
pulumi-kubernetes's helm v4 `Chart` and `yaml/v2` components where their files are not local, one of ours at another
version than this tree's, any other multi-language package) is unjudged: each policy that could judge a type it may
register gets one `<policy>-pending` advisory on it. The policies come from the package schema's resource outputs where
a pinned schema knows the component (tools/engine/coverage/schema.py, plus what its source registers beyond them),
from what our components register for ours (own_package.py `HOLDS`), else
every node and workload policy. Unjudged is not a failure (exit 0); the verdict line counts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tools.engine.coverage.schema import schema_children, schema_source
from tools.engine.coverage.subjects import NODE_AND_WORKLOAD_POLICIES, policies_reading
from tools.engine.mocks.own_package import HOLDS as OWN_HOLDS
from tools.engine.mocks.own_package import NOT_BUILT as OWN_NOT_BUILT
from tools.engine.mocks.own_package import is_own
from tools.engine.records import Violation
from tools.engine.unseen import PENDING_SUFFIX, STACK_REFERENCE, Unseen, declared_holds

JUDGE = "`pulumi preview` judges them"


@dataclass(frozen=True)
class Unjudged:
    """One component whose children the gate did not build, and the policies that could judge them."""

    urn: str
    type: str
    why: str
    policies: tuple[str, ...]
    basis: str  # where the policies come from: the schema, or "every node and workload policy"

    @property
    def name(self) -> str:
        return self.urn.rsplit("::", 1)[-1]

    def as_json(self) -> dict[str, Any]:
        return {"urn": self.urn, "type": self.type, "why": self.why, "policies": list(self.policies),
                "basis": self.basis}

    def line(self) -> str:
        """The summary's one line for this component."""
        n = len(self.policies)
        return (f"{self.type} '{self.name}': {self.why}; {n} polic{'y' if n == 1 else 'ies'} could judge what it "
                f"registers ({self.basis}): {', '.join(self.policies)}; {JUDGE}")


def _policies(u: Unseen) -> tuple[tuple[str, ...], str]:
    if u.type == "eks:index:Cluster":  # `Unseen.holds` already says what pulumi-eks adds for these inputs
        return policies_reading(u.holds), "what pulumi-eks registers for these inputs (tools/engine/mocks)"
    if is_own(u.type):  # one of ours the gate did not build (another version): what our code registers
        return policies_reading(OWN_HOLDS.get(u.type, ("",))), "what gpu-platform's components register"
    declared = declared_holds(u.type)
    found = policies_reading(declared) if declared else ()
    if found:
        return found, f"the types {schema_source(u.type)} and source say it registers"
    if declared:  # it registers nothing any policy reads
        return (), f"the types {schema_source(u.type)} and source say it registers"
    known = schema_source(u.type)
    said = f"{known} names no child type" if schema_children(u.type) is not None else "no pinned schema knows it"
    return NODE_AND_WORKLOAD_POLICIES, f"{said}: every node and workload policy"


def unjudged_components(unseen: Sequence[Unseen]) -> list[Unjudged]:
    """Every unseen remote component (not a StackReference, not a custom resource of an unmodelled provider) that
    some policy could judge a child of, in the order `unseen` lists them."""
    out = []
    for u in unseen:
        if u.type == STACK_REFERENCE or not u.holds:
            continue
        policies, basis = _policies(u)
        if policies:
            out.append(Unjudged(u.urn, u.type, OWN_NOT_BUILT if is_own(u.type) else u.why, policies, basis))
    return out


def unjudged_advisories(unjudged: Sequence[Unjudged]) -> tuple[Violation, ...]:
    """One `<policy>-pending` advisory per (component, policy)."""
    return tuple(
        Violation(policy=policy + PENDING_SUFFIX, enforcement="advisory", urn=u.urn,
                  message=(f"{policy} is pending offline: {u.type} '{u.name}' is unjudged ({u.why}); {policy} could "
                           f"judge what it registers ({u.basis}); {JUDGE} with its provider"))
        for u in unjudged for policy in u.policies)


def is_unjudged_advisory(violation: Violation, unjudged: Sequence[Unjudged]) -> bool:
    return violation.enforcement == "advisory" and any(
        violation.urn == u.urn and violation.policy.removesuffix(PENDING_SUFFIX) in u.policies for u in unjudged)
