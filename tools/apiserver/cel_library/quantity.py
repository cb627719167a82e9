"""The quantity library (k8s.io/apiserver pkg/cel/library/quantity.go, type pkg/cel/quantity.go) on
`resource.Quantity` (k8s.io/apimachinery@v0.35.7 pkg/api/resource/quantity.go `ParseQuantity`,
`parseQuantityString`; suffix.go `interpret`).

A quantity is kept as its exact value (a Fraction): `ParseQuantity` keeps every digit up to nano precision
and rounds finer values up, away from zero, to the next nano (`amount.Round(..., Nano, inf.RoundUp)`);
binary-SI values are capped at 2^63-1. `Add`, `Sub` and `Cmp` are exact, and `Equal` is `Cmp == 0`, so the
value identifies the quantity (`quantity('200M') == quantity('0.2G')`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from tools.apiserver.cel_library import values

TYPE = "kubernetes.Quantity"
ERR_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
ERR_SUFFIX = "unable to parse quantity's suffix"
_DIGITS = "0123456789"
_SUFFIX_CHARS = "eEinumkKMGTP"
_DECIMAL = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_NANO = Fraction(1, 10**9)
_MAX_INT64 = 2**63 - 1
_MAX_EXPONENT = 4096  # 10**4096 is exact and quick; larger ones are refused as unsupported, never guessed


def _split(text: str) -> tuple[bool, str, str, str]:
    """`parseQuantityString`: sign, integer digits, fraction digits, suffix; ValueError(ERR_FORMAT)."""
    positive, pos, end = True, 0, len(text)
    if text[:1] in ("-", "+"):
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise ValueError(ERR_FORMAT)
    return positive, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int] | None:
    """suffix.go `interpret`: (base, exponent), or None for an unknown suffix."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix]
    if suffix in _BINARY:
        return 2, _BINARY[suffix]
    if len(suffix) > 1 and suffix[0] in "eE":
        body = suffix[1:]
        digits = body[1:] if body[:1] in "+-" else body
        if digits.isascii() and digits.isdigit() and -(2**63) <= int(body) < 2**63:  # strconv.ParseInt(_, 10, 64)
            return 10, (int(body) + 2**31) % 2**32 - 2**31  # then int32(parsed): Go wraps
    return None


def parse(text: str) -> Fraction:
    """`resource.ParseQuantity`: the exact value, or ValueError with apimachinery's message."""
    if not text:
        raise ValueError(ERR_FORMAT)
    positive, num, denom, suffix = _split(text)
    interpreted = _interpret(suffix)
    if interpreted is None:
        raise ValueError(ERR_SUFFIX)
    base, exponent = interpreted
    if abs(exponent) > _MAX_EXPONENT:
        raise values.Unsupported(f"quantity {text!r}: an exponent beyond {_MAX_EXPONENT} is not computed offline")
    amount = Fraction(int(num + denom), 10 ** len(denom)) * Fraction(base) ** exponent
    if amount.denominator != 1 and (amount / _NANO).denominator != 1:
        amount = math.ceil(amount / _NANO) * _NANO  # inf.RoundUp: away from zero (the sign is applied after)
    if base == 2 and amount > _MAX_INT64:
        amount = Fraction(_MAX_INT64)
    return amount if positive else -amount


def _value(amount: Fraction) -> dict[str, Any]:
    return values.encode(TYPE, f"{amount.numerator}/{amount.denominator}")


def _amount(value: Any, function: str, *args: Any) -> Fraction:
    return Fraction(str(values.identity(values.expect(value, TYPE, function, *args))))


def _operand(other: Any, function: str, receiver: Any) -> Fraction:
    """A quantity or an int (`NewQuantity(int, DecimalExponent)`) operand of add/sub."""
    if isinstance(other, int) and not isinstance(other, bool):
        return Fraction(other)
    return _amount(other, function, receiver)


def quantity(arg: Any) -> dict[str, Any]:
    if not isinstance(arg, str):
        raise values.no_overload("quantity", arg)
    return _value(parse(arg))


def is_quantity(arg: Any) -> bool:
    if not isinstance(arg, str):
        raise values.no_overload("isQuantity", arg)
    try:
        parse(arg)
    except ValueError:
        return False
    return True


def _as_int64(amount: Fraction) -> int | None:
    if amount.denominator != 1 or not -(2**63) <= amount.numerator <= _MAX_INT64:
        return None
    return amount.numerator


def is_integer(arg: Any) -> bool:
    return _as_int64(_amount(arg, "isInteger")) is not None


def as_integer(arg: Any) -> int:
    result = _as_int64(_amount(arg, "asInteger"))
    if result is None:
        raise ValueError("cannot convert value to integer")
    return result


def as_approximate_float(arg: Any) -> float:
    amount = _amount(arg, "asApproximateFloat")
    try:
        return float(amount)
    except OverflowError:
        return math.inf if amount > 0 else -math.inf


def sign(arg: Any) -> int:
    amount = _amount(arg, "sign")
    return (amount > 0) - (amount < 0)


def add(arg: Any, other: Any) -> dict[str, Any]:
    return _value(_amount(arg, "add", other) + _operand(other, "add", arg))


def sub(arg: Any, other: Any) -> dict[str, Any]:
    return _value(_amount(arg, "sub", other) - _operand(other, "sub", arg))


def compare(arg: Any, other: Any, function: str) -> int:
    a, b = _amount(arg, function, other), _amount(other, function, arg)
    return (a > b) - (a < b)
