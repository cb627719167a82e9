"""A real OCI registry on loopback for the registry-check tests, and small fake servers.

The registry is Debian's `docker-registry` package (CNCF distribution 2.8), started per test session
from a temporary directory on a free loopback port; images are pushed with plain HTTP calls of the
distribution API (blob upload POST + PUT, then manifest PUT). Not a service: the test starts and
stops it.

Source: https://github.com/opencontainers/distribution-spec/blob/main/spec.md (pushing blobs and manifests)
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REGISTRY_BINARY = Path("/usr/bin/docker-registry")
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def require_registry_binary() -> Path:
    """The registry binary; skip with the reason when absent, fail when CI=true (CI installs it)."""
    if REGISTRY_BINARY.exists():
        return REGISTRY_BINARY
    reason = (
        f"{REGISTRY_BINARY} is absent: install Debian's docker-registry package "
        "(.ci/install-registry.sh, or apt-get install -y docker-registry)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _call(method: str, url: str, body: bytes = b"", headers: dict[str, str] | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=body if method in ("POST", "PUT") else None, method=method)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with _NO_PROXY.open(req, timeout=10) as resp:
            return resp.status, resp.headers
    except urllib.error.HTTPError as err:
        return err.code, err.headers


@dataclass(frozen=True)
class LocalRegistry:
    url: str  # http://127.0.0.1:<port>

    def push_blob(self, repository: str, content: bytes) -> dict[str, Any]:
        digest = "sha256:" + hashlib.sha256(content).hexdigest()
        status, headers = _call("POST", f"{self.url}/v2/{repository}/blobs/uploads/")
        assert status == 202, f"blob upload start answered {status}"
        location = urllib.parse.urljoin(self.url, headers["Location"])
        sep = "&" if "?" in location else "?"
        status, _ = _call(
            "PUT",
            f"{location}{sep}digest={urllib.parse.quote(digest)}",
            content,
            {"Content-Type": "application/octet-stream"},
        )
        assert status == 201, f"blob upload PUT answered {status}"
        return {"digest": digest, "size": len(content)}

    def push_manifest(
        self, repository: str, reference: str, manifest: dict[str, Any], media_type: str
    ) -> dict[str, Any]:
        body = json.dumps(manifest).encode()
        status, _ = _call(
            "PUT", f"{self.url}/v2/{repository}/manifests/{reference}", body, {"Content-Type": media_type}
        )
        assert status == 201, f"manifest PUT {repository}:{reference} answered {status}"
        return {"mediaType": media_type, "digest": "sha256:" + hashlib.sha256(body).hexdigest(), "size": len(body)}

    def push_image(self, repository: str, tag: str, *, architecture: str = "amd64") -> dict[str, Any]:
        """A one-layer OCI image for `architecture`, tagged `tag`; returns its descriptor."""
        config = json.dumps({"architecture": architecture, "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}})
        config_desc = self.push_blob(repository, config.encode())
        layer_desc = self.push_blob(repository, f"driver layer {tag} {architecture}".encode())
        manifest = {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **config_desc},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", **layer_desc}],
        }
        return self.push_manifest(repository, tag, manifest, OCI_MANIFEST)

    def push_index(self, repository: str, tag: str, images: list[tuple[dict[str, Any], str]]) -> None:
        """An OCI image index tagged `tag` over (descriptor, architecture) pairs."""
        index = {
            "schemaVersion": 2,
            "mediaType": OCI_INDEX,
            "manifests": [{**desc, "platform": {"architecture": arch, "os": "linux"}} for desc, arch in images],
        }
        self.push_manifest(repository, tag, index, OCI_INDEX)


@contextlib.contextmanager
def run_registry(workdir: Path) -> Iterator[LocalRegistry]:
    """Start docker-registry on a free loopback port with storage under `workdir`; stop it afterwards."""
    binary = require_registry_binary()
    port = free_port()
    config = workdir / "config.yml"
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: error\n  accesslog:\n    disabled: true\n"
        f"storage:\n  filesystem:\n    rootdirectory: {workdir / 'storage'}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
    )
    log = (workdir / "registry.log").open("wb")
    proc = subprocess.Popen([str(binary), "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):  # up to ~10 s for the registry to listen
            if proc.poll() is not None:
                pytest.fail(f"docker-registry exited with {proc.returncode}: {(workdir / 'registry.log').read_text()}")
            with contextlib.suppress(OSError):
                if _call("GET", f"{url}/v2/")[0] == 200:
                    break
            time.sleep(0.05)
        else:
            pytest.fail(f"docker-registry did not answer on {url}: {(workdir / 'registry.log').read_text()}")
        yield LocalRegistry(url)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


Handler = Callable[[http.server.BaseHTTPRequestHandler], None]


@contextlib.contextmanager
def fake_server(handle: Handler) -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server answering every request with `handle`; yields (base URL, request log)."""
    seen: list[str] = []

    class _Handler(http.server.BaseHTTPRequestHandler):
        def _any(self) -> None:
            seen.append(f"{self.command} {self.path} auth={self.headers.get('Authorization', '')}")
            handle(self)

        do_GET = _any
        do_HEAD = _any
        do_POST = _any

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextlib.contextmanager
def silent_server() -> Iterator[str]:
    """A loopback socket that accepts connections and never answers; yields its base URL."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                conn, _ = listener.accept()
                held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()
