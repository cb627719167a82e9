"""`refresh --fetch` for the image facts: the NVIDIA_REQUIRE_CUDA of each `nvidia/cuda` tag matrix.yaml records.

Reads the image configuration the way a container runtime does (distribution API: manifest, the linux/amd64
manifest of an index, the config blob, anonymous Bearer token when asked) and compares the branches of its
`driver>=N,driver<N+1` clauses with the `image_require_cuda` rows. The tag read per row is
`<cuda>-base-ubuntu22.04` (every nvidia/cuda release publishes a base image; they share the environment).
"""

from __future__ import annotations

import json
import re
from typing import Any

from policies.gpu_guard.matrix import MatrixData
from policies.gpu_guard.registry import (
    MANIFEST_ACCEPT,
    Deadline,
    NoAnswer,
    anonymous_token,
    base_url,
    parse_bearer_challenge,
    parse_image_ref,
    registry_request,
)
from tools.matrix.nvidia_upstream import UpstreamError

_CLAUSE = re.compile(r"driver>=(\d+)(?:\.\d+)*,driver<(\d+)")
_CUDA = re.compile(r"^cuda>=(\d+\.\d+)")
_INDEX_TYPES = ("application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json")
_MAX_JSON = 4 * 1024 * 1024


def parse_require_cuda(value: str) -> tuple[str | None, tuple[int, ...]]:
    """`cuda>=12.8 brand=tesla,driver>=470,driver<471 ...` -> ("12.8", (470, ...)): the branches admitted."""
    cuda = _CUDA.match(value.strip())
    branches = sorted({int(low) for low, high in _CLAUSE.findall(value) if int(high) == int(low) + 1})
    return (cuda.group(1) if cuda else None), tuple(branches)


def tag_for(cuda: str) -> str:
    return f"{cuda}-base-ubuntu22.04"


class _Registry:
    def __init__(self, image: str, registry: str | None, timeout_s: float) -> None:
        self.ref = parse_image_ref(image)
        self.base = base_url(self.ref, registry)
        self.deadline = Deadline(timeout_s)
        self.headers: dict[str, str] = {}

    def get_json(self, path: str, accept: str) -> tuple[dict[str, Any], str]:
        url = f"{self.base}/v2/{self.ref.repository}/{path}"
        for attempt in range(2):
            resp = registry_request("GET", url, {**self.headers, "Accept": accept}, self.deadline, _MAX_JSON)
            if resp.status == 401 and attempt == 0:
                challenge = parse_bearer_challenge(resp.headers.get("WWW-Authenticate", ""))
                if challenge is None:
                    raise NoAnswer(f"GET {url}: HTTP 401 and no Bearer challenge")
                self.headers["Authorization"] = f"Bearer {anonymous_token(challenge, self.ref, self.deadline)}"
                continue
            if resp.status != 200:
                raise NoAnswer(f"GET {url}: HTTP {resp.status}")
            try:
                data = json.loads(resp.body.decode("utf-8", "replace"))
            except ValueError as err:
                raise NoAnswer(f"GET {url}: not JSON") from err
            if not isinstance(data, dict):
                raise NoAnswer(f"GET {url}: not a JSON object")
            return data, resp.headers.get("Content-Type", "")
        raise NoAnswer(f"GET {url}: HTTP 401 even with an anonymous token")


def read_image_env(image: str, *, registry: str | None = None, timeout_s: float = 20.0) -> dict[str, str]:
    """The environment of an image's linux/amd64 configuration; UpstreamError when it cannot be read."""
    try:
        reg = _Registry(image, registry, timeout_s)
        manifest, kind = reg.get_json(f"manifests/{reg.ref.reference}", MANIFEST_ACCEPT)
        if kind in _INDEX_TYPES or "manifests" in manifest:
            amd64 = next(
                (m for m in manifest.get("manifests", []) if (m.get("platform") or {}).get("architecture") == "amd64"),
                None,
            )
            if amd64 is None:
                raise NoAnswer(f"{image}: the index lists no linux/amd64 manifest")
            manifest, _ = reg.get_json(f"manifests/{amd64['digest']}", MANIFEST_ACCEPT)
        digest = (manifest.get("config") or {}).get("digest")
        if not digest:
            raise NoAnswer(f"{image}: the manifest names no config blob")
        config, _ = reg.get_json(f"blobs/{digest}", "application/json")
    except (NoAnswer, ValueError) as err:
        raise UpstreamError(f"{image}: {err}") from err
    env = (config.get("config") or {}).get("Env") or []
    return dict(item.split("=", 1) for item in env if isinstance(item, str) and "=" in item)


def require_cuda_differences(
    data: MatrixData, *, registry: str | None = None, timeout_s: float = 20.0
) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
    """(image, matrix branches, image branches) for each image_require_cuda row the live image contradicts."""
    found = []
    for row in data.image_require_cuda:
        image = f"{row.repository}:{tag_for(row.cuda)}"
        env = read_image_env(image, registry=registry, timeout_s=timeout_s)
        value = env.get("NVIDIA_REQUIRE_CUDA")
        if value is None:
            raise UpstreamError(f"{image}: the image environment has no NVIDIA_REQUIRE_CUDA")
        _, branches = parse_require_cuda(value)
        if branches != tuple(row.admitted_branches):
            found.append((image, tuple(row.admitted_branches), branches))
    return found
