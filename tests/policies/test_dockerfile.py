"""The base image of an image the program builds: the FROM line of its Dockerfile, as Docker resolves it.

Docker's rules (https://docs.docker.com/reference/dockerfile/#from,
https://docs.docker.com/reference/dockerfile/#understand-how-arg-and-from-interact): the built stage is the
`target`, else the last; `FROM <stage>` builds on an earlier stage; an ARG before the first FROM takes the build's
value, else its default. The build inputs as pulumi-docker-build, pulumi-docker v4 and awsx declare them.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

from policies.gpu_guard.rules._dockerfile import (
    AWSX,
    DOCKER,
    DOCKER_BUILD,
    PROGRAM_DIR_ENV,
    Builds,
    base_image,
    build_of,
)

MULTI = ("ARG CUDA=12.2.0\n"
         "FROM nvidia/cuda:${CUDA}-devel-ubuntu22.04 AS build\nRUN make\n"
         "FROM --platform=linux/amd64 nvidia/cuda:${CUDA}-runtime-ubuntu22.04 AS Runtime\nCOPY --from=build /o /o\n"
         "FROM runtime AS final\nFROM final\n")


def _resource(rtype: str, props: dict[str, Any], name: str = "image", deps: dict[str, list[Any]] | None = None) -> Any:
    return SimpleNamespace(resource_type=rtype, props=unknown_checking_proxy(props), urn=f"urn:{rtype}::{name}",
                           name=name, property_dependencies=deps or {})


def _base(props: dict[str, Any], rtype: str = DOCKER_BUILD) -> tuple[str | None, str]:
    build = build_of(_resource(rtype, props))
    assert build is not None
    return base_image(build)


@pytest.mark.parametrize(("props", "expected"), [
    ({"dockerfile": {"inline": MULTI}}, ("nvidia/cuda:12.2.0-runtime-ubuntu22.04", "dockerfile.inline")),
    ({"dockerfile": {"inline": MULTI}, "buildArgs": {"CUDA": "12.8.1"}},
     ("nvidia/cuda:12.8.1-runtime-ubuntu22.04", "dockerfile.inline")),
    ({"dockerfile": {"inline": MULTI}, "target": "build"},
     ("nvidia/cuda:12.2.0-devel-ubuntu22.04", "dockerfile.inline")),
    ({"dockerfile": {"inline": MULTI}, "target": "FINAL"},
     ("nvidia/cuda:12.2.0-runtime-ubuntu22.04", "dockerfile.inline")),
    ({"dockerfile": {"inline": MULTI}, "target": "test"},
     (None, "dockerfile.inline has no stage named 'test' (the build's target)")),
    ({"dockerfile": {"inline": "ARG BASE\nFROM $BASE\n"}},
     (None, "dockerfile.inline: FROM $BASE uses build arg BASE, which has no value and no default")),
    ({"dockerfile": {"inline": "ARG BASE\nFROM ${BASE}\n"}, "buildArgs": {"BASE": "python:3.11"}},
     ("python:3.11", "dockerfile.inline")),
    ({"dockerfile": {"inline": "ARG A=1 B=nvidia/cuda:13.0.0-base-ubuntu24.04\nFROM $B\n"}},
     ("nvidia/cuda:13.0.0-base-ubuntu24.04", "dockerfile.inline")),
    ({"dockerfile": {"inline": "FROM python:3.11\nARG LATE=x\nFROM python:$LATE\n"}},
     (None, "dockerfile.inline: FROM python:$LATE uses build arg LATE, which has no value and no default")),
    ({"dockerfile": {"inline": "# nothing here\nRUN true\n"}}, (None, "dockerfile.inline has no FROM line")),
    ({"dockerfile": {"inline": "FROM nvidia/cuda:12.2.0-base-ubuntu22.04 AS x\nFROM python:3.11\n"}},
     ("python:3.11", "dockerfile.inline")),  # the last stage, not the one before
    ({"dockerfile": {"inline": "ARG REPO=nvidia/cuda\nARG TAG=12.2.0-base-ubuntu22.04\nFROM ${REPO}:${TAG}\n"}},
     ("nvidia/cuda:12.2.0-base-ubuntu22.04", "dockerfile.inline")),  # every ARG line counts
    ({"dockerfile": {"inline": "ARG cuda=12.4.1\nFROM nvidia/cuda:${cuda}-base-ubuntu22.04\n"}},
     ("nvidia/cuda:12.4.1-base-ubuntu22.04", "dockerfile.inline")),  # lower-case names too
    ({"dockerfile": {"location": "https://example.com/Dockerfile"}},
     (None, "its Dockerfile https://example.com/Dockerfile is remote")),
    ({"dockerfile": {"location": "git@github.com:o/r.git#main:Dockerfile"}},
     (None, "its Dockerfile git@github.com:o/r.git#main:Dockerfile is remote")),
    ({"context": {"location": UNKNOWN_STRING_VALUE}}, (None, "context.location is not known in this preview")),
    ({"tags": ["x"]}, (None, "context.location is not set")),
])
def test_the_base_image_of_the_built_stage(props: dict[str, Any], expected: tuple[str | None, str]) -> None:
    assert _base(props) == expected


def test_a_relative_dockerfile_is_read_from_the_program_directory(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Dockerfile").write_text("FROM nvidia/cuda:12.2.0-runtime-ubuntu22.04\n")
    (tmp_path / "gpu.Dockerfile").write_text("FROM nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04\n")
    monkeypatch.setenv(PROGRAM_DIR_ENV, str(tmp_path))
    assert _base({"context": {"location": "./app"}}) == ("nvidia/cuda:12.2.0-runtime-ubuntu22.04", "app/Dockerfile")
    assert _base({"context": {"location": "./app"}, "dockerfile": {"location": "gpu.Dockerfile"}}) == (
        "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04", "gpu.Dockerfile")
    assert _base({"build": {"context": "app"}}, DOCKER) == ("nvidia/cuda:12.2.0-runtime-ubuntu22.04", "app/Dockerfile")
    assert _base({"repositoryUrl": "r", "dockerfile": str(tmp_path / "gpu.Dockerfile")}, AWSX) == (
        "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04", str(tmp_path / "gpu.Dockerfile"))
    assert _base({"repositoryUrl": "r", "path": "app"}, AWSX) == (  # awsx 1.x
        "nvidia/cuda:12.2.0-runtime-ubuntu22.04", "app/Dockerfile")
    monkeypatch.chdir(tmp_path / "app")
    monkeypatch.delenv(PROGRAM_DIR_ENV)
    assert _base({"repositoryUrl": "r"}, AWSX) == ("nvidia/cuda:12.2.0-runtime-ubuntu22.04", "Dockerfile")
    (tmp_path / "bad.Dockerfile").write_bytes(b"\xff\xfe")
    assert _base({"dockerfile": {"location": str(tmp_path / "bad.Dockerfile")}}) == (None, (
        f"its Dockerfile {tmp_path / 'bad.Dockerfile'} cannot be read from the pack (UnicodeDecodeError; relative "
        f"paths are read from {PROGRAM_DIR_ENV}, else the pack's directory)"))


def test_a_build_s_references_and_inputs_as_each_provider_declares_them() -> None:
    build = build_of(_resource(DOCKER_BUILD, {"tags": ["r/a:1", "r/a:latest"], "ref": "r/a:1@sha256:9",
                                              "buildArgs": {"X": 1}, "target": "", "context": {"location": "."}}))
    assert build is not None
    assert (build.refs, dict(build.args), build.target, build.dockerfile) == (
        frozenset({"r/a:1", "r/a:latest", "r/a:1@sha256:9"}), {"X": "1"}, None, "Dockerfile")
    build = build_of(_resource(DOCKER_BUILD, {"tags": UNKNOWN_STRING_VALUE, "ref": UNKNOWN_STRING_VALUE,
                                              "dockerfile": {"location": UNKNOWN_STRING_VALUE},
                                              "context": {"location": "."}}))
    assert build is not None and (build.refs, build.dockerfile, build.unknown) == (
        frozenset(), None, "dockerfile.location is not known in this preview")
    docker = build_of(_resource(DOCKER, {"imageName": "r/b:2", "repoDigest": "r/b@sha256:1",
                                         "build": {"context": "svc", "dockerfile": "svc/gpu.Dockerfile",
                                                   "args": {"A": "b"}, "target": "run"}}))
    assert docker is not None and (docker.refs, docker.dockerfile, dict(docker.args), docker.target) == (
        frozenset({"r/b:2", "r/b@sha256:1"}), "svc/gpu.Dockerfile", {"A": "b"}, "run")
    awsx = build_of(_resource(AWSX, {"imageUri": "1.dkr.ecr/r@sha256:2", "args": {"K": "v"}}))
    assert awsx is not None and (awsx.refs, awsx.dockerfile, dict(awsx.args)) == (
        frozenset({"1.dkr.ecr/r@sha256:2"}), "Dockerfile", {"K": "v"})
    assert build_of(_resource("aws:ecr/repository:Repository", {})) is None


def test_a_container_is_linked_to_a_build_by_reference_or_by_property_dependencies() -> None:
    first = _resource(DOCKER_BUILD, {"tags": ["r/a:1"]}, "first")
    second = _resource(DOCKER_BUILD, {"tags": ["r/b:1"]}, "second")
    workload = _resource("kubernetes:apps/v1:Deployment", {}, "serve", {"spec": [second]})
    both = _resource("kubernetes:apps/v1:Deployment", {}, "both", {"spec": [first, second]})
    builds = Builds([first, second, workload, both])
    assert bool(builds) and not Builds([workload])

    def linked(urn: str, image: str) -> str | None:
        build = builds.of(urn, image)
        return build.resource.name if build else None

    assert linked("nowhere", "r/a:1") == "first"
    assert linked("nowhere", "r/a:1@sha256:77") == "first"  # digest aside
    assert linked(workload.urn, "1.dkr.ecr/other@sha256:3") == "second"  # through the spec's dependencies
    assert linked(workload.urn, "r/a:1") == "first"  # the reference wins
    assert linked(both.urn, "1.dkr.ecr/other@sha256:3") is None  # two builds: not known which
    assert linked("nowhere", "r/c:1") is None


def _stack_twin(resources: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    from policies.gpu_guard.base import all_policies  # noqa: PLC0415
    from tests.policies.harness import run_policy  # noqa: PLC0415

    twin = next(p for p in all_policies() if p.name == "gpu-workload-cuda-declared-unseen")
    return [(v.message, v.urn) for v in run_policy(twin, resources, None).violations]


def _deployment(containers: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"type": "kubernetes:apps/v1:Deployment", "name": "serve", **extra, "props": {
        "metadata": {"name": "serve"},
        "spec": {"template": {"metadata": {"labels": {"app": "serve"}}, "spec": {"containers": containers}}}}}


GPU = {"limits": {"nvidia.com/gpu": 1}}


def test_the_unseen_twin_follows_the_engine_s_property_dependencies_and_names_the_workload() -> None:
    image = {"type": DOCKER_BUILD, "name": "img", "props": {"dockerfile": {"inline": "FROM python:3.11\n"}}}
    serve = _deployment([{"name": "proxy", "image": "envoyproxy/envoy:v1.31.2"},
                         {"name": "model", "image": "1.dkr.ecr/serve@sha256:1", "resources": GPU}],
                        propertyDependencies={"spec": ["img"]})
    assert _stack_twin([image, serve]) == [(
        "Deployment 'serve' container 'model' (image 1.dkr.ecr/serve@sha256:1) requests nvidia.com/gpu but the pack "
        "cannot see its CUDA runtime: it runs the image 'img' builds, whose base image python:3.11 (FROM of "
        "dockerfile.inline) is not an nvidia/cuda or known NGC release tag. To let the pack judge it "
        "(cuda-driver-compatible waits on it): label the pod template gpu-platform.io/cuda: \"<the image's CUDA "
        "version>\", e.g. \"12.8\", or build it FROM an nvidia/cuda or NGC image.",
        "urn:pulumi:test::gpu-platform::kubernetes:apps/v1:Deployment::serve")]
    cuda = {"type": DOCKER_BUILD, "name": "img", "props": {"dockerfile": {
        "inline": "FROM nvidia/cuda:12.2.0-runtime-ubuntu22.04\n"}}}
    assert _stack_twin([cuda, serve]) == []  # the FROM line tells
    labelled = _deployment([{"name": "model", "image": "x/y:1", "resources": GPU}])
    labelled["props"]["spec"]["template"]["metadata"]["labels"]["gpu-platform.io/cuda"] = "not-a-version"
    assert _stack_twin([labelled]) == []  # a label, right or wrong, is gpu-workload-cuda-declared's
