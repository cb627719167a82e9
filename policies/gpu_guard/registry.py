"""Ask an OCI registry whether an image tag is published (the live half of `gpu-driver-image-published`).

Only the standard library: this module runs inside the policy pack. The answer has three values:
exists True / False when the registry said so, None when it could not be asked (unreachable, timeout,
server error, credentials needed); the caller decides what None means. Every call is bounded by
`timeout_s` in total, whatever the registry does.

Source: https://github.com/opencontainers/distribution-spec/blob/main/spec.md (pulling manifests,
        HEAD/GET /v2/<name>/manifests/<reference>, error codes MANIFEST_UNKNOWN / NAME_UNKNOWN)
Source: https://distribution.github.io/distribution/spec/auth/token/ (Bearer challenge, anonymous
        token request with service and scope, `token` / `access_token` in the answer)
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import re
import ssl
import threading
import time
import typing
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from email.message import Message
from typing import Any, TypeVar

# Manifest media types a driver image tag may resolve to (NGC driver tags are multi-arch indexes).
# Source: https://github.com/opencontainers/image-spec/blob/main/media-types.md
# Source: https://distribution.github.io/distribution/spec/manifest-v2-2/
MANIFEST_ACCEPT = ", ".join(
    (
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    )
)

# Error codes in a registry's JSON error body that mean "there is no such image".
_NOT_FOUND_CODES = frozenset({"MANIFEST_UNKNOWN", "NAME_UNKNOWN"})

DOCKER_HUB = "registry-1.docker.io"
_USER_AGENT = "gpu-platform-policy/registry-check"
_MAX_BODY = 64 * 1024
_CHALLENGE_PARAM = re.compile(r'(\w+)\s*=\s*(?:"([^"]*)"|([^,\s]*))')


@dataclass(frozen=True)
class RegistryAnswer:
    """What the registry said about one image reference."""

    exists: bool | None  # None: could not ask (unreachable, timeout, server error, credentials needed)
    detail: str


@dataclass(frozen=True)
class ImageRef:
    """An image reference split the way the distribution API addresses it."""

    registry: str  # host[:port]
    repository: str  # e.g. nvidia/driver
    reference: str  # a tag or a digest


def parse_image_ref(image_ref: str) -> ImageRef:
    """Split `[registry/]repository[:tag|@digest]`; Docker Hub and `latest` as docker resolves them."""
    if not image_ref or any(c.isspace() for c in image_ref):
        raise ValueError(
            f"image reference {image_ref!r} is empty or contains spaces; use e.g. nvcr.io/nvidia/driver:<tag>"
        )
    name, reference = image_ref, "latest"
    if "@" in name:
        name, reference = name.split("@", 1)
    else:
        last = name.rsplit("/", 1)[-1]
        if ":" in last:
            name, reference = name.rsplit(":", 1)
    first, _, rest = name.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        registry, repository = first, rest
    else:
        registry, repository = DOCKER_HUB, name if "/" in name else f"library/{name}"
    if not repository or not reference:
        raise ValueError(
            f"image reference {image_ref!r} has no repository or tag; use e.g. nvcr.io/nvidia/driver:<tag>"
        )
    return ImageRef(registry=registry, repository=repository, reference=reference)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_url(url: str, what: str) -> urllib.parse.SplitResult:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return parts
    if parts.scheme == "http" and parts.hostname and _is_loopback(parts.hostname):
        return parts
    raise ValueError(
        f"{what} {url!r} is not allowed: registries are asked over https, plain http only on loopback "
        "(127.0.0.1, ::1, localhost); use an https:// URL"
    )


def base_url(ref: ImageRef, registry_override: str | None = None) -> str:
    """The registry's base URL: the override when given, else https (http for a loopback registry)."""
    if registry_override is not None:
        return _check_url(registry_override.rstrip("/"), "registry_override").geturl()
    host = ref.registry.rsplit(":", 1)[0] if not ref.registry.endswith("]") else ref.registry
    scheme = "http" if _is_loopback(host) else "https"
    return f"{scheme}://{ref.registry}"


class Deadline:
    """One time budget shared by every request of one question to a registry."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._end = time.monotonic() + timeout_s

    def left(self) -> float:
        return self._end - time.monotonic()


class NoAnswer(Exception):
    """The registry could not be asked; the message says why."""


@dataclass(frozen=True)
class RegistryResponse:
    """Status, headers and (bounded) body of one registry answer, error statuses included."""

    status: int
    headers: Message
    body: bytes


def _opener(url: str) -> urllib.request.OpenerDirector:
    host = urllib.parse.urlsplit(url).hostname or ""
    # Loopback never goes through a proxy from the environment.
    handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({})] if _is_loopback(host) else []
    return urllib.request.build_opener(*handlers)


def registry_request(
    method: str, url: str, headers: dict[str, str], deadline: Deadline, max_body: int = _MAX_BODY
) -> RegistryResponse:
    """One HTTP request within `deadline`; HTTP errors come back as a response, no answer raises NoAnswer."""
    left = deadline.left()
    if left <= 0:
        raise NoAnswer(f"no answer within {deadline.timeout_s:g}s")
    req = urllib.request.Request(url, method=method, headers={"User-Agent": _USER_AGENT, **headers})
    try:
        with _opener(url).open(req, timeout=left) as resp:
            body = resp.read(max_body) if method == "GET" else b""
            return RegistryResponse(resp.status, resp.headers, body)
    except urllib.error.HTTPError as err:
        try:
            body = err.read(_MAX_BODY) if method == "GET" else b""
        except (OSError, http.client.HTTPException):
            body = b""
        return RegistryResponse(err.code, err.headers, body)
    except urllib.error.URLError as err:
        reason = err.reason
        if isinstance(reason, TimeoutError):
            raise NoAnswer(f"{method} {url}: no answer within {deadline.timeout_s:g}s") from err
        if isinstance(reason, ConnectionRefusedError):
            raise NoAnswer(f"{method} {url}: connection refused") from err
        raise NoAnswer(f"{method} {url}: cannot reach the registry ({reason})") from err
    except TimeoutError as err:
        raise NoAnswer(f"{method} {url}: no answer within {deadline.timeout_s:g}s") from err
    except (OSError, http.client.HTTPException, ssl.SSLError) as err:
        raise NoAnswer(f"{method} {url}: {type(err).__name__}: {err}") from err


def _error_codes(body: bytes) -> set[str]:
    try:
        data = json.loads(body.decode("utf-8", "replace")) if body else {}
    except ValueError:
        return set()
    errors = data.get("errors") if isinstance(data, dict) else None
    if not isinstance(errors, list):
        return set()
    return {str(e.get("code")) for e in errors if isinstance(e, dict)}


def parse_bearer_challenge(header: str) -> dict[str, str] | None:
    """The parameters of a `WWW-Authenticate: Bearer realm=...,service=...,scope=...` header, or None."""
    scheme, _, params = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return {
        m.group(1).lower(): m.group(2) if m.group(2) is not None else m.group(3)
        for m in _CHALLENGE_PARAM.finditer(params)
    }


def anonymous_token(challenge: dict[str, str], ref: ImageRef, deadline: Deadline) -> str:
    """The pull token a Bearer challenge's realm gives without credentials; NoAnswer when it gives none."""
    realm = challenge.get("realm")
    if not realm:
        raise NoAnswer("the registry's Bearer challenge names no realm")
    try:
        _check_url(realm, "token realm")
    except ValueError as err:
        raise NoAnswer(str(err)) from err
    query = {"scope": challenge.get("scope") or f"repository:{ref.repository}:pull"}
    if challenge.get("service"):
        query["service"] = challenge["service"]
    sep = "&" if urllib.parse.urlsplit(realm).query else "?"
    url = f"{realm}{sep}{urllib.parse.urlencode(query)}"
    resp = registry_request("GET", url, {"Accept": "application/json"}, deadline)
    if resp.status != 200:
        raise NoAnswer(f"GET {url}: anonymous token refused with HTTP {resp.status}")
    try:
        data = json.loads(resp.body.decode("utf-8", "replace"))
    except ValueError as err:
        raise NoAnswer(f"GET {url}: token answer is not JSON") from err
    token = (data.get("token") or data.get("access_token")) if isinstance(data, dict) else None
    if not isinstance(token, str) or not token:
        raise NoAnswer(f"GET {url}: token answer has neither `token` nor `access_token`")
    return token


def _ask(ref: ImageRef, base: str, deadline: Deadline) -> RegistryAnswer:
    url = f"{base}/v2/{ref.repository}/manifests/{ref.reference}"
    headers = {"Accept": MANIFEST_ACCEPT}
    image = f"{ref.registry}/{ref.repository}:{ref.reference}"
    authed = False
    method = "HEAD"
    while True:
        resp = registry_request(method, url, headers, deadline)
        if resp.status == 401 and not authed:
            challenge = parse_bearer_challenge(resp.headers.get("WWW-Authenticate", ""))
            if challenge is None:
                return RegistryAnswer(None, f"{method} {url}: HTTP 401 and no Bearer challenge; credentials needed")
            headers["Authorization"] = f"Bearer {anonymous_token(challenge, ref, deadline)}"
            authed = True
            continue
        if resp.status == 200:
            digest = resp.headers.get("Docker-Content-Digest", "no digest header")
            kind = resp.headers.get("Content-Type", "unknown media type")
            return RegistryAnswer(True, f"{image} is published ({kind}, {digest}) at {url}")
        if resp.status == 404 or _error_codes(resp.body) & _NOT_FOUND_CODES:
            codes = ", ".join(sorted(_error_codes(resp.body))) or f"HTTP {resp.status}"
            return RegistryAnswer(False, f"{image} is not published: {method} {url} answered {codes}")
        if resp.status == 401:
            return RegistryAnswer(None, f"{method} {url}: HTTP 401 even with an anonymous token; credentials needed")
        if resp.status >= 500 or resp.status == 429:
            return RegistryAnswer(None, f"{method} {url}: registry answered HTTP {resp.status}")
        if method == "HEAD":
            method = "GET"  # some registries do not answer HEAD on manifests; the body says more
            continue
        codes = ", ".join(sorted(_error_codes(resp.body))) or "no error code"
        return RegistryAnswer(None, f"GET {url}: unexpected HTTP {resp.status} ({codes})")


def manifest_exists(image_ref: str, *, timeout_s: float = 5.0, registry_override: str | None = None) -> RegistryAnswer:
    """Whether the registry has a manifest for `image_ref`, answered within `timeout_s` in total.

    `registry_override` (e.g. "http://127.0.0.1:5000") sends the request to that base URL instead of
    the reference's registry; plain http is accepted for loopback only. Raises ValueError for a
    malformed reference or a disallowed override; every network outcome is a RegistryAnswer.
    """
    if timeout_s <= 0:
        raise ValueError(f"timeout_s={timeout_s} must be positive; use e.g. 5.0")
    ref = parse_image_ref(image_ref)
    base = base_url(ref, registry_override)
    deadline = Deadline(timeout_s)
    try:
        return _bounded(lambda: _ask(ref, base, deadline), timeout_s, f"registry-check {image_ref}")
    except NoAnswer as err:
        return RegistryAnswer(None, str(err))
    except _Overdue:
        return RegistryAnswer(None, f"{base}: no complete answer for {image_ref} within {timeout_s:g}s")


_T = TypeVar("_T")


class _Overdue(Exception):
    """`_bounded`'s work did not finish in time."""


def _bounded(work: Callable[[], _T], timeout_s: float, name: str) -> _T:
    """`work()` on a worker thread, its result or its exception, or `_Overdue` after `timeout_s` (+0.5 s).

    Each socket operation is bounded by the time left, but a registry that trickles bytes could still
    stretch one; the worker thread makes the total bound hard.
    """
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, work()))
        except BaseException as err:  # noqa: BLE001 - handed to the caller's thread and re-raised there
            outcome.append((False, err))

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    worker.join(timeout_s + 0.5)
    if not outcome:
        raise _Overdue(name)
    done, value = outcome[0]
    if not done:
        raise value
    return typing.cast(_T, value)


# A tags/list page may be long (nvcr.io/nvidia/driver has thousands of tags); pages are asked `n` at a time.
# Source: https://github.com/opencontainers/distribution-spec/blob/main/spec.md#listing-tags (`n`, `last`,
#         and the `Link: <...>; rel="next"` header)
_TAGS_PAGE = 1000
_MAX_TAGS_BODY = 4 * 1024 * 1024
_NEXT_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


class RegistryUnavailable(Exception):
    """The registry could not list the tags (unreachable, timeout, refused); the message says why."""


def list_tags(repository_ref: str, *, timeout_s: float = 30.0, registry_override: str | None = None) -> list[str]:
    """Every tag of `repository_ref` (e.g. nvcr.io/nvidia/driver), within `timeout_s` in total.

    Anonymous Bearer tokens as for manifests; follows `Link: rel="next"` pages. Raises
    RegistryUnavailable when the registry does not give a complete list, ValueError for a bad reference.
    """
    if timeout_s <= 0:
        raise ValueError(f"timeout_s={timeout_s} must be positive; use e.g. 30.0")
    ref = parse_image_ref(f"{repository_ref}:latest")
    base = base_url(ref, registry_override)
    deadline = Deadline(timeout_s)
    try:
        return _bounded(lambda: _all_tags(ref, base, deadline), timeout_s, f"tags-list {repository_ref}")
    except NoAnswer as err:
        raise RegistryUnavailable(str(err)) from err
    except _Overdue:
        raise RegistryUnavailable(
            f"{base}: no complete tag list for {repository_ref} within {timeout_s:g}s") from None


def _all_tags(ref: ImageRef, base: str, deadline: Deadline) -> list[str]:
    url: str | None = f"{base}/v2/{ref.repository}/tags/list?n={_TAGS_PAGE}"
    headers = {"Accept": "application/json"}
    tags: list[str] = []
    authed = False
    while url is not None:
        resp = registry_request("GET", url, headers, deadline, _MAX_TAGS_BODY)
        if resp.status == 401 and not authed:
            challenge = parse_bearer_challenge(resp.headers.get("WWW-Authenticate", ""))
            if challenge is None:
                raise NoAnswer(f"GET {url}: HTTP 401 and no Bearer challenge; credentials needed")
            headers["Authorization"] = f"Bearer {anonymous_token(challenge, ref, deadline)}"
            authed = True
            continue
        if resp.status != 200:
            codes = ", ".join(sorted(_error_codes(resp.body))) or "no error code"
            raise NoAnswer(f"GET {url}: HTTP {resp.status} ({codes})")
        try:
            data = json.loads(resp.body.decode("utf-8", "replace"))
        except ValueError as err:
            raise NoAnswer(f"GET {url}: the tag list is not JSON (or longer than {_MAX_TAGS_BODY} bytes)") from err
        page = data.get("tags") if isinstance(data, dict) else None
        tags.extend(str(tag) for tag in page or [])
        link = _NEXT_LINK.search(resp.headers.get("Link", ""))
        url = urllib.parse.urljoin(base, link.group(1)) if link else None
        if url is not None:
            _check_url(url, "next page")
    return tags
