"""`python -m tools.upstream [fill|verify]`: the cache of pinned upstream files (`make upstream` runs `fill`).

    python -m tools.upstream fill [--lock FILE] [--cache DIR] [--shared DIR] [--base-url URL] [--download]
                                  [--if-reachable]
    python -m tools.upstream verify [--lock FILE] [--cache DIR]

`fill` takes each file from `<shared>/upstream/` when that folder exists (GPU_PLATFORM_SHARED, default
../shared), else downloads it from its pinned commit (GPU_PLATFORM_UPSTREAM_URL, default
https://raw.githubusercontent.com); `--download` skips the local copy. Every file is checked against its
sha256. Exit 0: the cache holds exactly the pinned files; 1: a file was refused or is missing (each one
named on stderr); 2: bad arguments or an unreadable lockfile. An optional pin that could not be fetched is
named on one `note:` line and does not fail the fill.

`fill --if-reachable` is the first step of `make test` and `make preview`: the same verified fill, but where the
files cannot be fetched (no local copy, no server answering) it prints one line saying what it tried and exits
0, so the command runs on without the cache (its tests skip with the reason, the preview says what it did not
check). Files with other bytes than pinned are still refused, and still exit 1. An optional pin not in the
cache yet is not tried there (`make upstream` tries it), so no run waits on a download it can do without.
Nor does a run wait on a server that did not answer a moment ago: when no file could be fetched, the fill writes
`<cache>.unreachable` (the local copy and the base it tried, and when), and for the next `UNREACHABLE_TTL_S` a
`fill --if-reachable` with the same sources prints its one line from that record without trying again (a DNS
lookup that fails takes about 2 s here, on every `make preview`). `make upstream` always tries, and a fill that
fetches anything removes the record.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from tools.upstream.fill import Outcome, fill, missing
from tools.upstream.lock import LOCK_PATH, LockError, cache_dir, load, raw_base, shared_dir

PROG = "gpu-platform upstream"  # .venv/bin/gpu-platform upstream (tools/cli.py)
UNREACHABLE_TTL_S = 3600.0


def _record_path(cache: Path) -> Path:
    return cache.with_name(cache.name + ".unreachable")


def remembered_line(cache: Path, *, local: Path | None, base: str, now: float) -> str | None:
    """The line of a fill that found no source less than `UNREACHABLE_TTL_S` ago with the same sources, if any."""
    try:
        record = json.loads(_record_path(cache).read_text(encoding="utf-8"))
        fresh = now - float(record["at"]) < UNREACHABLE_TTL_S
        same = record["local"] == (str(local) if local else None) and record["base"] == base
        line = str(record["line"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not (fresh and same):
        return None
    retry = time.strftime("%H:%M UTC", time.gmtime(float(record["at"]) + UNREACHABLE_TTL_S))
    return f"{line} (as found at {time.strftime('%H:%M UTC', time.gmtime(float(record['at'])))}; not tried again " \
           f"until {retry}: `make upstream` tries now)"


def _remember(cache: Path, *, local: Path | None, base: str, line: str, now: float) -> None:
    record = {"at": now, "local": str(local) if local else None, "base": base, "line": line}
    with contextlib.suppress(OSError):  # nothing remembered: the next run tries again
        _record_path(cache).write_text(json.dumps(record), encoding="utf-8")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Fill or verify the cache of pinned upstream files.")
    parser.add_argument("command", nargs="?", choices=("fill", "verify"), default="fill")
    parser.add_argument("--lock", type=Path, default=LOCK_PATH, help="the lockfile (default upstream.lock.json)")
    parser.add_argument("--cache", type=Path, default=None, help="the cache (default $GPU_PLATFORM_UPSTREAM_CACHE "
                        "or .upstream-cache)")
    parser.add_argument("--shared", type=Path, default=None, help="a folder holding upstream/ to copy from "
                        "(default $GPU_PLATFORM_SHARED or ../shared)")
    parser.add_argument("--base-url", default=None, help="download base (default $GPU_PLATFORM_UPSTREAM_URL or "
                        "https://raw.githubusercontent.com)")
    parser.add_argument("--download", action="store_true", help="download even where a local copy exists")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds allowed for each download")
    parser.add_argument("--if-reachable", action="store_true", help="where the files cannot be fetched, say so "
                        "in one line and exit 0 (make test and make preview run on without the cache)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        pins = load(args.lock)
    except LockError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    cache = args.cache or cache_dir()
    if args.command == "verify":
        problems = missing(pins, cache)
        for line in problems:
            print(f"error: {line}; run `make upstream`", file=sys.stderr)
        if not problems:
            print(f"{cache}: all {len(pins)} pinned files present and verified")
        return 1 if problems else 0
    shared = args.shared or shared_dir()
    local = None if args.download or not (shared / "upstream").is_dir() else shared / "upstream"
    base = args.base_url or raw_base()
    now = time.time()
    if args.if_reachable:  # an optional pin not cached yet is left to `make upstream` (no wait on each run)
        pins = [p for p in pins if not p.optional or (cache / p.file).is_file()]
        remembered = remembered_line(cache, local=local, base=base, now=now)
        if remembered is not None and missing(pins, cache):
            print(remembered, file=sys.stderr)
            return 0
    outcomes = fill(pins, cache, local=local, base=base, timeout_s=args.timeout)
    counts = Counter(o.action for o in outcomes)
    if args.if_reachable and counts["refused"] and all(o.cause != "sha256" for o in outcomes):
        line = unreachable_line(outcomes, cache=cache, shared=shared, local=local, base=base)
        if not counts["copied"] + counts["downloaded"]:
            _remember(cache, local=local, base=base, line=line, now=now)
        print(line, file=sys.stderr)
        return 0
    if counts["copied"] + counts["downloaded"] or not counts["refused"]:
        _record_path(cache).unlink(missing_ok=True)
    size = sum(o.pin.size for o in outcomes if o.action != "refused")
    for line in refusal_lines(outcomes, shared=shared, local=local, base=base):
        print(line, file=sys.stderr)
    unavailable = [o for o in outcomes if o.action == "unavailable"]
    if not counts["refused"]:  # offline, the refusal lines already say why
        for o in unavailable[:_NAMED]:
            print(f"note: optional {o.pin.file} not fetched ({o.pin.optional}); the tests that read it skip: "
                  f"{o.problem}", file=sys.stderr)
        if len(unavailable) > _NAMED:  # the CEL library's sources and tests: 32 pins, one line
            print(f"note: {len(unavailable) - _NAMED} more optional pins not fetched; the tests that read them skip",
                  file=sys.stderr)
    origin = f"copied from {local}" if local else f"downloaded from {base}"
    print(f"{cache}: {len(pins)} pinned files ({size / 1e6:.1f} MB): {counts['kept']} already verified, "
          f"{counts['copied'] + counts['downloaded']} {origin}, {counts['refused']} refused"
          + (f", {counts['unavailable']} optional unavailable" if counts["unavailable"] else ""))
    return 1 if counts["refused"] else 0


# Refusals named one by one up to this many; beyond, the first one and a count (`make upstream` offline would
# otherwise print one line per pinned file: 388).
_NAMED = 2
_CAUSES = {"sha256": "with other bytes than pinned", "http": "answered with an HTTP error",
           "unreachable": "found no server", "not-tried": "not tried once the base did not answer"}


def unreachable_line(outcomes: Sequence[Outcome], *, cache: Path, shared: Path, local: Path | None,
                     base: str) -> str:
    """The one line of `fill --if-reachable` when files could not be fetched: how many, from where it tried, and
    what that leaves unchecked."""
    refused = sum(o.action == "refused" for o in outcomes)
    copy = f"{local} lacks them" if local is not None else f"no local copy at {shared / 'upstream'}"
    fetch = next((o for o in outcomes if o.cause in {"unreachable", "http"}), None)
    answer = ("no server answered" if fetch is None or fetch.cause == "unreachable"
              else "the server refused them")
    return (f"upstream cache: {refused} of {len(outcomes)} pinned files not fetched ({copy}; {base}: {answer}); "
            f"running on without them (what needs them skips or is not checked); `make upstream` to retry, "
            f"or set GPU_PLATFORM_SHARED / GPU_PLATFORM_UPSTREAM_URL")


def refusal_lines(outcomes: Sequence[Outcome], *, shared: Path, local: Path | None, base: str) -> list[str]:
    """At most four stderr lines: the refusals (two named, then a count) and, when a file could not be fetched,
    where it was looked for and the two ways out (GPU_PLATFORM_SHARED, GPU_PLATFORM_UPSTREAM_URL)."""
    refused = [o for o in outcomes if o.action == "refused"]
    lines = [f"error: {o.problem}" for o in refused[:_NAMED]]
    if len(refused) > _NAMED:
        causes = Counter(o.cause for o in refused[1:])
        lines = [f"error: {refused[0].problem}",
                 f"error: {len(refused) - 1} more of the {len(outcomes)} pinned files refused ("
                 + ", ".join(f"{n} {_CAUSES[cause]}" for cause, n in sorted(causes.items())) + ")"]
    fetch = [o for o in refused if o.cause in {"unreachable", "http", "not-tried"}]
    if not fetch:
        return lines
    copy = f"{local} lacks them" if local is not None else f"{shared / 'upstream'} does not exist"
    # "not-tried" only follows an unreachable base, which an optional pin (then unavailable) may have found first
    answer = ("no server answered" if any(o.cause in {"unreachable", "not-tried"} for o in outcomes)
              else "the server refused them")
    lines.append(f"error: tried the local copy (GPU_PLATFORM_SHARED): {copy}; then downloads from {base} "
                 f"(GPU_PLATFORM_UPSTREAM_URL): {answer}")
    lines.append("hint: point GPU_PLATFORM_SHARED at a folder whose upstream/ holds the pinned files, or "
                 "GPU_PLATFORM_UPSTREAM_URL at a reachable mirror of raw.githubusercontent.com; then run "
                 "`make upstream` again")
    return lines


if __name__ == "__main__":
    sys.exit(main())
