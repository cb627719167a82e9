"""The Kubernetes library's own CEL types (net.IP, net.CIDR, kubernetes.Quantity, kubernetes.Semver,
kubernetes.URL, kubernetes.NamedFormat) as values the Rust `cel` crate can carry.

The crate converts only plain values between Python and CEL (a function returning any other object fails with
"Failed to convert Python result to CEL value"), so a library value travels as a map with one reserved key,
`TAG` (a NUL-prefixed name no CRD property can have: property names are escaped into identifiers,
model/escaping.go), holding the type name, and `KEY`, holding the value's identity as the library defines it:
two values are `==` in the crate exactly when the library's `Equal` says so (the identity of each type is
chosen for that, see the `encode` callers). Rules are type-checked when the CRD is created, so a library value
never meets an operator that the library does not declare for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any


@cache
def crate() -> Any:
    """The `cel` crate's compiled extension (`cel.cel`), loaded without its package's `__init__`, which imports the
    library's interactive shell (prompt_toolkit, typer: about 240 ms) that nothing here uses."""
    import importlib.machinery  # noqa: PLC0415
    import importlib.util  # noqa: PLC0415
    import sys  # noqa: PLC0415

    if "cel.cel" in sys.modules:
        return sys.modules["cel.cel"]
    spec = importlib.util.find_spec("cel")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        for lib in sorted(Path(folder).glob("cel.*")):
            if lib.suffix in (".so", ".pyd"):
                loader = importlib.machinery.ExtensionFileLoader("cel.cel", str(lib))
                ext_spec = importlib.util.spec_from_file_location("cel.cel", lib, loader=loader)
                if ext_spec is not None:
                    module = importlib.util.module_from_spec(ext_spec)
                    loader.exec_module(module)
                    sys.modules["cel.cel"] = module
                    return module
    import cel  # noqa: PLC0415 - no separate extension file: the package as published

    return cel


TAG = "\x00k8s.type"
KEY = "\x00k8s.value"


class Unsupported(Exception):
    """An input this offline library does not compute (the rule is reported as not evaluated, never judged)."""


def encode(type_name: str, identity: Any, **extra: Any) -> dict[str, Any]:
    """A library value: equal to another exactly when `type_name` and `identity` (and `extra`) are equal."""
    return {TAG: type_name, KEY: identity, **{f"\x00{k}": v for k, v in extra.items()}}


def type_of(value: Any) -> str | None:
    """The library type a value carries, or None for a plain CEL value."""
    if isinstance(value, Mapping):
        tag = value.get(TAG)
        return tag if isinstance(tag, str) else None
    return None


def identity(value: Mapping[str, Any]) -> Any:
    return value[KEY]


def extra(value: Mapping[str, Any], name: str) -> Any:
    return value[f"\x00{name}"]


def cel_type_name(value: Any) -> str:
    """The CEL type of `value` as cel-go names it in "no such overload" errors."""
    tag = type_of(value)
    if tag is not None:
        return tag
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes):
        return "bytes"
    if isinstance(value, list):
        return "list"
    if isinstance(value, Mapping):
        return "map"
    if value is None:
        return "null_type"
    return type(value).__name__


def no_overload(function: str, *args: Any) -> TypeError:
    """cel-go's runtime error for a call no overload of the function takes."""
    return TypeError(f"no such overload: {function}({', '.join(cel_type_name(a) for a in args)})")


def expect(value: Any, type_name: str, function: str, *args: Any) -> Mapping[str, Any]:
    """`value` as a library value of `type_name`, else cel-go's "no such overload"."""
    if type_of(value) != type_name:
        raise no_overload(function, value, *args)
    return value  # type: ignore[no-any-return]


def cel_equal(a: Any, b: Any) -> bool:
    """CEL's heterogeneous equality (cel-go common/types: numbers compare across int, uint and double; a bool
    equals only a bool; lists and maps element-wise), which the sets library uses (cel-go ext/sets.go)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(cel_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)
