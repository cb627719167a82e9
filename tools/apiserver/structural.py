"""What the API server does to a custom resource before its CEL rules run, step by step, in its order.

Cited at kubernetes/apiextensions-apiserver@v0.35.0 (the published staging repository of Kubernetes v1.35.0,
the version the stacks target; "ae" below). apiextensions-apiserver decodes a custom resource, then:

1. prunes the fields the structural schema does not declare (ae pkg/apiserver/schema/pruning/algorithm.go:29
   `PruneWithOptions`, :57 `prune`; called from pkg/apiserver/customresource_handler.go:1438, in
   `unstructuredSchemaCoercer.apply`, :1406). With `fieldValidation=Strict` the pruned paths refuse the
   request, with `Warn` they come back as warnings, with `Ignore` they are dropped silently
   (customresource_handler.go:1190-1192, 1338). `prune` returns the pruned paths; `tools.apiserver.check`
   judges them by the field validation the client sent (`FIELD_VALIDATION`);
2. deletes `null` where the schema is neither `nullable` nor defaulted (ae pkg/apiserver/schema/defaulting/
   prunenulls.go:44 `PruneNonNullableNullsWithoutDefaults`, right after pruning: customresource_handler.go:1439):
   the `null` Go's encoding/json writes for a nil slice without `omitempty` never reaches validation
   (`prune_nulls`);
3. fills in `default`s, also over a `null` that is not nullable (ae pkg/apiserver/schema/defaulting/
   algorithm.go:34 `Default`, run by the decoder's `unstructuredDefaulter`: customresource_handler.go:1248)
   (`default`). On create, a CRD with a status subresource drops `status`; on update it keeps the stored
   one (ae pkg/registry/customresource/strategy.go:145-152 `PrepareForCreate`, :159-175 `PrepareForUpdate`)
   (`tools.apiserver.check`);
4. validates the object (ae pkg/registry/customresource/validator.go:46 `Validate`): metadata.name as a DNS
   subdomain (validator.go:53, `ValidateObjectMetaAccessor` with `NameIsDNSSubdomain`), the OpenAPI schema with
   its `format`s (k8s.io/kube-openapi pkg/validation/strfmt: `FORMATS` below) and `pattern`s (RE2:
   `tools.apiserver.regex`) (validator.go:54), then `x-kubernetes-list-type` `set` and `map` (strategy.go:214;
   ae pkg/apiserver/schema/listtype/validation.go:28 `ValidateListSetsAndMaps`) (`CrdValidator`,
   `list_errors`, `name_errors`);
5. runs the CEL rules (strategy.go:221), unless step 4 found a "blocking" error (type, required, enum,
   maxLength, maxItems, maxProperties: strategy.go:218 and :405 `hasBlockingErr`) (`BLOCKING`;
   `tools.apiserver.cel_rules`).
"""

from __future__ import annotations

import base64
import binascii
import copy
import datetime as dt
import ipaddress
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import jsonschema  # type: ignore[import-untyped]

from tools.apiserver import regex
from tools.engine.records import has_unknown

# Step 4: the schema validators whose failure keeps the CEL rules from running (strategy.go hasBlockingErr:
# ErrorTypeTypeInvalid, ErrorTypeRequired, ErrorTypeNotSupported (enum), ErrorTypeTooLong, ErrorTypeTooMany).
BLOCKING = frozenset({"type", "required", "enum", "maxLength", "maxItems", "maxProperties"})
ROOT_FIELDS = ("apiVersion", "kind", "metadata")  # kept at a resource's root and in embedded resources

# --------------------------------------------------------------------------------------------------
# 1. Pruning
# --------------------------------------------------------------------------------------------------


def prune(obj: Any, schema: Mapping[str, Any], *, root: bool = True) -> tuple[Any, list[str]]:
    """A copy of `obj` without the fields `schema` does not declare, and their paths (pruning/algorithm.go:
    a field is kept when its object's schema declares it in `properties`, or has `additionalProperties`, or
    `x-kubernetes-preserve-unknown-fields`; `apiVersion`, `kind`, `metadata` at the root and in an
    `x-kubernetes-embedded-resource`)."""
    pruned: list[str] = []
    out = _prune(copy.deepcopy(obj), schema, "", root, pruned)
    return out, pruned


def _prune(obj: Any, schema: Mapping[str, Any] | None, path: str, root: bool, pruned: list[str]) -> Any:
    if schema is None:
        return obj
    if isinstance(obj, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        keep_meta = root or schema.get("x-kubernetes-embedded-resource")
        for key in list(obj):
            sub_path = f"{path}.{key}" if path else str(key)
            if keep_meta and key in ROOT_FIELDS:  # metadata: ObjectMeta's fields (objectmeta coerce)
                continue
            if key in props:
                obj[key] = _prune(obj[key], props[key], sub_path, False, pruned)
            elif isinstance(extra, Mapping):
                obj[key] = _prune(obj[key], extra, sub_path, False, pruned)
            elif not (schema.get("x-kubernetes-preserve-unknown-fields") or extra is True):
                del obj[key]
                pruned.append(sub_path)
    elif isinstance(obj, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(obj):
            obj[i] = _prune(item, schema["items"], f"{path}[{i}]", False, pruned)
    return obj


# --------------------------------------------------------------------------------------------------
# 2. Nulls, 3. defaults
# --------------------------------------------------------------------------------------------------


def _field_schema(key: str, schema: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """prunenulls.go `getSchemaForField`: the property's schema, else additionalProperties'."""
    if schema is None:
        return None
    props = schema.get("properties") or {}
    if key in props:
        return props[key]  # type: ignore[no-any-return]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else None


def prune_nulls(obj: Any, schema: Mapping[str, Any] | None) -> Any:
    """`obj` (changed in place) without a `null` whose schema is neither nullable nor defaulted."""
    if isinstance(obj, dict):
        for key in list(obj):
            sub = _field_schema(key, schema)
            if obj[key] is None and sub is not None and not sub.get("nullable") and sub.get("default") is None:
                del obj[key]
            else:
                prune_nulls(obj[key], sub)
    elif isinstance(obj, list):
        items = schema.get("items") if schema is not None else None
        for item in obj:
            prune_nulls(item, items if isinstance(items, Mapping) else None)
    return obj


def _non_nullable_null(value: Any, schema: Mapping[str, Any] | None) -> bool:
    return value is None and schema is not None and not schema.get("nullable")


def default(obj: Any, schema: Mapping[str, Any] | None) -> Any:
    """`obj` (changed in place) with the schema's `default`s where a field is absent or a non-nullable null."""
    if schema is None:
        return obj
    if isinstance(obj, dict):
        props = schema.get("properties") or {}
        for key, prop in props.items():
            if isinstance(prop, Mapping) and prop.get("default") is not None \
                    and (key not in obj or _non_nullable_null(obj[key], prop)):
                obj[key] = copy.deepcopy(prop["default"])
        extra = schema.get("additionalProperties")
        for key in obj:
            if key in props:
                default(obj[key], props[key])
            elif isinstance(extra, Mapping):
                if _non_nullable_null(obj[key], extra):
                    obj[key] = copy.deepcopy(extra.get("default"))
                default(obj[key], extra)
    elif isinstance(obj, list) and isinstance(schema.get("items"), Mapping):
        items = schema["items"]
        for i, item in enumerate(obj):
            if _non_nullable_null(item, items):
                obj[i] = copy.deepcopy(items.get("default"))
            default(obj[i], items)
    return obj


# --------------------------------------------------------------------------------------------------
# 4. Validation: formats, patterns, list types, the name
# --------------------------------------------------------------------------------------------------

_DATE = regex.compiled(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_TIME = regex.compiled(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")  # time.go:56
_UUID = {n: regex.compiled(p) for n, p in {  # default.go:59-65
    "uuid": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
    "uuid3": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
    "uuid4": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
    "uuid5": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"}.items()}
# default.go:57; compiled on first use (`regex.compiled` caches it): its Unicode classes under counted
# repetition take RE2 about half a second to compile.
_HOSTNAME = (r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]"
             r"{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$")
_MAC = regex.compiled(r"^([0-9A-Fa-f]{2}([:-]|$)){6}$|^([0-9A-Fa-f]{4}(\.|$)){3}$|^([0-9A-Fa-f]{2}([:-]|$)){8}$")
# metadata.name of a custom resource: a DNS-1123 subdomain (apimachinery pkg/util/validation/validation.go
# `IsDNS1123Subdomain`: at most 253 characters of this pattern).
_DNS_SUBDOMAIN = regex.compiled(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = regex.compiled(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _is_date(text: str) -> bool:
    """Go's time.Parse("2006-01-02", s) (strfmt date.go IsDate)."""
    if _DATE.search(text) is None:
        return False
    try:
        dt.date(int(text[:4]), int(text[5:7]), int(text[8:10]))
    except ValueError:
        return False
    return True


def _is_date_time(text: str) -> bool:
    """strfmt time.go `IsDateTime`: a date, "t", then a time (case-insensitive), hour <= 23 etc."""
    if len(text) < 4:
        return False
    parts = text.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    match = _TIME.search(parts[1])
    return match is not None and match.group(1) <= "23" and match.group(2) <= "59" and match.group(3) <= "59"


def _is_ipv4(text: str) -> bool:
    """strfmt default.go isIPv4: netutils.ParseIPSloppy (leading zeros allowed) of a dotted address."""
    if "." not in text:
        return False
    try:
        ipaddress.ip_address(".".join(str(int(p)) if p.isdigit() else p for p in text.split(".")))
    except ValueError:
        try:
            ipaddress.IPv6Address(text)
        except ValueError:
            return False
    return True


def _is_cidr(text: str) -> bool:
    address, sep, bits = text.partition("/")
    if not sep:
        return False
    try:
        ipaddress.ip_network(f"{'.'.join(str(int(p)) if p.isdigit() else p for p in address.split('.'))}/{bits}",
                             strict=False)
    except ValueError:
        return False
    return True


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _is_byte(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_hostname(text: str) -> bool:
    return regex.search(_HOSTNAME, text) and len(text) <= 255 and all(len(p) <= 63 for p in text.split("."))


def _matcher(program: Any) -> Callable[[str], bool]:
    return lambda text: program.search(text) is not None


# The strfmt formats checked, by their normalized name (format.go DefaultNameNormalizer drops "-"); a format
# not listed here (uri, email, isbn, ...) is not checked offline.
FORMATS: dict[str, Callable[[str], bool]] = {
    "datetime": _is_date_time, "date": _is_date, "ipv4": _is_ipv4, "ipv6": _is_ipv6, "cidr": _is_cidr,
    "byte": _is_byte, "hostname": _is_hostname, "mac": _matcher(_MAC),
    **{name: _matcher(p) for name, p in _UUID.items()},
}


def _format(validator: Any, fmt: Any, instance: Any, schema: Any) -> Iterator[jsonschema.ValidationError]:
    check = FORMATS.get(str(fmt).replace("-", ""))
    if isinstance(instance, str) and check is not None and not check(instance):
        yield jsonschema.ValidationError(f"{json.dumps(instance)} in body must be of type {fmt}")


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[jsonschema.ValidationError]:
    if isinstance(instance, str) and not regex.search(str(pattern), instance):
        yield jsonschema.ValidationError(f"{json.dumps(instance)} in body should match '{pattern}'")


# Draft 4 (OpenAPI v3's base) with `pattern` on RE2 and `format` on the Kubernetes formats.
CrdValidator = jsonschema.validators.extend(jsonschema.Draft4Validator, {"pattern": _pattern, "format": _format})


def list_errors(obj: Any, schema: Mapping[str, Any] | None, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, message) for each duplicate in an `x-kubernetes-list-type: set`, and each duplicate key of a
    `map` list (its `x-kubernetes-list-map-keys`), as listtype/validation.go reports them."""
    if schema is None or obj is None:
        return
    if isinstance(obj, list):
        kind = schema.get("x-kubernetes-list-type")
        if kind in ("set", "map"):
            keys = schema.get("x-kubernetes-list-map-keys") or []
            seen: set[str] = set()
            for i, item in enumerate(obj):
                if has_unknown(item):
                    continue  # unknown in this phase: judged at `up`, when it is known
                if kind == "set":
                    key = json.dumps(item, sort_keys=True)
                    shown = json.dumps(item)
                else:
                    if not isinstance(item, Mapping):
                        continue
                    values = [item.get(k) for k in keys]
                    key = json.dumps(values, sort_keys=True)
                    shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in zip(keys, values, strict=True))
                    shown = "{" + shown + "}" if len(keys) > 1 else json.dumps(values[0] if values else None)
                if key in seen:
                    yield f"{path}[{i}]", f"Duplicate value: {shown}"
                seen.add(key)
        items = schema.get("items")
        for i, item in enumerate(obj):
            yield from list_errors(item, items if isinstance(items, Mapping) else None, f"{path}[{i}]")
    elif isinstance(obj, Mapping):
        for key, value in obj.items():
            yield from list_errors(value, _field_schema(str(key), schema), f"{path}.{key}" if path else str(key))


_QUALIFIED_NAME = regex.compiled(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = regex.compiled(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _qualified_name_error(key: str) -> str | None:
    """apimachinery pkg/util/validation/validation.go `IsQualifiedName`: an optional DNS-1123 subdomain prefix
    and "/", then a name of at most 63 characters."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or _DNS_SUBDOMAIN.search(prefix) is None):
        return "prefix part must be a lowercase RFC 1123 subdomain"
    if not name or len(name) > 63 or _QUALIFIED_NAME.search(name) is None:
        return ("name part must be no more than 63 characters, consist of alphanumeric characters, '-', '_' or "
                "'.', and must start and end with an alphanumeric character")
    return None


def name_errors(metadata: Mapping[str, Any], *, namespaced: bool | None = None) -> Iterator[tuple[str, str]]:
    """(path, message) for a metadata.name that is not a DNS-1123 subdomain, a namespace that is not a
    DNS-1123 label, a label or annotation key that is not a qualified name, a label value that is not a valid
    label value (apimachinery pkg/api/validation/objectmeta.go `ValidateObjectMetaAccessor` with
    `NameIsDNSSubdomain`, `ValidateLabels`, `ValidateAnnotations`; the API server's wording, shortened)."""
    name = metadata.get("name")
    if isinstance(name, str) and name:
        if len(name) > 253:
            yield "metadata.name", "must be no more than 253 characters"
        elif _DNS_SUBDOMAIN.search(name) is None:
            yield "metadata.name", (f"Invalid value: {json.dumps(name)}: a lowercase RFC 1123 subdomain must "
                                    "consist of lower case alphanumeric characters, '-' or '.', and must start "
                                    "and end with an alphanumeric character")
    namespace = metadata.get("namespace")
    if isinstance(namespace, str) and namespace and (len(namespace) > 63 or _DNS_LABEL.search(namespace) is None):
        yield "metadata.namespace", (f"Invalid value: {json.dumps(namespace)}: a lowercase RFC 1123 label must "
                                     "consist of lower case alphanumeric characters or '-'")
    labels = metadata.get("labels")
    for key, value in (labels.items() if isinstance(labels, Mapping) else ()):
        if has_unknown(key) or has_unknown(value):
            continue
        error = _qualified_name_error(str(key))
        if error:
            yield "metadata.labels", f"Invalid value: {json.dumps(key)}: {error}"
        if isinstance(value, str) and (len(value) > 63 or _LABEL_VALUE.search(value) is None):
            yield f"metadata.labels.{key}", (f"Invalid value: {json.dumps(value)}: a valid label must be an empty "
                                             "string or at most 63 alphanumeric characters, '-', '_' or '.', "
                                             "starting and ending with an alphanumeric character")
    annotations = metadata.get("annotations")
    for key in (annotations if isinstance(annotations, Mapping) else ()):
        error = None if has_unknown(key) else _qualified_name_error(str(key).lower())
        if error:
            yield "metadata.annotations", f"Invalid value: {json.dumps(key)}: {error}"


def validation_schema(schema: Any) -> Any:
    """A copy of a CRD's `openAPIV3Schema` that jsonschema validates as the API server does: `nullable`
    allows null. Unknown fields were pruned (step 1) before it runs."""
    if isinstance(schema, list):
        return [validation_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: validation_schema(v) if k in ("items", "not") or k.endswith("Of") else v for k, v in schema.items()}
    if "properties" in schema:
        out["properties"] = {k: validation_schema(v) for k, v in schema["properties"].items()}
    if isinstance(schema.get("additionalProperties"), dict):
        out["additionalProperties"] = validation_schema(schema["additionalProperties"])
    if schema.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        if isinstance(out.get("enum"), list):
            out["enum"] = [*out["enum"], None]
    return out
