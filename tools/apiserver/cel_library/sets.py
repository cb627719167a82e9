"""cel-go's sets extension (google/cel-go@v0.26.0 ext/sets.go, enabled by k8s.io/apiserver base.go as
`ext.Sets()` from 1.29): list membership by CEL equality, so `1`, `1u` and `1.0` are one element and a bool
is never a number (`values.cel_equal`)."""

from __future__ import annotations

from typing import Any

from tools.apiserver.cel_library import values


def _lists(function: str, a: Any, b: Any) -> tuple[list[Any], list[Any]]:
    if not isinstance(a, list) or not isinstance(b, list):
        raise values.no_overload(function, a, b)
    return a, b


def _member(item: Any, items: list[Any]) -> bool:
    return any(values.cel_equal(item, x) for x in items)


def contains(a: Any, b: Any) -> bool:
    """`sets.contains(list, sublist)`: every element of `sublist` is in `list`."""
    whole, part = _lists("sets.contains", a, b)
    return all(_member(x, whole) for x in part)


def equivalent(a: Any, b: Any) -> bool:
    """`sets.equivalent(a, b)`: the same elements, duplicates ignored."""
    left, right = _lists("sets.equivalent", a, b)
    return all(_member(x, right) for x in left) and all(_member(x, left) for x in right)


def intersects(a: Any, b: Any) -> bool:
    """`sets.intersects(a, b)`: an element in both."""
    left, right = _lists("sets.intersects", a, b)
    return any(_member(x, right) for x in left)
