"""The Kubernetes CEL library offline (tools/apiserver/cel_library) against the library's own tests.

`tests/upstream_suites/cel_library/cases.yaml` is k8s.io/apiserver@v0.35.7 pkg/cel/library/{ip,cidr,quantity,semver,
format}_test.go and google/cel-go@v0.26.0 ext/sets_test.go, translated case by case by
`tests/upstream_suites/translate_cel_library.py`; where the upstream cache holds those files (optional pins in
upstream.lock.json), the fixture must be exactly their translation.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.shared import upstream
from tests.upstream_suites import translate_cel_library
from tools.apiserver import cel_rules, regex
from tools.apiserver.cel_library import net, quantity, semver, values
from tools.upstream.lock import cache_dir, load

FIXTURE = yaml.safe_load(Path(translate_cel_library.OUT).read_text(encoding="utf-8"))


def _check_value(got: Any, want: Any) -> None:
    crate = values.crate()
    if isinstance(want, dict) and "optional" in want:
        assert isinstance(got, crate.OptionalValue), got
        if want["optional"] is None:
            assert not got.has_value()
        else:
            assert got.has_value() and got.value() == want["optional"]
    elif isinstance(want, dict) and "ip" in want:
        assert values.type_of(got) == net.IP_TYPE and values.identity(got) == net.go_string(net.parse_ip(want["ip"]))
    elif isinstance(want, dict) and "cidr" in want:
        addr, bits = net.parse_prefix(want["cidr"])
        assert values.type_of(got) == net.CIDR_TYPE and values.identity(got) == f"{net.go_string(addr)}/{bits}"
    elif isinstance(want, dict) and "quantity" in want:
        assert values.type_of(got) == quantity.TYPE
        assert Fraction(values.identity(got)) == quantity.parse(want["quantity"])
    elif isinstance(want, dict) and "semver" in want:
        assert values.type_of(got) == semver.TYPE
        assert semver.compare_versions(semver.parse(values.identity(got)), semver.parse(want["semver"])) == 0
    else:
        assert type(got) is type(want) and got == want, (got, want)


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=lambda c: f"{c['source'].split(':')[-2]}:"
                         f"{c['source'].split(':')[-1]} {c['expr']}")
def test_every_translated_upstream_case_agrees(case):
    if "error" in case or "error_pattern" in case:
        with pytest.raises(cel_rules.CelError) as raised:
            cel_rules.value_of(case["expr"], case.get("variables"))
        if "error" in case:
            assert str(raised.value) == case["error"]
        else:
            assert regex.search(case["error_pattern"], str(raised.value)), str(raised.value)
        return
    _check_value(cel_rules.value_of(case["expr"], case.get("variables")), case["value"])


def test_the_fixture_covers_every_library_test_file_and_says_what_it_left_out():
    files = {c["source"].split(":")[1] for c in FIXTURE["cases"]}
    assert files == {f"pkg/cel/library/{name}" for name in translate_cel_library.TESTS} | {"ext/sets_test.go"}
    assert len(FIXTURE["cases"]) >= 380
    assert all(entry["reason"] for entry in FIXTURE["not_translated"])


def test_the_fixture_is_the_translation_of_the_pinned_upstream_tests():
    read = [p for p in load() if p.file.startswith("cel/") and (p.path.endswith("_test.go")
                                                               or p.path == "pkg/cel/library/format.go")]
    assert len(read) == 7
    for pin in read:
        upstream(*pin.file.split("/"))  # skips with the pin's reason where the cache lacks it
    assert translate_cel_library.translate(translate_cel_library.cache_reader(cache_dir())) == FIXTURE


# ---- beyond the upstream tests: the library's documented rules (its doc comments, cited) ------------------------


@pytest.mark.parametrize(("expr", "value"), [
    # ip.go doc: no IPv4-mapped IPv6, no zones, no leading zeros in an IPv4 octet
    ("isIP('::ffff:1.2.3.4')", False), ("isIP('fe80::1%eth0')", False), ("isIP('127.0.0.01')", False),
    ("ip.isCanonical('2001:db8::0:0:0:abcd')", False), ("ip.isCanonical('2001:DB8::ABCD')", False),
    ("ip('::1') == ip('0:0:0:0:0:0:0:1')", True), ("ip('224.0.1.1').isLinkLocalMulticast()", False),
    ("ip('10.0.0.1').isGlobalUnicast()", True),  # netip: private addresses are global unicast
    # cidr.go doc
    ("cidr('192.168.0.1/24') == cidr('192.168.0.1/24').masked()", False),
    ("cidr('192.168.0.0/24') == cidr('192.168.0.0/24').masked()", True),
    ("cidr('::1/128').ip().family()", 6), ("isCIDR('192.168.0.0/33')", False), ("isCIDR('::ffff:1.2.3.4/24')", False),
    ("cidr('10.0.0.0/8').containsIP(ip('::1'))", False),
    # urls.go doc
    ("url('https://example.com:80/').getHost()", "example.com:80"),
    ("url('https://[::1]:80/').getHostname()", "::1"), ("url('https://[::1]/').getHost()", "[::1]"),
    ("url('/path').getScheme()", ""), ("url('https://example.com/').getPort()", ""),
    ("url('https://example.com/path with spaces/').getEscapedPath()", "/path%20with%20spaces/"),
    ("url('https://example.com').getEscapedPath()", ""),
    ("url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()", {"k1": ["a"], "k2": ["b", "c"]}),
    ("url('https://example.com/path?key with spaces=value with spaces').getQuery()",
     {"key with spaces": ["value with spaces"]}),
    ("url('https://example.com/path?').getQuery()", {}),
    ("isURL('https://user:pass@example.com:80/path?query=val#fragment')", True), ("isURL('/absolute-path')", True),
    ("isURL('https://a:b:c/')", False), ("isURL('../relative-path')", False),
    ("url('https://example.com/a#x') == url('https://example.com/a#x')", True),
    # quantity.go doc
    ("quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')", True),
    ("isQuantity('1,3G')", False), ("isQuantity('200K')", False),
    # quantity.go's doc says `isQuantity('Mi')` is false, but ParseQuantity (quantity.go:278) takes it: no digits
    # make the number 0 (`parseQuantityString`: "if we stripped all numerator positions, always return 0")
    ("isQuantity('Mi') && quantity('Mi') == quantity('0')", True),
    ("quantity('9999999999999999999999999999999999999G').isInteger()", False),
    ("quantity('1.5n') == quantity('2n')", True),  # rounded up to the next nano (ParseQuantity)
    ("quantity('-1.5n') == quantity('-2n')", True), ("quantity('0.5Ki').asInteger()", 512),
    ("quantity('-3').sign()", -1),
    # semver: build metadata does not count (blang EQ), prerelease sorts below the release
    ("semver('1.0.0+a') == semver('1.0.0+b')", True), ("semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))", True),
    ("semver('1.0.0-alpha.1').compareTo(semver('1.0.0-alpha.beta'))", -1),
    # format.go doc
    ("format.dns1123Label().validate('a.b').value()", ["must not contain dots"]),
    ("format.named('uuid').value().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()", False),
])
def test_the_documented_behaviour(expr, value):
    got = cel_rules.value_of(expr)
    assert got == value and type(got) is type(value), got


@pytest.mark.parametrize(("expr", "message"), [
    ("ip('::ffff:1.2.3.4')", 'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'),
    ("ip('fe80::1%eth0')", 'IP address "fe80::1%eth0" with zone value is not allowed'),
    ("ip('127.0.0.01')", 'IP Address "127.0.0.01" parse error during conversion from string: ParseAddr("127.0.0.01"): '
                         "IPv4 field has octet with leading zero"),
    ("cidr('fe80::/10%eth0')", "network address parse error during conversion from string: network address parse error "
                               'during conversion from string: netip.ParsePrefix("fe80::/10%eth0"): bad bits after '
                               'slash: "10%eth0"'),
    ("url('../relative-path')", 'URL parse error during conversion from string: parse "../relative-path": invalid URI '
                                "for request"),
    ("url('https://a:b:c/')", 'URL parse error during conversion from string: parse "https://a:b:c/": invalid port '
                              '":c" after host'),
    # Go 1.25's security releases: only an IPv6 address in brackets, brackets only at the start of the host
    ("url('https://[127.0.0.1]/')", 'URL parse error during conversion from string: parse "https://[127.0.0.1]/": '
                                    "invalid IP-literal"),
    ("url('https://a[::1]/')", 'URL parse error during conversion from string: parse "https://a[::1]/": invalid '
                               "IP-literal"),
    ("quantity('10Mm')", "unable to parse quantity's suffix"),
    ("semver('01.1.1')", 'Major number must not contain leading zeroes "01"'),
    ("semver('1.1', true).major() == 1 && semver('1.1-rc', true) == semver('1.1.0')",
     "short version cannot contain PreRelease/Build meta data"),
])
def test_errors_are_the_librarys_own_words(expr, message):
    with pytest.raises(cel_rules.CelError) as raised:
        cel_rules.value_of(expr)
    assert str(raised.value) == message


# ---- optional syntax, cel-go's ||/&& error order, versions ---------------------------------------------------------


@pytest.mark.parametrize(("expr", "value"), [
    ("self.?spec.?replicas.orValue(1)", 3), ("self.?spec.?missing.orValue(1)", 1),
    ("self.?status.orValue({}).size()", 0), ("self.spec.?replicas.hasValue()", True),
    ("self.?spec.replicas.orValue(0)", 3),  # a plain select after `.?` stays optional (cel-go)
    ("self.items[?1].orValue('none')", "b"), ("self.items[?5].orValue('none')", "none"),
    ("self.spec[?'replicas'].value()", 3), ("self.?spec.?name.orValue('?') == '?'", True),
    ("optional.ofNonZeroValue('').hasValue()", False),
])
def test_optional_syntax_is_evaluated_as_cel_go_does(expr, value):
    variables = {"self": {"spec": {"replicas": 3}, "items": ["a", "b"]}}
    assert cel_rules.value_of(expr, variables) == value


@pytest.mark.parametrize(("rule", "message"), [
    # both operands fail: cel-go reports the LEFT one (interpreter/interpretable.go evalOr/evalAnd)
    ("self.a || self.b", "no such key: a"), ("self.a && self.b", "no such key: a"),
    ("(self.a == 1 || self.b == 1) && self.c == 1", "no such key: a"),
    ("self.x == 1 ? self.a : self.b", "no such key: b"),
    ("self.b || self.a", "no such key: b"),
])
def test_the_first_error_of_or_and_and_is_reported_as_cel_go_does(rule, message):
    results = list(cel_rules.evaluate({"x": 2}, {"x-kubernetes-validations": [{"rule": rule, "message": "m"}]},
                                      has_old=False))
    assert [(r.outcome, r.message) for r in results] == [("error", f"{message} evaluating rule: m")]


@pytest.mark.parametrize("rule", ["self.a || true", "true || self.a", "self.a && false", "false && self.a",
                                  "self.x == 2 || self.a"])
def test_an_error_is_absorbed_where_the_other_operand_decides(rule):
    results = list(cel_rules.evaluate({"x": 2}, {"x-kubernetes-validations": [{"rule": rule}]}, has_old=False))
    assert [r.outcome for r in results] == ([] if "||" in rule else ["failed"])


@pytest.mark.parametrize(("rule", "version", "refused"), [
    ("semver(self).major() == 1", "1.33", True), ("semver(self).major() == 1", "1.34", False),
    ("isIP(self)", "1.30", True), ("isIP(self)", "1.31", False),
    ("cidr(self + '/8').prefixLength() == 8", "1.30", True),
    ("format.dns1123Label().validate(self).hasValue() == false", "1.31", True),
    ("format.dns1123Label().validate(self).hasValue() == false", "1.32", False),
    ("sets.contains([self], [self])", "1.29", True), ("sets.contains([self], [self])", "1.30", False),
    ("quantity(self).isInteger() || true", "1.28", True), ("self.?x.orValue(1) == 1 || true", "1.28", True),
    ("url('https://a/' + self).getHost() == 'a'", "1.26", False),  # URLs: every version (base.go 1.0)
    ("'semver(' + self == 'x'", "1.27", False),  # inside a string literal: no call
])
def test_a_library_the_cluster_lacks_is_refused_as_the_api_server_refuses_the_crd(rule, version, refused):
    results = list(cel_rules.evaluate("1", {"x-kubernetes-validations": [{"rule": rule}]}, has_old=False,
                                      kubernetes_version=version))
    outcomes = [r.outcome for r in results]
    if refused:
        assert outcomes == ["refused"]
        assert "compilation failed: undeclared reference to" in results[0].message
        assert f"this cluster runs {version}" in results[0].message
    else:
        assert "refused" not in outcomes


def test_a_refused_rule_is_a_mandatory_finding_of_the_object():
    from tools.apiserver.check import cel_findings  # noqa: PLC0415

    schema = {"x-kubernetes-validations": [{"rule": "isIP(self.addr)", "message": "addr must be an IP"}]}
    findings = cel_findings("Thing 'a'", {"addr": "10.0.0.1"}, schema, has_old=False, kubernetes_version="1.29")
    assert [(f.rule, f.level) for f in findings] == [("crd-cel", "rejected")]
    assert "undeclared reference to 'isIP'" in findings[0].message and "is refused" in findings[0].message
    assert "Kubernetes version whose CEL library has the function" in findings[0].fix
    assert cel_findings("Thing 'a'", {"addr": "10.0.0.1"}, schema, has_old=False, kubernetes_version="1.35") == []
    assert [f.message for f in cel_findings("Thing 'a'", {"addr": "10.0.0.01"}, schema, has_old=False,
                                            kubernetes_version="1.35")] == ["addr must be an IP"]


def test_an_exponent_too_large_to_compute_is_not_evaluated_never_judged():
    results = list(cel_rules.evaluate("1e99999", {"x-kubernetes-validations": [
        {"rule": "quantity(self).isInteger()"}]}, has_old=False))
    assert [r.outcome for r in results] == ["uncovered"]
    assert "exponent beyond 4096" in results[0].message


# ---- every function the library declares is implemented -----------------------------------------------------------

# The names the library's declaration maps give (`ipLibraryDecls`, `cidrLibraryDecls`, `urlLibraryDecls`,
# `quantityLibraryDecls`, semverlib.go `declarations`, format.go `ConstantFormats` and `formatLibraryDecls`) and
# cel-go ext/sets.go's `cel.Function` names, by the name the rewritten rule calls.
DECLARED = {
    "pkg/cel/library/ip.go": ["ip", "family", "ip.isCanonical", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
                              "isLinkLocalUnicast", "isGlobalUnicast", "isIP", "string"],
    "pkg/cel/library/cidr.go": ["cidr", "containsIP", "containsCIDR", "ip", "prefixLength", "masked", "isCIDR",
                                "string"],
    "pkg/cel/library/urls.go": ["url", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath", "getQuery",
                                "isURL"],
    "pkg/cel/library/quantity.go": ["quantity", "isQuantity", "sign", "isGreaterThan", "isLessThan", "compareTo",
                                    "asApproximateFloat", "asInteger", "isInteger", "add", "sub"],
    "pkg/cel/library/semverlib.go": ["semver", "isSemver", "isGreaterThan", "isLessThan", "compareTo", "major", "minor",
                                     "patch"],
    "pkg/cel/library/format.go": ["dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName",
                                  "dns1123LabelPrefix", "dns1123SubdomainPrefix", "dns1035LabelPrefix", "labelValue",
                                  "uri", "uuid", "byte", "date", "datetime", "validate", "format.named"],
    "ext/sets.go": ["sets.contains", "sets.equivalent", "sets.intersects"],
}
_CALLED_AS = {"ip.isCanonical": "_k8s_ip_isCanonical", "format.named": "_k8s_format_named", "string": "_k8s_string",
              "sets.contains": "_k8s_sets_contains", "sets.equivalent": "_k8s_sets_equivalent",
              "sets.intersects": "_k8s_sets_intersects"}


def test_every_declared_function_is_implemented():
    from tools.apiserver.cel_library import formats  # noqa: PLC0415

    implemented = set(cel_rules.FUNCTIONS)
    for path, names in DECLARED.items():
        for name in names:
            if path.endswith("format.go") and name in formats.FORMATS:
                continue  # format.<name>() constants
            assert _CALLED_AS.get(name, name) in implemented, (path, name)
    assert set(formats.FORMATS) == set(DECLARED["pkg/cel/library/format.go"]) - {"validate", "format.named"}


def test_the_declared_names_are_the_pinned_sources():
    for path, names in DECLARED.items():
        pin = next(p for p in load() if p.file.startswith("cel/") and p.path == path)
        text = upstream(*pin.file.split("/")).read_text(encoding="utf-8")
        if path == "ext/sets.go":
            found = re.findall(r'cel\.Function\("([\w.]+)"', text)
        else:
            found = re.findall(r'^\t+"([\w.]+)": \{', text, re.MULTILINE)
        assert sorted(set(found)) == sorted(set(names)), path
