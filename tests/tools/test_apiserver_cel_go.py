"""Probes, one per class, of where the CEL library (the Rust `cel` crate) and cel-go, which the API server runs,
differ, and what tools/apiserver/cel_go.py makes a rule say: cel-go's answer. Each failed before issue 38."""

from __future__ import annotations

from typing import Any

import pytest

from tools.apiserver import cel_go, cel_rules


def _outcomes(rule: str, value: Any) -> list[str]:
    return [r.outcome for r in cel_rules.evaluate(value, {"x-kubernetes-validations": [{"rule": rule}]},
                                                  has_old=False)]


@pytest.mark.parametrize(("rule", "value", "outcomes"), [
    ("self.size() == 3", "h\u00e9\u00e9", []),  # 3 code points, 5 bytes of UTF-8
    ("size(self) <= 3", "\u65e5\u672c\u8a9e", []),
    ("self.size() == 2", ["\u00e9", "a"], []),
    ("self.size() == 1", {"k": "v"}, []),
    ("self.all(x, x.size() <= 2)", ["\u00e9\u00e9", "ab"], []),
])
def test_size_counts_code_points_as_cel_go_does(rule, value, outcomes):
    assert _outcomes(rule, value) == outcomes


@pytest.mark.parametrize(("rule", "value", "outcomes"), [
    # exists: another element decides (true) over the first element's missing key
    ("self.exists(x, x.a == 1)", [{"b": 1}, {"a": 1}], []),
    ("self.exists(x, x.a == 1)", [{"b": 1}, {"a": 2}], ["error"]),  # nothing decides: the error stands
    # all: another element decides (false) over an error
    ("self.all(x, x.a == 1)", [{"b": 1}, {"a": 2}], ["failed"]),
    ("self.all(x, x.a == 1)", [{"b": 1}, {"a": 1}], ["error"]),
    ("!self.all(x, x.a == 1)", [{"b": 1}, {"a": 2}], []),
    # nested: the inner exists absorbs within the outer all
    ("self.all(l, l.exists(x, x.a == 1))", [[{"b": 1}, {"a": 1}], [{"a": 1}]], []),
    # exists_one absorbs nothing in cel-go either
    ("self.exists_one(x, x.a == 1)", [{"b": 1}, {"a": 1}], ["error"]),
    # a string literal that looks like a macro is not rewritten
    ("self.exists(x, x.a == '.all(y, true)')", [{"b": 1}, {"a": ".all(y, true)"}], []),
])
def test_exists_and_all_absorb_an_error_when_another_element_decides(rule, value, outcomes):
    assert _outcomes(rule, value) == outcomes


@pytest.mark.parametrize(("rule", "value"), [
    ("self.lowerAscii() == '\u00c0b'", "\u00c0B"),
    ("self.upperAscii() == '\u00e9A'", "\u00e9a"),
])
def test_ascii_case_functions_change_only_ascii_letters(rule, value):
    assert _outcomes(rule, value) == []


@pytest.mark.parametrize(("rule", "value", "outcomes"), [
    ("self.matches('^\\\\d+$')", "\u0665", ["failed"]),  # RE2's \d is [0-9]
    ("self.matches('^\\\\d+$')", "42", []),
    ("matches(self, '^[0-9]+s$')", "30s\n", ["failed"]),
    ("self.find('\\\\d+') == '12'", "x\u0665\u066612", []),  # find skips the Arabic-Indic digits
    ("self.findAll('\\\\d').size() == 2", "1\u06652", []),
    ("self.matches('(?<=a)b')", "ab", ["error"]),  # RE2 has no look-behind: the API server's error too
])
def test_regex_functions_run_on_re2(rule, value, outcomes):
    assert _outcomes(rule, value) == outcomes


@pytest.mark.parametrize(("rule", "message"), [
    ("[?optional.none(), 'a'] == ['a']", "cannot parse it"),  # optional list entries: not rewritten
    ("self.transformList(i, x, x).size() == 1", "two-variable comprehension"),
    ("[1, 2].reverse() == [2, 1]", "calls reverse()"),  # ext.Lists v3 (base.go: 1.34), not implemented
    ("quantity('1e99999').isInteger()", "exponent beyond 4096"),
    ("self.all(i, x, x == 'a')", "two-variable comprehension"),
    ("type(ip('1.2.3.4')) == net.IP", "names the CEL type net.*"),
])
def test_what_is_not_implemented_is_an_advisory_never_a_rejection(rule, message):
    results = list(cel_rules.evaluate("1Gi", {"x-kubernetes-validations": [{"rule": rule}]}, has_old=False))
    assert [r.outcome for r in results] == ["uncovered"], results
    assert message in results[0].message


def test_three_argument_map_is_evaluated():
    assert _outcomes("self.map(x, x > 1, x * 2) == [4, 6]", [1, 2, 3]) == []


def test_the_rewrite_leaves_string_literals_alone():
    assert cel_go.rewrite("self.size() > 0 && 'x.size()' != \"matches(\"") == \
        "self._k8s_size() > 0 && 'x.size()' != \"matches(\""
