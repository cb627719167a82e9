"""Where the Rust `cel` crate (common-expression-language 0.10.0) and cel-go, which the API server runs, differ,
and how a rule is made to say what cel-go says.

The crate's built-in functions cannot be overridden from Python (a function of the same name passed in the
context is not called), so a rule's source is rewritten, outside its string literals, to call ours:

- `size()` of a string counts bytes of UTF-8 in the crate, Unicode code points in cel-go
  (google/cel-go@v0.26.0 common/types/string.go `Size`: `utf8.RuneCountInString`): `size(x)` and `x.size()`
  call `_k8s_size`;
- `matches()` runs on the crate's `regex` (Unicode `\\d`), on Go's RE2 in cel-go (common/types/string.go
  `Match`, `regexp.MatchString`): `matches(x, p)` and `x.matches(p)` call `_k8s_matches` (`tools.apiserver.regex`);
- `a || b` and `a && b`: when both operands fail, cel-go reports the LEFT operand's error (interpreter
  `evalOr`/`evalAnd` keep the first error met, left to right), the crate the right one. When a rule fails with
  an error and its outermost expression is `?:`, `||` or `&&` (`top_level`), its operands are evaluated one by
  one, in cel-go's order (`fold_logic`);
- `exists()` and `all()` in cel-go are folds over `||` and `&&`, whose errors are absorbed when another
  operand decides the result (cel-go parser/macro.go `MakeExists`/`MakeAll`; interpreter `evalOr`/`evalAnd`:
  "commutative error absorption"): `[{}, {'a': 1}].exists(x, x.a == 1)` is true, where the crate fails on the
  first element's missing key. When a rule fails with an error and holds one of these macros, it is evaluated
  again with each outermost `R.exists(v, P)`/`R.all(v, P)` replaced by a call that evaluates `P` for each
  element on its own and absorbs as cel-go does (`absorbing`). `exists_one` absorbs nothing in cel-go (its
  fold counts with a conditional, which propagates the error), nor here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from tools.apiserver import regex

# A CEL string literal: optional raw/bytes prefix, then triple or single quotes (cel-spec lexis).
_STRING = re.compile("|".join((
    r"(?:[rR][bB]?|[bB][rR])(?:'''.*?'''|\"\"\".*?\"\"\"|'[^'\n]*'|\"[^\"\n]*\")",  # raw: no escapes
    r"[bB]?'''(?:\\.|[^\\])*?'''",
    r'[bB]?"""(?:\\.|[^\\])*?"""',
    r"[bB]?'(?:\\.|[^'\\\n])*'",
    r'[bB]?"(?:\\.|[^"\\\n])*"',
)), re.DOTALL)
_PLACEHOLDER = re.compile(r"\x00(\d+)\x00")
_REWRITES = (
    (re.compile(r"\.\s*size\s*\(\s*\)"), "._k8s_size()"),
    (re.compile(r"(?<![\w.])size\s*\("), "_k8s_size("),
    (re.compile(r"\.\s*matches\s*\("), "._k8s_matches("),
    (re.compile(r"(?<![\w.])matches\s*\("), "_k8s_matches("),
)
_MACRO = re.compile(r"\.\s*(exists|all)\s*\(\s*([A-Za-z_]\w*)\s*,")


def _hide_strings(text: str) -> tuple[str, list[str]]:
    literals: list[str] = []

    def hide(match: re.Match[str]) -> str:
        literals.append(match.group(0))
        return f"\x00{len(literals) - 1}\x00"

    return _STRING.sub(hide, text), literals


def _show_strings(code: str, literals: list[str]) -> str:
    return _PLACEHOLDER.sub(lambda m: literals[int(m.group(1))], code)


def hide_strings(text: str) -> tuple[str, list[str]]:
    """`text` with its string literals as placeholders, and the literals (`show_strings` puts them back)."""
    return _hide_strings(text)


def show_strings(code: str, literals: list[str]) -> str:
    return _show_strings(code, literals)


def receiver_start(code: str, dot: int) -> int:
    """Where the receiver of the member access at `dot` begins (`_receiver_start`)."""
    return _receiver_start(code, dot)


def closing(code: str, start: int) -> int:
    """The index of the bracket closing the one opened just before `start` (`_closing`)."""
    return _closing(code, start)


@cache
def rewrite(text: str) -> str:
    """`text` calling cel-go's `size` and `matches` (ours) instead of the crate's."""
    code, literals = _hide_strings(text)
    for pattern, replacement in _REWRITES:
        code = pattern.sub(replacement, code)
    return _show_strings(code, literals)


def size(value: Any) -> int:
    """cel-go `size`: code points of a string, bytes of bytes, elements of a list or map."""
    if isinstance(value, (str, bytes, list, dict, tuple)):
        return len(value)
    raise TypeError(f"no such overload: size({type(value).__name__})")


def matches(text: str, pattern: str) -> bool:
    """cel-go `matches`: RE2 `MatchString`."""
    return regex.search(pattern, text)


def lower_ascii(text: str) -> str:
    """cel-go ext.Strings `lowerAscii`: only A-Z change."""
    return text.translate(_LOWER)


def upper_ascii(text: str) -> str:
    """cel-go ext.Strings `upperAscii`: only a-z change."""
    return text.translate(_UPPER)


_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")

# --------------------------------------------------------------------------------------------------
# exists()/all() with cel-go's error absorption
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Macro:
    """An outermost `receiver.kind(var, predicate)` of a rule, replaced by the call `_k8s_macro<index>(receiver)`."""

    kind: str  # exists | all
    var: str
    predicate: str


def _closing(code: str, start: int) -> int:
    """The index of the bracket closing the one opened just before `start` (strings are hidden)."""
    depth = 1
    for i in range(start, len(code)):
        if code[i] in "([{":
            depth += 1
        elif code[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced brackets")


def _receiver_start(code: str, dot: int) -> int:
    """Where the receiver of the member call whose `.` is at `dot` begins: a chain of identifiers, field
    accesses, calls, indexes and bracketed expressions."""
    i = dot
    while True:
        j = i - 1
        while j >= 0 and code[j].isspace():
            j -= 1
        if j >= 0 and code[j] in ")]}":
            depth = 0
            while j >= 0:
                depth += code[j] in ")]}"
                depth -= code[j] in "([{"
                if depth == 0:
                    break
                j -= 1
            k = j - 1
            while k >= 0 and (code[k].isalnum() or code[k] == "_"):
                k -= 1
            j = k + 1
        else:
            k = j
            while k >= 0 and (code[k].isalnum() or code[k] == "_" or code[k] == "\x00"):
                k -= 1
            j = k + 1
        p = j - 1
        while p >= 0 and code[p].isspace():
            p -= 1
        if p >= 0 and code[p] == ".":
            i = p
            continue
        return j


@cache
def absorbing(text: str) -> tuple[str, tuple[Macro, ...]]:
    """`text` with each outermost `R.exists(v, P)` / `R.all(v, P)` as `_k8s_macro<n>(R)`, and the macros."""
    code, literals = _hide_strings(text)
    macros: list[Macro] = []
    out = code
    pos = 0
    while True:
        match = _MACRO.search(out, pos)
        if match is None:
            break
        start = _receiver_start(out, match.start())
        end = _closing(out, match.end())
        predicate = _show_strings(out[match.end():end], literals).strip()
        call = f"_k8s_macro{len(macros)}({out[start:match.start()]})"
        macros.append(Macro(match.group(1), match.group(2), predicate))
        out = out[:start] + call + out[end + 1:]
        pos = start + len(call)
    return _show_strings(out, literals), tuple(macros)


def fold(kind: str, outcomes: Iterator[Callable[[], Any]]) -> bool:
    """cel-go's `exists` (`||`) or `all` (`&&`) over each element's predicate: the deciding value wins over an
    error; else the first error is raised."""
    deciding = kind == "exists"
    error: Exception | None = None
    for outcome in outcomes:
        try:
            value = outcome()
        except Exception as exc:  # noqa: BLE001 - any evaluation error is absorbed if another element decides
            error = error or exc
            continue
        if not isinstance(value, bool):
            error = error or TypeError(f"no such overload: {kind} predicate returned {type(value).__name__}")
        elif value is deciding:
            return deciding
    if error is not None:
        raise error
    return not deciding

# --------------------------------------------------------------------------------------------------
# ||, && and ?: with cel-go's evaluation order
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Logic:
    """The outermost operator of a rule: `?:` (parts: condition, then, else), `||` or `&&` (parts: operands,
    left to right)."""

    kind: str  # "?:" | "||" | "&&"
    parts: tuple[str, ...]


def _depth_zero(code: str) -> Iterator[tuple[int, str]]:
    """(index, character) of each character outside brackets (string literals hidden)."""
    depth = 0
    for i, ch in enumerate(code):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            yield i, ch


def _strip_parens(code: str) -> str:
    code = code.strip()
    while code.startswith("(") and code.endswith(")"):
        try:
            if _closing(code, 1) != len(code) - 1:
                break
        except ValueError:
            break
        code = code[1:-1].strip()
    return code


@cache
def top_level(text: str) -> Logic | None:
    """The outermost `?:`, `||` or `&&` of `text` (CEL's precedence: `?:` lowest, then `||`, then `&&`), or None
    when its outermost expression is none of them."""
    code, literals = _hide_strings(text)
    code = _strip_parens(code)
    marks = list(_depth_zero(code))
    questions = [i for i, ch in marks if ch == "?" and code[:i].rstrip()[-1:] != "."]
    if questions:
        start, nested = questions[0], 0
        for i, ch in marks:
            if i <= start:
                continue
            if ch == "?" and i in questions:
                nested += 1
            elif ch == ":":
                if nested == 0:
                    pieces = (code[:start], code[start + 1:i], code[i + 1:])
                    return Logic("?:", tuple(_show_strings(p.strip(), literals) for p in pieces))
                nested -= 1
        return None
    for operator in ("||", "&&"):
        cuts = [i for i, ch in marks if code.startswith(operator, i) and ch == operator[0]]
        if cuts:
            bounds = [0, *[c + 2 for c in cuts]]
            ends = [*cuts, len(code)]
            parts = tuple(_show_strings(code[b:e].strip(), literals) for b, e in zip(bounds, ends, strict=True))
            return Logic(operator, parts)
    return None


def fold_logic(operator: str, outcomes: Iterator[Callable[[], Any]]) -> bool:
    """cel-go's `||` (`&&`) over its operands, left to right (google/cel-go@v0.26.0 interpreter/interpretable.go
    `evalOr.Eval`, `evalAnd.Eval`): the first `true` (`false`) decides; otherwise the FIRST operand's error, or
    "no such overload" for a non-bool operand, is the result; else `false` (`true`)."""
    deciding = operator == "||"
    error: Exception | None = None
    for outcome in outcomes:
        try:
            value = outcome()
        except Exception as exc:  # noqa: BLE001 - an operand's error is absorbed when another operand decides
            error = error or exc
            continue
        if not isinstance(value, bool):
            error = error or TypeError("no such overload")
        elif value is deciding:
            return deciding
    if error is not None:
        raise error
    return not deciding
