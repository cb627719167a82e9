"""Regular expressions as the API server evaluates them: RE2 (Go's `regexp` syntax and semantics).

Every pattern the API server or a CRD's CEL rule evaluates runs on Go's `regexp`, which is RE2:
- a schema's `pattern` (k8s.io/kube-openapi pkg/validation/validate/values.go `Pattern`, through
  `regexp.MustCompile`/`MatchString`);
- CEL's `matches()` (cel-go `matches`, on Go's `regexp`) and the Kubernetes regex library's `find`/`findAll`
  (k8s.io/apiserver pkg/cel/library/regex.go, `regexp.Compile`, `FindString`, `FindAllString`).

Python's `re` differs where it matters to a verdict: `$` also matches before a trailing newline
(`^[0-9]+s$` takes `"30s\\n"`), and `\\d`, `\\w`, `\\s`, `\\b` are Unicode-aware (`\\d` takes U+0665, an Arabic-Indic
five). RE2 matches only at the end of the text for `$` (without `(?m)`) and `\\d` is ASCII `[0-9]`, as in Go
(https://github.com/google/re2/wiki/Syntax). The binding is `google-re2` (PyPI, Google's own, pinned in
requirements.txt); patterns are compiled once per process. Its cost beside `re`: bench/regex_engines.py.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import re2  # type: ignore[import-untyped]

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # an invalid pattern is an error returned to the caller, not a line on stderr


class PatternError(ValueError):
    """A pattern RE2 (Go's regexp) does not accept, such as a look-behind or a back-reference."""


@cache
def compiled(pattern: str) -> Any:
    """The RE2 program of `pattern` (cached); PatternError when Go's regexp would refuse it."""
    try:
        return re2.compile(pattern, _OPTIONS)
    except Exception as exc:  # noqa: BLE001 - re2 raises its own error type from the C++ extension
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(f"error parsing regexp: {detail}: `{pattern}`") from None


def search(pattern: str, text: str) -> bool:
    """Go's `regexp.MatchString(pattern, text)`: whether `pattern` matches anywhere in `text`."""
    return compiled(pattern).search(text) is not None


def find(pattern: str, text: str) -> str:
    """Go's `FindString`: the leftmost match, or "" (the Kubernetes regex library's `find`)."""
    match = compiled(pattern).search(text)
    return str(match.group(0)) if match is not None else ""


def find_all(pattern: str, text: str, limit: int = -1) -> list[str]:
    """Go's `FindAllString(text, limit)`: every non-overlapping match, at most `limit` (negative: all)."""
    if limit == 0:
        return []
    found = [str(m.group(0)) for m in compiled(pattern).finditer(text)]
    return found if limit < 0 else found[:limit]
