"""The children pulumi-kubernetes's `yaml/v2:ConfigFile` and `yaml/v2:ConfigGroup` register, built from the program's
own manifests: local files, YAML text and objects the program holds.

Both are multi-language components (pulumi_kubernetes/yaml/v2/ConfigFile.py and ConfigGroup.py register with
`remote=True`): the real engine hands them to the provider's Construct, which parses the manifests and registers
each object as a child resource through the engine, so the pack judges the objects, never the component's inputs.
The offline gate does the same for what it can read. Source: pulumi/pulumi-kubernetes@94977969d6 (the newest
commit the mirror holds, past v4.32.0; the project pins 4.34.2, whose tag the mirror lacks):
- ConfigFile Construct: `file`, `resourcePrefix` (default: the component's name), `skipAwait`; Parse with no glob,
  Normalize, Register with the component as parent: provider/pkg/provider/yaml/v2/configfile.go lines 88-126.
- ConfigGroup Construct: `files` (globs), `yaml`, `objs`, the same prefix rule: configgroup.go lines 92-138.
- Parse: a file with a URL scheme is fetched over the network, else read from disk (globs sorted), then the YAML
  text; empty documents are skipped: yaml.go lines 52-111 and 114-137.
- Normalize: `kind`, `apiVersion` and `metadata.name` are required; `core/v1` becomes `v1`; list kinds are
  expanded into their items: yaml.go lines 147-176 and 227-258.
- register: the resource name is `<prefix>:<namespace>/<name>` (`<prefix>:<name>` without a namespace), with the
  `pulumi.com/skipAwait` annotation when `skipAwait`: yaml.go lines 330-404.
Not emulated, so the component stays unjudged (tools/engine/coverage/unjudged.py): a manifest fetched over the
network, an input unknown in this phase (an `apply` over another resource's output), a file that does not exist or
does not parse (the real preview fails there). Normalize's default namespace (the provider's, asked of the cluster)
is not applied: an object without `metadata.namespace` keeps none, which no policy reads.
"""

from __future__ import annotations

import glob
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tools.engine.records import has_unknown

K8S_REPO = "https://github.com/pulumi/pulumi-kubernetes"
K8S_COMMIT = "94977969d64112b04e19945818a7d5d5f38f631d"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"
YAML_COMPONENTS = (CONFIG_FILE, CONFIG_GROUP)
_YAML_GO = "provider/pkg/provider/yaml/v2/yaml.go"
REGISTER_URL = f"{K8S_REPO}/blob/{K8S_COMMIT}/{_YAML_GO}#L400"  # yamlv2.RegisterResource: each object a child


@dataclass(frozen=True)
class KubeObject:
    """One object the Construct registers: its type token, resource name and inputs (the object itself)."""

    type: str
    name: str
    inputs: dict[str, Any]


class NotEmulated(Exception):
    """Why the objects cannot be built offline (module docstring)."""


def _is_url(path: str) -> bool:
    return "://" in path  # Go's url.Parse(...).IsAbs(): a scheme


def _read(path: str, base: Path, *, globbing: bool) -> list[str]:
    if _is_url(path):
        raise NotEmulated(f"{path} is fetched over the network by the provider")
    full = path if Path(path).is_absolute() else str(base / path)
    files = sorted(glob.glob(full)) if globbing and glob.has_magic(full) else [full]  # noqa: PTH207 - Go's Glob
    texts = []
    for file in files:
        try:
            texts.append(Path(file).read_text(encoding="utf-8"))
        except OSError as exc:
            raise NotEmulated(f"{path} cannot be read here ({exc.strerror})") from None
    return texts


def _decode(text: str, where: str) -> list[dict[str, Any]]:
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        raise NotEmulated(f"{where} does not parse as YAML ({exc.__class__.__name__})") from None
    out = []
    for doc in docs:
        if not doc:
            continue
        if not isinstance(doc, dict):
            raise NotEmulated(f"{where} holds a document that is not an object")
        out.append(doc)
    return out


def _expand(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for obj in objs:
        items = obj.get("items")
        if str(obj.get("kind", "")).endswith("List") and isinstance(items, list):
            out += _expand([i for i in items if isinstance(i, dict)])
        else:
            out.append(obj)
    return out


def type_token(api_version: str, kind: str) -> str:
    """`apps/v1`, `Deployment` -> `kubernetes:apps/v1:Deployment`; `v1`, `Pod` -> `kubernetes:core/v1:Pod`."""
    group_version = api_version if "/" in api_version else f"core/{api_version}"
    return f"kubernetes:{group_version}:{kind}"


def objects(component_type: str, name: str, inputs: Mapping[str, Any], base: Path) -> list[KubeObject]:
    """The objects the Construct of `component_type` registers for `inputs`; raises `NotEmulated` with the reason
    when they cannot be built offline. `base`: the program's folder, where relative paths resolve."""
    if has_unknown(dict(inputs)):
        raise NotEmulated("an input is unknown in this phase")
    texts: list[tuple[str, str]] = []
    given: list[dict[str, Any]] = []
    if component_type == CONFIG_FILE:
        file = str(inputs.get("file") or "")
        texts += [(file, t) for t in _read(file, base, globbing=False)]
    else:
        for file in inputs.get("files") or []:
            texts += [(str(file), t) for t in _read(str(file), base, globbing=True)]
        if isinstance(inputs.get("yaml"), str):
            texts.append(("yaml", inputs["yaml"]))
        given = [dict(o) for o in inputs.get("objs") or [] if isinstance(o, Mapping)]
    decoded = [obj for where, text in texts for obj in _decode(text, where)]
    prefix = inputs.get("resourcePrefix")
    prefix = name if not isinstance(prefix, str) else prefix
    out = []
    for given_obj in _expand([*decoded, *given]):
        obj = dict(given_obj)
        metadata: dict[str, Any] = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
        api_version, kind, obj_name = obj.get("apiVersion"), obj.get("kind"), metadata.get("name")
        if not (api_version and kind and obj_name):
            raise NotEmulated("an object lacks kind, apiVersion or metadata.name (the provider refuses it)")
        if str(api_version).startswith("core/"):
            obj["apiVersion"] = str(api_version).removeprefix("core/")
        namespace = metadata.get("namespace")
        resource = f"{namespace}/{obj_name}" if namespace else str(obj_name)
        if prefix:
            resource = f"{prefix}:{resource}"
        if inputs.get("skipAwait") is True:
            annotations = dict(metadata.get("annotations") or {})
            annotations["pulumi.com/skipAwait"] = "true"
            obj["metadata"] = {**metadata, "annotations": annotations}
        out.append(KubeObject(type_token(str(obj["apiVersion"]), str(kind)), resource, obj))
    return out
