"""EventBridge event patterns, matched as EventBridge matches them, over events the pack knows only in part.

Not a policy: `karpenter-interruption-handling` asks, for each event type Karpenter's interruption controller
handles, whether a rule's pattern matches events of that type. The pack knows such an event's `source`,
`detail-type` and `version`; every other field (account, region, resources, detail) may hold anything. So a
verdict is three-valued: ALL events of the type match, NONE does, or SOME may (the pattern filters on a field
the pack does not know).

Matching, as the EventBridge user guide states it:
- A pattern is a JSON object whose leaves are arrays of values; an event matches when every field the pattern
  names matches. A field the pattern leaves out matches anything, so a pattern naming only `source` matches
  every detail type of that source. A field the pattern names that the event lacks does not match (unless the
  pattern asks `{"exists": false}`).
- A leaf array matches when any one of its values matches (OR); a literal matches exactly, character by
  character, with no case folding. An event array matches when any of its elements does.
- Operators: `prefix`, `suffix` (each also with `equals-ignore-case`), `equals-ignore-case`, `anything-but`
  (a value, a list of values, or `prefix` / `suffix` / `equals-ignore-case` / `wildcard`), `numeric`
  (`<`, `<=`, `=`, `>=`, `>` and ranges), `exists`, `wildcard` (`*` any run of characters, `\\*` a star),
  `cidr`, and `$or` over sub-patterns.
Sources:
- https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html
- https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html
- https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-arrays.html
- The matcher EventBridge uses, published as aws/event-ruler (README, "Matching semantics"):
  https://github.com/aws/event-ruler
No maintained Python port was found on PyPI (event-ruler 0.3.0, 2023-12, is a thin test helper; moto's
matcher is internal to a mocking library), so the subset the pack needs is implemented here and tested on
the guide's own examples (tests/policies/test_event_pattern.py).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from typing import Any

ALL, SOME, NONE = "all", "some", "none"
_RANK = {NONE: 0, SOME: 1, ALL: 2}


def _both(a: str, b: str) -> str:
    """AND of two verdicts."""
    return min(a, b, key=_RANK.__getitem__)


def _either(a: str, b: str) -> str:
    """OR of two verdicts."""
    return max(a, b, key=_RANK.__getitem__)


def _wildcard(pattern: str) -> re.Pattern[str]:
    parts, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            parts.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        parts.append(".*" if char == "*" else re.escape(char))
        i += 1
    return re.compile("".join(parts), re.DOTALL)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_NUMERIC = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, "=": lambda a, b: a == b,
            ">=": lambda a, b: a >= b, ">": lambda a, b: a > b}


def _numeric(conditions: Any, value: Any) -> bool:
    if not _is_number(value) or not isinstance(conditions, Sequence) or isinstance(conditions, str):
        return False
    items = list(conditions)
    pairs = [(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]  # a trailing operator has no bound
    return all(_NUMERIC[op](value, bound) for op, bound in pairs if op in _NUMERIC and _is_number(bound))


def _string_op(kind: str, operand: Any, value: str) -> bool:
    """prefix / suffix / equals-ignore-case / wildcard of one string value."""
    if isinstance(operand, Mapping) and "equals-ignore-case" in operand and kind in ("prefix", "suffix"):
        operand, value = str(operand["equals-ignore-case"]).lower(), value.lower()
    if not isinstance(operand, str):
        return False
    if kind == "prefix":
        return value.startswith(operand)
    if kind == "suffix":
        return value.endswith(operand)
    if kind == "equals-ignore-case":
        return value.lower() == operand.lower()
    return _wildcard(operand).fullmatch(value) is not None  # wildcard


def _anything_but(operand: Any, value: Any) -> bool:
    if isinstance(operand, Mapping):
        if len(operand) != 1 or not isinstance(value, str):
            return False
        kind, inner = next(iter(operand.items()))
        if kind not in ("prefix", "suffix", "equals-ignore-case", "wildcard"):
            return False
        inner_values = list(inner) if isinstance(inner, Sequence) and not isinstance(inner, str) else [inner]
        return not any(_string_op(kind, v, value) for v in inner_values)
    excluded = list(operand) if isinstance(operand, Sequence) and not isinstance(operand, str) else [operand]
    return value not in excluded


def _matcher(matcher: Any, value: Any) -> bool:
    """One element of a leaf array against one known (present) event value."""
    if not isinstance(matcher, Mapping):
        if _is_number(matcher) and _is_number(value):
            return bool(matcher == value)
        return type(matcher) is type(value) and matcher == value
    if len(matcher) != 1:
        return False
    ((kind, operand),) = matcher.items()
    if kind == "exists":
        return operand is True
    if kind == "anything-but":
        return _anything_but(operand, value)
    if kind == "numeric":
        return _numeric(operand, value)
    if kind == "cidr":
        try:
            return isinstance(value, str) and ipaddress.ip_address(value) in ipaddress.ip_network(str(operand))
        except ValueError:
            return False
    if kind in ("prefix", "suffix", "equals-ignore-case", "wildcard"):
        return isinstance(value, str) and _string_op(kind, operand, value)
    return False


def _leaf(matchers: Sequence[Any], present: bool, value: Any) -> str:
    """A leaf array against a field the event is known to have (present) or known to lack."""
    if not present:
        return ALL if any(isinstance(m, Mapping) and m.get("exists") is False for m in matchers) else NONE
    values = list(value) if isinstance(value, Sequence) and not isinstance(value, str) else [value]
    return ALL if any(_matcher(m, v) for m in matchers for v in values) else NONE


def match(pattern: Mapping[str, Any], event: Mapping[str, Any], known: frozenset[str] | None = None) -> str:
    """ALL, SOME or NONE: does `pattern` match the events whose fields `known` (top-level names; None: every
    field) hold `event`'s values? A known field missing from `event` is absent; a field not in `known` may hold
    anything. A known field's nested object is known whole."""
    verdict = ALL
    for key, spec in pattern.items():
        if key == "$or":
            alternatives = [match(p, event, known) for p in spec if isinstance(p, Mapping)] if isinstance(
                spec, Sequence) else []
            found = NONE
            for alternative in alternatives:
                found = _either(found, alternative)
            verdict = _both(verdict, found)
        elif known is not None and key not in known:
            verdict = _both(verdict, SOME)
        elif isinstance(spec, Mapping):
            nested = event.get(key)
            verdict = _both(verdict, match(spec, nested) if isinstance(nested, Mapping) else NONE)
        elif isinstance(spec, Sequence) and not isinstance(spec, str):
            verdict = _both(verdict, _leaf(list(spec), key in event, event.get(key)))
        else:
            verdict = _both(verdict, NONE)  # EventBridge rejects a leaf that is not an array
    return verdict
