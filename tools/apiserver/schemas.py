"""The schemas the API server validates an object against: Kubernetes' own, and each CRD's structural schema.

- Built-in objects validate against the OpenAPI schema of the cluster's Kubernetes version
  (kubernetes-validate's `-strict` schemas: an unknown field is an `additionalProperties` error, which
  `tools.apiserver.check` judges by the client's field validation, as the API server does).
- Custom resources validate against the upstream CRD's `openAPIV3Schema` (`crds/` of the upstream cache, and
  the CRDs bundled with upstream charts) after the API server's pruning, null pruning and defaulting
  (`tools.apiserver.structural`, which gives the order and its sources); `metadata` validates as an ObjectMeta.

Sources:
- Structural schemas, pruning and defaulting:
  https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema
  and #defaulting ("Defaulting happens on the object ... in the request to the API server")
- kubernetes-validate: https://github.com/willthames/kubernetes-validate
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import yaml
from referencing import Registry, Resource

OBJECT_META_REF = "https://kubernetes.io/api/_definitions.json#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


@cache
def schema_version(kubernetes_version: str) -> str:
    """`1.35` -> `1.35.0`: the kubernetes-validate schema directory for that minor version, which must exist."""
    from kubernetes_validate import utils as kv_utils  # noqa: PLC0415 - loaded when a built-in object is checked

    wanted = kubernetes_version.removeprefix("v")
    available = kv_utils.all_versions()
    exact = [v for v in available if v == wanted or kv_utils.major_minor(v) == kv_utils.major_minor(wanted)]
    if not exact:
        raise LookupError(
            f"Kubernetes {kubernetes_version}: kubernetes-validate has no schemas for it; available: "
            f"{', '.join(available)}. Pin a kubernetes-validate release that ships it."
        )
    return str(exact[-1])


def newest_version() -> str:
    from kubernetes_validate import utils as kv_utils  # noqa: PLC0415

    return str(kv_utils.latest_version())


@cache
def builtin_registry(version: str) -> Registry:
    from kubernetes_validate import utils as kv_utils  # noqa: PLC0415

    definitions = kv_utils.schema_contents(f"kubernetes-json-schema/v{version}-local-strict/_definitions.json", version)
    registry: Registry = Resource.from_contents(definitions) @ Registry()
    return registry


def builtin_schema(obj: Mapping[str, Any], version: str) -> dict[str, Any] | None:
    from kubernetes_validate import utils as kv_utils  # noqa: PLC0415

    # File naming as kubernetes-validate does it: <kind>-<group prefix>-<version>.json.
    api_version = str(obj.get("apiVersion", ""))
    group, _, ver = api_version.rpartition("/")
    stem = f"{str(obj.get('kind', '')).lower()}-{group.split('.')[0] + '-' if group else ''}{ver}"
    try:
        schema: dict[str, Any] = kv_utils.schema_contents(
            f"kubernetes-json-schema/v{version}-local-strict/{stem}.json", version
        )
    except FileNotFoundError:
        return None
    return schema


def error_path(error: jsonschema.ValidationError) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")


def errors(validator: Any, obj: Any) -> Iterator[jsonschema.ValidationError]:
    yield from sorted(validator.iter_errors(obj), key=lambda e: (error_path(e), e.message))


_BUILTIN_VALIDATORS: dict[tuple[str, str, str], Any] = {}


def builtin_validator(obj: Mapping[str, Any], version: str) -> Any:
    """The validator of a built-in kind at a Kubernetes version (None: no schema), built once per process."""
    key = (str(obj.get("apiVersion", "")), str(obj.get("kind", "")), version)
    if key not in _BUILTIN_VALIDATORS:
        schema = builtin_schema(obj, version)
        _BUILTIN_VALIDATORS[key] = (None if schema is None
                                    else jsonschema.Draft202012Validator(schema, registry=builtin_registry(version)))
    return _BUILTIN_VALIDATORS[key]


@cache
def meta_validator(version: str) -> Any:
    return jsonschema.Draft202012Validator({"$ref": OBJECT_META_REF}, registry=builtin_registry(version))


# --------------------------------------------------------------------------------------------------
# CRD schemas
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CrdVersion:
    group: str
    kind: str
    version: str
    served: bool
    source: str
    original: dict[str, Any]  # as published: defaults, x-kubernetes-validations, list types
    status_subresource: bool = False  # `subresources.status`: a create cannot set status


_CRD_VALIDATORS: dict[tuple[str, str, str, str], Any] = {}


def crd_validator(entry: CrdVersion) -> Any:
    """The validator of a CRD version's schema (Draft 4, `nullable`, Kubernetes formats, RE2 patterns: step 4 of
    `tools.apiserver.structural`), built once per process; it runs on the pruned, defaulted object."""
    from tools.apiserver import structural  # noqa: PLC0415 - RE2 loads only when a custom resource is checked

    key = (entry.source, entry.group, entry.kind, entry.version)
    if key not in _CRD_VALIDATORS:
        _CRD_VALIDATORS[key] = structural.CrdValidator(structural.validation_schema(entry.original))
    return _CRD_VALIDATORS[key]


def _crd_files(upstream: Path) -> Iterable[Path]:
    yield from sorted((upstream / "crds").rglob("*.yaml"))
    yield from sorted((upstream / "charts").glob("*/crds/*.yaml"))


def _versions(doc: Mapping[str, Any], path: Path) -> dict[str, CrdVersion]:
    spec = doc["spec"]
    out = {}
    for v in spec.get("versions", []):
        schema = (v.get("schema") or {}).get("openAPIV3Schema")
        if schema is not None:
            out[v["name"]] = CrdVersion(group=spec["group"], kind=spec["names"]["kind"], version=v["name"],
                                        served=bool(v.get("served", True)), source=str(path),
                                        original=schema,
                                        status_subresource="status" in (v.get("subresources") or {}))
    return out


def _documents(path: Path) -> Iterator[dict[str, Any]]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: CRDs are large
    for doc in yaml.load_all(path.read_text(encoding="utf-8"), Loader=loader):
        if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
            yield doc


@cache
def load_crds(upstream: Path) -> dict[tuple[str, str], dict[str, CrdVersion]]:
    """(group, kind) -> version -> its schema, from every upstream CRD file (read once per process)."""
    crds: dict[tuple[str, str], dict[str, CrdVersion]] = {}
    for path in _crd_files(upstream):
        for doc in _documents(path):
            crds.setdefault((doc["spec"]["group"], doc["spec"]["names"]["kind"]), {}).update(_versions(doc, path))
    return crds


@cache
def _texts(upstream: Path) -> tuple[tuple[Path, str], ...]:
    return tuple((path, path.read_text(encoding="utf-8")) for path in _crd_files(upstream))


@cache
def find_crd(upstream: Path, group: str, kind: str) -> dict[str, CrdVersion] | None:
    """The CRD of (group, kind) in the upstream cache, or None; parses only the files that can hold it."""
    found: dict[str, CrdVersion] = {}
    for path, text in _texts(upstream):
        if f"group: {group}" not in text or f"kind: {kind}" not in text:
            continue
        for doc in _documents(path):
            if (doc["spec"]["group"], doc["spec"]["names"]["kind"]) == (group, kind):
                found.update(_versions(doc, path))
    return found or None
