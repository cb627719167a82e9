"""`make upstream` fills the cache from upstream.lock.json, verified by sha256; refresh --fetch --write moves pins.

The downloads come from a loopback HTTP server that serves the pinned files at the same paths as
raw.githubusercontent.com (`/<owner>/<repo>/<commit>/<path>`), with the bytes of the cache (which is
what CI fills first), so the test shows a clone with no ../shared filling its cache.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from tests.policies.conftest_registry import fake_server
from tests.shared import upstream
from tools.matrix.cli import main as matrix_main
from tools.upstream.__main__ import main
from tools.upstream.fill import fill, missing
from tools.upstream.lock import LOCK_PATH, LockError, Pin, cache_dir, dump, load, sha256_of

REPO = Path(__file__).resolve().parents[2]
PINS = load()
CRD = next(p for p in PINS if p.file == "crds/karpenter/karpenter.sh_nodepools.yaml")
SMALL = [CRD, *(p for p in PINS if p.file.startswith("iam/"))]
REQUIRED = [p for p in PINS if not p.optional]  # the optional pins (cel/..., pulumi/...) sort among them


def _absent_optional(pins: list[Pin]) -> list[Pin]:
    """The optional pins the cache lacks (CI, where no download base answers for them)."""
    return [p for p in pins if p.optional and not (cache_dir() / p.file).is_file()]


def _pinned_bytes(pins: list[Pin]) -> dict[str, bytes]:
    """The pinned files by their raw.githubusercontent.com path, read from the cache (fails under CI when absent);
    an optional pin the cache lacks is left out (the loopback server then answers 404 for it)."""
    absent = _absent_optional(pins)
    return {f"/{p.repository}/{p.commit}/{p.path}": upstream(p.file).read_bytes() for p in pins if p not in absent}


def _serve(files: dict[str, bytes]):
    def handle(handler):
        body = files.get(handler.path)
        handler.send_response(200 if body is not None else 404)
        handler.send_header("Content-Length", str(len(body or b"")))
        handler.end_headers()
        if body:
            handler.wfile.write(body)

    return fake_server(handle)


def _lock(tmp_path: Path, pins: list[Pin]) -> Path:
    path = tmp_path / "upstream.lock.json"
    dump(pins, path)
    return path


def test_the_lockfile_pins_every_file_once_at_a_full_commit_and_the_cache_holds_exactly_them():
    assert len(PINS) == len({p.file for p in PINS}) >= 388
    assert {p.repository for p in PINS} >= {"NVIDIA/cloud-native-docs", "NVIDIA/gpu-driver-container",
                                            "aws/karpenter-provider-aws", "NVIDIA/gpu-operator"}
    upstream()  # the cache exists (fails under CI=true otherwise)
    assert missing(PINS, cache_dir()) == []
    pinned = {p.file for p in PINS}
    optional = {p.file for p in PINS if p.optional}  # fetched only where the download base answers
    cached = {f.relative_to(cache_dir()).as_posix() for f in cache_dir().rglob("*") if f.is_file()}
    assert pinned - optional <= cached <= pinned


def test_make_upstream_downloads_every_pinned_file_from_a_loopback_server(tmp_path):
    files = _pinned_bytes(PINS)
    cache = tmp_path / "cache"
    with _serve(files) as (url, seen):
        env = {**os.environ, "GPU_PLATFORM_SHARED": str(tmp_path / "no-shared"), "GPU_PLATFORM_UPSTREAM_URL": url,
               "GPU_PLATFORM_UPSTREAM_CACHE": str(cache), "CI": "true"}
        proc = _make_upstream(env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # each one a `note:` line, not a failure; an optional pin of the same bytes as a required one (gpu-operator
    # v26.7.0's versioned values, tools/apiserver/chart_values.py) is served at the same address
    absent = [p for p in _absent_optional(PINS) if f"/{p.repository}/{p.commit}/{p.path}" not in files]
    assert f"{len(PINS)} pinned files" in proc.stdout
    assert f"{len(PINS) - len(absent)} downloaded from {url}" in proc.stdout
    named = [p.file for p in absent[:2]] + (["more"] if len(absent) > 2 else [])  # then a count
    assert [line.split()[2] for line in proc.stderr.splitlines()] == named
    assert len(absent) <= 2 or f"note: {len(absent) - 2} more optional pins not fetched" in proc.stderr
    assert len(proc.stdout.splitlines()) == 1, "the successful path stays quiet: one line"
    asked = sorted(f"/{p.repository}/{p.commit}/{p.path}" for p in PINS)  # each pin asks once
    assert sorted(line.split()[1] for line in seen) == asked
    assert missing(PINS, cache) == []


def _make_upstream(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    venv = Path(sys.executable).parent.parent
    # --no-print-directory: under `make test` the environment carries MAKELEVEL, and a nested make would print
    # its "Entering directory" lines around the one line the successful path prints.
    return subprocess.run(["make", "--no-print-directory", "-o", f"{venv}/.requirements-installed", "upstream",
                           f"VENV={venv}"],
                          cwd=REPO, env=env, capture_output=True, text=True, check=False)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_make_upstream_offline_with_no_shared_fails_in_five_lines_naming_both_ways_out(tmp_path):
    """No network (a base where nothing listens) and no ../shared: a few lines, not one per pinned file."""
    base = f"http://127.0.0.1:{_closed_port()}"
    shared = tmp_path / "no-shared"
    env = {**os.environ, "GPU_PLATFORM_SHARED": str(shared), "GPU_PLATFORM_UPSTREAM_URL": base,
           "GPU_PLATFORM_UPSTREAM_CACHE": str(tmp_path / "cache")}
    proc = _make_upstream(env)
    assert proc.returncode != 0
    lines = proc.stderr.splitlines()
    assert len(lines) <= 5, proc.stderr
    required = [p for p in PINS if not p.optional]  # an optional pin is unavailable, not refused
    assert f"{len(required) - 1} more of the {len(PINS)} pinned files refused" in lines[1]
    tried = lines[2]
    assert f"GPU_PLATFORM_SHARED): {shared / 'upstream'} does not exist" in tried
    assert f"then downloads from {base} (GPU_PLATFORM_UPSTREAM_URL): no server answered" in tried
    assert lines[3].startswith("hint: point GPU_PLATFORM_SHARED at ") and "GPU_PLATFORM_UPSTREAM_URL at " in lines[3]
    assert missing(PINS, tmp_path / "cache") != []


def test_a_server_that_answers_404_is_named_without_the_offline_hint_line_count_growing(tmp_path, capsys):
    cache = tmp_path / "cache"
    lock = _lock(tmp_path, SMALL)
    with _serve({}) as (url, seen):
        assert main(["fill", "--lock", str(lock), "--cache", str(cache), "--download", "--base-url", url]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(seen) == len(SMALL), "a server that answers is asked for every file"
    assert len(err) == 4 and err[1] == f"error: {len(SMALL) - 1} more of the {len(SMALL)} pinned files refused " \
        f"({len(SMALL) - 1} answered with an HTTP error)"
    assert err[2].endswith(f"then downloads from {url} (GPU_PLATFORM_UPSTREAM_URL): the server refused them")


def test_a_download_whose_sha256_differs_is_refused_by_name_and_not_written(tmp_path, capsys):
    files = _pinned_bytes(SMALL)
    files[f"/{CRD.repository}/{CRD.commit}/{CRD.path}"] += b"\n# tampered\n"
    cache = tmp_path / "cache"
    with _serve(files) as (url, _):
        code = main(["fill", "--lock", str(_lock(tmp_path, SMALL)), "--cache", str(cache), "--download",
                     "--base-url", url])
    err = capsys.readouterr().err
    assert code == 1
    assert f"error: {CRD.file}: sha256 " in err and f"is not the pinned {CRD.sha256}" in err and "refusing it" in err
    assert not (cache / CRD.file).exists()
    assert all((cache / p.file).is_file() for p in SMALL[1:])


def test_the_local_copy_is_taken_first_and_verified_too(tmp_path, capsys):
    shared = tmp_path / "shared"
    for pin in SMALL:
        (shared / "upstream" / pin.file).parent.mkdir(parents=True, exist_ok=True)
        (shared / "upstream" / pin.file).write_bytes(upstream(pin.file).read_bytes())
    cache = tmp_path / "cache"
    lock = _lock(tmp_path, SMALL)
    with _serve({}) as (url, seen):
        assert main(["fill", "--lock", str(lock), "--cache", str(cache), "--shared", str(shared),
                     "--base-url", url]) == 0
        assert seen == []
        assert f"{len(SMALL)} copied from {shared / 'upstream'}" in capsys.readouterr().out
        (shared / "upstream" / CRD.file).write_text("kind: Other\n")
        (cache / CRD.file).unlink()
        (cache / "crds" / "stray.yaml").write_text("not pinned\n")
        assert main(["fill", "--lock", str(lock), "--cache", str(cache), "--shared", str(shared)]) == 1
    assert f"error: {CRD.file}: sha256 " in capsys.readouterr().err
    assert not (cache / "crds" / "stray.yaml").exists()  # the cache holds the pinned files only


def test_an_unreachable_source_fails_naming_the_file_and_verify_reports_the_gap(tmp_path, capsys):
    cache = tmp_path / "cache"
    lock = _lock(tmp_path, SMALL)
    with _serve({}) as (url, _):
        assert main(["fill", "--lock", str(lock), "--cache", str(cache), "--download", "--base-url", url]) == 1
    assert f"error: {CRD.file}: GET {url}/{CRD.repository}/{CRD.commit}/{CRD.path}: HTTP 404" in capsys.readouterr().err
    assert main(["verify", "--lock", str(lock), "--cache", str(cache)]) == 1
    assert f"error: {CRD.file}: absent from {cache}; run `make upstream`" in capsys.readouterr().err


def test_a_malformed_pin_is_a_usage_error_naming_it(tmp_path, capsys):
    raw = json.loads(LOCK_PATH.read_text())
    raw["files"][0]["commit"] = "main"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(LockError, match=r"files\[0\]: pin .* has a malformed commit"):
        load(bad)
    assert main(["verify", "--lock", str(bad)]) == 2
    assert "malformed commit" in capsys.readouterr().err


# --- tools.matrix refresh --fetch --write moves the NVIDIA pins ---------------------------------------------------

NEW_SHA = "f" * 40
LIFE = "gpu-operator/life-cycle-policy.rst"


def _github(commits: dict[str, list[str]], extra: dict[str, bytes]) -> dict[str, bytes]:
    """The docs, CI file and tags (refresh --fetch), the commits API and the raw files, at loopback paths."""
    docs = "nvidia/cloud-native-docs"
    newest_ci = sorted(p.file for p in PINS if p.file.startswith("nvidia/gpu-driver-container-ci-history/"))[-1]
    files = {
        **_pinned_bytes(PINS),  # raw.githubusercontent.com: every pinned file at its commit
        "/docs/life-cycle-policy.rst": upstream(f"{docs}/life-cycle-policy.rst").read_bytes(),
        "/docs/platform-support.rst": upstream(f"{docs}/platform-support.rst").read_bytes(),
        "/ci.yml": upstream(newest_ci).read_bytes(),
        "/v2/nvidia/driver/tags/list?n=1000": json.dumps({"tags": ["580.173.02-ubuntu24.04"]}).encode(),
        **extra,
    }
    for track in ("gpu-operator/life-cycle-policy.rst", "gpu-operator/platform-support.rst",
                  "gpu-operator/release-notes.rst"):
        query = urllib.parse.urlencode({"path": track, "per_page": 100})
        items = [{"sha": sha, "commit": {"committer": {"date": "2026-11-20T08:00:00Z"}}} for sha in commits[track]]
        files[f"/repos/NVIDIA/cloud-native-docs/commits?{query}"] = json.dumps(items).encode()
    query = urllib.parse.urlencode({"path": ".common-ci.yml", "per_page": 100})
    files[f"/repos/NVIDIA/gpu-driver-container/commits?{query}"] = json.dumps([]).encode()
    return files


def _refresh(url: str, lock: Path, matrix: Path, monkeypatch) -> int:
    monkeypatch.setenv("GPU_PLATFORM_UPSTREAM_CACHE", str(lock.parent / "cache"))  # new files land there
    return matrix_main(["refresh", "--fetch", "--write", "--docs-url", f"{url}/docs", "--ci-url", f"{url}/ci.yml",
                        "--registry", url, "--no-images", "--no-image-releases", "--timeout", "5",
                        "--today", "2026-11-30", "--matrix", str(matrix),
                        "--lock", str(lock), "--github-api", url, "--github-raw", url])


def _newest(folder: str) -> Pin:
    return sorted((p for p in PINS if p.file.startswith(folder + "/")), key=lambda p: p.file)[-1]


def _copies(tmp_path: Path) -> tuple[Path, Path]:
    lock = tmp_path / "upstream.lock.json"
    lock.write_bytes(LOCK_PATH.read_bytes())
    matrix = tmp_path / "matrix.yaml"
    matrix.write_bytes((REPO / "policies" / "gpu_guard" / "matrix.yaml").read_bytes())
    return lock, matrix


def test_refresh_fetch_write_adds_a_history_pin_moves_the_current_one_and_rewrites_the_lockfile(
        tmp_path, monkeypatch, capsys):
    lock, matrix = _copies(tmp_path)
    life_history = _newest("nvidia/cloud-native-docs/life-cycle-policy-history")
    platform_history = _newest("nvidia/cloud-native-docs/platform-support-history")
    notes = next(p for p in PINS if p.file == "nvidia/cloud-native-docs/release-notes.rst")
    new_text = upstream(life_history.file).read_bytes() + b"\n.. a newer release row\n"
    commits = {LIFE: [NEW_SHA, life_history.commit], "gpu-operator/platform-support.rst": [platform_history.commit],
               "gpu-operator/release-notes.rst": [notes.commit]}
    with _serve(_github(commits, {f"/NVIDIA/cloud-native-docs/{NEW_SHA}/{LIFE}": new_text})) as (url, seen):
        code = _refresh(url, lock, matrix, monkeypatch)
    out, err = capsys.readouterr()
    assert code == 0, out + err
    added = "nvidia/cloud-native-docs/life-cycle-policy-history/2026-11-20-ffffffff.rst"
    assert f"added {added} (NVIDIA/cloud-native-docs@ffffffffffff)" in out
    assert "moved nvidia/cloud-native-docs/life-cycle-policy.rst from 52dcb7b8d956 to ffffffffffff" in out
    after = {p.file: p for p in load(lock)}
    assert after[added] == Pin(added, "NVIDIA/cloud-native-docs", NEW_SHA, LIFE, sha256_of(new_text), len(new_text))
    assert after["nvidia/cloud-native-docs/life-cycle-policy.rst"].commit == NEW_SHA
    assert len(after) == len(PINS) + 1
    assert {f: p for f, p in after.items() if f not in {added, "nvidia/cloud-native-docs/life-cycle-policy.rst"}} == {
        p.file: p for p in PINS if p.file != "nvidia/cloud-native-docs/life-cycle-policy.rst"}
    assert (tmp_path / "cache" / added).read_bytes() == new_text
    assert f"GET /NVIDIA/cloud-native-docs/{NEW_SHA}/{LIFE} auth=" in seen


def test_refresh_fetch_write_leaves_the_lockfile_alone_when_nothing_moved(tmp_path, monkeypatch, capsys):
    lock, matrix = _copies(tmp_path)
    notes = next(p for p in PINS if p.file == "nvidia/cloud-native-docs/release-notes.rst")
    platform_history = _newest("nvidia/cloud-native-docs/platform-support-history")
    commits = {LIFE: [_newest("nvidia/cloud-native-docs/life-cycle-policy-history").commit],
               "gpu-operator/platform-support.rst": [platform_history.commit],
               "gpu-operator/release-notes.rst": [notes.commit]}
    with _serve(_github(commits, {})) as (url, _):
        assert _refresh(url, lock, matrix, monkeypatch) == 0
    assert "the NVIDIA pins are at the newest upstream commits" in capsys.readouterr().out
    assert lock.read_bytes() == LOCK_PATH.read_bytes()


def test_an_optional_pin_that_cannot_be_fetched_is_named_once_and_does_not_fail_the_fill(tmp_path, capsys):
    optional = Pin(**{**CRD.__dict__, "optional": "not in the shared copy"})
    lock = _lock(tmp_path, [optional, *SMALL[1:]])
    cache = tmp_path / "cache"
    files = _pinned_bytes(SMALL[1:])
    with _serve(files) as (url, _):
        assert main(["fill", "--lock", str(lock), "--cache", str(cache), "--download", "--base-url", url]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"note: optional {CRD.file} not fetched (not in the shared copy); the tests that read it skip: "
        f"{CRD.file}: GET {url}/{CRD.repository}/{CRD.commit}/{CRD.path}: HTTP 404"]
    assert f"{len(SMALL) - 1} downloaded from {url}, 0 refused, 1 optional unavailable" in captured.out
    assert main(["verify", "--lock", str(lock), "--cache", str(cache)]) == 0


def test_an_optional_pin_with_other_bytes_is_still_refused(tmp_path, capsys):
    optional = Pin(**{**CRD.__dict__, "optional": "not in the shared copy"})
    lock = _lock(tmp_path, [optional])
    with _serve({f"/{CRD.repository}/{CRD.commit}/{CRD.path}": b"kind: Other\n"}) as (url, _):
        assert main(["fill", "--lock", str(lock), "--cache", str(tmp_path / "c"), "--download",
                     "--base-url", url]) == 1
    assert f"error: {CRD.file}: sha256 " in capsys.readouterr().err


def test_the_lockfile_keeps_optional_only_where_it_is_given_and_refuses_an_empty_reason(tmp_path):
    optional = Pin(**{**CRD.__dict__, "optional": "why"})
    lock = _lock(tmp_path, [optional, SMALL[1]])
    text = lock.read_text()
    assert text.count('"optional"') == 1
    assert load(lock) == sorted([optional, SMALL[1]], key=lambda p: p.file)
    raw = json.loads(text)
    raw["files"][0]["optional"] = " "
    lock.write_text(json.dumps(raw))
    with pytest.raises(LockError, match="malformed optional"):
        load(lock)


def test_fill_if_reachable_offline_says_what_it_tried_in_one_line_and_exits_0(tmp_path, capsys):
    base = f"http://127.0.0.1:{_closed_port()}"
    lock = _lock(tmp_path, REQUIRED[:3])
    code = main(["fill", "--if-reachable", "--lock", str(lock), "--cache", str(tmp_path / "cache"),
                 "--shared", str(tmp_path / "no-shared"), "--base-url", base, "--timeout", "5"])
    err = capsys.readouterr().err.splitlines()
    assert code == 0
    copy = tmp_path / "no-shared" / "upstream"
    assert err == [f"upstream cache: 3 of 3 pinned files not fetched (no local copy at {copy}; "
                   f"{base}: no server answered); running on without them (what needs them skips or is not checked); "
                   "`make upstream` to retry, or set GPU_PLATFORM_SHARED / GPU_PLATFORM_UPSTREAM_URL"]


def test_fill_if_reachable_still_refuses_wrong_bytes(tmp_path, capsys):
    pin = REQUIRED[0]
    shared = tmp_path / "shared"
    (shared / "upstream" / pin.file).parent.mkdir(parents=True)
    (shared / "upstream" / pin.file).write_bytes(b"not the pinned bytes")
    code = main(["fill", "--if-reachable", "--lock", str(_lock(tmp_path, [pin])), "--cache", str(tmp_path / "c"),
                 "--shared", str(shared), "--base-url", f"http://127.0.0.1:{_closed_port()}"])
    assert code == 1
    assert "is not the pinned" in capsys.readouterr().err
    assert not (tmp_path / "c" / pin.file).exists()


def test_fill_if_reachable_leaves_an_uncached_optional_pin_to_make_upstream(tmp_path, capsys):
    optional = next(p for p in PINS if p.optional)
    code = main(["fill", "--if-reachable", "--lock", str(_lock(tmp_path, [optional])), "--cache",
                 str(tmp_path / "c"), "--shared", str(tmp_path / "none"), "--base-url",
                 f"http://127.0.0.1:{_closed_port()}"])
    out = capsys.readouterr()
    assert code == 0
    assert "0 pinned files" in out.out and out.err == ""


def test_fill_if_reachable_remembers_a_source_that_did_not_answer_for_an_hour(tmp_path, capsys, monkeypatch):
    """Issue 44: a failed DNS lookup took about 2 s on every `make preview` offline. The next hour's runs with the
    same sources print the same line from the record and try nothing; later, or with `make upstream`, they try."""
    from tools.upstream import __main__ as command  # noqa: PLC0415

    base = f"http://127.0.0.1:{_closed_port()}"
    cache = tmp_path / "cache"
    args = ["fill", "--lock", str(_lock(tmp_path, REQUIRED[:3])), "--cache", str(cache), "--shared",
            str(tmp_path / "no-shared"), "--base-url", base, "--timeout", "5"]
    assert main([*args, "--if-reachable"]) == 0
    first = capsys.readouterr().err.strip()
    assert (tmp_path / "cache.unreachable").is_file()

    tried: list[int] = []
    real_fill = fill

    def counting_fill(*a: Any, **k: Any) -> Any:
        tried.append(1)
        return real_fill(*a, **k)

    monkeypatch.setattr(command, "fill", counting_fill)
    assert main([*args, "--if-reachable"]) == 0
    second = capsys.readouterr().err.strip()
    assert not tried
    assert second.startswith(first) and "not tried again until" in second and "`make upstream` tries now" in second

    assert main([*args, "--if-reachable", "--base-url", base + "/other"]) == 0  # other sources: tried
    assert len(tried) == 1
    assert main(args) == 1  # `make upstream` always tries
    assert len(tried) == 2
    capsys.readouterr()
    later = time.time() + command.UNREACHABLE_TTL_S + 1
    monkeypatch.setattr(time, "time", lambda: later)
    assert main([*args, "--if-reachable"]) == 0  # an hour on: tried again
    assert len(tried) == 3


def test_a_fill_that_fetches_forgets_the_unreachable_record(tmp_path, capsys):
    pins = REQUIRED[:2]
    cache = tmp_path / "cache"
    (tmp_path / "cache.unreachable").write_text(json.dumps({"at": 0, "local": None, "base": "x", "line": "old"}))
    with _serve(_pinned_bytes(pins)) as (url, _):
        assert main(["fill", "--if-reachable", "--lock", str(_lock(tmp_path, pins)), "--cache", str(cache),
                     "--shared", str(tmp_path / "none"), "--base-url", url]) == 0
    assert not (tmp_path / "cache.unreachable").exists()
