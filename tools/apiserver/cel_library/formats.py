"""The format library (k8s.io/apiserver pkg/cel/library/format.go, `ConstantFormats`; type pkg/cel/format.go):
`format.named(name)` is an optional Format, `format.<name>()` the Format, and `<Format>.validate(s)`
`optional.none()` when `s` is valid, else the optional list of apimachinery's error texts.

The validators and their texts: k8s.io/apimachinery@v0.35.7 pkg/api/validation/generic.go (`NameIsDNSLabel`,
`NameIsDNSSubdomain`, `NameIsDNS1035Label`, each taking a trailing `-` for a prefix: `maskTrailingDash`),
pkg/util/validation/validation.go (`IsDNS1123Label`, `IsDNS1123Subdomain`, `IsDNS1035Label`, `MaxLenError`,
`RegexError`), pkg/api/validate/content/kube.go (`IsLabelKey` for `qualifiedName`, `IsLabelValue`) and dns.go
(its `IsDNS1123Subdomain` for a label key's prefix, whose length error says "bytes"); k8s.io/kube-openapi@
589584f1c912 pkg/validation/strfmt (`uuid`, `date`, `datetime`: tools.apiserver.structural's checks of the
same formats) and its govalidator `Base64` pattern for `byte`; `uri` is url.ParseRequestURI's error
(tools.apiserver.cel_library.urls). A Format value is identified by its name: two Formats are equal when they
are the same named format (format.go `Equal` compares names).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tools.apiserver import regex, structural
from tools.apiserver.cel_library import urls, values

TYPE = "kubernetes.NamedFormat"
_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + "(\\." + _LABEL + ")*"
_DNS1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_KEY_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(" + _KEY_NAME + ")?"
_BASE64 = r"^(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=|[A-Za-z0-9+\/]{4})$"
_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
              "start and end with an alphanumeric character")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character")
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character")
_KEY_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character")
_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
              "must start and end with an alphanumeric character")


def _matches(pattern: str, text: str) -> bool:
    return regex.search("^" + pattern + "$", text)


def _regex_error(msg: str, pattern: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{pattern}')"
    return f"{msg} (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{pattern}')"


def _length(text: str) -> int:
    return len(text.encode("utf-8"))  # Go's len(): bytes


def dns1123_label(text: str) -> list[str]:
    errs = ["must be no more than 63 characters"] if _length(text) > 63 else []
    if not _matches(_LABEL, text):
        errs.append("must not contain dots" if _matches(_SUBDOMAIN, text)
                    else _regex_error(_LABEL_MSG, _LABEL, "my-name", "123-abc"))
    return errs


def dns1123_subdomain(text: str, unit: str = "characters") -> list[str]:
    errs = [f"must be no more than 253 {unit}"] if _length(text) > 253 else []
    if not _matches(_SUBDOMAIN, text):
        errs.append(_regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN, "example.com"))
    return errs


def dns1035_label(text: str) -> list[str]:
    errs = ["must be no more than 63 characters"] if _length(text) > 63 else []
    if not _matches(_DNS1035, text):
        errs.append(_regex_error(_DNS1035_MSG, _DNS1035, "my-name", "abc-123"))
    return errs


def qualified_name(text: str) -> list[str]:
    """content.IsLabelKey."""
    parts = text.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return ["a valid label key " + _regex_error(_KEY_MSG, _KEY_NAME, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in dns1123_subdomain(parts[0], "bytes")]
    if not name:
        errs.append("name part must be non-empty")
    elif _length(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not _matches(_KEY_NAME, name):
        errs.append("name part " + _regex_error(_KEY_MSG, _KEY_NAME, "MyName", "my.name", "123-abc"))
    return errs


def label_value(text: str) -> list[str]:
    """content.IsLabelValue."""
    errs = ["must be no more than 63 bytes"] if _length(text) > 63 else []
    if not _matches(_LABEL_VALUE, text):
        errs.append(_regex_error(_VALUE_MSG, _LABEL_VALUE, "MyValue", "my_value", "12345"))
    return errs


def _prefix(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """generic.go `maskTrailingDash`: a name prefix may end in `-`."""
    return lambda text: check(text[:-2] + "a" if len(text) > 1 and text.endswith("-") else text)


def _uri(text: str) -> list[str]:
    try:
        urls.parse_request_uri(text)
    except urls.URLError as err:
        return [str(err)]
    return []


def _strfmt(check: Callable[[str], bool], message: str) -> Callable[[str], list[str]]:
    return lambda text: [] if check(text) else [message]


FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": dns1123_label,
    "dns1123Subdomain": dns1123_subdomain,
    "dns1035Label": dns1035_label,
    "qualifiedName": qualified_name,
    "dns1123LabelPrefix": _prefix(dns1123_label),
    "dns1123SubdomainPrefix": _prefix(dns1123_subdomain),
    "dns1035LabelPrefix": _prefix(dns1035_label),
    "labelValue": label_value,
    "uri": _uri,
    "uuid": _strfmt(structural.FORMATS["uuid"], "does not match the UUID format"),
    "byte": _strfmt(lambda text: regex.search(_BASE64, text), "invalid base64"),
    "date": _strfmt(structural.FORMATS["date"], "invalid date"),
    "datetime": _strfmt(structural.FORMATS["datetime"], "invalid datetime"),
}


def named(name: Any) -> Any:
    """`format.named(name)`: optional.of(the Format), or optional.none() for an unknown name."""
    if not isinstance(name, str):
        raise values.no_overload("format.named", name)
    optional = values.crate().OptionalValue
    return optional.of(values.encode(TYPE, name)) if name in FORMATS else optional.none()


def constant(name: str) -> dict[str, Any]:
    """`format.<name>()`."""
    return values.encode(TYPE, name)


def validate(fmt: Any, text: Any) -> Any:
    name = values.identity(values.expect(fmt, TYPE, "validate", text))
    if not isinstance(text, str):
        raise values.no_overload("validate", fmt, text)
    errors = FORMATS[str(name)](text)
    optional = values.crate().OptionalValue
    return optional.of(errors) if errors else optional.none()
