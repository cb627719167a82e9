"""Findings a person can act on: one headline per fact, at the stack key that sets it (issue 46).

A policy violation arrives as the engine prints it: the policy's description, a newline, what the policy found
(pulumi_policy/policy.py `report_violation`: `violation_message = policy_description + "\\n" + message`), often
ending in `(source: URL)`. The summary shows, per finding, one line: the level, the policy, where to fix it and
what was found; the description and the source wait for `--verbose` (`--json` keeps the whole message).

Where to fix it is derived, never listed per policy:

- the stack file's leaves (`StackConfig.parsed`) whose value the finding names (a driver version, an operator
  release, an OS, an instance type), preferring the leaves of the list entry (`gpuNodeGroups[0]`,
  `karpenter.pools[1]`, `inferenceServices[0]`) whose `name` the flagged resource or one of its parents carries
  (our components name what they build after that entry: the NVIDIADriver `driver-l4-spot` of pool `l4-spot`);
- else that entry itself; else the resource, as the engine names it (`NVIDIADriver 'driver-l4-spot'`).

The same applies to any program's stack file, so a user's own program gets its own keys.

Twins: a catalogue policy `X` and its resource part `X-resource` (policies/gpu_guard/base.py `resource_part`) may
report one fact twice, once on the resource before it is created and once over the whole stack. Two findings of
one such pair, at one level, naming the same version (`535.15.04`, `24.04`) are one finding here, shown once
with the earlier of the two moments it blocks at; the verdict and `tools.ci_gate` count them once alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tools.engine.records import RecordedResource, Violation
from tools.preview.model import PENDING_SUFFIX

RESOURCE_PART = "-resource"  # policies/gpu_guard/base.py RESOURCE_PART_SUFFIX (the tools do not import the pack)
_SOURCE = re.compile(r"\s*\(source: [^()]*\)\s*$")
_VERSION = re.compile(r"(?<![\w.])\d+(?:\.\d+)+(?![\w]|\.\d)")

def is_pending(violation: Violation) -> bool:
    """A `<policy>-pending` advisory: when a policy judges, not a defect."""
    return violation.enforcement == "advisory" and violation.policy.endswith(PENDING_SUFFIX)


def headline(violation: Violation) -> str:
    """What the policy found, on one line: the message without the policy's description and source."""
    _, _, found = violation.message.partition("\n")
    text = found or violation.message
    return " ".join(_SOURCE.sub("", text).split())


def description(violation: Violation) -> str:
    """The policy's own description (the first line the engine prints), "" when the message has none."""
    first, newline, _ = violation.message.partition("\n")
    return " ".join(first.split()) if newline else ""


def source(violation: Violation) -> str:
    match = _SOURCE.search(violation.message)
    return match.group(0).strip()[len("(source: "):-1] if match else ""


@dataclass(frozen=True)
class Finding:
    """One fact: the violation shown, and its twin from the other half of the same policy, if any."""

    violation: Violation
    twin: Violation | None = None

    @property
    def blocks(self) -> str:
        moments = {self.violation.blocks, *([self.twin.blocks] if self.twin else [])}
        return "before-create" if "before-create" in moments else self.violation.blocks

    @property
    def offline_only(self) -> bool:
        return self.violation.offline_only and (self.twin is None or self.twin.offline_only)


def _versions(violation: Violation) -> set[str]:
    return set(_VERSION.findall(headline(violation)))


def merge_twins(violations: Iterable[Violation]) -> list[Finding]:
    """Each finding once: a `X-resource` finding folded into the `X` finding of the same level that names one of
    its versions (the stack policy's text is shown: it names the whole combination)."""
    ordered = list(violations)
    stack_side = {id(v): v for v in ordered if not v.policy.endswith(RESOURCE_PART)}
    taken: set[int] = set()
    twins: dict[int, Violation] = {}
    for v in ordered:
        if not v.policy.endswith(RESOURCE_PART):
            continue
        base = v.policy.removesuffix(RESOURCE_PART)
        versions = _versions(v)
        match = next((s for key, s in stack_side.items() if key not in taken and s.policy == base
                      and s.enforcement == v.enforcement and versions & _versions(s)), None)
        if match is not None:
            taken.add(id(match))
            twins[id(match)] = v
    folded = {id(t) for t in twins.values()}
    return [Finding(v, twins.get(id(v))) for v in ordered if id(v) not in folded]


def counts(violations: Iterable[Violation]) -> tuple[int, int, int]:
    """(mandatory, advisory, pending): what the verdict line and `tools.ci_gate` count, twins once."""
    found = merge_twins(violations)
    pending = sum(1 for f in found if is_pending(f.violation))
    mandatory = sum(1 for f in found if f.violation.enforcement == "mandatory")
    return mandatory, len(found) - mandatory - pending, pending


def from_json(violations: Iterable[Mapping[str, Any]]) -> list[Violation]:
    """The `--json` document's violations as the summary reads them (`tools.ci_gate` counts from the document)."""
    return [Violation(policy=str(v.get("policy", "")), enforcement=v.get("enforcement", "advisory"),
                      urn=str(v.get("urn", "")), message=str(v.get("message", "")),
                      blocks=v.get("blocks", "before-create")) for v in violations if isinstance(v, Mapping)]


# --------------------------------------------------------------------------------------------------
# Where to fix it: the stack key
# --------------------------------------------------------------------------------------------------


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}[{i}]")
    else:
        yield path, value


def _entries(value: Any, path: str) -> Iterator[tuple[str, str, Any]]:
    """(path, name, entry) of every list entry that has a `name`: what our components name their resources after."""
    if isinstance(value, Mapping):
        if path.endswith("]") and isinstance(value.get("name"), str):
            yield path, value["name"], value
        for key, item in value.items():
            yield from _entries(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _entries(item, f"{path}[{i}]")


def _key(project_key: str, project: str) -> str:
    """`gpu-platform:gpuNodeGroups[0].os` as the stack file's reader says it: `gpuNodeGroups[0].os`."""
    return project_key.removeprefix(f"{project}:")


def _names(urn: str, by_urn: Mapping[str, RecordedResource]) -> list[str]:
    """The logical names of the resource and its parents, nearest first."""
    names, seen = [], set()
    while urn in by_urn and urn not in seen:
        seen.add(urn)
        names.append(by_urn[urn].name)
        urn = by_urn[urn].parent or ""
    return names or [urn.rsplit("::", 1)[-1]]


def _names_entry(resource_name: str, entry_name: str) -> bool:
    return resource_name == entry_name or bool(
        re.search(rf"(?:^|[-_.]){re.escape(entry_name)}(?:$|[-_.])", resource_name))


def _mentions(text: str, value: Any) -> bool:
    if not isinstance(value, str) or len(value) < 3 or not re.search(r"[\d.-]", value):
        return False
    return bool(re.search(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\w)", text))


class StackKeys:
    """Maps a finding to the stack key that sets what it found, from one stack file and one recording."""

    def __init__(self, parsed: Mapping[str, Any], resources: Sequence[RecordedResource], project: str) -> None:
        self.project = project
        self.by_urn = {r.urn: r for r in resources}
        self.leaves = [(_key(path, project), value) for path, value in _leaves(dict(parsed), "")
                       if not path.endswith(".name")]
        self.entries = sorted(((_key(p, project), n) for p, n, _ in _entries(dict(parsed), "")),
                              key=lambda e: -len(e[1]))

    def owner(self, urn: str) -> str | None:
        """The list entry (`gpuNodeGroups[0]`) whose name the resource or a parent carries, longest name first."""
        for name in _names(urn, self.by_urn):
            for path, entry_name in self.entries:
                if _names_entry(name, entry_name):
                    return path
        return None

    def where(self, violation: Violation) -> str:
        """The stack key(s) with their values that the finding names, else the list entry, else the resource.

        A pending advisory fixes nothing: it names its resource."""
        return self.key(violation) or self.resource(violation.urn)

    def key(self, violation: Violation) -> str | None:
        """The stack key(s) with their values that the finding names, else the list entry; None where no key of
        the stack file sets what it found (a pending advisory fixes nothing: None)."""
        if is_pending(violation):
            return None
        text = headline(violation)
        owner = self.owner(violation.urn)
        named = [(path, value) for path, value in self.leaves if _mentions(text, value)]
        own = [(p, v) for p, v in named if owner is not None and p.startswith(f"{owner}.")]
        chosen = own or named
        if chosen:
            # The most specific value first (a full driver version before its branch); at most two keys.
            chosen = sorted(chosen, key=lambda pv: -len(str(pv[1])))[:2]
            return ", ".join(f"{path} = {value}" for path, value in chosen)
        return owner

    def resource(self, urn: str) -> str:
        """The resource as the engine names it: `NVIDIADriver 'driver-l4-spot'`."""
        res = self.by_urn.get(urn)
        return f"{res.type.rsplit(':', 1)[-1]} '{res.name}'" if res else urn.rsplit("::", 1)[-1]
