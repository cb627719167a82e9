"""The base image of an image the program builds itself, from the `FROM` line of its Dockerfile.

Not a policy. A program that builds its serving image (`FROM nvidia/cuda:12.2.0-runtime-ubuntu22.04`) hands
the workload a registry reference whose tag says nothing of CUDA. The CUDA runtime is the base image's, and
the base image is the `FROM` of the stage that is built: the `target` stage, else the last one. A `FROM` that
names an earlier stage (`FROM builder`) is that stage's base. `ARG`s before the first `FROM` are substituted
with the build's args, else their defaults; a `FROM` that keeps a `$` after that is not known.

The build resources, with their inputs as their providers declare them (relative paths are the program's):
- pulumi-docker-build `docker-build:index:Image`: `context.location`, `dockerfile.location` (default
  `<context>/Dockerfile`) or `dockerfile.inline`, `buildArgs`, `target`; the reference: `tags`, output `ref`.
  https://www.pulumi.com/registry/packages/docker-build/api-docs/image/
- pulumi-docker v4 `docker:index/image:Image`: `build.context`, `build.dockerfile` (absolute or relative to
  the program, default `<context>/Dockerfile`), `build.args`, `build.target`; the reference: `imageName`,
  output `repoDigest`. https://www.pulumi.com/registry/packages/docker/api-docs/image/ and
  https://github.com/pulumi/pulumi-docker/releases/tag/v4.0.1
- pulumi-awsx `awsx:ecr:Image`: `context` (awsx 1.x: `path`; default the program's directory), `dockerfile`,
  `args`, `target`; the reference: output `imageUri`. https://www.pulumi.com/registry/packages/awsx/api-docs/ecr/image/
  and https://www.pulumi.com/registry/packages/awsx@1.x/api-docs/ecr/image

The pack runs beside the program, not in its directory: a relative path is read from the directory named by
the environment variable GPU_GUARD_PROGRAM_DIR (the offline gate's program), else the pack's working
directory. Dockerfile syntax (FROM, ARG, stages): https://docs.docker.com/reference/dockerfile/#from and
https://docs.docker.com/reference/dockerfile/#understand-how-arg-and-from-interact; parsed with
dockerfile-parse (containerbuildsystem, BSD).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dockerfile_parse import DockerfileParser  # type: ignore[import-untyped]
from dockerfile_parse.parser import image_from  # type: ignore[import-untyped]

from ..props import Deferred, as_list, as_str_map, deferred_get

DOCKER_BUILD = "docker-build:index:Image"
DOCKER = "docker:index/image:Image"
AWSX = "awsx:ecr:Image"
BUILD_TYPES = (DOCKER_BUILD, DOCKER, AWSX)
PROGRAM_DIR_ENV = "GPU_GUARD_PROGRAM_DIR"


@dataclass(frozen=True)
class Build:
    """An image the program builds: where its Dockerfile is, and the references a workload may run it by."""

    resource: Any
    dockerfile: str | None  # the path as the program wrote it; None: inline, not known, or remote
    inline: str | None
    args: Mapping[str, str]
    target: str | None
    refs: frozenset[str]
    unknown: str | None = None  # why the Dockerfile cannot be found (an input not known in this preview)


# Per build type: the input paths of the context, the Dockerfile path, the inline Dockerfile, the build args and the
# target, and of the references (a list input is read whole), as each provider's schema spells them.
_INPUTS: dict[str, dict[str, tuple[tuple[str, ...], ...]]] = {
    DOCKER_BUILD: {"context": (("context", "location"),), "dockerfile": (("dockerfile", "location"),),
                   "inline": (("dockerfile", "inline"),), "args": (("buildArgs",),), "target": (("target",),),
                   "refs": (("tags",), ("ref",))},
    DOCKER: {"context": (("build", "context"),), "dockerfile": (("build", "dockerfile"),), "inline": (),
             "args": (("build", "args"),), "target": (("build", "target"),),
             "refs": (("imageName",), ("repoDigest",))},
    AWSX: {"context": (("context",), ("path",)), "dockerfile": (("dockerfile",),), "inline": (), "args": (("args",),),
           "target": (("target",),), "refs": (("imageUri",),)},
}


def build_of(resource: Any) -> Build | None:
    """The build a resource of BUILD_TYPES describes (None for any other resource)."""
    inputs = _INPUTS.get(resource.resource_type)
    if inputs is None:
        return None
    props = resource.props
    values = {key: [deferred_get(props, *path) for path in paths] for key, paths in inputs.items()}

    def one(key: str) -> Any:
        found = [v for v in values[key] if v is not None and not isinstance(v, Deferred)]
        return found[0] if found else None

    refs: set[str] = set()
    for value in values["refs"]:
        if not isinstance(value, Deferred):
            refs |= {str(v) for v in ([value] if isinstance(value, str) else as_list(value))
                     if not isinstance(v, Deferred)}
    context, dockerfile, inline = one("context"), one("dockerfile"), one("inline")
    if context is None and resource.resource_type == AWSX:
        context = "."  # awsx: the program's directory
    pending = [".".join(path) for key in ("context", "dockerfile", "inline")
               for path, value in zip(inputs[key], values[key], strict=True) if isinstance(value, Deferred)]
    unknown = None
    if dockerfile is None and inline is None:
        if pending:
            unknown = f"{', '.join(pending)} is not known in this preview"
        elif context is None:
            unknown = f"{'.'.join(inputs['context'][0])} is not set"
    path = str(dockerfile) if dockerfile is not None else (
        str(Path(str(context)) / "Dockerfile") if context is not None and inline is None and not pending else None)
    target = one("target")
    return Build(resource, path, str(inline) if inline is not None else None, as_str_map(one("args")),
                 str(target) if target else None, frozenset(refs), unknown)


def _read(build: Build) -> tuple[str | None, str]:
    """(the Dockerfile's text, where it was read) or (None, why it could not be)."""
    if build.inline is not None:
        return build.inline, "dockerfile.inline"
    if build.dockerfile is None:
        return None, str(build.unknown)  # build_of says why whenever it names no Dockerfile
    if "://" in build.dockerfile or build.dockerfile.startswith("git@"):
        return None, f"its Dockerfile {build.dockerfile} is remote"
    path = Path(build.dockerfile)
    if not path.is_absolute():
        path = Path(os.environ.get(PROGRAM_DIR_ENV) or Path.cwd()) / path
    try:
        return path.read_text(encoding="utf-8"), str(build.dockerfile)
    except (OSError, UnicodeDecodeError) as err:
        return None, (f"its Dockerfile {build.dockerfile} cannot be read from the pack ({err.__class__.__name__}; "
                      f"relative paths are read from {PROGRAM_DIR_ENV}, else the pack's directory)")


def base_image(build: Build) -> tuple[str | None, str]:
    """(the base image of the stage that is built, where it was read) or (None, why it is not known)."""
    text, where = _read(build)
    if text is None:
        return None, where
    parser = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8")), build_args=dict(build.args))
    froms = [image_from(i["value"]) for i in parser.structure if i["instruction"] == "FROM"]
    froms = [f for f in froms if f[0] is not None]
    if not froms:
        return None, f"{where} has no FROM line"
    valued = set(build.args) | _args_with_defaults(parser.structure)
    for raw, _ in froms:
        unset = sorted(set(_ARG_REF.findall(raw)) - valued)
        if unset:
            return None, f"{where}: FROM {raw} uses build arg {unset[0]}, which has no value and no default"
    images = parser.parent_images  # one per FROM with an image, ARGs substituted
    stages = [(images[i], froms[i][1]) for i in range(len(froms))]
    chosen = len(stages) - 1
    if build.target is not None:
        named = [i for i, (_, name) in enumerate(stages) if name and name.lower() == build.target.lower()]
        if not named:
            return None, f"{where} has no stage named {build.target!r} (the build's target)"
        chosen = named[0]
    image = stages[chosen][0]
    while True:  # FROM <an earlier stage>: that stage's base (each step goes to an earlier stage)
        earlier = [i for i, (_, name) in enumerate(stages[:chosen]) if name and name.lower() == image.lower()]
        if not earlier:
            break
        chosen = earlier[-1]
        image = stages[chosen][0]
    return image, where


# A build arg a FROM line refers to: $NAME or ${NAME} (https://docs.docker.com/reference/dockerfile/#environment-replacement)
_ARG_REF = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def _args_with_defaults(structure: list[dict[str, Any]]) -> set[str]:
    """The ARGs declared before the first FROM with a default (`ARG NAME=value`): the only ones a FROM may use."""
    names: set[str] = set()
    for instruction in structure:
        if instruction["instruction"] == "FROM":
            break
        if instruction["instruction"] == "ARG":
            names |= {m.group(1) for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)=", instruction["value"])}
    return names


def _bare(reference: str) -> str:
    """A reference without its digest: `repo:tag@sha256:...` -> `repo:tag`."""
    return reference.partition("@")[0]


class Builds:
    """The images a stack builds, and which one a workload's container runs.

    A container is linked to a build by value (its image is one of the build's references, digest aside) or,
    where its image is not known yet or names no build, through the engine's property dependencies: the
    workload's spec was computed from exactly one build resource.
    """

    def __init__(self, resources: Iterable[Any]) -> None:
        items = list(resources)
        self._builds = [b for r in items if r.resource_type in BUILD_TYPES if (b := build_of(r)) is not None]
        self._by_urn = {r.urn: r for r in items}

    def __bool__(self) -> bool:
        return bool(self._builds)

    def of(self, workload_urn: str, image: str) -> Build | None:
        """The build whose image the container runs, or None when none (or more than one) is linked."""
        by_value = [b for b in self._builds if _bare(image) in {_bare(ref) for ref in b.refs}]
        if len(by_value) == 1:
            return by_value[0]
        resource = self._by_urn.get(workload_urn)
        deps = getattr(resource, "property_dependencies", None) or {}
        urns = {d.urn for values in deps.values() for d in (values or ())}
        linked = [b for b in self._builds if b.resource.urn in urns]
        return linked[0] if len(linked) == 1 else None
