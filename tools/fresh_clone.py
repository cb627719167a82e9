"""`python -m tools.fresh_clone [-- MAKE-TARGET...]`: the README's commands on a fresh clone, offline.

A copy of the checkout (what `git ls-files` lists, with the working tree's bytes: what a clone of this commit
holds) gets the repository's `.venv` and nothing else: no `.upstream-cache/`, GPU_PLATFORM_SHARED at a folder
that does not exist, GPU_PLATFORM_UPSTREAM_URL at a loopback port where nothing listens, CI unset. There it runs
`make test` (or the targets given), which must pass with the tests that need the cache skipped for that reason.
`make test-fresh-clone` runs it over the whole suite (the weekly calendar workflow does); tests/test_front_door.py
runs `make preview` and the tests that read the cache the same way in every test run.

Exit: the command's own status.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def closed_port() -> int:
    """A loopback port where nothing listens (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fresh_clone(dest: Path, repo: Path = REPO) -> Path:
    """The checkout's files (tracked and untracked-not-ignored, as the working tree holds them) in `dest`, with
    the repository's .venv linked in."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=repo,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = repo / name
        if source.is_file() and not source.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    (dest / ".venv").symlink_to(repo / ".venv")
    return dest


def offline_env(scratch: Path, environ: Mapping[str, str] = os.environ, *,
                shared: Path | None = None) -> dict[str, str]:
    """The environment of a new user's shell: none of the project's variables, no CI, no make or pytest state;
    the local copy at `shared` (default: a folder that does not exist) and a download base that does not answer."""
    env = {k: v for k, v in environ.items()
           if not k.startswith(("GPU_PLATFORM_", "PYTEST_", "MAKE")) and k not in {"CI", "MFLAGS"}}
    env.update(GPU_PLATFORM_SHARED=str(shared or scratch / "no-shared"),
               GPU_PLATFORM_UPSTREAM_URL=f"http://127.0.0.1:{closed_port()}")
    return env


def make_command(*targets: str) -> list[str]:
    """make in the clone; -o: the .venv stamps are the repository's own (it is shared), so nothing is installed."""
    return ["make", "--no-print-directory", "-o", ".venv/.runtime-installed", "-o", ".venv/.requirements-installed",
            *targets]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.fresh_clone", description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", default=["test"], help="make targets to run in the clone (default test)")
    args = parser.parse_args(argv)
    if not (REPO / ".venv" / "bin" / "python").exists():
        print(f"error: {REPO / '.venv'} is missing; run `make venv` first", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gpu-platform-fresh-") as scratch:
        clone = fresh_clone(Path(scratch) / "clone")
        print(f"fresh clone at {clone}: no .upstream-cache, no shared copy, downloads to a closed port; "
              f"make {' '.join(args.targets)}", flush=True)
        return subprocess.run(make_command(*args.targets), cwd=clone, env=offline_env(Path(scratch)),
                              check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
