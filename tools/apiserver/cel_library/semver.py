"""The semver library (k8s.io/apiserver pkg/cel/library/semverlib.go, type pkg/cel/semver.go) on
github.com/blang/semver/v4 v4.0.0 (`Parse`, `Version.Compare`, `Version.EQ`, `NewPRVersion`), whose error
texts the library returns as its own (`semver("v1.0")`: "No Major.Minor.Patch elements found").

PyPI's `semver` follows semver.org's grammar too, but neither blang's error texts (which the library returns
and its tests assert) nor blang's leniency (build metadata is checked only for its characters), so the parser
is blang's, 40 lines. Equality is blang's `EQ`: `Compare == 0`, which ignores build metadata, so a value is
identified by its text without the build.
"""

from __future__ import annotations

from typing import Any

from tools.apiserver.cel_library import values

TYPE = "kubernetes.Semver"
_NUMBERS = "0123456789"
_ALPHANUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"
_MAX_UINT64 = 2**64 - 1


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _only(text: str, allowed: str) -> bool:
    return all(ch in allowed for ch in text)


def _number(text: str, label: str) -> int:
    if not _only(text, _NUMBERS):
        raise ValueError(f"Invalid character(s) found in {label} number {_go_quote(text)}")
    if len(text) > 1 and text[0] == "0":
        raise ValueError(f"{label.capitalize()} number must not contain leading zeroes {_go_quote(text)}")
    if not text:
        raise ValueError('strconv.ParseUint: parsing "": invalid syntax')
    if int(text) > _MAX_UINT64:
        raise ValueError(f"strconv.ParseUint: parsing {_go_quote(text)}: value out of range")
    return int(text)


def _prerelease(text: str) -> int | str:
    """blang `NewPRVersion`: a number (no leading zero) or an alphanumeric identifier."""
    if not text:
        raise ValueError("Prerelease is empty")
    if _only(text, _NUMBERS):
        if len(text) > 1 and text[0] == "0":
            raise ValueError(f"Numeric PreRelease version must not contain leading zeroes {_go_quote(text)}")
        return int(text)
    if not _only(text, _ALPHANUM):
        raise ValueError(f"Invalid character(s) found in prerelease {_go_quote(text)}")
    return text


Version = tuple[int, int, int, tuple[int | str, ...]]


def parse(text: str) -> Version:
    """blang `semver.Parse`: (major, minor, patch, prerelease); ValueError with blang's message."""
    if not text:
        raise ValueError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise ValueError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major")
    minor = _number(parts[1], "minor")
    patch_text, build, pre = parts[2], [], []
    if "+" in patch_text:
        patch_text, _, build_text = patch_text.partition("+")
        build = build_text.split(".")
    if "-" in patch_text:
        patch_text, _, pre_text = patch_text.partition("-")
        pre = [_prerelease(p) for p in pre_text.split(".")]
    patch = _number(patch_text, "patch")
    for item in build:
        if not item:
            raise ValueError("Build meta data is empty")
        if not _only(item, _ALPHANUM):
            raise ValueError(f"Invalid character(s) found in build meta data {_go_quote(item)}")
    return major, minor, patch, tuple(pre)


def normalize_and_parse(text: str) -> Version:
    """semverlib.go `normalizeAndParse`: no `v` prefix, no leading zeros, missing minor/patch as 0."""
    parts = text.removeprefix("v").split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            stripped = part.lstrip("0")
            if not stripped or stripped[0] not in _NUMBERS:
                stripped = "0" + stripped
            parts[i] = stripped
    if len(parts) < 3:
        if any(ch in parts[-1] for ch in "+-"):
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return parse(".".join(parts))


def _pre_key(item: int | str) -> tuple[int, int, str]:
    return (0, item, "") if isinstance(item, int) else (1, 0, item)


def compare_versions(a: Version, b: Version) -> int:
    """blang `Version.Compare`: numbers, then a release above its prereleases, then prerelease parts (numbers
    below identifiers, numbers numerically, identifiers by bytes), then the longer list above."""
    if a[:3] != b[:3]:
        return -1 if a[:3] < b[:3] else 1
    pa, pb = a[3], b[3]
    if not pa or not pb:
        return (not pa) - (not pb)
    for x, y in zip(pa, pb, strict=False):
        kx, ky = _pre_key(x), _pre_key(y)
        if kx != ky:
            return -1 if kx < ky else 1
    return (len(pa) > len(pb)) - (len(pa) < len(pb))


def _text(version: Version) -> str:
    pre = ".".join(str(p) for p in version[3])
    return f"{version[0]}.{version[1]}.{version[2]}" + (f"-{pre}" if pre else "")


def _value(version: Version) -> dict[str, Any]:
    return values.encode(TYPE, _text(version))


def _version(value: Any, function: str, *args: Any) -> Version:
    return parse(str(values.identity(values.expect(value, TYPE, function, *args))))


def _parser(normalize: Any, function: str, arg: Any) -> Any:
    if not isinstance(normalize, bool):
        raise values.no_overload(function, arg, normalize)
    return normalize_and_parse if normalize else parse


def semver(arg: Any, normalize: Any = False) -> dict[str, Any]:
    if not isinstance(arg, str):
        raise values.no_overload("semver", arg)
    return _value(_parser(normalize, "semver", arg)(arg))


def is_semver(arg: Any, normalize: Any = False) -> bool:
    if not isinstance(arg, str):
        raise values.no_overload("isSemver", arg)
    parser = _parser(normalize, "isSemver", arg)
    try:
        parser(arg)
    except ValueError:
        return False
    return True


def major(arg: Any) -> int:
    return _version(arg, "major")[0]


def minor(arg: Any) -> int:
    return _version(arg, "minor")[1]


def patch(arg: Any) -> int:
    return _version(arg, "patch")[2]


def compare(arg: Any, other: Any, function: str) -> int:
    return compare_versions(_version(arg, function, other), _version(other, function, arg))
