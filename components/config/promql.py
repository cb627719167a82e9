"""A structural PromQL check: catches the queries Prometheus cannot parse before KEDA ever sends one.

Not the full grammar (Prometheus's own parser decides), but what a typo breaks: characters PromQL does not
have, unterminated strings, unbalanced `()`, `{}`, `[]`, a label matcher that is not `label op "value"`,
a range or subquery that is not a duration, a binary operator with a side missing.

Source: https://prometheus.io/docs/prometheus/latest/querying/basics/ (selectors, matchers `= != =~ !~`,
durations `ms s m h d w y`, subqueries `[range:resolution]`) and
https://prometheus.io/docs/prometheus/latest/querying/operators/ (binary operators).
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<duration>(?:\d+(?:ms|[smhdwy]))+)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|0[xX][0-9a-fA-F]+|[Ii]nf|NaN)
  | (?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)
  | (?P<matchop>=~|!~|!=|==|<=|>=|=)
  | (?P<binop>[-+*/%^<>])
  | (?P<open>[({\[])
  | (?P<close>[)}\]])
  | (?P<comma>,)
  | (?P<at>@)
""", re.VERBOSE)
_PAIRS = {")": "(", "}": "{", "]": "["}
_MATCHERS = {"=", "!=", "=~", "!~"}
_COMPARISONS = {"==", "!=", "<=", ">="}  # with `<` and `>` (binop tokens)
_DURATION = re.compile(r"^(?:\d+(?:ms|[smhdwy]))+$")


def _tokens(query: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(query):
        match = _TOKEN.match(query, pos)
        if match is None:
            if query[pos] in "\"'`":
                raise ValueError(f"unterminated string starting at character {pos + 1}")
            raise ValueError(f"unexpected character {query[pos]!r} at character {pos + 1}")
        kind = match.lastgroup or ""
        if kind != "space":
            out.append((kind, match.group()))
        pos = match.end()
    return out


def _check_matchers(body: list[tuple[str, str]]) -> None:
    """`{a="x", b=~"y"}`: groups of label, operator, string, separated by commas (a trailing one allowed)."""
    groups: list[list[tuple[str, str]]] = [[]]
    for token in body:
        if token[0] == "comma":
            groups.append([])
        else:
            groups[-1].append(token)
    if groups and not groups[-1]:
        groups.pop()
    for group in groups:
        shape = [kind for kind, _ in group]
        if shape != ["name", "matchop", "string"] or group[1][1] not in _MATCHERS:
            text = " ".join(value for _, value in group) or "(nothing)"
            raise ValueError(f'label matcher {text!r} is not label="value" (operators = != =~ !~)')


def _check_range(body: list[tuple[str, str]]) -> None:
    """`[5m]` or a subquery `[30m:1m]` / `[30m:]`."""
    text = "".join(value for _, value in body)
    parts = text.split(":")
    if len(parts) > 2 or not _DURATION.match(parts[0]) or (len(parts) == 2 and parts[1]
                                                            and not _DURATION.match(parts[1])):
        raise ValueError(f"range [{text}] is not a duration such as [5m] or a subquery such as [30m:1m]")


def check(query: str) -> None:
    """Raise ValueError naming what breaks the query; return when nothing structural does."""
    tokens = _tokens(query)
    if not tokens:
        raise ValueError("empty query")
    stack: list[tuple[str, int]] = []
    for i, (kind, value) in enumerate(tokens):
        if kind == "open":
            stack.append((value, i))
        elif kind == "close":
            if not stack or stack[-1][0] != _PAIRS[value]:
                raise ValueError(f"unbalanced {value!r}")
            opener, start = stack.pop()
            body = tokens[start + 1:i]
            if opener == "{":
                _check_matchers(body)
            elif opener == "[":
                _check_range(body)
            elif not body and (start == 0 or tokens[start - 1][0] != "name"):
                raise ValueError("empty parentheses")
    if stack:
        raise ValueError(f"unclosed {stack[-1][0]!r}")
    _check_operands(tokens)


def _check_operands(tokens: list[tuple[str, str]]) -> None:
    """Outside selectors, operators and operands alternate."""
    depth_braces = 0
    previous = "start"
    for kind, value in tokens:
        if kind == "open" and value == "{":
            depth_braces += 1
            continue
        if kind == "close" and value == "}":
            depth_braces -= 1
            previous = "operand"
            continue
        if depth_braces or (kind == "open" and value == "["):
            continue
        if kind == "close" and value == "]":
            previous = "operand"
            continue
        # Of the matcher-like tokens only the comparisons are binary operators; `=`, `=~` and `!~` exist only
        # inside `{...}` (https://prometheus.io/docs/prometheus/latest/querying/operators/#comparison-binary-operators).
        operator = kind == "binop" or (kind == "matchop" and value in _COMPARISONS)
        if operator:
            if previous in ("start", "operator", "open", "comma") and value not in "+-":
                raise ValueError(f"operator {value!r} has no left-hand side")
            previous = "operator"
        elif kind in ("open", "comma"):
            previous = kind
        elif kind == "close":
            if previous == "operator":
                raise ValueError(f"an operator before {value!r} has no right-hand side")
            previous = "operand"
        elif kind in ("name", "number", "string", "duration"):
            # `sum by (a) (x)`, `rate(x[5m]) offset 5m`, `x and y`: keywords and modifiers are names too.
            previous = "operand"
        elif kind == "matchop":
            raise ValueError(f"{value!r} outside a label matcher")
    if previous == "operator":
        raise ValueError("the query ends with an operator")
