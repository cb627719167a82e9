"""The Kubernetes CEL library (k8s.io/apiserver pkg/cel/library at kubernetes v1.35, apiserver v0.35.7) and
cel-go's sets and optional extensions, for the Rust `cel` crate that tools.apiserver.cel_rules runs rules on.

Which library a CRD rule may use depends on the cluster's version (`environment/base.go`, `baseOpts`: each
library has an `IntroducedVersion`). The API server compiles a new or changed CRD's rules for its
compatibility version, one minor below its own (`DefaultCompatibilityVersion`: `MinCompatibilityVersion` of
the effective version, which k8s.io/component-base compatibility/version.go `newEffectiveVersion` sets to
`binaryVersion.SubtractMinor(1)`; EKS runs the default), so a library introduced in 1.N is usable from a
1.(N+1) cluster on; a rule that calls it on an older cluster does not compile and the CRD is refused
("undeclared reference"). `LIBRARIES` lists them; `refusal` says what the API server says.

The crate takes custom functions (called with the receiver first for `x.f()`) but no custom types and no
override of some built-ins, so:
- library values are maps with a reserved key (`values`), equal exactly when the library's `Equal` says so;
- a rule's source is rewritten (`rewrite`, outside string literals) where cel-go's syntax or names differ:
  namespaced functions (`ip.isCanonical`, `format.named`, `format.dns1123Label()`, `sets.contains`) become
  plain names, `string(...)` becomes ours (it also converts IPs and CIDRs), and the optional syntax `.?`/`[?`
  becomes calls (`optional`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from tools.apiserver import cel_go
from tools.apiserver.cel_library import formats, net, optional, quantity, semver, sets, urls, values

Unsupported = values.Unsupported


@dataclass(frozen=True)
class Library:
    """One library of base.go: where a rule uses it (a pattern over the rule's code, string literals hidden),
    the name cel-go's checker would not find, and the version that introduced it."""

    name: str
    introduced: tuple[int, int]
    uses: re.Pattern[str]


# k8s.io/apiserver@v0.35.7 pkg/cel/environment/base.go `baseOpts` (lines 60-200): URLs, Regex and Lists are in
# every version (1.0); Quantity and OptionalTypes 1.28; ext.Sets 1.29; IP and CIDR 1.30; Format 1.31; Semver 1.33.
LIBRARIES = (
    Library("quantity", (1, 28), re.compile(r"(?<![\w.])(quantity|isQuantity)\s*\(")),
    Library("optional", (1, 28), re.compile(r"\.\s*\?|(?<=[\w)\]\x00])\s*\[\s*\?|(?<![\w.])optional\s*\.")),
    Library("sets", (1, 29), re.compile(r"(?<![\w.])sets\s*\.\s*(contains|equivalent|intersects)\s*\(")),
    Library("ip", (1, 30), re.compile(r"(?<![\w.])(ip|isIP)\s*\(|(?<![\w.])ip\s*\.\s*isCanonical\s*\(")),
    Library("cidr", (1, 30), re.compile(r"(?<![\w.])(cidr|isCIDR)\s*\(")),
    Library("format", (1, 31), re.compile(r"(?<![\w.])format\s*\.\s*\w+\s*\(")),
    Library("semver", (1, 33), re.compile(r"(?<![\w.])(semver|isSemver)\s*\(")),
)
BASE_GO = ("https://github.com/kubernetes/apiserver/blob/v0.35.7/pkg/cel/environment/base.go")


def parse_version(version: str | None) -> tuple[int, int] | None:
    """"1.35" / "v1.35.2" -> (1, 35); None when not a Kubernetes version."""
    match = re.match(r"^v?(\d+)\.(\d+)", str(version or ""))
    return (int(match.group(1)), int(match.group(2))) if match else None


@cache
def refusal(text: str, kubernetes_version: str | None) -> str | None:
    """The API server's compile error for a rule that calls a library the cluster's compatibility version
    lacks, or None."""
    cluster = parse_version(kubernetes_version)
    if cluster is None:
        return None
    code = cel_go.hide_strings(text)[0]
    compatibility = (cluster[0], cluster[1] - 1)
    for library in LIBRARIES:
        match = library.uses.search(code)
        if match is not None and library.introduced > compatibility:
            name = re.sub(r"[\s(]+$", "", match.group(0)).replace(" ", "")
            first = f"{library.introduced[0]}.{library.introduced[1] + 1}"
            return (f"compilation failed: undeclared reference to '{name}' (in container ''): the Kubernetes CEL "
                    f"{library.name} library is introduced in {library.introduced[0]}.{library.introduced[1]} "
                    f"({BASE_GO}) and CRD rules may use it from Kubernetes {first}, the API server compiling "
                    f"them for the minor version before its own; this cluster runs "
                    f"{cluster[0]}.{cluster[1]}")
    return None


# ---- the rewrite ----------------------------------------------------------------------------------------------

_NAMESPACED = (
    (re.compile(r"(?<![\w.])ip\s*\.\s*isCanonical\s*\("), "_k8s_ip_isCanonical("),
    (re.compile(r"(?<![\w.])format\s*\.\s*named\s*\("), "_k8s_format_named("),
    (re.compile(r"(?<![\w.])format\s*\.\s*(\w+)\s*\(\s*\)"), r"_k8s_format_const('\1')"),
    (re.compile(r"(?<![\w.])sets\s*\.\s*(contains|equivalent|intersects)\s*\("), r"_k8s_sets_\1("),
    (re.compile(r"(?<![\w.])string\s*\("), "_k8s_string("),
)
_MENTIONS = re.compile(r"\?|\b(ip|isCanonical|format|sets|string)\b")


@cache
def rewrite(text: str) -> str:
    """`text` with the library's names and the optional syntax as the crate takes them (string literals
    untouched)."""
    code, literals = cel_go.hide_strings(text)
    if _MENTIONS.search(code) is None:
        return text
    for pattern, replacement in _NAMESPACED:
        code = pattern.sub(replacement, code)
    return cel_go.show_strings(optional.rewrite(code), literals)


# ---- the functions --------------------------------------------------------------------------------------------


def _comparison(function: str, wanted: Callable[[int], Any]) -> Callable[[Any, Any], Any]:
    """`isLessThan`, `isGreaterThan`, `compareTo`: declared for quantities and for semvers."""

    def call(a: Any, b: Any) -> Any:
        kind = values.type_of(a)
        if kind == quantity.TYPE:
            return wanted(quantity.compare(a, b, function))
        if kind == semver.TYPE:
            return wanted(semver.compare(a, b, function))
        raise values.no_overload(function, a, b)

    return call


def _string(fallback: Callable[[Any], str]) -> Callable[[Any], str]:
    def call(value: Any) -> str:
        if values.type_of(value) in (net.IP_TYPE, net.CIDR_TYPE):
            return net.to_string(value)
        if values.type_of(value) is not None:
            raise TypeError(f"type conversion error from '{values.type_of(value)}' to 'string'")
        return fallback(value)

    return call


def functions(string_fallback: Callable[[Any], str]) -> dict[str, Callable[..., Any]]:
    """Every function of the library by the name the (rewritten) rule calls; `string_fallback` is the crate's
    own `string()` for plain values."""
    return {
        # ip.go
        "ip": net.ip, "isIP": net.is_ip, "_k8s_ip_isCanonical": net.ip_is_canonical, "family": net.family,
        "isUnspecified": net.is_unspecified, "isLoopback": net.is_loopback,
        "isLinkLocalMulticast": net.is_link_local_multicast, "isLinkLocalUnicast": net.is_link_local_unicast,
        "isGlobalUnicast": net.is_global_unicast,
        # cidr.go
        "cidr": net.cidr, "isCIDR": net.is_cidr, "containsIP": net.contains_ip, "containsCIDR": net.contains_cidr,
        "prefixLength": net.prefix_length, "masked": net.masked,
        # quantity.go and semverlib.go
        "quantity": quantity.quantity, "isQuantity": quantity.is_quantity, "isInteger": quantity.is_integer,
        "asInteger": quantity.as_integer, "asApproximateFloat": quantity.as_approximate_float,
        "sign": quantity.sign, "add": quantity.add, "sub": quantity.sub,
        "semver": semver.semver, "isSemver": semver.is_semver, "major": semver.major, "minor": semver.minor,
        "patch": semver.patch,
        "isLessThan": _comparison("isLessThan", lambda c: c == -1),
        "isGreaterThan": _comparison("isGreaterThan", lambda c: c == 1),
        "compareTo": _comparison("compareTo", lambda c: c),
        # urls.go
        "url": urls.url, "isURL": urls.is_url, "getScheme": urls.getter("scheme", "getScheme"),
        "getHost": urls.getter("host", "getHost"), "getHostname": urls.getter("hostname", "getHostname"),
        "getPort": urls.getter("port", "getPort"), "getEscapedPath": urls.getter("path", "getEscapedPath"),
        "getQuery": urls.getter("query", "getQuery"),
        # format.go
        "_k8s_format_named": formats.named, "_k8s_format_const": _format_constant, "validate": formats.validate,
        # cel-go ext/sets.go
        "_k8s_sets_contains": sets.contains, "_k8s_sets_equivalent": sets.equivalent,
        "_k8s_sets_intersects": sets.intersects,
        # cel-go optional syntax, and string() of the library's types
        "_k8s_opt_select": optional.select, "_k8s_opt_index": optional.index,
        "_k8s_string": _string(string_fallback),
    }


def _format_constant(name: Any) -> dict[str, Any]:
    if name not in formats.FORMATS:
        raise TypeError(f"undeclared reference to 'format.{name}'")
    return formats.constant(str(name))
