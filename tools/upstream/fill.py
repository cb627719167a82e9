"""`make upstream`: fill the cache with every pinned file, verified by sha256.

A file already in the cache with the pinned sha256 stays. Any other is taken from the local copy
(`<shared>/upstream/<file>`) where that exists, else downloaded from its pinned commit. Either way its
bytes must hash to the pin, or it is refused with the file named and nothing is written for it. Files in
the cache that no pin names are removed, so a reader that lists a folder sees exactly the pinned set.

Offline (no local copy, download base unreachable) the first download that finds no server marks the base
unreachable and the remaining downloads are not tried: `make upstream` fails in seconds, not after one
timeout per file (the command line then prints what it tried and the two ways out, tools/upstream/__main__.py).
"""

from __future__ import annotations

import os
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tools.upstream.lock import Pin, sha256_of

_MAX_FILE = 16 * 1024 * 1024
_LOOPBACK = ("http://127.0.0.1", "http://localhost", "http://[::1]")


class FetchError(Exception):
    """A file could not be read from its source; the message names the URL or path."""


class UnreachableError(FetchError):
    """No server answered (DNS, refused connection, timeout): the next download from that base would not either."""


def get(url: str, timeout_s: float) -> bytes:
    """GET one https URL (plain http only on loopback, for tests); FetchError on any failure."""
    if not url.startswith(("https://", *_LOOPBACK)):
        raise FetchError(f"{url}: only https URLs (or plain http on loopback) are fetched")
    # Loopback (tests) never goes through a proxy from the environment.
    handlers = [urllib.request.ProxyHandler({})] if url.startswith("http://") else []
    request = urllib.request.Request(url, headers={"User-Agent": "gpu-platform/upstream"})
    try:
        with urllib.request.build_opener(*handlers).open(request, timeout=timeout_s) as resp:
            body: bytes = resp.read(_MAX_FILE + 1)
    except urllib.error.HTTPError as err:
        raise FetchError(f"GET {url}: HTTP {err.code}") from err
    except (urllib.error.URLError, TimeoutError, OSError) as err:
        raise UnreachableError(f"GET {url}: no answer within {timeout_s:g}s or unreachable ({err})") from err
    if len(body) > _MAX_FILE:
        raise FetchError(f"GET {url}: larger than {_MAX_FILE} bytes")
    return body


@dataclass(frozen=True)
class Outcome:
    """What happened to one pin: kept, copied (from the local copy), downloaded, refused (with why), or, for an
    optional pin that could not be fetched, unavailable (with why).

    `cause` of a refusal: "sha256" (wrong bytes), "http" (the server answered with an error), "unreachable" (no
    server answered) or "not-tried" (an earlier download found the base unreachable).
    """

    pin: Pin
    action: str
    problem: str = ""
    cause: str = ""


def write_verified(cache: Path, pin: Pin, data: bytes, origin: str) -> str:
    """Write `data` as the pin's cache file when it hashes to the pin; else return the refusal (nothing written)."""
    got = sha256_of(data)
    if got != pin.sha256:
        return (f"{pin.file}: sha256 {got} from {origin} is not the pinned {pin.sha256} "
                f"({pin.repository}@{pin.commit[:12]}:{pin.path}); refusing it")
    target = cache / pin.file
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    Path(tmp).replace(target)
    return ""


def _one(pin: Pin, cache: Path, local: Path | None, base: str, *, timeout_s: float,
         unreachable: threading.Event) -> Outcome:
    target = cache / pin.file
    if target.is_file() and sha256_of(target.read_bytes()) == pin.sha256:
        return Outcome(pin, "kept")
    if local is not None and (local / pin.file).is_file():
        origin, action = str(local / pin.file), "copied"
        data = (local / pin.file).read_bytes()
    else:
        origin, action = pin.url(base), "downloaded"
        if unreachable.is_set():
            return Outcome(pin, "refused", f"{pin.file}: not tried, {base} did not answer", "not-tried")
        try:
            data = get(origin, timeout_s)
        except UnreachableError as err:
            unreachable.set()
            return Outcome(pin, "refused", f"{pin.file}: {err}", "unreachable")
        except FetchError as err:
            return Outcome(pin, "refused", f"{pin.file}: {err}", "http")
    problem = write_verified(cache, pin, data, origin)
    return Outcome(pin, "refused" if problem else action, problem, "sha256" if problem else "")


def _optional(outcome: Outcome) -> Outcome:
    """An optional pin that could not be fetched is unavailable, not refused; wrong bytes stay a refusal."""
    if outcome.action == "refused" and outcome.pin.optional and outcome.cause != "sha256":
        return Outcome(outcome.pin, "unavailable", outcome.problem, outcome.cause)
    return outcome


def fill(pins: Sequence[Pin], cache: Path, *, local: Path | None, base: str, timeout_s: float = 30.0,
         workers: int = 8) -> list[Outcome]:
    """Bring the cache to exactly the pinned files; one Outcome per pin, in pin order."""
    cache.mkdir(parents=True, exist_ok=True)
    unreachable = threading.Event()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(
            lambda p: _optional(_one(p, cache, local, base, timeout_s=timeout_s, unreachable=unreachable)), pins))
    pinned = {cache / p.file for p in pins}
    for path in sorted(cache.rglob("*"), reverse=True):
        if path.is_file() and path not in pinned:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return outcomes


def missing(pins: Sequence[Pin], cache: Path) -> list[str]:
    """The pinned files the cache lacks or holds with other bytes (what `verify` reports); an absent optional pin
    is not missing (its tests skip with its reason)."""
    out = []
    for pin in pins:
        path = cache / pin.file
        if not path.is_file():
            if pin.optional:
                continue
            out.append(f"{pin.file}: absent from {cache}")
        elif sha256_of(path.read_bytes()) != pin.sha256:
            out.append(f"{pin.file}: sha256 in {cache} is not the pinned {pin.sha256}")
    return out
