"""Conformance harness: would the API server and Helm accept what the preview rendered?

Three checks, each returning `Finding`s (an empty list means conformant):

- Built-in Kubernetes objects validate against the OpenAPI schema of the stack's Kubernetes version
  (kubernetes-validate's `-strict` schemas: unknown fields are rejected).
- Custom resources validate against the upstream CRD's `openAPIV3Schema` from `crds/` of the upstream
  cache (`make upstream`)
  (and the CRDs bundled with upstream charts), with `additionalProperties: false` injected wherever a
  schema declares `properties` without `x-kubernetes-preserve-unknown-fields`, because the API server
  prunes or rejects unknown fields of structural schemas; `metadata` validates as an ObjectMeta.
  CEL rules (`x-kubernetes-validations`) are not evaluated.
- Every key path of a Helm release's `values` exists in the upstream chart's `values.yaml`
  (`charts/<chart>/values.yaml` in the upstream cache); maps whose upstream value is `{}`/null, maps of
  free-form entries (labels, annotations, nodeSelector, env, resources ...) and lists are open; so is
  the section of a subchart (a `dependencies` entry of the chart's Chart.yaml), whose keys live in the
  subchart's own values.yaml, which upstream.lock.json does not pin.

Sources:
- Structural schemas and pruning: https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema
- kubernetes-validate: https://github.com/willthames/kubernetes-validate
"""

from __future__ import annotations

import copy
import difflib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import kubernetes_validate
import yaml
from kubernetes_validate import utils as kv_utils
from referencing import Registry, Resource

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
OBJECT_META_REF = "https://kubernetes.io/api/_definitions.json#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

# Keys whose value is a free-form map or list in every chart we use (Kubernetes passthrough fields).
# Source: https://helm.sh/docs/chart_best_practices/values/ (maps passed to templates with toYaml)
FREE_FORM_KEYS = frozenset({
    "nodeSelector", "labels", "annotations", "podLabels", "podAnnotations", "extraLabels", "additionalLabels",
    "commonLabels", "customLabels", "env", "extraEnv", "envFrom", "tolerations", "affinity", "resources",
    "securityContext", "podSecurityContext", "containerSecurityContext", "topologySpreadConstraints",
    "extraArgs", "args", "volumes", "volumeMounts", "extraVolumes", "extraVolumeMounts", "serviceAnnotations",
    "ingressClassParams", "additionalScrapeConfigs", "extraObjects", "extraManifests",
})


@dataclass(frozen=True)
class Finding:
    """One reason the API server or Helm would not take what was rendered."""

    rule: str  # kubernetes-schema | crd-schema | helm-values | no-schema | empty-render
    object: str  # kind/namespace/name, or helm release name
    path: str  # JSON path inside the object / values
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.object}: {self.path or '<root>'}: {self.message}"


# --------------------------------------------------------------------------------------------------
# Kubernetes versions and built-in schemas
# --------------------------------------------------------------------------------------------------


def schema_version(kubernetes_version: str) -> str:
    """`1.35` -> `1.35.0`: the kubernetes-validate schema directory for that minor version, which must exist."""
    wanted = kubernetes_version.removeprefix("v")
    available = kv_utils.all_versions()
    exact = [v for v in available if v == wanted or kv_utils.major_minor(v) == kv_utils.major_minor(wanted)]
    if not exact:
        raise LookupError(
            f"Kubernetes {kubernetes_version}: kubernetes-validate {kubernetes_validate.__name__} has no schemas "
            f"for it; available: {', '.join(available)}. Pin a kubernetes-validate release that ships it."
        )
    return str(exact[-1])


@cache
def _builtin_registry(version: str) -> Registry:
    definitions = kv_utils.schema_contents(f"kubernetes-json-schema/v{version}-local-strict/_definitions.json", version)
    registry: Registry = Resource.from_contents(definitions) @ Registry()
    return registry


def _builtin_schema(obj: Mapping[str, Any], version: str) -> dict[str, Any] | None:
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


def _path(error: jsonschema.ValidationError) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")


def _errors(validator: Any, obj: Any) -> Iterator[jsonschema.ValidationError]:
    yield from sorted(validator.iter_errors(obj), key=lambda e: (_path(e), e.message))


def object_name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{obj.get('kind')}/{meta.get('namespace') or '-'}/{meta.get('name')}"


# --------------------------------------------------------------------------------------------------
# CRD schemas
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CrdVersion:
    group: str
    kind: str
    version: str
    served: bool
    schema: dict[str, Any]
    source: str


def strict(schema: Any) -> Any:
    """A copy of an OpenAPI v3 CRD schema that rejects unknown fields and honours `nullable`."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) if k in ("items", "not") or k.endswith("Of") else v for k, v in schema.items()}
    if "properties" in schema:
        out["properties"] = {k: strict(v) for k, v in schema["properties"].items()}
        if not schema.get("x-kubernetes-preserve-unknown-fields") and "additionalProperties" not in schema:
            out["additionalProperties"] = False
    if isinstance(schema.get("additionalProperties"), dict):
        out["additionalProperties"] = strict(schema["additionalProperties"])
    if schema.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        if isinstance(out.get("enum"), list):
            out["enum"] = [*out["enum"], None]
    return out


def _crd_files(upstream: Path) -> Iterable[Path]:
    yield from sorted((upstream / "crds").rglob("*.yaml"))
    yield from sorted((upstream / "charts").glob("*/crds/*.yaml"))


@cache
def load_crds(upstream: Path) -> dict[tuple[str, str], dict[str, CrdVersion]]:
    """(group, kind) -> version -> its schema, from every upstream CRD file."""
    crds: dict[tuple[str, str], dict[str, CrdVersion]] = {}
    for path in _crd_files(upstream):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for v in spec.get("versions", []):
                schema = (v.get("schema") or {}).get("openAPIV3Schema")
                if schema is None:
                    continue
                key = (spec["group"], spec["names"]["kind"])
                crds.setdefault(key, {})[v["name"]] = CrdVersion(
                    group=spec["group"], kind=spec["names"]["kind"], version=v["name"],
                    served=bool(v.get("served", True)), schema=strict(schema), source=str(path),
                )
    return crds


# --------------------------------------------------------------------------------------------------
# Objects
# --------------------------------------------------------------------------------------------------


def validate_object(obj: Mapping[str, Any], kubernetes_version: str, upstream: Path | None) -> list[Finding]:
    """Validate one Kubernetes object; CRD-backed kinds need `upstream` (the upstream cache)."""
    name = object_name(obj)
    api_version = str(obj.get("apiVersion", ""))
    group, _, version = api_version.rpartition("/")
    kind = str(obj.get("kind", ""))
    version_dir = schema_version(kubernetes_version)
    crds = load_crds(upstream) if upstream is not None else {}
    crd = crds.get((group, kind))
    if crd is not None:
        entry = crd.get(version)
        if entry is None or not entry.served:
            served = sorted(v for v, e in crd.items() if e.served)
            return [Finding("crd-schema", name, "apiVersion",
                            f"{api_version} is not served by the CRD {kind}.{group}; served: {served}")]
        findings = [Finding("crd-schema", name, _path(e), e.message)
                    for e in _errors(jsonschema.Draft4Validator(entry.schema), obj)]
        meta_validator = jsonschema.Draft202012Validator({"$ref": OBJECT_META_REF},
                                                         registry=_builtin_registry(version_dir))
        findings += [Finding("crd-schema", name, "metadata." + _path(e) if _path(e) else "metadata", e.message)
                     for e in _errors(meta_validator, obj.get("metadata") or {})]
        return findings
    schema = _builtin_schema(obj, version_dir)
    if schema is None:
        where = f"Kubernetes {version_dir}" + (f" or the CRDs under {upstream}/crds" if upstream else "")
        return [Finding("no-schema", name, "", f"no schema for {api_version} {kind} in {where}")]
    validator = jsonschema.Draft202012Validator(schema, registry=_builtin_registry(version_dir))
    return [Finding("kubernetes-schema", name, _path(e), e.message) for e in _errors(validator, obj)]


# --------------------------------------------------------------------------------------------------
# Helm values
# --------------------------------------------------------------------------------------------------


def _is_open(key: str, upstream_value: Any) -> bool:
    if upstream_value is None or upstream_value == {} or key in FREE_FORM_KEYS:
        return True
    # A map keyed by label/annotation-like names ("app.kubernetes.io/name") is free-form data.
    return isinstance(upstream_value, dict) and any("/" in str(k) or "." in str(k) for k in upstream_value)


def values_findings(release: str, values: Any, upstream_values: Any, path: str = "",
                    subcharts: frozenset[str] = frozenset()) -> list[Finding]:
    """Every key path of `values` that the chart's values.yaml does not have (subchart sections are open)."""
    findings: list[Finding] = []
    if not isinstance(values, dict):
        return findings
    if not isinstance(upstream_values, dict):
        return [Finding("helm-values", release, path, f"the chart expects {type(upstream_values).__name__} "
                                                      f"here, not a map")]
    for key, value in sorted(values.items()):
        here = f"{path}.{key}" if path else str(key)
        if key not in upstream_values:
            near = difflib.get_close_matches(str(key), [str(k) for k in upstream_values], n=3)
            hint = f"; nearest: {', '.join(near)}" if near else ""
            findings.append(Finding("helm-values", release, here,
                                    f"unknown key {key!r}: the chart's values.yaml has no {here}{hint}"))
            continue
        up = upstream_values[key]
        if _is_open(str(key), up) or (not path and key in subcharts):
            continue
        if isinstance(value, dict):
            findings += values_findings(release, value, up, here)
    return findings


def chart_name(chart: str) -> str:
    """`oci://public.ecr.aws/karpenter/karpenter` -> `karpenter`; `gpu-operator` -> `gpu-operator`."""
    return chart.rstrip("/").rsplit("/", 1)[-1]


def release_findings(release: Mapping[str, Any], upstream: Path) -> list[Finding]:
    """Check one `kubernetes:helm.sh/v3:Release`'s inputs (chart, values) against the upstream chart."""
    inputs = release.get("inputs") or {}
    name = str(inputs.get("name") or release.get("name"))
    chart = chart_name(str(inputs.get("chart", "")))
    values_file = upstream / "charts" / chart / "values.yaml"
    if not values_file.is_file() and not inputs.get("values") and not inputs.get("valueYamlFiles"):
        return []  # a release that sets no value (the karpenter-crd chart) has no key to check
    if not values_file.is_file():
        return [Finding("helm-values", name, "chart",
                        f"no upstream values.yaml for chart {chart!r} at {values_file}; its values cannot be checked")]
    findings: list[Finding] = []
    if inputs.get("valueYamlFiles"):
        findings.append(Finding("helm-values", name, "valueYamlFiles",
                                "values from files are not checked; pass them as `values`"))
    upstream_values = _load_values(values_file)
    subcharts = _subcharts(values_file.parent / "Chart.yaml")
    return findings + values_findings(name, inputs.get("values") or {}, upstream_values, subcharts=subcharts)


@cache
def _load_values(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


@cache
def _subcharts(chart_yaml: Path) -> frozenset[str]:
    """The value sections owned by subcharts: each dependency's alias, or its name."""
    if not chart_yaml.is_file():
        return frozenset()
    chart = yaml.safe_load(chart_yaml.read_text(encoding="utf-8")) or {}
    return frozenset(str(d.get("alias") or d["name"]) for d in chart.get("dependencies") or [])


# --------------------------------------------------------------------------------------------------
# A whole preview
# --------------------------------------------------------------------------------------------------


def check_preview(out_dir: Path, kubernetes_version: str, upstream: Path) -> list[Finding]:
    """Check everything `python -m tools.preview --out OUT_DIR` wrote.

    A render with no manifest or no Helm release is itself a finding (`empty-render`): the stacks
    render both, so a check that found nothing to check would otherwise pass on nothing.
    """
    findings: list[Finding] = []
    manifests = sorted((out_dir / "manifests").glob("*.yaml"))
    if not manifests:
        findings.append(Finding("empty-render", str(out_dir / "manifests"), "",
                                "the preview wrote no manifest: there is nothing to check"))
    for manifest in manifests:
        obj = yaml.safe_load(manifest.read_text(encoding="utf-8"))
        findings += validate_object(obj, kubernetes_version, upstream)
    doc = json.loads((out_dir / "resources.json").read_text(encoding="utf-8"))
    releases = [res for res in doc["resources"] if res["type"] == HELM_RELEASE]
    if not releases:
        findings.append(Finding("empty-render", str(out_dir / "resources.json"), "",
                                f"the preview registered no {HELM_RELEASE}: no Helm values to check"))
    for res in releases:
        findings += release_findings(copy.deepcopy(res), upstream)
    return findings
