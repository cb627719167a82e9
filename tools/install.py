"""`python tools/install.py -r requirements.txt`: `pip install` with progress of ours (the Makefile's installs).

pip's own output (each package it collects, downloads and builds) goes to `<venv>/pip-install.log`; the terminal
gets a few lines of ours on stderr: how many requirements the files pin, a line every `EVERY` packages collected
with the latest name, the install step with the number of packages, and the time it took. A failed install
prints the log's last lines and its path, and exits with pip's status. Standard library only: it runs before
anything is installed.

pip's lines it reads (pip/_internal/operations/prepare.py and req/__init__.py, pip 24-26): `Collecting <req>`,
`Requirement already satisfied: <req>`, `Installing collected packages: a, b, ...`, `Successfully installed ...`.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

EVERY = 10
_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==")
_COLLECTING = re.compile(r"^Collecting (\S+)")
_SATISFIED = re.compile(r"^Requirement already satisfied: (\S+)")
_INSTALLING = "Installing collected packages: "


def pinned(files: Sequence[Path]) -> int:
    """How many distributions the requirement files pin, `-r` includes followed once each."""
    seen: set[Path] = set()
    names: set[str] = set()

    def read(path: Path) -> None:
        if path in seen or not path.is_file():
            return
        seen.add(path)
        for text in path.read_text(encoding="utf-8").splitlines():
            line = text.split("#", 1)[0].strip()
            if line.startswith("-r "):
                read(path.parent / line[3:].strip())
            elif (match := _PIN.match(line)) is not None:
                names.add(match[1].lower())

    for file in files:
        read(file.resolve())
    return len(names)


def progress(lines: Iterable[str], total: int) -> Iterator[str]:
    """Our lines for pip's: a count every EVERY packages collected, the install step, what was there already."""
    collected = satisfied = 0
    for raw in lines:
        line = raw.strip()
        if (match := _COLLECTING.match(line)) is not None:
            collected += 1
            if collected % EVERY == 0:
                yield f"== {collected} packages collected ({total} pinned, the rest their dependencies): {match[1]}"
        elif _SATISFIED.match(line):
            satisfied += 1
        elif line.startswith(_INSTALLING):
            count = len([p for p in line[len(_INSTALLING):].split(",") if p.strip()])
            yield f"== installing {count} packages ({collected} collected, {satisfied} already there)"


def main(argv: Sequence[str]) -> int:
    files = [Path(argv[i + 1]) for i, arg in enumerate(argv[:-1]) if arg == "-r"]
    log = Path(sys.prefix) / "pip-install.log"
    total = pinned(files)
    print(f"== pip install {' '.join(argv)}: {total} pinned requirements; pip's own output: {log}", file=sys.stderr)
    start = time.monotonic()
    with log.open("w", encoding="utf-8") as record:
        proc = subprocess.Popen([sys.executable, "-m", "pip", "install", "--disable-pip-version-check",
                                 "--progress-bar", "off", *argv], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None

        def tee() -> Iterator[str]:
            for line in proc.stdout:  # type: ignore[union-attr]
                record.write(line)
                record.flush()
                yield line

        for line in progress(tee(), total):
            print(line, file=sys.stderr, flush=True)
        status = proc.wait()
    if status != 0:
        tail = log.read_text(encoding="utf-8").splitlines()[-20:]
        print("\n".join(tail), file=sys.stderr)
        print(f"== pip install failed (exit {status}); the whole output: {log}", file=sys.stderr)
        return status
    print(f"== done in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
