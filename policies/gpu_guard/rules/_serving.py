"""The serving containers of a workload, read from its own inputs (not a policy): each GPU container with its image
and the vLLM flags of its arguments, for serving-model-fits (vLLM only) and serving-image-architecture (every
recorded serving repository: vLLM, TGI).

A container is a vLLM server when its image is of vllm/vllm-openai or its command line runs `vllm serve`.
Flags are read as vLLM's argument parser reads them: `--flag value` or `--flag=value`, and `-tp` for
`--tensor-parallel-size` (vllm-project/vllm @ v0.34.0 vllm/engine/arg_utils.py:1223-1225); a shell command
(`sh -c "vllm serve ..."`) is split into words first.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..inventory import POD_TEMPLATE_PATHS
from ..matrix import Matrix
from ..props import as_list, get, to_int
from ..views import GPU_RESOURCE

VLLM_REPOSITORY = "vllm/vllm-openai"
MODEL_GIB_ANNOTATION = "gpu-platform.io/model-gib"
MODEL_SHAPE_ANNOTATION = "gpu-platform.io/model-shape"


@dataclass(frozen=True)
class ServingContainer:
    name: str
    image: str
    gpus: int
    words: tuple[str, ...]  # command + args, split into words

    def flag(self, *names: str) -> str | None:
        """The value of the last occurrence of a flag (argparse keeps the last)."""
        found: str | None = None
        for i, word in enumerate(self.words):
            for name in names:
                if word == name and i + 1 < len(self.words):
                    found = self.words[i + 1]
                elif word.startswith(f"{name}="):
                    found = word.split("=", 1)[1]
        return found

    @property
    def runs_vllm(self) -> bool:
        return any(w == "vllm" and i + 1 < len(self.words) and self.words[i + 1] == "serve"
                   for i, w in enumerate(self.words))


def _words(container: Any) -> tuple[str, ...]:
    raw = [str(w) for w in as_list(get(container, "command")) + as_list(get(container, "args"))]
    if len(raw) >= 2 and raw[0] in ("sh", "/bin/sh", "bash", "/bin/bash") and raw[1] == "-c":
        try:
            return tuple(shlex.split(" ".join(raw[2:])))
        except ValueError:
            return tuple(raw)
    return tuple(raw)


def serving_containers(resource_type: str, props: Any, matrix: Matrix, *,
                       vllm_only: bool = False) -> Iterator[ServingContainer]:
    """The GPU containers of a workload that run a recorded serving image (or `vllm serve`); `vllm_only`: vLLM's."""
    path = POD_TEMPLATE_PATHS.get(resource_type)
    if path is None:
        return
    template = get(props, *path) if path else props
    for c in as_list(get(template, "spec", "containers")):
        gpus = get(c, "resources", "limits", GPU_RESOURCE)
        if gpus is None:
            gpus = get(c, "resources", "requests", GPU_RESOURCE)
        container = ServingContainer(str(get(c, "name", default="")), str(get(c, "image", default="")),
                                     to_int(gpus) or 0, _words(c))
        repository = _serving_repository(container.image, matrix)
        if container.gpus > 0 and (container.runs_vllm or (repository is not None
                                                           and (not vllm_only or repository == VLLM_REPOSITORY))):
            yield container


def _serving_repository(image: str, matrix: Matrix) -> str | None:
    """The recorded serving repository of the image (any tag, recorded or not), or None."""
    reference = image.strip().split("@", 1)[0]
    repository = reference.rsplit(":", 1)[0] if ":" in reference.rsplit("/", 1)[-1] else reference
    repository = repository.removeprefix("docker.io/").removeprefix("index.docker.io/")
    return repository if any(row.repository == repository for row in matrix.data.serving_images) else None
