"""Turn the Kubernetes CEL library's own tests (k8s.io/apiserver pkg/cel/library/*_test.go) and cel-go's sets
tests (ext/sets_test.go) into the fixture `cel_library/cases.yaml`: one case per expression, with what the test
asserts (a value, or a runtime error: exact for ip/cidr, a Go regexp for the others, as each test's helper
compares), or listed under `not_translated` with the reason.

The files are read from the upstream cache, where `upstream.lock.json` pins them (optional pins: `cel/<repo>/
<path>`), so the fixture and its source can be compared wherever the cache holds them
(tests/tools/test_apiserver_cel_library.py):

    python -m tests.upstream_suites.translate_cel_library [CACHE_DIR]
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from tools.upstream.lock import cache_dir, load

OUT = Path(__file__).with_name("cel_library") / "cases.yaml"  # not a CRD suite: outside the *.yaml they glob
APISERVER, APISERVER_TAG = "kubernetes/apiserver", "v0.35.7"
CEL_GO, CEL_GO_TAG = "google/cel-go", "v0.26.0"
LIBRARY = "pkg/cel/library/"
# test file -> how its helper compares a runtime error: `exact` (err.Error() == want) or `pattern`
# (regexp.MatchString(want, err.Error()))
TESTS = {
    "ip_test.go": "exact", "cidr_test.go": "exact", "quantity_test.go": "pattern", "semver_test.go": "pattern",
    "format_test.go": "pattern",
}
Reader = Callable[[str, str], str]


def _go_string(literal: str) -> str:
    """A Go string literal's value: raw (backquoted) or interpreted (JSON's escapes agree for these files)."""
    literal = literal.strip()
    if literal.startswith("`"):
        return literal[1:-1]
    return str(json.loads(literal))


def _split_top(body: str, sep: str = ",") -> Iterator[tuple[int, str]]:
    """(offset, piece) of `body` split at `sep` outside brackets and string literals."""
    depth, start, i = 0, 0, 0
    while i < len(body):
        ch = body[i]
        if ch == "/" and body.startswith("//", i):
            i = body.find("\n", i)
            if i < 0:
                break
        elif ch == "`":
            i = body.index("`", i + 1)
        elif ch == '"':
            i += 1
            while body[i] != '"':
                i += 2 if body[i] == "\\" else 1
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            yield start, body[start:i]
            start = i + 1
        i += 1
    if body[start:].strip():
        yield start, body[start:]


def _closing(text: str, open_at: int) -> int:
    """The index of the bracket closing the one at `open_at` (string literals skipped)."""
    depth, i = 0, open_at
    while i < len(text):
        ch = text[i]
        if ch == "/" and text.startswith("//", i):
            i = text.index("\n", i)
        elif ch == "`":
            i = text.index("`", i + 1)
        elif ch == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError("unbalanced")


def _cases(text: str) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, fields) of each struct literal in the test table (`cases := []...{` or `tests := []...{`)."""
    table = re.search(r"(?:cases|tests) := \[\]\w*(?:struct \{[^}]*\})?\{", text)
    if table is None:
        raise ValueError("no test table")
    end = _closing(text, table.end() - 1)
    i = table.end()
    while i < end:
        start = text.find("{", i, end)
        if start < 0:
            break
        close = _closing(text, start)
        body = text[start + 1:close]
        fields: dict[str, str] = {}
        line = 0
        for offset, raw in _split_top(body):
            piece = re.sub(r"^(\s*//[^\n]*\n)+", "", raw).strip()  # leading comment lines
            key, sep, value = piece.partition(":")
            if sep and re.fullmatch(r"\w+", key.strip()):
                fields[key.strip()] = value.strip()
                if key.strip() == "expr":
                    line = text.count("\n", 0, start + 1 + offset + raw.index(piece)) + 1
        yield line, fields
        i = close + 1


def _variables(text: str) -> dict[str, Any]:
    """The test's own values (`x, _ := netip.ParseAddr("...")`, `x := resource.MustParse("...")`, ...)."""
    out: dict[str, Any] = {}
    for name, fn, arg in re.findall(r"(\w+)(?:, _)? := (netip\.ParseAddr|netip\.ParsePrefix|resource\.MustParse|"
                                    r"types\.Int|types\.Bool)\(([^)]*)\)", text):
        if fn == "netip.ParseAddr":
            out[name] = {"ip": _go_string(arg)}
        elif fn == "netip.ParsePrefix":
            out[name] = {"cidr": _go_string(arg)}
        elif fn == "resource.MustParse":
            out[name] = {"quantity": _go_string(arg)}
        elif fn == "types.Int":
            out[name] = int(arg)
        else:
            out[name] = arg == "true"
    return out


def _value(expr: str, variables: dict[str, Any]) -> Any:
    """The CEL value a Go expectation names, as the fixture writes it."""
    expr = re.sub(r"\n\s*", "", expr.strip())  # a value spread over lines (never inside a literal here)
    if expr in variables:
        return variables[expr]
    if expr in ("types.True", "types.Bool(true)"):
        return True
    if expr in ("types.False", "types.Bool(false)"):
        return False
    if expr == "types.OptionalNone":
        return {"optional": None}
    patterns: list[tuple[str, Callable[[re.Match[str]], Any]]] = [
        (r"types\.Int\((-?\d+)\)", lambda m: int(m.group(1))),
        (r"types\.Double\(([-\d.e+]+)\)", lambda m: float(m.group(1))),
        (r"types\.String\((.+)\)", lambda m: _go_string(m.group(1))),
        (r"apiservercel\.IP\{Addr: (\w+)\}", lambda m: variables[m.group(1)]),
        (r"apiservercel\.CIDR\{Prefix: (\w+)\}", lambda m: variables[m.group(1)]),
        (r"apiservercel\.CIDR\{Prefix: netip\.PrefixFrom\((\w+), (\d+)\)\}",
         lambda m: {"cidr": f"{variables[m.group(1)]['ip']}/{m.group(2)}"}),
        (r"apiservercel\.Quantity\{Quantity: &(\w+)\}", lambda m: variables[m.group(1)]),
        (r"apiservercel\.Semver\{Version: semver\.MustParse\((.+)\)\}", lambda m: {"semver": _go_string(m.group(1))}),
        (r"types\.OptionalOf\(types\.NewStringList\(types\.DefaultTypeAdapter, \[\]string\{(.*)\}\)\)",
         lambda m: {"optional": [_go_string(p) for _, p in _split_top(m.group(1)) if p.strip()]}),
    ]
    for pattern, make in patterns:
        match = re.fullmatch(pattern, expr)
        if match:
            return make(match)
    raise ValueError(f"untranslated expectation: {expr}")


def _library_cases(read: Reader, test_file: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    path = LIBRARY + test_file
    text = read(APISERVER, path)
    variables = _variables(text)
    cases, skipped = [], []
    for line, fields in _cases(text):
        source = f"{APISERVER}@{APISERVER_TAG}:{path}:{line}"
        name = _go_string(fields["name"]) if "name" in fields else ""
        expr = _go_string(fields["expr"])
        compile_errs = fields.get("expectCompileErrs") or fields.get("expectedCompileErr")
        if compile_errs:
            skipped.append({"source": source, "name": name, "expr": expr,
                            "reason": "asserts a type-check error at compile time (cel-go's checker); the offline "
                                      "check runs rules the API server already compiled when it took the CRD"})
            continue
        if re.search(r"\btype\(", expr):
            skipped.append({"source": source, "name": name, "expr": expr,
                            "reason": "compares CEL type values (`type(x) == net.IP`), which the offline library "
                                      "does not model"})
            continue
        case: dict[str, Any] = {"source": source, "name": name, "expr": expr}
        if fields.get("version"):
            case["library_version"] = int(fields["version"])
        error = fields.get("expectRuntimeErr") or fields.get("expectedRuntimeErr")
        if error:
            case["error" if TESTS[test_file] == "exact" else "error_pattern"] = _go_string(error)
        else:
            expect = fields.get("expectResult") or fields.get("expectValue")
            if expect is None:
                raise ValueError(f"{source}: no expectation")
            case["value"] = _value(expect, variables)
        cases.append(case)
    return cases, skipped


def _format_loop(read: Reader) -> list[dict[str, Any]]:
    """format_test.go's loop over `library.ConstantFormats` (format.go): every name is found, equals its own
    constant, and no other constant."""
    test_path, source_path = LIBRARY + "format_test.go", LIBRARY + "format.go"
    test = read(APISERVER, test_path)
    line = test[:test.index("for keyLHS := range library.ConstantFormats")].count("\n") + 1
    block = read(APISERVER, source_path)
    block = block[block.index("var ConstantFormats"):]
    block = block[:block.index("\n}\n")]
    names = re.findall(r'^\t"(\w+)": \{', block, re.MULTILINE)
    source = f"{APISERVER}@{APISERVER_TAG}:{test_path}:{line}"
    cases: list[dict[str, Any]] = []
    for lhs in names:
        cases.append({"source": source, "name": "lookup and comparison", "expr": f'format.named("{lhs}").hasValue()',
                      "value": True})
        cases.append({"source": source, "name": "comparison with lookup succeeds",
                      "expr": f'format.named("{lhs}").value() == format.{lhs}()', "value": True})
        cases += [{"source": source, "name": f"compare_{lhs}_{rhs}", "expr": f"format.{lhs}() == format.{rhs}()",
                   "value": False} for rhs in names if rhs != lhs]
    return cases


def _sets_cases(read: Reader) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """cel-go ext/sets_test.go `TestSets`: each expression evaluates to true (with `in` bound)."""
    path = "ext/sets_test.go"
    text = read(CEL_GO, path)
    text_sets = text[text.index("func TestSets(") :text.index("func TestSetsMembershipRewriter(")]
    offset = text[:text.index("func TestSets(")].count("\n")
    cases: list[dict[str, Any]] = []
    for line, fields in _cases(text_sets):
        case: dict[str, Any] = {"source": f"{CEL_GO}@{CEL_GO_TAG}:{path}:{line + offset}", "name": "",
                                "expr": _go_string(fields["expr"]), "value": True}
        if "in" in fields:
            case["variables"] = {name: [int(v) for v in items.split(",") if v.strip()]
                                 for name, items in re.findall(r'"(\w+)": \[\]int64\{([^}]*)\}', fields["in"])}
        cases.append(case)
    line = text[:text.index("func TestSetsMembershipRewriter(")].count("\n") + 1
    skipped = [{"source": f"{CEL_GO}@{CEL_GO_TAG}:{path}:{line}", "name": "TestSetsMembershipRewriter",
                "expr": "", "reason": "tests cel-go's optimizer rewriting `x in [...]` (ext.SetsOptimizer), not a "
                                      "sets function; the API server's base environment does not enable it"}]
    return cases, skipped


def translate(read: Reader) -> dict[str, Any]:
    cases: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for test_file in TESTS:
        translated, left = _library_cases(read, test_file)
        cases += translated
        skipped += left
        if test_file == "format_test.go":
            cases += _format_loop(read)
    translated, left = _sets_cases(read)
    return {"suite": f"{APISERVER}@{APISERVER_TAG}:{LIBRARY}*_test.go and {CEL_GO}@{CEL_GO_TAG}:ext/sets_test.go",
            "license": "Apache-2.0", "translated_by": "tests/upstream_suites/translate_cel_library.py",
            "cases": cases + translated, "not_translated": skipped + left}


def cache_reader(cache: Path) -> Reader:
    """The pinned files as `make upstream` lays them out (`cel/<repo>/<path>`)."""
    pinned = {(p.repository, p.path): p.file for p in load() if p.file.startswith("cel/")}

    def read(repository: str, path: str) -> str:
        return (cache / pinned[(repository, path)]).read_text(encoding="utf-8")

    return read


def main(argv: list[str]) -> None:
    doc = translate(cache_reader(Path(argv[0]) if argv else cache_dir()))
    OUT.write_text(yaml.safe_dump(doc, sort_keys=False, width=120, allow_unicode=True), encoding="utf-8")
    print(f"{OUT}: {len(doc['cases'])} cases, {len(doc['not_translated'])} not translated")


if __name__ == "__main__":
    main(sys.argv[1:])
