"""The API server's and Helm's verdict on every object and release a program registers, before anything exists.

`pulumi up` sends each Kubernetes object to the API server when its step runs: a field the schema does not
have, a wrong type, or a CRD's CEL rule that does not hold fails that step, after every resource before it
(the cluster, its node groups) was created. A Helm release with a values key the chart does not have installs,
and the setting never takes effect. This module gives both verdicts from the recording alone, for any program,
in every phase: `tools.preview` runs it before the policy gate and exits 1 on a rejection.

What is checked: every `kubernetes:<group>/<version>:<Kind>` resource the program registers (not reads) against
the schema of the cluster's Kubernetes version or the upstream CRD (`schemas`), the CRD's CEL rules
(`cel_rules`), and every `kubernetes:helm.sh/v3:Release`'s values against the chart's values.yaml
(`helm_values`). A value still unknown in this phase (an output of another resource in a first preview) is
not judged: the schema errors it causes are dropped and a rule that fails on it is an advisory; `--phase up`
judges the known values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tools.apiserver import schemas
from tools.apiserver.findings import Finding
from tools.apiserver.helm_values import HELM_RELEASE, release_findings
from tools.engine.records import UNKNOWN, RecordedResource, has_unknown

CLUSTER_TYPES = ("eks:index:Cluster", "aws:eks/cluster:Cluster")
# Kubernetes provider types that are not one API object (components that expand into many, or Helm).
NOT_OBJECTS = re.compile(r"^kubernetes:(helm\.sh|yaml|kustomize)(/|:)")


def is_kubernetes_object(res: RecordedResource) -> bool:
    """A `kubernetes:<group>/<version>:<Kind>` resource that the provider sends to the API server as one object."""
    return res.custom and res.type.startswith("kubernetes:") and not NOT_OBJECTS.match(res.type)


def api_version_of(type_token: str) -> str:
    """`kubernetes:apps/v1:Deployment` -> `apps/v1`; `kubernetes:core/v1:Service` -> `v1`."""
    group_version = type_token.split(":")[1]
    return group_version.removeprefix("core/")


def kubernetes_object(res: RecordedResource) -> dict[str, Any]:
    """The object the provider would apply: the inputs, with the name the provider gave it when auto-named."""
    obj = {k: v for k, v in res.inputs.items() if not k.startswith("__")}
    obj.setdefault("apiVersion", api_version_of(res.type))
    obj.setdefault("kind", res.type.rsplit(":", 1)[-1])
    metadata = dict(obj.get("metadata") or {})
    if not metadata.get("name"):
        out_name = (res.outputs.get("metadata") or {}).get("name") if isinstance(res.outputs, Mapping) else None
        metadata["name"] = out_name or res.name
    obj["metadata"] = metadata
    ordered: dict[str, Any] = {k: obj[k] for k in ("apiVersion", "kind", "metadata") if k in obj}
    ordered.update({k: v for k, v in obj.items() if k not in ordered})
    return ordered


def object_name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{obj.get('kind')}/{meta.get('namespace') or '-'}/{meta.get('name')}"


def _at(obj: Any, path: Sequence[Any]) -> Any:
    for part in path:
        try:
            obj = obj[part]
        except (KeyError, IndexError, TypeError):
            return None
    return obj


def _schema_fix(error: Any, where: str) -> str:
    validator = getattr(error, "validator", "")
    if validator == "additionalProperties":
        return f"remove the field from {where or 'the object'}, or spell it as the schema does"
    if validator == "type":
        return f"give {where} the type the schema declares ({error.validator_value})"
    if validator == "required":
        return f"add the required field to {where or 'the object'}"
    if validator == "enum":
        return f"set {where} to one of {error.validator_value}"
    return f"make {where or 'the object'} satisfy the schema's {validator}: {error.validator_value}"


def _schema_findings(rule: str, name: str, validator: Any, obj: Any, prefix: str = "") -> list[Finding]:
    out = []
    for error in schemas.errors(validator, obj):
        if has_unknown(error.instance) or has_unknown(_at(obj, list(error.absolute_path))):
            continue  # unknown in this phase: judged at `up`, when it is known
        path = schemas.error_path(error)
        where = f"{prefix}.{path}" if prefix and path else (prefix or path)
        out.append(Finding(rule, name, where, error.message, fix=_schema_fix(error, where)))
    return out


def validate_object(obj: Mapping[str, Any], kubernetes_version: str, upstream: Path | None, *,
                    has_old: bool = False) -> list[Finding]:
    """Validate one Kubernetes object as the API server would on create (`has_old`: on the update of an
    unchanged object); CRD-backed kinds need `upstream` (the upstream cache)."""
    name = object_name(obj)
    api_version = str(obj.get("apiVersion", ""))
    group, _, version = api_version.rpartition("/")
    kind = str(obj.get("kind", ""))
    version_dir = schemas.schema_version(kubernetes_version)
    crd = schemas.find_crd(upstream, group, kind) if upstream is not None and group else None
    if crd is not None:
        entry = crd.get(version)
        if entry is None or not entry.served:
            served = sorted(v for v, e in crd.items() if e.served)
            return [Finding("crd-schema", name, "apiVersion",
                            f"{api_version} is not served by the CRD {kind}.{group}; served: {served}",
                            fix=f"use apiVersion {group}/{served[-1]}" if served else "")]
        findings = _schema_findings("crd-schema", name, schemas.crd_validator(entry), obj)
        findings += _schema_findings("crd-schema", name, schemas.meta_validator(version_dir),
                                     obj.get("metadata") or {}, "metadata")
        if not findings:  # the API server runs CEL rules on a schema-valid, defaulted object
            findings += cel_findings(name, obj, entry.original, has_old=has_old)
        return findings
    validator = schemas.builtin_validator(obj, version_dir)
    if validator is None:
        where = f"Kubernetes {version_dir}" + (f" or the CRDs under {upstream}/crds" if upstream else "")
        return [Finding("no-schema", name, "", f"no schema for {api_version} {kind} in {where}; not checked",
                        fix="pin the CRD that defines it in upstream.lock.json (crds/)", level="advisory")]
    return _schema_findings("kubernetes-schema", name, validator, obj)


def cel_findings(name: str, obj: Mapping[str, Any], schema: Mapping[str, Any], *, has_old: bool) -> list[Finding]:
    from tools.apiserver import cel_rules  # noqa: PLC0415 - loads the CEL library only when a CRD object is checked

    defaulted = schemas.with_defaults(obj, schema)
    findings = []
    for result in cel_rules.evaluate(defaulted, schema, has_old=has_old):
        if result.outcome == "transition":
            findings.append(Finding("cel-transition-skipped", name, result.path,
                                    f"transition rule not evaluated on create (it compares with oldSelf, which a "
                                    f"create does not have, as in the API server): {result.message}",
                                    level="skipped"))
        elif result.outcome == "uncovered":
            findings.append(Finding("cel-not-evaluated", name, result.path,
                                    f"the CRD's rule {result.rule!r} could not be evaluated offline: "
                                    f"{result.message}; the API server will evaluate it at `pulumi up`",
                                    level="advisory"))
        elif has_unknown(_at(defaulted, _parts(result.path))):
            findings.append(Finding("crd-cel", name, result.path,
                                    f"{result.message} (the value is not known here, so the rule is not judged; "
                                    "the API server judges it when `pulumi up` sends the object with the value known)",
                                    level="advisory"))
        else:
            findings.append(Finding("crd-cel", name, result.path, result.message,
                                    fix=f"change {result.path or 'the object'} so that the CRD's rule holds: "
                                        f"{' '.join(result.rule.split())}"))
    return findings


def _parts(path: str) -> list[Any]:
    parts: list[Any] = []
    for token in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        parts.append(int(token[1:-1]) if token.startswith("[") else token)
    return parts


# --------------------------------------------------------------------------------------------------
# A whole recording
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApiServerReport:
    """What the API server and Helm would say of every object and release of one run."""

    kubernetes_version: str
    objects: int
    releases: int
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def rejected(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level == "rejected")

    @property
    def advisories(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level == "advisory")

    @property
    def skipped(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level == "skipped")

    def as_json(self) -> dict[str, Any]:
        return {
            "kubernetesVersion": self.kubernetes_version,
            "objects": self.objects,
            "releases": self.releases,
            "rejected": [f.as_json() for f in self.rejected],
            "advisories": [f.as_json() for f in self.advisories],
            "transitionRulesSkipped": [f.as_json() for f in self.skipped],
            "notes": list(self.notes),
        }


def cluster_version(resources: Iterable[RecordedResource]) -> str | None:
    """The Kubernetes version the program asks EKS for (pulumi-eks `version`, aws.eks.Cluster `version`)."""
    for res in resources:
        if res.type in CLUSTER_TYPES and isinstance(res.inputs.get("version"), str) \
                and res.inputs["version"] != UNKNOWN:
            return str(res.inputs["version"])
    return None


def check_resources(resources: Sequence[RecordedResource], upstream: Path | None, *, has_old: bool = False,
                    kubernetes_version: str | None = None) -> ApiServerReport:
    """Every registered Kubernetes object and Helm release of a recording, as the API server and Helm see them.

    `upstream`: the upstream cache (CRDs, chart values); None or missing: those are reported as not checked.
    """
    notes: list[str] = []
    version = kubernetes_version or cluster_version(resources)
    if version is None:
        version = schemas.newest_version()
        notes.append(f"no cluster version in the program: built-in objects checked against Kubernetes {version}")
    try:
        schemas.schema_version(version)
    except LookupError as exc:
        notes.append(f"{exc}; built-in objects checked against Kubernetes {schemas.newest_version()}")
        version = schemas.newest_version()
    cache_ok = upstream is not None and (upstream / "crds").is_dir()
    findings: list[Finding] = []
    objects = [r for r in resources if is_kubernetes_object(r) and not r.read]
    releases = [r for r in resources if r.type == HELM_RELEASE and not r.read]
    for res in objects:
        obj = kubernetes_object(res)
        found = validate_object(obj, version, upstream if cache_ok else None, has_old=has_old)
        if not cache_ok:  # without the cache a custom resource has no schema: say so once, below
            found = [f for f in found if f.rule != "no-schema"]
        findings += [_with_urn(f, res.urn) for f in found]
    if cache_ok and upstream is not None:
        for res in releases:
            inputs = {k: v for k, v in res.inputs.items() if not has_unknown(v) or k == "values"}
            found = release_findings({"name": res.name, "inputs": inputs}, upstream)
            findings += [_with_urn(f, res.urn) for f in found]
    elif objects or releases:
        findings.append(Finding("not-checked", "upstream cache", str(upstream or ""),
                                "the upstream cache (CRDs, chart values.yaml) is missing: custom resources and Helm "
                                "values were not checked", fix="run `make upstream`", level="advisory"))
    return ApiServerReport(kubernetes_version=version, objects=len(objects), releases=len(releases),
                           findings=tuple(findings), notes=tuple(notes))


def _with_urn(finding: Finding, urn: str) -> Finding:
    return replace(finding, urn=urn)
