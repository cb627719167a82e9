"""The translation rule: a Go test's typed object as the Go client sends it (encoding/json), in Python.

controller-runtime's client (envtest's `env.Client.Create/Update`) sends a typed object as `encoding/json`
writes it (https://pkg.go.dev/encoding/json#Marshal):

- a field without `omitempty` is always sent: a nil slice, map or pointer as `null` (as karpenter-provider-aws's
  `CapacityReservationSelectorTerms []CapacityReservationSelectorTerm json:"capacityReservationSelectorTerms"`,
  `null` on every EC2NodeClass the suite creates), a zero string as `""`, a zero number as `0`;
- with `omitempty`, a nil or empty slice or map, a nil pointer, `""`, `0` and `false` are left out; a struct is
  never left out (`omitempty` has no effect on a struct value): `metadata: {}`, `status: {}`;
- `metav1.ObjectMeta.creationTimestamp` (a `metav1.Time` struct) is sent as `null` when zero;
- `metav1.Duration` is Go's `time.Duration.String()`: `20m` -> `"20m0s"`, `2h20m` -> `"2h20m0s"` (`duration`);
- `resource.Quantity` is its canonical form: `resource.MustParse("1000")` -> `"1k"` (`quantity`);
- a type with its own `MarshalJSON` writes what it returns: karpenter's `NillableDuration` its raw text when it
  was parsed (`MustParseNillableDuration("30s")` -> `"30s"`), `"Never"` when zero
  (kubernetes-sigs/karpenter@v1.14.1:pkg/apis/v1/duration.go:68-76);
- a pointer to a value (`new(int64(5))`, `lo.ToPtr("x")`) is the value.

`runtime.DefaultUnstructuredConverter.ToUnstructured` (the suites' `DescribeTable`s that set a raw string with
`unstructured.SetNestedField`) follows the same rules. Random names (`test.RandomName()`,
`randomdata.SillyName()`, `randomdata.Alphanumeric(n)`) are fixed strings of the same shape here.
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"(\d+)(h|m|s)")
_SECONDS = {"h": 3600, "m": 60, "s": 1}


def duration(text: str) -> str:
    """Go's `time.Duration.String()` of `time.ParseDuration(text)`, for whole seconds: "20m" -> "20m0s"."""
    sign = "-" if text.startswith("-") else ""
    total = sum(int(n) * _SECONDS[u] for n, u in _DURATION.findall(text.lstrip("-")))
    if total == 0:
        return "0s"
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{sign}{hours}h{minutes}m{seconds}s"
    if minutes:
        return f"{sign}{minutes}m{seconds}s"
    return f"{sign}{seconds}s"


def seconds(total: int) -> str:
    return duration(f"{total}s")


_DECIMAL = ("", "k", "M", "G", "T", "P", "E")
_BINARY = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def quantity(text: str) -> str:
    """`resource.MustParse(text).String()` for whole numbers: "1000" -> "1k", "2048Mi" -> "2Gi"."""
    match = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?", text)
    if match is None:
        raise ValueError(f"quantity {text!r}: only whole numbers with a suffix are translated")
    number, suffix = int(match.group(1)), match.group(2) or ""
    if suffix in _BINARY:
        index = _BINARY.index(suffix)
        while number and number % 1024 == 0 and index < len(_BINARY) - 1:
            number, index = number // 1024, index + 1
        return f"{number}{_BINARY[index]}"
    index = _DECIMAL.index(suffix)
    while number and number % 1000 == 0 and index < len(_DECIMAL) - 1:
        number, index = number // 1000, index + 1
    return f"{number}{_DECIMAL[index]}"
