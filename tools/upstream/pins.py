"""Move the NVIDIA pins forward: what `python -m tools.matrix refresh --fetch --write` does to the lockfile.

The NVIDIA files follow a branch, not a release: the GPU Operator docs pages (NVIDIA/cloud-native-docs,
`gpu-operator/*.rst`) and the driver container CI file (NVIDIA/gpu-driver-container, `.common-ci.yml`).
For each, GitHub's commits API (`GET /repos/{owner}/{repo}/commits?path=...`, newest first; docs:
https://docs.github.com/en/rest/commits/commits#list-commits) lists the commits that touched it. Every
commit newer than the newest one pinned becomes a new history pin `<UTC commit date>-<short sha>.<ext>`,
and the "current" copy moves to the newest commit when its bytes changed. Each new file is downloaded
from its commit, hashed into the pin and written to the cache. The other pins are release tags of the
charts and CRDs the components install; they move by hand with the component version (docs/ci-cd.md).
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from tools.upstream.fill import FetchError, get, write_verified
from tools.upstream.lock import Pin, sha256_of

API_BASE = "https://api.github.com"
_HISTORY_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}-(?P<short>[0-9a-f]+)\.\w+$")
_COMMITS_PAGE = 100


@dataclass(frozen=True)
class Tracked:
    """An upstream file that follows a branch: its newest copy and/or every committed version are pinned."""

    repository: str
    path: str  # in the repository
    current: str | None  # cache file holding the newest version
    history: str | None  # cache folder holding every committed version


TRACKED = (
    Tracked("NVIDIA/cloud-native-docs", "gpu-operator/life-cycle-policy.rst",
            "nvidia/cloud-native-docs/life-cycle-policy.rst", "nvidia/cloud-native-docs/life-cycle-policy-history"),
    Tracked("NVIDIA/cloud-native-docs", "gpu-operator/platform-support.rst",
            "nvidia/cloud-native-docs/platform-support.rst", "nvidia/cloud-native-docs/platform-support-history"),
    Tracked("NVIDIA/cloud-native-docs", "gpu-operator/release-notes.rst",
            "nvidia/cloud-native-docs/release-notes.rst", None),
    Tracked("NVIDIA/gpu-driver-container", ".common-ci.yml", None, "nvidia/gpu-driver-container-ci-history"),
)


class PinError(Exception):
    """The commits API or a download failed; the message names the URL."""


def commits_touching(api: str, tracked: Tracked, timeout_s: float) -> list[tuple[str, str]]:
    """(full sha, UTC commit date YYYY-MM-DD) of the newest commits that touched the file, newest first."""
    query = urllib.parse.urlencode({"path": tracked.path, "per_page": _COMMITS_PAGE})
    url = f"{api.rstrip('/')}/repos/{tracked.repository}/commits?{query}"
    try:
        items = json.loads(get(url, timeout_s))
        return [(str(item["sha"]), str(item["commit"]["committer"]["date"])[:10]) for item in items]
    except FetchError as err:
        raise PinError(str(err)) from err
    except (ValueError, KeyError, TypeError) as err:
        raise PinError(f"GET {url}: not a list of commits with sha and commit.committer.date ({err})") from err


def _download(pin: Pin, raw: str, timeout_s: float) -> bytes:
    try:
        return get(pin.url(raw), timeout_s)
    except FetchError as err:
        raise PinError(str(err)) from err


def _short_length(pins: Sequence[Pin], folder: str) -> int:
    lengths = {len(m["short"]) for p in pins if str(PurePosixPath(p.file).parent) == folder
               for m in [_HISTORY_NAME.match(PurePosixPath(p.file).name)] if m}
    return max(lengths, default=8)


def move(pins: Sequence[Pin], *, cache: Path, api: str = API_BASE, raw: str, timeout_s: float = 20.0,
         tracked: Sequence[Tracked] = TRACKED) -> tuple[list[Pin], list[str]]:
    """The pins with the tracked files moved to their newest commits, and one line per pin added or moved."""
    out = list(pins)
    said: list[str] = []
    for item in tracked:
        commits = commits_touching(api, item, timeout_s)
        if not commits:
            continue
        known = {p.commit for p in out if p.repository == item.repository and p.path == item.path}
        if item.history is not None:
            fresh = []
            for sha, day in commits:
                if sha in known:
                    break
                fresh.append((sha, day))
            suffix = PurePosixPath(item.path).suffix
            width = _short_length(out, item.history)
            for sha, day in reversed(fresh):
                draft = Pin(f"{item.history}/{day}-{sha[:width]}{suffix}", item.repository, sha, item.path, "", 0)
                data = _download(draft, raw, timeout_s)
                pin = replace(draft, sha256=sha256_of(data), size=len(data))
                write_verified(cache, pin, data, pin.url(raw))
                out.append(pin)
                said.append(f"added {pin.file} ({item.repository}@{sha[:12]})")
        if item.current is not None:
            index = next((i for i, p in enumerate(out) if p.file == item.current), None)
            newest = commits[0][0]
            if index is None or out[index].commit == newest:
                continue
            draft = replace(out[index], commit=newest)
            data = _download(draft, raw, timeout_s)
            if sha256_of(data) == out[index].sha256:
                continue  # the pinned commit serves the same bytes: nothing to review
            pin = replace(draft, sha256=sha256_of(data), size=len(data))
            write_verified(cache, pin, data, pin.url(raw))
            said.append(f"moved {pin.file} from {out[index].commit[:12]} to {newest[:12]}")
            out[index] = pin
    return out, said
