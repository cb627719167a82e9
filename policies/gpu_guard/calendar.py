"""What day every lifecycle judgement (driver end of life, EKS standard support) is made on: one answer.

The same day must reach the two places that judge a lifecycle: the program's fail-fast config check
(`components.config`) and the policy pack (each policy's config `today`). `judging_day` is the only place
that turns "no date given" into the real date:

- the pack: the policy config `today` (the offline gate sets it from `--today`); else the real date;
- the program: the environment variable `GPU_PLATFORM_TODAY` (the offline preview sets it from the same
  `--today`; a user may set it for a real `pulumi preview` to ask "what will this stack hit by then");
  else the real date.

Tests never rely on the real date: they pass a day (see docs/testing.md, "Tests and CI").
"""

from __future__ import annotations

import os
from datetime import date

TODAY_ENV = "GPU_PLATFORM_TODAY"


def parse_day(value: object, what: str) -> date:
    """An ISO date (YYYY-MM-DD), or one ValueError naming where the value came from and how to fix it."""
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ValueError(
            f"{what}={value!r} is not an ISO date; set it as YYYY-MM-DD (e.g. 2026-11-30) or leave it out"
        ) from None


def judging_day(value: object = None, *, what: str = "today") -> date:
    """`value` (an ISO date or a date) when given, else the real date."""
    if isinstance(value, date):
        return value
    if value is None or value == "":
        return date.today()
    return parse_day(value, what)


def program_day() -> date:
    """The day the program judges on: `GPU_PLATFORM_TODAY` when set, else the real date."""
    return judging_day(os.environ.get(TODAY_ENV), what=TODAY_ENV)
