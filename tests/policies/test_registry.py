"""The live registry check asks a real OCI registry on loopback, and copes with ones that misbehave."""

from __future__ import annotations

import http.server
import json
from collections.abc import Iterator, Mapping
from urllib.parse import parse_qs, urlsplit

import pytest

from policies.gpu_guard.registry import (
    DOCKER_HUB,
    MANIFEST_ACCEPT,
    ImageRef,
    manifest_exists,
    parse_bearer_challenge,
    parse_image_ref,
)
from tests.policies import conftest_registry
from tests.policies.conftest_registry import (
    LocalRegistry,
    fake_server,
    free_port,
    run_registry,
    silent_server,
)

PUBLISHED = "535.309.01-ubuntu22.04"
NEVER_PUBLISHED = "535.15.04-ubuntu22.04"  # the tag that ends in ImagePullBackOff (POLICIES.md)
MULTI_ARCH = "580.173.02-ubuntu24.04"
ARM_ONLY = "580.173.02-ubuntu24.04-arm64only"


@pytest.fixture(scope="session")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRegistry]:
    with run_registry(tmp_path_factory.mktemp("registry")) as reg:
        reg.push_image("nvidia/driver", PUBLISHED)
        amd = reg.push_image("nvidia/driver", f"{MULTI_ARCH}-amd64")
        arm = reg.push_image("nvidia/driver", f"{MULTI_ARCH}-arm64", architecture="arm64")
        reg.push_index("nvidia/driver", MULTI_ARCH, [(amd, "amd64"), (arm, "arm64")])
        reg.push_index("nvidia/driver", ARM_ONLY, [(arm, "arm64")])
        yield reg


@pytest.mark.registry
def test_published_driver_tag_exists(registry):
    answer = manifest_exists(f"nvcr.io/nvidia/driver:{PUBLISHED}", registry_override=registry.url)

    assert answer.exists is True
    assert "sha256:" in answer.detail


@pytest.mark.registry
def test_unpublished_driver_tag_does_not_exist(registry):
    answer = manifest_exists(f"nvcr.io/nvidia/driver:{NEVER_PUBLISHED}", registry_override=registry.url)

    assert answer.exists is False
    assert NEVER_PUBLISHED in answer.detail


@pytest.mark.registry
def test_unknown_repository_does_not_exist(registry):
    answer = manifest_exists(f"nvcr.io/nvidia/no-such-driver:{PUBLISHED}", registry_override=registry.url)

    assert answer.exists is False


@pytest.mark.registry
def test_multi_arch_index_tag_exists(registry):
    answer = manifest_exists(f"nvcr.io/nvidia/driver:{MULTI_ARCH}", registry_override=registry.url)

    assert answer.exists is True
    assert "application/vnd.oci.image.index.v1+json" in answer.detail


@pytest.mark.registry
def test_index_without_amd64_exists_because_index_media_types_are_accepted(registry):
    # distribution answers 404 for an index without a linux/amd64 entry unless the client accepts indexes.
    answer = manifest_exists(f"nvcr.io/nvidia/driver:{ARM_ONLY}", registry_override=registry.url)

    assert answer.exists is True


@pytest.mark.registry
def test_loopback_registry_in_the_reference_is_asked_over_http(registry):
    host = registry.url.removeprefix("http://")

    assert manifest_exists(f"{host}/nvidia/driver:{PUBLISHED}").exists is True


def test_dead_port_answers_none_with_connection_refused():
    answer = manifest_exists(
        f"nvcr.io/nvidia/driver:{PUBLISHED}", registry_override=f"http://127.0.0.1:{free_port()}", timeout_s=2
    )

    assert answer.exists is None
    assert "connection refused" in answer.detail


def test_registry_that_never_answers_gives_none_within_the_timeout():
    with silent_server() as url:
        answer = manifest_exists(f"nvcr.io/nvidia/driver:{PUBLISHED}", registry_override=url, timeout_s=0.5)

    assert answer.exists is None
    assert "within 0.5s" in answer.detail


def _token_registry(handler: http.server.BaseHTTPRequestHandler, token_key: str = "token") -> None:
    """401 + Bearer challenge without a token; the manifest with it; a token endpoint at /token."""
    url = urlsplit(handler.path)
    base = f"http://{handler.headers['Host']}"
    if url.path == "/token":
        query = parse_qs(url.query)
        ok = query.get("service") == ["fake-registry"] and query.get("scope") == ["repository:nvidia/driver:pull"]
        body = json.dumps({token_key: "anon-token"} if ok else {}).encode()
        handler.send_response(200 if ok else 400)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
        return
    if handler.headers.get("Authorization") != "Bearer anon-token":
        handler.send_response(401)
        handler.send_header(
            "WWW-Authenticate",
            f'Bearer realm="{base}/token",service="fake-registry",scope="repository:nvidia/driver:pull"',
        )
        handler.send_header("Content-Length", "0")
        handler.end_headers()
        return
    assert handler.headers.get("Accept") == MANIFEST_ACCEPT
    known = url.path == f"/v2/nvidia/driver/manifests/{PUBLISHED}"
    handler.send_response(200 if known else 404)
    handler.send_header("Content-Type", "application/vnd.oci.image.index.v1+json")
    handler.send_header("Content-Length", "0")
    handler.end_headers()


def test_anonymous_token_flow_answers_exists():
    with fake_server(_token_registry) as (url, seen):
        answer = manifest_exists(f"nvcr.io/nvidia/driver:{PUBLISHED}", registry_override=url)

    assert answer.exists is True
    assert seen == [
        f"HEAD /v2/nvidia/driver/manifests/{PUBLISHED} auth=",
        "GET /token?scope=repository%3Anvidia%2Fdriver%3Apull&service=fake-registry auth=",
        f"HEAD /v2/nvidia/driver/manifests/{PUBLISHED} auth=Bearer anon-token",
    ]


def test_anonymous_token_flow_reads_access_token_and_answers_missing():
    with fake_server(lambda h: _token_registry(h, "access_token")) as (url, _):
        answer = manifest_exists(f"nvcr.io/nvidia/driver:{NEVER_PUBLISHED}", registry_override=url)

    assert answer.exists is False


def _status(code: int, body: Mapping[str, object] | None = None, head_code: int | None = None):
    def handle(handler: http.server.BaseHTTPRequestHandler) -> None:
        payload = json.dumps(body).encode() if body is not None else b""
        handler.send_response(head_code if head_code is not None and handler.command == "HEAD" else code)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        if handler.command == "GET":
            handler.wfile.write(payload)

    return handle


def test_server_error_answers_none():
    with fake_server(_status(503)) as (url, _):
        answer = manifest_exists(f"nvcr.io/nvidia/driver:{PUBLISHED}", registry_override=url)

    assert answer.exists is None
    assert "HTTP 503" in answer.detail


def test_head_not_allowed_falls_back_to_get():
    with fake_server(_status(200, {}, head_code=405)) as (url, seen):
        answer = manifest_exists(f"nvcr.io/nvidia/driver:{PUBLISHED}", registry_override=url)

    assert answer.exists is True
    assert [s.split()[0] for s in seen] == ["HEAD", "GET"]


def test_manifest_unknown_error_code_means_missing_whatever_the_status():
    body = {"errors": [{"code": "MANIFEST_UNKNOWN", "message": "manifest unknown"}]}
    with fake_server(_status(400, body)) as (url, _):
        answer = manifest_exists(f"nvcr.io/nvidia/driver:{NEVER_PUBLISHED}", registry_override=url)

    assert answer.exists is False
    assert "MANIFEST_UNKNOWN" in answer.detail


def test_401_without_bearer_challenge_answers_none():
    def basic_only(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(401)
        handler.send_header("WWW-Authenticate", 'Basic realm="registry"')
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    with fake_server(basic_only) as (url, _):
        answer = manifest_exists(f"nvcr.io/nvidia/driver:{PUBLISHED}", registry_override=url)

    assert answer.exists is None
    assert "credentials needed" in answer.detail


def test_rejects_plain_http_override_that_is_not_loopback():
    with pytest.raises(ValueError, match="plain http only on loopback"):
        manifest_exists("nvcr.io/nvidia/driver:x", registry_override="http://registry.example.com")


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        (
            "nvcr.io/nvidia/driver:535.309.01-ubuntu22.04",
            ImageRef("nvcr.io", "nvidia/driver", "535.309.01-ubuntu22.04"),
        ),
        ("ubuntu", ImageRef(DOCKER_HUB, "library/ubuntu", "latest")),
        ("nvidia/cuda:12.8.0-base-ubuntu24.04", ImageRef(DOCKER_HUB, "nvidia/cuda", "12.8.0-base-ubuntu24.04")),
        ("localhost:5000/nvidia/driver:1", ImageRef("localhost:5000", "nvidia/driver", "1")),
        ("nvcr.io/nvidia/driver@sha256:abc", ImageRef("nvcr.io", "nvidia/driver", "sha256:abc")),
    ],
)
def test_parses_image_references_as_docker_does(ref, expected):
    assert parse_image_ref(ref) == expected


def test_parses_bearer_challenge_with_commas_inside_quotes():
    header = 'Bearer realm="https://nvcr.io/proxy_auth",scope="repository:nvidia/driver:pull,push"'

    assert parse_bearer_challenge(header) == {
        "realm": "https://nvcr.io/proxy_auth",
        "scope": "repository:nvidia/driver:pull,push",
    }


def test_missing_registry_binary_skips_outside_ci(monkeypatch, tmp_path):
    monkeypatch.setattr(conftest_registry, "REGISTRY_BINARY", tmp_path / "docker-registry")
    monkeypatch.delenv("CI", raising=False)

    with pytest.raises(pytest.skip.Exception, match=r"install-registry\.sh"):
        conftest_registry.require_registry_binary()


def test_missing_registry_binary_fails_in_ci(monkeypatch, tmp_path):
    monkeypatch.setattr(conftest_registry, "REGISTRY_BINARY", tmp_path / "docker-registry")
    monkeypatch.setenv("CI", "true")

    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        conftest_registry.require_registry_binary()
