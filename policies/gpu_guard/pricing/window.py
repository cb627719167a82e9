"""How many hours a month a KEDA cron wake window is open: the `expected` figure's wake hours.

KEDA's cron trigger is active from each `start` match until the next `end` match (kedacore/keda v2.20.2
pkg/scalers/cron_scaler.go, robfig/cron v3 standard five-field spec: minute hour day-of-month month day-of-week,
Sunday = 0). A window whose day-of-month and month are `*` repeats every week: its open minutes are counted over a
week (the second of two simulated weeks, so a window open across Sunday midnight is counted right) and scaled to a
month of `hours_per_month` hours (730: 730 / 168 weeks). A window that names days of the month or months depends on
the calendar: not estimated (None, with the reason). Time zones shift a weekly window, never its length (daylight
saving's two yearly hours are left out).

Source: https://keda.sh/docs/2.20/scalers/cron/, https://pkg.go.dev/github.com/robfig/cron/v3 (spec, ranges, steps)
"""

from __future__ import annotations

_MINUTES_PER_WEEK = 7 * 24 * 60
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_BOUNDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}), (0, 23, {}), (1, 31, {}), (1, 12, {}), (0, 6, {d: i for i, d in enumerate(_DAYS)}))


class WindowError(ValueError):
    """A cron expression this module cannot turn into weekly hours: the message says why."""


def _value(text: str, low: int, high: int, names: dict[str, int]) -> int:
    value = names.get(text.lower(), int(text) if text.isdigit() else None)
    if value is None or not low <= value <= high:
        raise WindowError(f"{text!r} is not a value in {low}-{high}")
    return value


def _expand(field: str, low: int, high: int, names: dict[str, int]) -> frozenset[int]:
    out: set[int] = set()
    for part in field.split(","):
        span, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if span in ("*", "?"):
            first, last = low, high
        elif "-" in span:
            first, last = (_value(v, low, high, names) for v in span.split("-", 1))
        else:
            first = _value(span, low, high, names)
            last = high if step_text else first
        out.update(range(first, last + 1, step))
    return frozenset(out)


def _matcher(expression: str) -> tuple[frozenset[int], frozenset[int], frozenset[int]]:
    fields = expression.split()
    if len(fields) != 5:
        raise WindowError(f"{expression!r} is not a five-field cron expression")
    if any(f not in ("*", "?") for f in fields[2:4]):
        raise WindowError(f"{expression!r} names days of the month or months: its hours depend on the calendar")
    minutes, hours, _, _, days = (_expand(f, *b) for f, b in zip(fields, _BOUNDS, strict=True))
    return minutes, hours, days


def weekly_open_minutes(start: str, end: str) -> int:
    """Minutes a week the window [start, end) is open, as KEDA's cron trigger holds it."""
    opens, closes = _matcher(start), _matcher(end)

    def hits(m: tuple[frozenset[int], frozenset[int], frozenset[int]], minute: int) -> bool:
        day, rest = divmod(minute % _MINUTES_PER_WEEK, 24 * 60)
        return rest % 60 in m[0] and rest // 60 in m[1] and day in m[2]

    is_open, counted = False, 0
    for minute in range(2 * _MINUTES_PER_WEEK):
        if hits(closes, minute):
            is_open = False
        if hits(opens, minute):
            is_open = True
        if is_open and minute >= _MINUTES_PER_WEEK:
            counted += 1
    return counted


def monthly_hours(start: str, end: str, hours_per_month: int) -> float:
    """Hours a month the window is open: its weekly hours x (hours_per_month / 168)."""
    return weekly_open_minutes(start, end) / 60 * hours_per_month / 168
