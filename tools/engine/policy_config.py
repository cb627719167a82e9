"""Policy config as the engine reads it: parse, reconcile with the pack's defaults, validate, `today`.

The engine reads a `--policy-pack-config` file only when one is named, applies `all` then each policy's
own entry over the pack's defaults, and validates every policy's properties against its config schema
with gojsonschema, formats included (`"format": "date"`).
Source: https://github.com/pulumi/pulumi/blob/master/pkg/resource/analyzer/config.go (lines 210-265)

The engine accepts any valid enforcement level, `disabled` included. "Raise, never lower" is this
project's CI rule (docs/policy-pack.md), enforced here for every offline run.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Literal

import jsonschema  # type: ignore[import-untyped]
from google.protobuf import json_format
from pulumi.runtime.proto import analyzer_pb2

from policies.gpu_guard.calendar import judging_day

EnforcementLevel = Literal["advisory", "mandatory", "remediate", "disabled"]

# The levels `pulumi preview --policy-pack-config` accepts.
# Source: https://www.pulumi.com/docs/insights/policy/policy-as-code/configuration/
ENFORCEMENT_LEVELS: tuple[EnforcementLevel, ...] = ("advisory", "mandatory", "remediate", "disabled")

# How strongly a level blocks. REMEDIATE never lets a violation through: a violation that remains after
# remediation is reported as mandatory (pulumi_policy/policy.py, Analyze and AnalyzeStack).
_STRENGTH: dict[str, int] = {"disabled": 0, "advisory": 1, "mandatory": 2, "remediate": 2}

TO_PROTO: dict[str, int] = {
    "advisory": analyzer_pb2.ADVISORY,
    "mandatory": analyzer_pb2.MANDATORY,
    "remediate": analyzer_pb2.REMEDIATE,
    "disabled": analyzer_pb2.DISABLED,
}
FROM_PROTO: dict[int, EnforcementLevel] = {v: k for k, v in TO_PROTO.items()}  # type: ignore[misc]

# The key of a policy config that applies to every policy of the pack.
ALL_POLICIES = "all"

# The config property through which every lifecycle policy takes the day it judges at.
TODAY = "today"


class GateError(Exception):
    """The policy pack could not be run: it failed to start, crashed, or a policy raised."""


class ConfigError(GateError):
    """The policy configuration was rejected (bad format, unknown policy, lowered enforcement, schema)."""

    def __init__(self, message: str, *, source: str, key: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.source = source
        self.key = key
        self.value = value




class LoadedPolicyConfig(dict[str, Any]):
    """A policy config as read from a file; remembers the file so errors can name it."""

    def __init__(self, data: Mapping[str, Any], source: Path) -> None:
        super().__init__(data)
        self.source = source


@dataclass(frozen=True)
class PolicyConfig:
    enforcement: EnforcementLevel | None
    properties: dict[str, Any]


# --------------------------------------------------------------------------------------------------
# Policy config: parsing, reconciling with the pack's defaults, the raise-never-lower rule
# --------------------------------------------------------------------------------------------------


def load_policy_config(path: Path) -> dict[str, Any]:
    """Read a `pulumi preview --policy-pack-config` JSON file and check its shape as the CLI does.

    Top level: an object whose keys are policy names (or `all`) and whose values are an enforcement
    level string or an object with an optional `enforcementLevel` and the policy's properties.
    """
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"{source}: cannot read the policy config ({exc.strerror}); fix: pass an existing JSON file "
            "to --policy-config",
            source=source,
        ) from exc
    if not text.strip():
        return LoadedPolicyConfig({}, path)  # the CLI allows an empty file
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{source}: line {exc.lineno} column {exc.colno}: not valid JSON ({exc.msg}); fix: the policy "
            'config is a JSON object such as {"all": "mandatory", "<policy>": {"enforcementLevel": ...}}',
            source=source,
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: the policy config must be a JSON object keyed by policy name, got "
            f'{type(data).__name__}; fix: wrap it as {{"<policy>": "mandatory"}}',
            source=source,
            value=data,
        )
    _parse_policy_config(data, source)  # validates; the raw mapping is what callers pass back to run_gate
    return LoadedPolicyConfig(data, path)


def _parse_policy_config(raw: Mapping[str, Any], source: str) -> dict[str, PolicyConfig]:
    # Source: https://github.com/pulumi/pulumi/blob/master/pkg/resource/analyzer/config.go (parsePolicyPackConfig)
    levels = ", ".join(ENFORCEMENT_LEVELS)
    result: dict[str, PolicyConfig] = {}
    for key, value in raw.items():
        if isinstance(value, str):
            if value not in ENFORCEMENT_LEVELS:
                raise ConfigError(
                    f"{source}: `{key}` = {value!r} is not an enforcement level; fix: use one of {levels}",
                    source=source,
                    key=key,
                    value=value,
                )
            result[key] = PolicyConfig(value, {})
        elif isinstance(value, dict):
            props = dict(value)
            level = props.pop("enforcementLevel", None)
            if level is not None and level not in ENFORCEMENT_LEVELS:
                raise ConfigError(
                    f"{source}: `{key}.enforcementLevel` = {level!r} is not an enforcement level; "
                    f"fix: use one of {levels}",
                    source=source,
                    key=f"{key}.enforcementLevel",
                    value=level,
                )
            if level is None and not props:
                continue  # the CLI drops empty entries
            result[key] = PolicyConfig(level, props)
        else:
            raise ConfigError(
                f"{source}: `{key}` = {value!r} is not a valid policy config value; fix: use an enforcement "
                f'level string or an object such as {{"enforcementLevel": "mandatory"}}',
                source=source,
                key=key,
                value=value,
            )
    return result


def _defaults(info: analyzer_pb2.AnalyzerInfo) -> dict[str, PolicyConfig]:
    """The pack's own config: each policy's level and schema defaults, then the pack's initial config."""
    result: dict[str, PolicyConfig] = {}
    for p in info.policies:
        schema = json_format.MessageToDict(p.configSchema.properties)
        props = {k: v["default"] for k, v in schema.items() if isinstance(v, dict) and "default" in v}
        result[p.name] = PolicyConfig(level_of(p.enforcementLevel, f"policy {p.name}"), props)
    initial: dict[str, PolicyConfig] = {}
    for name, cfg in info.initialConfig.items():
        initial[name] = PolicyConfig(
            level_of(cfg.enforcementLevel, f"initial config of {name}"),
            json_format.MessageToDict(cfg.properties),
        )
    return _apply(result, initial)


def _apply(base: Mapping[str, PolicyConfig], given: Mapping[str, PolicyConfig]) -> dict[str, PolicyConfig]:
    # Source: https://github.com/pulumi/pulumi/blob/master/pkg/resource/analyzer/config.go (applyConfig):
    # `all` sets the level of every policy first, then each policy's own entry wins; the `all` entry
    # itself is passed on to the pack too.
    result = dict(base)
    every = given.get(ALL_POLICIES)
    if every is not None and every.enforcement is not None:
        result = {k: PolicyConfig(every.enforcement, v.properties) for k, v in result.items()}
    for name, cfg in given.items():
        old = result.get(name)
        level = cfg.enforcement if cfg.enforcement is not None else (old.enforcement if old else None)
        props = {**(old.properties if old else {}), **cfg.properties}
        result[name] = PolicyConfig(level, props)
    return result


def reconcile(
    info: analyzer_pb2.AnalyzerInfo, policy_config: Mapping[str, Any] | None, source: str
) -> tuple[dict[str, PolicyConfig], dict[str, PolicyConfig]]:
    """(baseline, effective): the pack's defaults, and those with the stack's config on top."""
    baseline = _defaults(info)
    given = _parse_policy_config(policy_config or {}, source)
    names = [p.name for p in info.policies]
    for key in given:
        if key != ALL_POLICIES and key not in baseline:
            near = difflib.get_close_matches(key, names, n=1)
            hint = f"did you mean `{near[0]}`?" if near else f"the pack has: {', '.join(sorted(names))}"
            raise ConfigError(
                f"{source}: `{key}` is not a policy of pack {info.name!r}; a misspelt name would silently "
                f"leave the policy at its default. Fix: {hint}",
                source=source,
                key=key,
                value=policy_config[key] if policy_config else None,
            )
    effective = _apply(baseline, given)
    for name in names:
        before, after = baseline[name].enforcement or "advisory", effective[name].enforcement or "advisory"
        if _STRENGTH[after] < _STRENGTH[before]:
            own = given.get(name)
            key = name if own is not None and own.enforcement is not None else ALL_POLICIES
            raise ConfigError(
                f"{source}: `{key}` = {after!r} lowers policy `{name}` from {before} to {after}; a stack "
                f"may raise a policy's enforcement, never lower it. Fix: remove `{key}` from {source} or "
                f"set it to {before!r} or stricter (then set `{name}` on its own if `all` was meant for "
                "other policies).",
                source=source,
                key=key,
                value=after,
            )
    _validate_properties(info, effective, source)
    return baseline, effective


def _validate_properties(info: analyzer_pb2.AnalyzerInfo, config: Mapping[str, PolicyConfig], source: str) -> None:
    # The engine checks each policy's properties against its config schema before Configure, with
    # gojsonschema, which checks formats (`date`, `date-time`, `uri`...) too.
    # Source: https://github.com/pulumi/pulumi/blob/master/pkg/resource/analyzer/config.go (lines 210-228)
    for p in info.policies:
        props = json_format.MessageToDict(p.configSchema.properties)
        if not props and not p.configSchema.required:
            continue
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if p.configSchema.required:
            schema["required"] = list(p.configSchema.required)
        value = config[p.name].properties if p.name in config else {}
        errors = sorted(jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
                        .iter_errors(value), key=lambda e: list(e.path))
        if errors:
            err = errors[0]
            where = ".".join([p.name, *(str(x) for x in err.path)])
            raise ConfigError(
                f"{source}: `{where}`: {err.message}; fix: set it to match the policy's config schema "
                f"{json.dumps(err.schema, sort_keys=True)}",
                source=source,
                key=where,
                value=err.instance,
            )


def level_of(value: int, what: str) -> EnforcementLevel:
    try:
        return FROM_PROTO[value]
    except KeyError:
        raise GateError(f"{what}: the pack sent unknown enforcement level {value}") from None



def takes_today(policy: analyzer_pb2.PolicyInfo) -> bool:
    return TODAY in policy.configSchema.properties


def with_today(info: analyzer_pb2.AnalyzerInfo, config: Mapping[str, PolicyConfig], today: date
               ) -> dict[str, PolicyConfig]:
    """`config` with `today` set on every policy whose config schema takes it."""
    result = dict(config)
    for p in info.policies:
        if takes_today(p):
            old = result.get(p.name, PolicyConfig(None, {}))
            result[p.name] = PolicyConfig(old.enforcement, {**old.properties, TODAY: today.isoformat()})
    return result


def resolve_today(cli_today: date | None, policy_config: Mapping[str, Any] | None,
                  source: str = "policy config") -> date:
    """What day it is for every lifecycle judgement of one run: the one place that answers it.

    `--today`, else the `today` the policy config file sets (one date for the whole file), else the
    real date.
    """
    if cli_today is not None:
        return cli_today
    found: dict[str, str] = {}
    for name, value in (policy_config or {}).items():
        if isinstance(value, Mapping) and TODAY in value:
            found[name] = value[TODAY]
    days = set(found.values())
    if len(days) > 1:
        listing = ", ".join(f"`{k}.today` = {v!r}" for k, v in sorted(found.items()))
        raise ConfigError(f"{source}: {listing}: one run judges every lifecycle at one date; fix: set the same "
                          "`today` everywhere, or pass --today", source=source, key=TODAY, value=sorted(days))
    if days:
        (value,) = days
        try:
            return date.fromisoformat(str(value))
        except ValueError:
            raise ConfigError(f"{source}: `today` = {value!r} is not an ISO date; fix: write it as YYYY-MM-DD",
                              source=source, key=TODAY, value=value) from None
    return judging_day()
