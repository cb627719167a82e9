"""`pulumi policy analyze`: the pack over a stack's existing state, as the CLI sends it (the `analyze` phase).

What the CLI does (pulumi/pulumi@1732fa6e1f0c pkg/resource/deploy/analyze_snapshot.go, `AnalyzeSnapshot`;
the command: pkg/cmd/pulumi/policy/policy_analyze.go, PR #22250, first in CLI 3.229.0; `--file`, a
`pulumi stack export` document read with no backend, PR #23664, first in 3.249.0, lines 132-167 and 239 at
pulumi/pulumi@1b5949891b, where undecryptable secrets become `[secret]`):
- no program runs and no provider is called;
- every resource of the state that is not pending deletion (`res.Delete`) is analyzed: components, providers,
  reads and remote components such as `eks:index:Cluster` included, since they are all in the state;
- Analyze gets each resource's stored **inputs** (`stateToAnalyzerResource`), its options without
  deleteBeforeReplace, and its provider described by the provider's inputs (`setAnalyzerResourceProvider`);
  analysis runs as a dry run: a mandatory violation does not stop the next resource (`analyzeResource(...,
  true)`);
- remediations are asked for and reported, never applied (the "first pass");
- AnalyzeStack gets every resource's stored **outputs**, with parent, dependencies and property dependencies;
- any mandatory violation makes the command exit non-zero.

The state comes from a `pulumi stack export` document (`--state FILE`), or, without one, from the program run
as the first `pulumi up` runs it: the state that `up` leaves (the offline gate's model of a deployed stack).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from google.protobuf import json_format, struct_pb2

from tools.engine.policy_config import GateError
from tools.engine.records import RecordedResource
from tools.engine.view import EngineResource, engine_resources, engine_struct

# A secret in a `pulumi stack export` document (sdk/go/common/resource/sig: the signature key and secret value).
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_VALUE = "1b47061264138c4ac30d75fd1eb44270"


def _plain(value: Any) -> Any:
    """A state value with secrets opened where the export carries the plaintext, else `[secret]` (as --file)."""
    if isinstance(value, Mapping):
        if value.get(SIG_KEY) == SECRET_VALUE:
            if "plaintext" in value:
                try:
                    return _plain(json.loads(str(value["plaintext"])))
                except json.JSONDecodeError:
                    return value["plaintext"]
            return "[secret]"
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def load_export(path: Path) -> tuple[str, str, list[RecordedResource]]:
    """(stack, project, resources) of a `pulumi stack export` document; GateError names the file and the key."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GateError(f"{path}: cannot read the stack export ({exc.strerror}); fix: pass the file "
                        "`pulumi stack export --file FILE` wrote") from None
    except json.JSONDecodeError as exc:
        raise GateError(f"{path}: line {exc.lineno}: not JSON ({exc.msg}); fix: pass the file "
                        "`pulumi stack export --file FILE` wrote") from None
    deployment = doc.get("deployment") if isinstance(doc, dict) else None
    resources = deployment.get("resources") if isinstance(deployment, dict) else None
    if not isinstance(resources, list):
        raise GateError(f"{path}: key 'deployment.resources' is missing or not a list; fix: pass a "
                        "`pulumi stack export` document (version 3)")
    out: list[RecordedResource] = []
    stack = project = ""
    for i, raw in enumerate(resources):
        urn = raw.get("urn") if isinstance(raw, dict) else None
        if not isinstance(urn, str) or not urn.startswith("urn:pulumi:") or urn.count("::") < 3:
            raise GateError(f"{path}: deployment.resources[{i}].urn = {urn!r} is not a Pulumi URN; fix: export the "
                            "stack again with `pulumi stack export`")
        if raw.get("delete"):
            continue  # pending deletion: AnalyzeSnapshot skips it
        stack, project = urn.split("::")[0].removeprefix("urn:pulumi:"), urn.split("::")[1]
        inputs = _plain(raw.get("inputs") or {})
        timeouts = raw.get("customTimeouts") or {}
        out.append(RecordedResource(
            urn=urn, type=str(raw.get("type", "")), name=urn.rsplit("::", 1)[-1], parent=raw.get("parent") or None,
            custom=bool(raw.get("custom")), inputs=inputs,
            properties=json_format.ParseDict(inputs, struct_pb2.Struct()), provider=str(raw.get("provider") or ""),
            protect=bool(raw.get("protect")), dependencies=tuple(raw.get("dependencies") or ()),
            property_dependencies={k: tuple(v) for k, v in (raw.get("propertyDependencies") or {}).items()},
            id=str(raw.get("id") or ""), outputs=_plain(raw.get("outputs") or {}), read=bool(raw.get("external")),
            ignore_changes=tuple(raw.get("ignoreChanges") or ()),
            additional_secret_outputs=tuple(raw.get("additionalSecretOutputs") or ()),
            aliases=tuple(a for a in raw.get("aliases") or () if isinstance(a, str)),
            custom_timeouts=(str(timeouts.get("create") or ""), str(timeouts.get("update") or ""),
                             str(timeouts.get("delete") or "")),
            retain_on_delete=bool(raw.get("retainOnDelete")),
        ))
    if not out:
        raise GateError(f"{path}: the stack export has no resource; nothing to analyze")
    return stack, project, out


def _struct(value: Mapping[str, Any]) -> struct_pb2.Struct:
    return json_format.ParseDict(dict(value), struct_pb2.Struct())


def export_items(resources: Sequence[RecordedResource]) -> list[EngineResource]:
    """What AnalyzeSnapshot sends for each resource of an exported state (module docstring)."""
    items = []
    for res in resources:
        provider_urn = res.provider.rsplit("::", 1)[0] if res.provider else ""
        items.append(EngineResource(res, engine_struct(_struct(res.inputs)), _struct(res.outputs), provider_urn,
                                    analyzed=True))
    return items


def state_items(resources: Sequence[RecordedResource], *, stack: str, project: str,
                stack_config: Mapping[str, str]) -> list[EngineResource]:
    """The state the program's first `pulumi up` leaves, as AnalyzeSnapshot sends it: every resource analyzed
    (remote components and reads too) with its inputs, AnalyzeStack with its final state."""
    items = engine_resources(resources, stack=stack, project=project, stack_config=stack_config, dry_run=False)
    return [replace(item, analyzed=True) for item in items]
