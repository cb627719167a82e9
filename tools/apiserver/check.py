"""The API server's and Helm's verdict on every object and release a program registers, before anything exists.

`pulumi up` sends each Kubernetes object to the API server when its step runs: a field the schema does not
have, a wrong type, or a CRD's CEL rule that does not hold fails that step, after every resource before it
(the cluster, its node groups) was created. A Helm release with a values key the chart does not have installs,
and the setting never takes effect. This module gives both verdicts from the recording alone, for any program,
in every phase: `tools.preview` runs it before the policy gate and exits 1 on a rejection.

What is checked: every `kubernetes:<group>/<version>:<Kind>` resource the program registers (not reads) against
the schema of the cluster's Kubernetes version or the upstream CRD (`schemas`), the CRD's CEL rules
(`cel_rules`), and every `kubernetes:helm.sh/v3:Release`'s and helm v4 `Chart`'s values against the chart's
values.yaml (`helm_values`). A value still unknown in this phase (an output of another resource in a first preview) is
not judged: the schema errors it causes are dropped and a rule that fails on it is an advisory; `--phase up`
judges the known values. An absent required key, and a rule that reads only known values and the presence of keys
(`tools.apiserver.unknown_reads`), are judged in every phase: an unknown value cannot add a key beside it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tools.apiserver import schemas, structural
from tools.apiserver.findings import Finding
from tools.apiserver.helm_values import HELM_RELEASES, release_findings
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


# The field validation pulumi-kubernetes asks for, in every request it sends (create, server-side apply,
# update, patch, each also as a dry run in preview): `Warn`. Server-side apply upserts set
# `FieldValidation: metav1.FieldValidationWarn` (pulumi/pulumi-kubernetes@94977969d
# provider/pkg/await/await.go:195); client-side create (await.go:245-250), update (await.go:586-592) and
# patches (await.go:620-625, 663-668) set none, which the API server reads as `Warn` (k8s.io/apiserver
# v0.36.1 pkg/endpoints/handlers/rest.go:409-414 `fieldValidation`, vendored at
# kubernetes-csi/external-snapshotter@v8.6.0). The provider's own client-side schema check does not fail on
# a validation error unless `rejectUnknownResources` is set (provider/pkg/provider/provider.go:1339-1364).
# Under `Warn` the API server drops an unknown field and answers with a warning; `Strict` refuses the
# request; `Ignore` drops it silently (handlers/create.go:119-121, patch.go:521-523).
FIELD_VALIDATION = "Warn"
FIELD_VALIDATIONS = ("Strict", "Warn", "Ignore")


def _unknown_field_findings(name: str, paths: Sequence[str], field_validation: str) -> list[Finding]:
    """The unknown fields the API server prunes, as the client's field validation makes it say them."""
    if field_validation not in FIELD_VALIDATIONS:
        raise ValueError(f"field validation {field_validation!r}: use one of {', '.join(FIELD_VALIDATIONS)}")
    if field_validation == "Ignore":
        return []
    out = []
    for path in paths:
        where, _, key = path.rpartition(".") if not path.endswith("]") else (path, "", "")
        message = f'unknown field "{path}"'
        if field_validation == "Warn":
            out.append(Finding("unknown-field", name, where,
                               f"{message}: the API server drops it and answers with a warning "
                               "(fieldValidation=Warn, what pulumi-kubernetes sends)",
                               fix=f"remove {key or path} from {where or 'the object'}, or spell it as the schema "
                                   "does", level="advisory"))
        else:
            out.append(Finding("unknown-field", name, where, f"{message} (fieldValidation=Strict)",
                               fix=f"remove {key or path} from {where or 'the object'}, or spell it as the schema "
                                   "does"))
    return out


def _schema_findings(rule: str, name: str, validator: Any, obj: Any, prefix: str = "", *,
                     field_validation: str = FIELD_VALIDATION) -> tuple[list[Finding], bool]:
    """The schema's findings on `obj`, and whether one of them keeps the CEL rules from running (BLOCKING).
    An `additionalProperties` error is an unknown field, judged by the client's field validation."""
    out: list[Finding] = []
    unknown: list[str] = []
    blocking = False
    for error in schemas.errors(validator, obj):
        # Unknown in this phase: judged at `up`, when it is known. A `required` key that is absent is a known fact
        # whatever its siblings hold (an unknown value cannot add a key beside it: issue 45), so it is judged now.
        if error.validator != "required" and (has_unknown(error.instance)
                                              or has_unknown(_at(obj, list(error.absolute_path)))):
            continue
        path = schemas.error_path(error)
        where = f"{prefix}.{path}" if prefix and path else (prefix or path)
        if error.validator == "additionalProperties" and error.validator_value is False:
            declared = set(error.schema.get("properties") or {})
            unknown += [f"{where}.{k}" if where else str(k) for k in error.instance if k not in declared]
            continue
        blocking = blocking or error.validator in structural.BLOCKING
        out.append(Finding(rule, name, where, error.message, fix=_schema_fix(error, where)))
    return _unknown_field_findings(name, unknown, field_validation) + out, blocking


def validate_object(obj: Mapping[str, Any], kubernetes_version: str, upstream: Path | None, *,
                    has_old: bool = False, field_validation: str = FIELD_VALIDATION,
                    old: Mapping[str, Any] | None = None) -> list[Finding]:
    """Validate one Kubernetes object as the API server would on create (`has_old`: on the update of an
    unchanged object; `old`: on an update from `old`, a custom resource); CRD-backed kinds need `upstream`
    (the upstream cache). `field_validation`: what the client asks the API server to do with unknown fields
    (pulumi-kubernetes: `Warn`)."""
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
        return _custom_resource(name, obj, entry, version_dir, has_old=has_old, field_validation=field_validation,
                                old=old, kubernetes_version=kubernetes_version)
    validator = schemas.builtin_validator(obj, version_dir)
    if validator is None:
        where = f"Kubernetes {version_dir}" + (f" or the CRDs under {upstream}/crds" if upstream else "")
        return [Finding("no-schema", name, "", f"no schema for {api_version} {kind} in {where}; not checked",
                        fix="pin the CRD that defines it in upstream.lock.json (crds/)", level="advisory")]
    return _schema_findings("kubernetes-schema", name, validator, obj, field_validation=field_validation)[0]


def _custom_resource(name: str, obj: Mapping[str, Any], entry: schemas.CrdVersion, version_dir: str, *,
                     has_old: bool, field_validation: str, old: Mapping[str, Any] | None = None,
                     kubernetes_version: str | None = None) -> list[Finding]:
    """A custom resource through the API server's steps, in its order (`tools.apiserver.structural`)."""
    schema = entry.original
    # 1. prune unknown fields (metadata: ObjectMeta's fields), judged by the client's field validation
    pruned, unknown = structural.prune(obj, schema)
    old_object = None
    if old is not None:  # the stored object, as it went through the same steps when it was written
        old_object = structural.default(structural.prune_nulls(structural.prune(old, schema)[0], schema), schema)
    if entry.status_subresource:  # the main resource cannot set status (strategy.go:145-175, PrepareForCreate/Update)
        if old_object is not None and "status" in old_object:
            pruned["status"] = old_object["status"]
        elif old_object is not None or not has_old:
            pruned.pop("status", None)
    metadata = pruned.get("metadata") if isinstance(pruned.get("metadata"), Mapping) else {}
    meta_findings, meta_blocking = _schema_findings("crd-schema", name, schemas.meta_validator(version_dir),
                                                    metadata, "metadata", field_validation=field_validation)
    findings = _unknown_field_findings(name, unknown, field_validation) + meta_findings
    # 2. drop nulls that are neither nullable nor defaulted; 3. default
    structural.default(structural.prune_nulls(pruned, schema), schema)
    # 4. validate: the name, the schema (formats, RE2 patterns), list types
    findings += [Finding("crd-schema", name, path, message, fix=f"give {path} a valid value")
                 for path, message in structural.name_errors(metadata)]
    schema_findings, blocking = _schema_findings("crd-schema", name, schemas.crd_validator(entry), pruned,
                                                 field_validation=field_validation)
    findings += schema_findings
    findings += [Finding("crd-schema", name, path, message, fix=f"remove the duplicate at {path}")
                 for path, message in structural.list_errors(pruned, schema)]
    # 5. CEL, unless a blocking error (apiextensions-apiserver@v0.35.0 pkg/registry/customresource/strategy.go:218)
    if not (blocking or meta_blocking):
        findings += cel_findings(name, pruned, schema, has_old=has_old, old=old_object,
                                 kubernetes_version=kubernetes_version)
    return findings


def cel_findings(name: str, obj: Mapping[str, Any], schema: Mapping[str, Any], *, has_old: bool,
                 old: Mapping[str, Any] | None = None, kubernetes_version: str | None = None) -> list[Finding]:
    """The CRD's CEL rules on `obj`, pruned and defaulted (`_custom_resource`), with the CEL libraries of
    `kubernetes_version` (the cluster's)."""
    from tools.apiserver import cel_rules  # noqa: PLC0415 - loads the CEL library only when a CRD object is checked

    defaulted = obj
    findings = []
    for result in cel_rules.evaluate(defaulted, schema, has_old=has_old,
                                     old=cel_rules.NO_OLD if old is None else old,
                                     kubernetes_version=kubernetes_version):
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
        elif result.outcome == "refused":  # the CRD itself does not compile on this cluster's version
            findings.append(Finding("crd-cel", name, result.path, f"the CRD's rule {result.rule!r} is refused: "
                                    f"{result.message}",
                                    fix="run a Kubernetes version whose CEL library has the function (see the "
                                        "message), or a chart/CRD version written for this one"))
        elif result.reads_unknown and has_unknown(_at(defaulted, _parts(result.path))):
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
    releases = [r for r in resources if r.type in HELM_RELEASES and not r.read]
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
