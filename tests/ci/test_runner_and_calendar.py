"""The deploy runner's prerequisite check (.ci/check-runner) and the calendar-proof run (tools/calendar_run.py).

Each is run for real: check-runner on a PATH of stand-ins, the calendar run under the pinned package's prebuilt
libfaketime at a fixed date (never the real one), and each is shown to refuse what it must refuse.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared import REPO
from tools import calendar_run

CHECK_RUNNER = REPO / ".ci" / "check-runner"
PREREQUISITES = ("gh", "make", "aws")


def _path_with(tmp_path: Path, programs: list[str]) -> str:
    """A PATH holding stand-ins for `programs`, a python3 that can create a venv, and what bash itself needs."""
    stub = tmp_path / "bin"
    stub.mkdir()
    for name in programs:
        (stub / name).write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
        (stub / name).chmod(0o755)
    (stub / "python3").symlink_to(sys.executable)
    return str(stub)


def _check_runner(path: str) -> subprocess.CompletedProcess[str]:
    bash = shutil.which("bash")
    assert bash is not None
    return subprocess.run([bash, str(CHECK_RUNNER)], env={**os.environ, "PATH": path}, capture_output=True,
                          text=True, check=False)


def test_check_runner_passes_when_every_prerequisite_is_there(tmp_path: Path) -> None:
    proc = _check_runner(_path_with(tmp_path, list(PREREQUISITES)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "runner prerequisites present: gh, make, aws, python3 with venv"


@pytest.mark.parametrize("absent", PREREQUISITES)
def test_check_runner_names_each_missing_program_on_one_line(tmp_path: Path, absent: str) -> None:
    proc = _check_runner(_path_with(tmp_path, [p for p in PREREQUISITES if p != absent]))
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [line for line in proc.stderr.splitlines() if absent in line]
    assert proc.stderr.startswith(f"::error::runner prerequisite missing: {absent} is not on PATH; install ")


def test_check_runner_refuses_a_python_without_venv(tmp_path: Path) -> None:
    path = _path_with(tmp_path, list(PREREQUISITES))
    python = Path(path) / "python3"
    python.unlink()
    python.write_text("#!/bin/sh\n[ \"$1\" = -c ] && exit 1\nexit 0\n", encoding="utf-8")
    python.chmod(0o755)
    proc = _check_runner(path)
    assert proc.returncode == 1
    assert "cannot create a virtualenv (no venv or ensurepip module)" in proc.stderr
    assert "python3-venv" in proc.stderr


# --- the calendar-proof run ---------------------------------------------------------------------------------

FIXED = dt.date(2027, 12, 31)
# The wheel ships one prebuilt library, for Linux x86-64 (the CI runners' platform).
needs_library = pytest.mark.skipif(sys.platform != "linux" or platform.machine() != "x86_64",
                                   reason="libfaketime 3.0.1 ships libfaketime.so.1 for Linux x86-64 only")


def test_the_spec_is_an_offset_from_today_or_a_fixed_start() -> None:
    today = dt.date(2026, 12, 1)
    assert calendar_run.faketime_spec(today, date=None, days=365) == ("+365d", dt.date(2027, 12, 1))
    assert calendar_run.faketime_spec(today, date=FIXED, days=365) == ("@2027-12-31 12:00:00", FIXED)


def test_the_library_is_preloaded_ahead_of_an_existing_preload_with_the_monotonic_clock_real() -> None:
    env = calendar_run.environment({"LD_PRELOAD": "/x/other.so", "KEEP": "1"}, Path("/lib/ft.so.1"), "+365d")
    assert env == {"LD_PRELOAD": "/lib/ft.so.1:/x/other.so", "KEEP": "1", "FAKETIME": "+365d",
                   "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


@needs_library
def test_the_pinned_library_moves_the_clock_and_keeps_sleep_working() -> None:
    lib = calendar_run.library()
    assert lib.name == "libfaketime.so.1" and lib.is_file()
    spec, shown = calendar_run.faketime_spec(dt.date(2026, 12, 1), date=FIXED, days=365)
    calendar_run.probe(calendar_run.environment(os.environ, lib, spec), shown)  # raises CalendarError otherwise


def test_the_probe_refuses_a_clock_that_did_not_move() -> None:
    with pytest.raises(calendar_run.CalendarError, match="the clock did not move: a process under libfaketime sees "):
        calendar_run.probe({k: v for k, v in os.environ.items() if k not in {"LD_PRELOAD", "FAKETIME"}}, FIXED)


def test_the_probe_refuses_a_sleep_that_fails(tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'OSError: [Errno 22] Invalid argument' >&2\nexit 1\n", encoding="utf-8")
    python.chmod(0o755)
    with pytest.raises(calendar_run.CalendarError, match=r"probe failed under libfaketime \(exit 1\): OSError"):
        calendar_run.probe(dict(os.environ), FIXED, python=str(python))


@needs_library
def test_the_command_runs_at_the_moved_date_and_its_status_comes_back() -> None:
    code = "import datetime, sys; sys.exit(0 if datetime.date.today() == datetime.date(2027, 12, 31) else 3)"
    proc = subprocess.run([sys.executable, "-m", "tools.calendar_run", "--date", "2027-12-31", "--",
                           sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("python -m tools.calendar_run: clock at 2027-12-31 (FAKETIME=@2027-12-31 12:00:00)")
    failing = subprocess.run([sys.executable, "-m", "tools.calendar_run", "--date", "2027-12-31", "--",
                              sys.executable, "-c", "raise SystemExit(7)"], cwd=REPO, capture_output=True,
                             text=True, check=False)
    assert failing.returncode == 7


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert calendar_run.main(["--date", "2027-12-31"]) == 2
    assert "no command given; usage: python -m tools.calendar_run" in capsys.readouterr().err


def test_the_make_target_and_the_scheduled_workflow_run_it() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "$(PY) -m tools.calendar_run $(if $(CALENDAR_DATE),--date $(CALENDAR_DATE)) -- $(MAKE)" in makefile
    calendar = (REPO / ".github" / "workflows" / "calendar.yml").read_text(encoding="utf-8")
    assert "run: make test-calendar" in calendar
    assert "libfaketime==" in (REPO / "requirements-dev.txt").read_text(encoding="utf-8")
