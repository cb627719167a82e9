"""`python -m tools.upstream [fill|verify]`: the cache of pinned upstream files (`make upstream` runs `fill`).

    python -m tools.upstream fill [--lock FILE] [--cache DIR] [--shared DIR] [--base-url URL] [--download]
    python -m tools.upstream verify [--lock FILE] [--cache DIR]

`fill` takes each file from `<shared>/upstream/` when that folder exists (GPU_PLATFORM_SHARED, default
../shared), else downloads it from its pinned commit (GPU_PLATFORM_UPSTREAM_URL, default
https://raw.githubusercontent.com); `--download` skips the local copy. Every file is checked against its
sha256. Exit 0: the cache holds exactly the pinned files; 1: a file was refused or is missing (each one
named on stderr); 2: bad arguments or an unreadable lockfile.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from tools.upstream.fill import fill, missing
from tools.upstream.lock import LOCK_PATH, LockError, cache_dir, load, raw_base, shared_dir

PROG = "python -m tools.upstream"


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
    outcomes = fill(pins, cache, local=local, base=base, timeout_s=args.timeout)
    counts = Counter(o.action for o in outcomes)
    size = sum(o.pin.size for o in outcomes if o.action != "refused")
    for outcome in outcomes:
        if outcome.problem:
            print(f"error: {outcome.problem}", file=sys.stderr)
    origin = f"copied from {local}" if local else f"downloaded from {base}"
    print(f"{cache}: {len(pins)} pinned files ({size / 1e6:.1f} MB): {counts['kept']} already verified, "
          f"{counts['copied'] + counts['downloaded']} {origin}, {counts['refused']} refused")
    return 1 if counts["refused"] else 0


if __name__ == "__main__":
    sys.exit(main())
