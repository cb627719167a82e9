"""The CEL rules of a CRD (`x-kubernetes-validations`), evaluated as the API server evaluates them.

The library is `common-expression-language` (PyPI, Python bindings of the Rust `cel` crate), pinned in
requirements.txt. It was compared with `cel-python` on the 102 rules of the pinned upstream CRDs (84 of them
Karpenter's): both parse all 102 and both lack the Kubernetes functions below; the Rust one compiles them in
12 ms against 197 ms and evaluates a rule in about 3 us against 780 us, released 2026-09 against 2026-01, and
brings no new dependency tree (cel-python pulls lark, pendulum, google-re2, jmespath). Programs are
compiled once per process (`_program`, cached); the module is imported only when a CRD object is checked.

What the API server does, and what is reproduced here (kubernetes/kubernetes@00c30b354df7
staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go, `validateExpressions`,
`validateMap`, `validateArray`):
- a rule at a schema node runs with `self` bound to the value there, for each present, non-null value
  (every list item, every map value);
- a rule that reads `oldSelf` (a transition rule) runs only when an old value exists: never on create
  ("transition rules are evaluated only if there is a comparable existing value"); on the update of an
  unchanged object `oldSelf` equals `self`;
- a rule that evaluates to false fails with its `message` (else "failed rule: <rule>") at the node's path
  plus the rule's `fieldPath`; a runtime error (e.g. "no such key") fails with "<error> evaluating rule:
  <message>";
- property names that are CEL keywords are escaped (`namespace` -> `__namespace__`; model/escaping.go).

Kubernetes adds functions to CEL (k8s.io/apiserver pkg/cel/library and cel-go's extensions, enabled by
k8s.io/apiserver pkg/cel/environment/base.go). Covered here: the strings extension (`split`, `join`,
`lowerAscii`, `upperAscii` (ASCII letters only, as cel-go), `trim`, `replace`, `substring`, `charAt`,
`indexOf`, `lastIndexOf`), the regex library (`find`, `findAll`, on RE2: `tools.apiserver.regex`), the
lists library (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`), and `tools.apiserver.cel_library`:
`ip`/`isIP`/`ip.isCanonical` and the address classes, `cidr`/`isCIDR`/`containsIP`/`containsCIDR`/`masked`/
`prefixLength`, `url`/`isURL` and its getters, `quantity`/`isQuantity` and its arithmetic and comparisons,
`semver`/`isSemver`, `format.*`, `sets.*`, and the optional syntax (`.?`, `[?`); a library the cluster's
version does not have yet is refused as the API server refuses the CRD (`cel_library.refusal`). Where the
library's own built-ins differ from cel-go (`size` of a string, `matches`, error absorption in `exists`/`all`,
the error `||`/`&&` report), `tools.apiserver.cel_go` makes the rule say what cel-go says. Not covered:
ext.Strings v2 (`format`, `quote`), ext.Lists v3 (`slice`, `flatten`, `distinct`, `reverse`, `sort`,
`sortBy`, `first`, ...), optional list/map entries (`[?x]`, `{?k: v}`), `optMap`/`optFlatMap`,
`type(x) == net.IP`, and two-variable comprehensions (`all(i, x, p)`, `transformList`); none is used by a rule
of the pinned CRDs. A rule that needs one is reported as "could not be evaluated" (advisory
`apiserver-cel-not-evaluated`), never passed and never refused.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from tools.apiserver import cel_go, cel_library, regex, unknown_reads

# CEL keywords and reserved words a property name is escaped from (model/escaping.go, `celReservedSymbols`).
RESERVED = frozenset({
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
    "import", "let", "loop", "package", "namespace", "return", "var",
})
OLD_SELF = re.compile(r"\boldSelf\b")
COVERED = ("split", "join", "lowerAscii", "upperAscii", "trim", "replace", "substring", "charAt", "indexOf",
           "lastIndexOf", "find", "findAll", "isSorted", "sum", "min", "max")


def escape(name: str) -> str:
    """A property name as a CEL field name (model/escaping.go: reserved words, `_`, `.`, `-`, `/`)."""
    if name in RESERVED:
        return f"__{name}__"
    out = name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__")
    return out.replace("/", "__slash__")


# --------------------------------------------------------------------------------------------------
# Kubernetes functions
# --------------------------------------------------------------------------------------------------


def _split(s: str, sep: str, n: int = -1) -> list[str]:
    if n == 0:
        return []
    return s.split(sep, n - 1) if n > 0 else s.split(sep)


def _join(items: list[str], sep: str = "") -> str:
    return sep.join(items)


def _replace(s: str, old: str, new: str, n: int = -1) -> str:
    return s.replace(old, new, n)


def _substring(s: str, start: int, end: int | None = None) -> str:
    if start < 0 or start > len(s) or (end is not None and (end < start or end > len(s))):
        raise IndexError(f"substring({start}, {end}) out of range for a string of length {len(s)}")
    return s[start:end]


def _char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise IndexError(f"index out of range: {i}")
    return s[i:i + 1]


def _index_of(target: Any, item: Any, start: int = 0) -> int:
    if isinstance(target, str):
        return target.find(item, start)
    return next((i for i, v in enumerate(target) if v == item), -1)


def _last_index_of(target: Any, item: Any, end: int | None = None) -> int:
    if isinstance(target, str):
        return target.rfind(item, 0, None if end is None else end + len(item))
    return next((i for i in range(len(target) - 1, -1, -1) if target[i] == item), -1)


def _is_sorted(items: list[Any]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(items))


def _sum(items: list[Any]) -> Any:
    return sum(items)


def _min(items: list[Any]) -> Any:
    if not items:
        raise ValueError("min called on an empty list")
    return min(items)


def _max(items: list[Any]) -> Any:
    if not items:
        raise ValueError("max called on an empty list")
    return max(items)


_RAISED: list[Exception] = []  # what a function raised during the current evaluation (the library would print it)


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, returning null instead of raising: the error is kept for `_one`, which reports it as CEL's."""

    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - kept and reported as the rule's error (or Uncovered) by _execute
            _RAISED.append(Uncovered(str(exc)) if isinstance(exc, cel_library.Unsupported) else exc)
            return None

    return call


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "split": _split, "join": _join, "lowerAscii": cel_go.lower_ascii, "upperAscii": cel_go.upper_ascii,
    "trim": lambda s: s.strip(), "replace": _replace, "substring": _substring, "charAt": _char_at,
    "indexOf": _index_of, "lastIndexOf": _last_index_of, "find": lambda s, p: regex.find(p, s),
    "findAll": lambda s, p, n=-1: regex.find_all(p, s, n),
    "isSorted": _is_sorted, "sum": _sum, "min": _min, "max": _max,
    # cel-go's own, which the crate's built-ins differ from (cel_go.rewrite calls these instead)
    "_k8s_size": cel_go.size, "_k8s_matches": cel_go.matches,
    # the Kubernetes library (ip, cidr, url, quantity, semver, format, sets, optional syntax)
    **cel_library.functions(lambda value: native().evaluate("string(value)", {"value": value})),
}
GUARDED = {name: _guarded(fn) for name, fn in FUNCTIONS.items()}


# --------------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------------


def native() -> Any:
    """The crate's compiled extension (`cel_library.values.crate`)."""
    return cel_library.values.crate()


@cache
def _program(rule: str) -> Any:
    return native().compile(rule)


@cache
def _called_names(source: str) -> frozenset[str]:
    return frozenset(_program(source).functions())


def _called(program: Any) -> frozenset[str]:
    """The functions a compiled rule calls (the crate's static analysis): only those are passed to its context,
    whose cost grows with the functions registered (about 1 us each)."""
    return _called_names(program.source)


def _source(text: str) -> str:
    """`text` as the crate runs it: cel-go's `size`/`matches` (`cel_go.rewrite`), the Kubernetes library's names
    and the optional syntax (`cel_library.rewrite`)."""
    return cel_library.rewrite(cel_go.rewrite(text))


def cel_value(value: Any, schema: Mapping[str, Any]) -> Any:
    """`value` as CEL sees it at `schema`: object properties under their escaped names."""
    if isinstance(value, Mapping):
        props = schema.get("properties")
        if isinstance(props, Mapping):
            return {escape(str(k)): cel_value(v, props.get(k) or {}) for k, v in value.items()}
        extra = schema.get("additionalProperties")
        sub = extra if isinstance(extra, Mapping) else {}
        return {str(k): cel_value(v, sub) for k, v in value.items()}
    if isinstance(value, list):
        items = schema.get("items")
        sub = items if isinstance(items, Mapping) else {}
        return [cel_value(v, sub) for v in value]
    return value


@dataclass(frozen=True)
class RuleResult:
    """One rule that did not pass: `failed` (the API server refuses), `error` (refuses: a runtime error),
    `refused` (the CRD is refused: the rule calls a library the cluster's version lacks), `uncovered` (a
    function this module lacks), `transition` (skipped: needs an old object)."""

    outcome: str
    path: str
    rule: str
    message: str
    reads_unknown: bool = True  # the outcome may depend on a value unknown in this phase (`unknown_reads`)


def _path_join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


NO_OLD: Any = object()  # no old value at this node: a transition rule does not run


def _old_items(old: Any, items: list[Any], schema: Mapping[str, Any]) -> list[Any]:
    """The old value each list item correlates with: by key in an `x-kubernetes-list-type: map` list, none
    otherwise (ae pkg/apiserver/schema/cel/validation.go `validateArray`: only map lists correlate)."""
    keys = schema.get("x-kubernetes-list-map-keys") or []
    if schema.get("x-kubernetes-list-type") != "map" or not keys or not isinstance(old, list):
        return [NO_OLD] * len(items)
    by_key = {tuple(o.get(k) for k in keys): o for o in old if isinstance(o, Mapping)}
    return [by_key.get(tuple(i.get(k) for k in keys), NO_OLD) if isinstance(i, Mapping) else NO_OLD for i in items]


def evaluate(obj: Any, schema: Mapping[str, Any], *, has_old: bool, path: str = "",
             old: Any = NO_OLD, kubernetes_version: str | None = None) -> Iterator[RuleResult]:
    """Every rule under `schema` that `obj` does not pass, or that could not be evaluated.

    `old`: the object before an update, correlated node by node (map keys, map-list keys): a transition rule
    runs where an old value exists, with `oldSelf` bound to it. `has_old` without `old`: the object exists
    already and is unchanged, so `oldSelf` equals `self`. Otherwise (create) transition rules are skipped and
    reported as such.

    `kubernetes_version`: the cluster's; a rule calling a library that version's API server does not compile
    (`cel_library.refusal`) is refused. None: every library of the pinned version.
    """
    if obj is None:
        return
    rules = schema.get("x-kubernetes-validations") or []
    if rules:
        self_value = cel_value(obj, schema)
        old_value = cel_value(old, schema) if old is not NO_OLD and old is not None else NO_OLD
        if old_value is NO_OLD and has_old:
            old_value = self_value
        for rule in rules:
            yield from _one(rule, self_value, old_value, path=path, kubernetes_version=kubernetes_version)
    has_old = has_old and old is NO_OLD
    if isinstance(obj, Mapping):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, value in obj.items():
            old_child = old.get(key, NO_OLD) if isinstance(old, Mapping) else NO_OLD
            sub = props[key] if isinstance(props, Mapping) and key in props else extra
            if isinstance(sub, Mapping):
                yield from evaluate(value, sub, has_old=has_old, path=_path_join(path, str(key)), old=old_child,
                                    kubernetes_version=kubernetes_version)
    elif isinstance(obj, list) and isinstance(schema.get("items"), Mapping):
        for i, (item, old_item) in enumerate(zip(obj, _old_items(old, obj, schema), strict=True)):
            yield from evaluate(item, schema["items"], has_old=has_old, path=f"{path}[{i}]", old=old_item,
                                kubernetes_version=kubernetes_version)


class CelError(Exception):
    """A runtime error of a rule, as cel-go reports it ("no such key: x"): the API server refuses the object."""


class Uncovered(Exception):
    """A rule this module cannot evaluate (syntax or a function the library lacks): an advisory, never a pass."""


_UNDEFINED = re.compile(r"Undefined variable or function: '([^']+)'")


def _execute(text: str, variables: dict[str, Any], functions: Mapping[str, Callable[..., Any]] = GUARDED) -> Any:
    """The value of rule `text` (rewritten to cel-go's `size` and `matches`: `cel_go.rewrite`), or CelError or
    Uncovered."""
    try:
        program = _program(_source(text))
    except Exception as exc:  # noqa: BLE001 - the library raises ValueError for what its parser does not take
        first = str(exc).split("\n")[0]
        detail = first.split("ERROR: ")[-1] if "ERROR: " in str(exc) else first
        raise Uncovered(f"the CEL library cannot parse it ({detail.strip()}): optional list and map entries "
                        "(`[?x]`, `{?k: v}`) are not implemented offline") from None
    saved = list(_RAISED)
    _RAISED.clear()
    try:
        called = _called(program)
        result = program.execute(native().Context(variables=variables, functions={
            name: fn for name, fn in functions.items() if name in called}))
    except KeyError as exc:  # cel-go: "no such key: <key>", which the API server reports as a failure
        raise CelError(f"no such key: {exc.args[0]}") from None
    except Exception as exc:  # noqa: BLE001 - every runtime error fails the rule, as in the API server
        undefined = _UNDEFINED.search(str(exc))
        if undefined and undefined.group(1) not in variables:
            name = undefined.group(1)
            if re.search(rf"\b{re.escape(name)}\s*\(", text):
                raise Uncovered(f"it calls {name}(), a Kubernetes CEL function the offline check does not "
                                "implement") from None
            if re.search(rf"(?<![\w.]){re.escape(name)}\s*\.\s*[A-Z]", text):
                raise Uncovered(f"it names the CEL type {name}.*, which the offline check does not implement (type "
                                "values such as `type(x) == net.IP`)") from None
            raise Uncovered(f"it binds {name}, the first variable of a two-variable comprehension, which the CEL "
                            "library does not implement") from None
        if not _RAISED:
            raise CelError(str(exc).split(". ")[0]) from None
    finally:
        raised = list(_RAISED)
        _RAISED[:] = saved
    if raised:
        cause = next((e for e in raised if isinstance(e, Uncovered)), raised[0])
        if isinstance(cause, (Uncovered, CelError)):
            raise cause
        raise CelError(f"no such key: {cause.args[0]}" if isinstance(cause, KeyError) else str(cause))
    return result


def _execute_absorbing(text: str, variables: dict[str, Any]) -> Any:
    """`_execute`, and when that fails with an error, again in cel-go's order: operand by operand when the
    rule's outermost expression is `?:`, `||` or `&&` (`cel_go.top_level`: the first error is reported, an
    error is absorbed when another operand decides), else with cel-go's error absorption in `exists()` and
    `all()` (`cel_go.absorbing`): an element's error does not matter when another element decides."""
    try:
        return _execute(text, variables)
    except CelError:
        logic = cel_go.top_level(text)
        if logic is not None:
            return _execute_logic(logic, variables)
        try:
            rewritten, macros = cel_go.absorbing(text)
        except ValueError:
            macros = ()
        if not macros:
            raise
    functions = dict(GUARDED)
    for index, macro in enumerate(macros):
        functions[f"_k8s_macro{index}"] = _guarded(_macro_call(macro, variables))
    return _execute(rewritten, variables, functions)


def value_of(expression: str, variables: Mapping[str, Any] | None = None) -> Any:
    """The value of a CEL expression as the API server computes it (library values as `cel_library.values`
    maps), or CelError / Uncovered."""
    return _execute_absorbing(expression, dict(variables or {}))


def _execute_logic(logic: cel_go.Logic, variables: dict[str, Any]) -> Any:
    if logic.kind == "?:":
        condition = _execute_absorbing(logic.parts[0], variables)
        if not isinstance(condition, bool):
            raise CelError("no such overload")
        return _execute_absorbing(logic.parts[1 if condition else 2], variables)
    try:
        return cel_go.fold_logic(logic.kind, (_operand(part, variables) for part in logic.parts))
    except TypeError as exc:
        raise CelError(str(exc)) from None


def _operand(text: str, variables: dict[str, Any]) -> Callable[[], Any]:
    return lambda: _execute_absorbing(text, variables)


def _macro_call(macro: cel_go.Macro, variables: dict[str, Any]) -> Callable[[Any], bool]:
    def call(receiver: Any) -> bool:
        elements = list(receiver) if isinstance(receiver, (list, dict)) else None
        if elements is None:
            raise TypeError(f"no such overload: {macro.kind} on {type(receiver).__name__}")
        return cel_go.fold(macro.kind, (_predicate(macro, variables, element) for element in elements))

    return call


def _predicate(macro: cel_go.Macro, variables: dict[str, Any], element: Any) -> Callable[[], Any]:
    return lambda: _execute_absorbing(macro.predicate, {**variables, macro.var: element})


def _one(rule: Mapping[str, Any], self_value: Any, old_value: Any, *, path: str,
         kubernetes_version: str | None = None) -> Iterator[RuleResult]:
    text = str(rule.get("rule", ""))
    message = str(rule.get("message") or "").strip() or f"failed rule: {text.strip()}"
    where = path
    if rule.get("fieldPath"):
        where = path + str(rule["fieldPath"])
    refused = cel_library.refusal(text, kubernetes_version)
    if refused is not None:
        yield RuleResult("refused", where, text, refused)
        return
    if OLD_SELF.search(text) and old_value is NO_OLD:
        yield RuleResult("transition", where, text, message)
        return
    variables = {"self": self_value}
    if OLD_SELF.search(text):
        variables["oldSelf"] = old_value
    try:
        result = _execute_absorbing(text, variables)
    except Uncovered as exc:
        yield RuleResult("uncovered", where, text, str(exc))
        return
    except CelError as exc:
        yield RuleResult("error", where, text, f"{exc} evaluating rule: {message}",
                         unknown_reads.reads_unknown(text, self_value, variables.get("oldSelf")))
        return
    if result is not True:
        yield RuleResult("failed", where, text, message,
                         unknown_reads.reads_unknown(text, self_value, variables.get("oldSelf")))
