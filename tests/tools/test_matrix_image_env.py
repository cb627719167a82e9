"""`tools.matrix refresh --fetch` reads NVIDIA_REQUIRE_CUDA from each recorded nvidia/cuda image (issue 17): a
loopback registry serves the index, the linux/amd64 manifest and the config blob, as Docker Hub does."""

from __future__ import annotations

import json

from policies.gpu_guard.matrix import MATRIX_PATH, parse_matrix
from tests.policies.conftest_registry import fake_server
from tests.tools.test_matrix_cli import TODAY, _docs_and_ci, _require_upstream
from tools.matrix.cli import main
from tools.matrix.image_env import parse_require_cuda, read_image_env, tag_for

BRANDS = ("unknown", "grid", "tesla", "nvidia", "quadro")


def require(cuda: str, branches: tuple[int, ...]) -> str:
    clauses = [f"brand={b},driver>={n},driver<{n + 1}" for n in branches for b in BRANDS]
    return " ".join([f"cuda>={cuda}", *clauses])


def test_parse_require_cuda_reads_the_branch_clauses():
    value = require("12.8", (470, 535, 550, 560, 565))
    assert parse_require_cuda(value) == ("12.8", (470, 535, 550, 560, 565))
    # A range wider than one branch is not a branch clause.
    assert parse_require_cuda("cuda>=12.8 brand=tesla,driver>=525,driver<580") == ("12.8", ())


def registry_files(envs: dict[str, str]) -> dict[str, bytes]:
    """An OCI index -> amd64 manifest -> config blob per tag, with NVIDIA_REQUIRE_CUDA set."""
    files: dict[str, bytes] = {"/v2/nvidia/driver/tags/list?n=1000": json.dumps({"tags": []}).encode()}
    for number, (tag, value) in enumerate(envs.items()):
        config = json.dumps({"config": {"Env": ["PATH=/usr/bin", f"NVIDIA_REQUIRE_CUDA={value}"]}}).encode()
        manifest = json.dumps({"config": {"digest": f"sha256:c{number}"}}).encode()
        index = json.dumps({"manifests": [
            {"digest": f"sha256:a{number}", "platform": {"architecture": "arm64", "os": "linux"}},
            {"digest": f"sha256:m{number}", "platform": {"architecture": "amd64", "os": "linux"}},
        ]}).encode()
        files[f"/v2/nvidia/cuda/manifests/{tag}"] = index
        files[f"/v2/nvidia/cuda/manifests/sha256:m{number}"] = manifest
        files[f"/v2/nvidia/cuda/blobs/sha256:c{number}"] = config
    return files


def serve(files: dict[str, bytes]):
    def handle(handler):
        body = files.get(handler.path)
        if body is None and handler.path.startswith("/v2/nvidia/driver/tags/list"):
            body = files["/v2/nvidia/driver/tags/list?n=1000"]
        handler.send_response(200 if body is not None else 404)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body or b"")))
        handler.end_headers()
        if handler.command == "GET" and body:
            handler.wfile.write(body)

    return fake_server(handle)


def recorded() -> dict[str, tuple[int, ...]]:
    data = parse_matrix(MATRIX_PATH.read_text(encoding="utf-8"))
    return {tag_for(r.cuda): tuple(r.admitted_branches) for r in data.image_require_cuda}


def test_read_image_env_follows_the_index_to_the_amd64_config():
    with serve(registry_files({"12.8.1-base-ubuntu22.04": require("12.8", (470, 535))})) as (url, seen):
        env = read_image_env("nvidia/cuda:12.8.1-base-ubuntu22.04", registry=url, timeout_s=5)
    assert env["NVIDIA_REQUIRE_CUDA"].startswith("cuda>=12.8 brand=unknown,driver>=470,driver<471")
    assert [line.split()[1] for line in seen] == [
        "/v2/nvidia/cuda/manifests/12.8.1-base-ubuntu22.04", "/v2/nvidia/cuda/manifests/sha256:m0",
        "/v2/nvidia/cuda/blobs/sha256:c0",
    ]


def fetch(url: str, docs: str) -> list[str]:
    return ["refresh", "--fetch", "--docs-url", f"{docs}/gpu-operator", "--ci-url", f"{docs}/ci/.common-ci.yml",
            "--registry", url, "--image-registry", url, "--timeout", "5", "--no-image-releases", *TODAY]


def test_refresh_fetch_agrees_with_images_that_match_the_matrix(capsys):
    upstream = _require_upstream()
    envs = {tag: require(".".join(tag.split(".")[:2]), branches) for tag, branches in recorded().items()}
    with serve(registry_files(envs)) as (url, _), serve(_docs_and_ci(upstream)) as (docs, _):
        code = main(fetch(url, docs))
    out = capsys.readouterr().out
    assert code == 0, out
    assert "agrees with upstream" in out


def test_refresh_fetch_catches_an_image_that_admits_other_branches(capsys):
    """The fact of issue 17: the matrix held Triton's [470, 525, 535, 545] for CUDA 12.8; the nvidia/cuda image
    admits R470, R535, R550, R560, R565. Serve an image that admits R525 and R545 and the fetch reports it."""
    upstream = _require_upstream()
    envs = {tag: require(".".join(tag.split(".")[:2]), branches) for tag, branches in recorded().items()}
    envs["12.8.1-base-ubuntu22.04"] = require("12.8", (470, 525, 535, 545))
    with serve(registry_files(envs)) as (url, _), serve(_docs_and_ci(upstream)) as (docs, _):
        code = main(fetch(url, docs))
    out = capsys.readouterr().out
    assert code == 1
    assert ("image_require_cuda[nvidia/cuda:12.8.1-base-ubuntu22.04].admitted_branches: matrix.yaml "
            "[470, 535, 550, 560, 565]; upstream [470, 525, 535, 545]") in out


def test_refresh_fetch_without_the_image_is_a_usage_error_naming_the_skip(capsys):
    upstream = _require_upstream()
    with serve(registry_files({})) as (url, _), serve(_docs_and_ci(upstream)) as (docs, _):
        code = main(fetch(url, docs))
    assert code == 2
    err = capsys.readouterr().err
    assert "nvidia/cuda:12.8.1-base-ubuntu22.04" in err and "HTTP 404" in err and "--no-images" in err


def test_no_images_skips_the_image_environments(capsys):
    upstream = _require_upstream()
    with serve(registry_files({})) as (url, seen), serve(_docs_and_ci(upstream)) as (docs, _):
        code = main([*fetch(url, docs), "--no-images"])
    assert code == 0, capsys.readouterr().out
    assert not [line for line in seen if "nvidia/cuda" in line]
