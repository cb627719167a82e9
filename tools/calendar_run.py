"""`python -m tools.calendar_run [--date YYYY-MM-DD | --days N] -- COMMAND...`: COMMAND with the clock moved.

The calendar-proof run (`make test-calendar`, the weekly calendar workflow): the whole suite with the wall
clock a year ahead, so a date bomb (a test or a check that holds only until some day) turns red a year
before that day instead of on it. The clock is moved by libfaketime, preloaded into COMMAND and every
process it starts; the monotonic clock stays real (`FAKETIME_DONT_FAKE_MONOTONIC=1`), so timeouts and
sleeps still run.

The library is the one the pinned PyPI package `libfaketime` (requirements-dev.txt) ships prebuilt, found
through its own API (`libfaketime.get_reload_information`), so CI needs no hand-built library. What that
build does, checked for 3.0.1 (docs/ci-cd.md, "The calendar-proof run"): it interposes the wall-clock reads
(time, gettimeofday, clock_gettime, timespec_get, ftime, timer and timerfd calls, pthread_cond_timedwait)
and no sleep call at all (no nanosleep, clock_nanosleep, usleep or sleep among its dynamic symbols). Its
vendored libfaketime.c lacks the fix of wolfcw/libfaketime#426 (commits d17bb11, f262b5f, 0c2e3d4, first
released in v0.9.11: clock_nanosleep with TIMER_ABSTIME on CLOCK_MONOTONIC used the faked start time even
when the monotonic clock was left real, which makes Python 3.11's `time.sleep` fail with EINVAL), but the
function is not exported, so Python's `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` reaches glibc.
Before running COMMAND, a probe (`probe`) proves both on this machine: under the library a child Python
sees the moved date and a 50 ms `time.sleep` takes 50 ms of real monotonic time. A build that fails either
(another platform, another release) stops here with one line, instead of a suite that hangs or passes
without the clock having moved.

Exit: COMMAND's own status; 2 when the library is missing or fails the probe, or on bad arguments.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import libfaketime  # type: ignore[import-untyped]  # no stubs; its API: get_reload_information()

PROG = "python -m tools.calendar_run"
DEFAULT_DAYS = 365
SONAME = "libfaketime.so.1"
_PROBE = (
    "import datetime, time\n"
    "start = time.monotonic()\n"
    "time.sleep(0.05)\n"
    "print(datetime.datetime.now(datetime.timezone.utc).date().isoformat(), round(time.monotonic() - start, 3))\n"
)


class CalendarError(Exception):
    """The clock cannot be moved here; the message says why, on one line."""


def library() -> Path:
    """The prebuilt libfaketime of the pinned package, from the package's own preload settings."""
    try:
        _, additions = libfaketime.get_reload_information()
    except RuntimeError as err:  # a platform the package has no library for
        raise CalendarError(str(err)) from err
    path = Path(additions.get("LD_LIBRARY_PATH", "")) / SONAME
    if not path.is_file():
        raise CalendarError(f"libfaketime {_version()} ships no {SONAME} for this platform ({sys.platform}); "
                            "the calendar run needs Linux x86_64")
    return path


def faketime_spec(today: dt.date, *, date: dt.date | None, days: int) -> tuple[str, dt.date]:
    """FAKETIME's value and the date it shows: an absolute start (`@DATE 12:00:00`) or an offset (`+Nd`)."""
    if date is not None:
        return f"@{date.isoformat()} 12:00:00", date
    return f"+{days}d", today + dt.timedelta(days=days)


def environment(base: Mapping[str, str], lib: Path, spec: str) -> dict[str, str]:
    """`base` with the library preloaded (ahead of any preload already there) and the clock moved."""
    preload = f"{lib}:{base['LD_PRELOAD']}" if base.get("LD_PRELOAD") else str(lib)
    return {**base, "LD_PRELOAD": preload, "FAKETIME": spec, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


def probe(env: Mapping[str, str], expected: dt.date, *, python: str = sys.executable) -> None:
    """Run a child Python under `env`: it must see `expected` and sleep 50 ms in about 50 ms of real time."""
    try:
        proc = subprocess.run([python, "-c", _PROBE], env=dict(env), capture_output=True, text=True,
                              timeout=20, check=False)
    except subprocess.TimeoutExpired as err:
        raise CalendarError("a 50 ms time.sleep did not return within 20 s under libfaketime "
                            "(wolfcw/libfaketime#426: clock_nanosleep with TIMER_ABSTIME)") from err
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise CalendarError(f"a Python probe failed under libfaketime (exit {proc.returncode}): {last}")
    seen, slept = proc.stdout.split()
    if seen != expected.isoformat():
        raise CalendarError(f"the clock did not move: a process under libfaketime sees {seen}, not {expected}")
    if not 0.04 <= float(slept) < 5:
        raise CalendarError(f"time.sleep(0.05) took {slept} s of monotonic time under libfaketime")


def _version() -> str:
    return importlib.metadata.version("libfaketime")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Run a command with the wall clock moved (libfaketime).")
    when = parser.add_mutually_exclusive_group()
    when.add_argument("--date", type=dt.date.fromisoformat, help="the date the clock starts at (12:00 UTC)")
    when.add_argument("--days", type=int, default=DEFAULT_DAYS, help=f"days ahead of today (default {DEFAULT_DAYS})")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        print(f"{PROG}: no command given; usage: {PROG} [--date YYYY-MM-DD | --days N] -- COMMAND...",
              file=sys.stderr)
        return 2
    spec, shown = faketime_spec(dt.datetime.now(dt.UTC).date(), date=args.date, days=args.days)
    try:
        lib = library()
        env = environment(os.environ, lib, spec)
        probe(env, shown)
    except CalendarError as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return 2
    print(f"{PROG}: clock at {shown} (FAKETIME={spec}) under libfaketime {_version()} ({lib})", flush=True)
    return subprocess.run(command, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
