"""cel-go's optional types (google/cel-go@v0.26.0 cel/library.go `OptionalTypes`, enabled by k8s.io/apiserver
base.go from 1.28) where the Rust crate lacks them.

The crate has the optional values and their methods (`optional.of`, `optional.none`, `optional.ofNonZeroValue`,
`hasValue`, `value`, `orValue`, `or`) but does not parse the optional syntax (`a.?b`, `a[?k]`). A rule's source
is rewritten, outside its string literals, to call ours:
- `R.?f` is `_k8s_opt_select(R, 'f')`: `optional.of(R.f)` when `R` has the field, `optional.none()` when not;
  on an optional `R`, none stays none (cel-go interpreter/attributes.go, optional qualifiers);
- a plain `.g` after it (`R.?f.g`) selects within the optional, as cel-go does (the result stays optional);
- `R[?k]` is `_k8s_opt_index(R, k)`: the list element or map value, if there is one.
Optional list and map literal entries (`[?x]`, `{?k: v}`) are not rewritten: a rule that uses them is reported
as not evaluated (the crate cannot parse it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tools.apiserver import cel_go
from tools.apiserver.cel_library import values

_SELECT = re.compile(r"\.\s*\?\s*([A-Za-z_]\w*)")
_INDEX = re.compile(r"(?<=[\w)\]\x00])\s*\[\s*\?")
_PLAIN_SELECT = re.compile(r"\s*\.\s*([A-Za-z_]\w*)\b(?!\s*\()")


def _unwrap(receiver: Any) -> tuple[bool, Any]:
    """(present, value) of a receiver that may be an optional."""
    optional_type = values.crate().OptionalValue
    if isinstance(receiver, optional_type):
        return (True, receiver.value()) if receiver.has_value() else (False, None)
    return True, receiver


def select(receiver: Any, field: str) -> Any:
    optional_type = values.crate().OptionalValue
    present, value = _unwrap(receiver)
    if present and isinstance(value, Mapping) and field in value:
        return optional_type.of(value[field])
    if present and not isinstance(value, Mapping):
        raise TypeError(f"no such overload: optional field selection on {type(value).__name__}")
    return optional_type.none()


def index(receiver: Any, key: Any) -> Any:
    optional_type = values.crate().OptionalValue
    present, value = _unwrap(receiver)
    if present and isinstance(value, list):
        if isinstance(key, int) and not isinstance(key, bool):
            return optional_type.of(value[key]) if 0 <= key < len(value) else optional_type.none()
        raise TypeError(f"no such overload: optional index of a list with {type(key).__name__}")
    if present and isinstance(value, Mapping):
        return optional_type.of(value[key]) if key in value else optional_type.none()
    if present:
        raise TypeError(f"no such overload: optional index on {type(value).__name__}")
    return optional_type.none()


def rewrite(code: str) -> str:
    """`code` (string literals hidden as placeholders) with `.?` and `[?` as calls."""
    while True:
        select_match = _SELECT.search(code)
        index_match = _INDEX.search(code)
        if select_match is None and index_match is None:
            return code
        if index_match is None or (select_match is not None and select_match.start() < index_match.start()):
            assert select_match is not None
            start = cel_go.receiver_start(code, select_match.start())
            call = f"_k8s_opt_select({code[start:select_match.start()]}, '{select_match.group(1)}')"
            end = select_match.end()
        else:
            bracket = code.index("[", index_match.start())
            start = cel_go.receiver_start(code, bracket)
            close = cel_go.closing(code, bracket + 1)
            key = code[code.index("?", bracket) + 1:close]
            call = f"_k8s_opt_index({code[start:bracket]}, {key})"
            end = close + 1
        while (plain := _PLAIN_SELECT.match(code, end)) is not None:
            call = f"_k8s_opt_select({call}, '{plain.group(1)}')"
            end = plain.end()
        code = code[:start] + call + code[end:]
