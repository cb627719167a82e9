"""The lockfile `upstream.lock.json` and where the upstream files live on this machine.

Each pin names one upstream file by what the tests and `tools.matrix refresh` read it as (`file`, a path
inside the cache), and by where it comes from: the GitHub `repository`, the full `commit` and the `path`
there, with the `sha256` and `size` of its bytes. The files themselves are others' text and are never
committed; `make upstream` (tools.upstream.fill) copies or downloads them into the git-ignored cache.

Places, each overridable by the environment:
- the cache: `GPU_PLATFORM_UPSTREAM_CACHE`, default `.upstream-cache/` in the repository;
- a local copy to take the files from: `GPU_PLATFORM_SHARED` (a folder holding `upstream/`), default
  `../shared` next to the repository, as on this project's machines;
- the download base: `GPU_PLATFORM_UPSTREAM_URL`, default https://raw.githubusercontent.com
  (`<base>/<repository>/<commit>/<path>`).

A pin may carry `optional`: why it may be absent (a file the local copy does not hold, fetched only where the
download base answers). `make upstream` then reports it as unavailable instead of failing, and the tests that
read it skip with that reason, under CI=true too (tests/shared.py); every other pin stays required.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LOCK_PATH = REPO / "upstream.lock.json"
DEFAULT_CACHE = REPO / ".upstream-cache"
RAW_BASE = "https://raw.githubusercontent.com"
LOCK_VERSION = 1
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_REPOSITORY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


_KEYS = {"file", "repository", "commit", "path", "sha256", "size"}


class LockError(Exception):
    """The lockfile is unreadable or a pin is malformed; the message names the file and the pin."""


@dataclass(frozen=True)
class Pin:
    """One upstream file: where the cache keeps it, where it comes from, and what its bytes hash to."""

    file: str
    repository: str
    commit: str
    path: str
    sha256: str
    size: int
    optional: str = ""

    def url(self, base: str = RAW_BASE) -> str:
        return f"{base.rstrip('/')}/{self.repository}/{self.commit}/{self.path}"

    def source(self) -> str:
        """The file's upstream address, for messages and docs."""
        return f"https://github.com/{self.repository}/blob/{self.commit}/{self.path}"


def cache_dir() -> Path:
    return Path(os.environ.get("GPU_PLATFORM_UPSTREAM_CACHE") or DEFAULT_CACHE)


def shared_dir() -> Path:
    """The local copy of the shared contracts (`../shared` unless GPU_PLATFORM_SHARED says otherwise)."""
    return Path(os.environ.get("GPU_PLATFORM_SHARED") or REPO.parent / "shared")


def raw_base() -> str:
    return os.environ.get("GPU_PLATFORM_UPSTREAM_URL") or RAW_BASE


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _pin(raw: object, where: str) -> Pin:
    if not isinstance(raw, dict) or not _KEYS <= set(raw) <= _KEYS | {"optional"}:
        raise LockError(f"{where}: a pin has exactly file, repository, commit, path, sha256, size "
                        "(and optional, the reason it may be absent)")
    pin = Pin(**raw)
    problems = [
        ("file", isinstance(pin.file, str) and bool(pin.file) and not pin.file.startswith("/") and ".." not in
         pin.file.split("/")),
        ("repository", isinstance(pin.repository, str) and bool(_REPOSITORY.match(pin.repository))),
        ("commit", isinstance(pin.commit, str) and bool(_COMMIT.match(pin.commit))),
        ("path", isinstance(pin.path, str) and bool(pin.path) and not pin.path.startswith("/")),
        ("sha256", isinstance(pin.sha256, str) and bool(_SHA256.match(pin.sha256))),
        ("size", isinstance(pin.size, int) and pin.size >= 0),
        ("optional", isinstance(pin.optional, str) and ("optional" not in raw or bool(pin.optional.strip()))),
    ]
    bad = [name for name, ok in problems if not ok]
    if bad:
        raise LockError(f"{where}: pin {raw.get('file')!r} has a malformed {', '.join(bad)} "
                        "(a relative file, owner/name, a 40-hex commit, a 64-hex sha256, a size in bytes)")
    return pin


def load(path: Path = LOCK_PATH) -> list[Pin]:
    """Every pin of the lockfile, in file order; LockError naming the file when it is unreadable."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise LockError(f"{path}: cannot read the upstream lockfile ({err})") from err
    if not isinstance(raw, dict) or raw.get("version") != LOCK_VERSION or not isinstance(raw.get("files"), list):
        raise LockError(f"{path}: expected {{\"version\": {LOCK_VERSION}, \"files\": [...]}}")
    pins = [_pin(item, f"{path}: files[{i}]") for i, item in enumerate(raw["files"])]
    seen: set[str] = set()
    for pin in pins:
        if pin.file in seen:
            raise LockError(f"{path}: {pin.file} is pinned twice")
        seen.add(pin.file)
    return pins


_HEADER = (
    "Upstream files the tests and `python -m tools.matrix refresh` read. `make upstream` fills .upstream-cache/ "
    "with them (docs/ci-cd.md, \"Upstream reference data\"); the files are never committed. "
    "`python -m tools.matrix refresh --fetch --write` moves the NVIDIA pins forward."
)


def dump(pins: Iterable[Pin], path: Path = LOCK_PATH) -> None:
    """Write the lockfile: sorted by file, one pin per line, so a moved pin is a one-line diff."""
    ordered = sorted(pins, key=lambda p: p.file)
    lines = [json.dumps({k: v for k, v in asdict(pin).items() if k != "optional" or v}, separators=(", ", ": "))
             for pin in ordered]
    body = ",\n    ".join(lines)
    text = (f'{{\n  "comment": {json.dumps(_HEADER)},\n  "version": {LOCK_VERSION},\n'
            f'  "files": [\n    {body}\n  ]\n}}\n')
    path.write_text(text, encoding="utf-8")
