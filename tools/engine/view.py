"""What the Pulumi engine hands a policy pack, built from what the offline preview recorded.

The recording is what the program sent to the resource monitor. The engine does not pass that on
verbatim; these are the differences that decide what a policy can see. Every line number below is at
pulumi/pulumi commit 1b5949891b3c (pkg/v3.259.0-14), the newest commit the source mirror holds (re-read
2026-12-01); the project pins SDK/CLI 3.272.0, whose source could not be read here, so no pin moved.

- Properties: a reference to a custom resource becomes its id, the unknown sentinel while the id is
  unknown (a first preview); a reference to a component, which has no id, becomes its URN. Output values
  become their value (an unknown one the unknown sentinel); secrets stay secrets. Source: pulumi/pulumi
  sdk/go/common/resource/plugin/rpc.go lines 518-559 (a reference with an unknown id is the unknown
  sentinel under KeepUnknowns, one without an id its URN) and 190-263 (MarshalPropertyValue with
  KeepResources false), called from pkg/resource/plugin/analyzer_plugin.go lines 306-307 (Analyze) and
  350-351 (AnalyzeStack) with KeepUnknowns and KeepSecrets.
- Checked inputs: Analyze gets the inputs after the provider's Check (step_generator.go lines 1326-1350,
  `new.Inputs = inputs`, handed to analyzeAll at line 1469), so an auto-name the provider assigns in
  Check is there (`_with_checked_names` below; the names from tools/engine/mocks). Schema defaults a real provider adds
  in Check are not reproduced offline.
- Unconfigured providers: a provider whose inputs hold an unknown (the Kubernetes provider's
  `kubeconfig` in a first preview: it comes from the cluster) is not configured
  (pkg/resource/plugin/provider_plugin.go lines 1064-1081, reached from providers/registry.go lines
  961-968). In a preview its Check returns the program's inputs unchanged (lines 1186-1190: no
  auto-name) and its Create returns an empty property map (lines 1424-1441), which becomes the new
  state's outputs (pkg/resource/deploy/step.go lines 445-459); AnalyzeStack sends outputs
  (step_generator.go line 3520). So every object of such a provider reaches the stack policies as `{}`,
  with no provider-assigned `metadata.name`, while Analyze still gets its inputs (`first_preview_empty`).
- Analyze (resource policies) runs for every registration that reaches the step generator, before its
  step: not for reads (pulumi/pulumi pkg/resource/deploy/step_generator.go line 292,
  GenerateReadSteps, has no analyzer call; line 1469 is the one in generateSteps). A remote component's
  registration by the program goes straight to its provider's Construct (pkg/resource/deploy/
  source_eval.go lines 2826-2882) and its inputs are never analyzed; the provider then registers the
  component itself with `{}` props (sdk/nodejs/resource.ts, ComponentResource), which Analyze sees. Its
  children, registered by the provider, are analyzed like any resource; offline the provider does not run:
  pulumi-eks's `Cluster` children are emulated from its
  source (tools/engine/mocks/eks_children.py, `emulated_children`), any other remote component is not
  seen (`not_seen_offline`).
- AnalyzeStack (stack policies) gets every resource of the new state with its final outputs, reads
  and components included, after every step (step_generator.go lines 3495-3575, AnalyzeResources;
  deployment_executor.go line 410 calls it once the step executor is done).
- Options: protect, ignoreChanges, deleteBeforeReplace (and whether it was set),
  additionalSecretOutputs, aliases, customTimeouts, parent (analyzer_plugin.go lines 737-764). The
  analyzer protocol has no field for retainOnDelete.
- Default providers: a resource that names no provider gets the engine's default provider of its
  package, `pulumi:providers:<pkg>::default_<major>_<minor>_<patch>`, registered at the root with the
  package's stack config as inputs plus `version` (pkg/resource/deploy/default_providers.go lines
  139-175; the name from pkg/resource/deploy/providers/provider.go lines 107-125).
- Stack tags: `pulumi:project`, `pulumi:runtime`, `pulumi:description` from Pulumi.yaml and the
  `pulumi:tags` config object (pkg/backend/stack.go lines 177-200).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2

from tools.engine.mocks.eks_children import not_emulated, uncovered
from tools.engine.mocks.eks_nodegroups import MANAGED_NODE_GROUP, uncovered_mng
from tools.engine.mocks.monitor import SIG_KEY, SIG_OUTPUT, SIG_RESOURCE, SIG_SECRET, STACK_TYPE
from tools.engine.records import UNKNOWN, RecordedResource, has_unknown

PROVIDER_PREFIX = "pulumi:providers:"

# What the real preview judges of a remote component that the offline preview cannot: the children
# its provider registers. Source: pulumi/pulumi-eks provider/cmd/pulumi-resource-eks/schema.json and
# nodejs/eks/cluster.ts (the control plane, its IAM role, security groups, the default node group).
REMOTE_CHILDREN: dict[str, str] = {
    "eks:index:Cluster": (
        "the children pulumi-eks registers (aws:eks/cluster:Cluster, its IAM role and security groups, "
        "any default node group or launch template)"
    ),
    MANAGED_NODE_GROUP: "the aws:eks/nodeGroup:NodeGroup pulumi-eks registers (and its launch template, if any)",
}


@dataclass(frozen=True)
class EngineResource:
    """One resource as the engine describes it to the analyzer."""

    res: RecordedResource
    inputs: struct_pb2.Struct  # Analyze: the inputs the program sent, in the engine's marshalling
    outputs: struct_pb2.Struct  # AnalyzeStack: the final state
    provider_urn: str  # "" when the resource has no provider (components, providers, the stack)
    analyzed: bool  # whether Analyze (resource policies) sees it
    program_outputs: struct_pb2.Struct | None = None  # set when `outputs` were emptied: what the program knew
    checked_name: bool = False  # Analyze's inputs carry a name the provider assigned in Check

    @property
    def emptied(self) -> bool:
        """The engine sends this resource to AnalyzeStack with no properties (an unconfigured provider)."""
        return self.program_outputs is not None


def _engine_value(value: struct_pb2.Value) -> struct_pb2.Value:
    which = value.WhichOneof("kind")
    if which == "struct_value":
        fields = value.struct_value.fields
        sig = fields[SIG_KEY].string_value if SIG_KEY in fields else ""
        if sig == SIG_RESOURCE:
            if "id" not in fields:  # a component: no id, its URN
                return struct_pb2.Value(string_value=fields["urn"].string_value)
            ref_id = fields["id"].string_value  # rpc.go line 549: an empty id is unknown
            return struct_pb2.Value(string_value=ref_id or UNKNOWN)
        if sig == SIG_OUTPUT:
            inner = fields["value"] if "value" in fields else struct_pb2.Value(string_value=UNKNOWN)
            converted = _engine_value(inner)
            if "secret" in fields and fields["secret"].bool_value:
                return _secret(converted)
            return converted
        if sig == SIG_SECRET and "value" in fields:
            return _secret(_engine_value(fields["value"]))
        out = struct_pb2.Value()
        out.struct_value.CopyFrom(engine_struct(value.struct_value))
        return out
    if which == "list_value":
        out = struct_pb2.Value()
        out.list_value.values.extend(_engine_value(v) for v in value.list_value.values)
        return out
    copy = struct_pb2.Value()
    copy.CopyFrom(value)
    return copy


def _secret(value: struct_pb2.Value) -> struct_pb2.Value:
    out = struct_pb2.Value()
    out.struct_value.fields[SIG_KEY].string_value = SIG_SECRET
    out.struct_value.fields["value"].CopyFrom(value)
    return out


def engine_struct(struct: struct_pb2.Struct) -> struct_pb2.Struct:
    """A recorded property Struct as the engine marshals it for an analyzer (module docstring)."""
    out = struct_pb2.Struct()
    for key in struct.fields:
        out.fields[key].CopyFrom(_engine_value(struct.fields[key]))
    return out


def _as_struct(props: Any) -> struct_pb2.Struct:
    if isinstance(props, struct_pb2.Struct):
        return props
    if props is None:
        return struct_pb2.Struct()
    return json_format.ParseDict(dict(props), struct_pb2.Struct())


def _final_state(res: RecordedResource, inputs: struct_pb2.Struct) -> struct_pb2.Struct:
    """What AnalyzeStack sees: a custom resource's inputs and provider outputs, a component's outputs."""
    if res.custom and not res.read:
        state = struct_pb2.Struct()
        state.CopyFrom(inputs)
        extra = {k: v for k, v in res.outputs.items() if k not in inputs.fields}
        if extra:
            state.MergeFrom(json_format.ParseDict(extra, struct_pb2.Struct()))
        return state
    return _as_struct(res.outputs)


def analyzer_options(res: RecordedResource) -> analyzer_pb2.AnalyzerResourceOptions:
    create, update, delete = (_seconds(t) for t in res.custom_timeouts)
    return analyzer_pb2.AnalyzerResourceOptions(
        protect=res.protect,
        ignoreChanges=list(res.ignore_changes),
        deleteBeforeReplace=bool(res.delete_before_replace),
        deleteBeforeReplaceDefined=res.delete_before_replace is not None,
        additionalSecretOutputs=list(res.additional_secret_outputs),
        aliases=list(res.aliases),
        customTimeouts=analyzer_pb2.AnalyzerResourceOptions.CustomTimeouts(create=create, update=update,
                                                                           delete=delete),
        parent=res.parent or "",
    )


def _seconds(duration: str) -> float:
    """A Go duration string as the SDK sends custom timeouts ("10m", "1h30m", "90s") in seconds."""
    if not duration:
        return 0.0
    total, number = 0.0, ""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0}
    for char in duration:
        if char.isdigit() or char == ".":
            number += char
        elif char in units and number:
            total, number = total + float(number) * units[char], ""
    return total


def _package(type_token: str) -> str:
    return type_token.split(":", 1)[0]


def default_provider(package: str, version: str, stack: str, project: str,
                     stack_config: Mapping[str, str]) -> RecordedResource:
    """The default provider the engine registers for `package` (module docstring)."""
    name = "default"
    if version:
        core, _, pre = version.partition("-")
        parts = [*core.split("."), "0", "0", "0"][:3]
        name += "_" + "_".join(parts) + (f"_{pre.replace('.', '_')}" if pre else "")
    inputs: dict[str, Any] = {}
    for key, raw in stack_config.items():
        if key.startswith(f"{package}:"):
            try:
                inputs[key.split(":", 1)[1]] = json.loads(raw)
            except json.JSONDecodeError:
                inputs[key.split(":", 1)[1]] = raw
    if version:
        inputs["version"] = version
    urn = f"urn:pulumi:{stack}::{project}::{PROVIDER_PREFIX}{package}::{name}"
    return RecordedResource(urn=urn, type=f"{PROVIDER_PREFIX}{package}", name=name, parent=None, custom=True,
                            inputs=inputs, properties=_as_struct(inputs), id=UNKNOWN, outputs=dict(inputs))


def unconfigured(provider: RecordedResource) -> bool:
    """A provider the engine leaves unconfigured: an input other than `version` holds an unknown.

    Source: pulumi/pulumi pkg/resource/plugin/provider_plugin.go lines 1064-1081 (Configure).
    """
    return any(has_unknown(v) for k, v in provider.inputs.items() if k != "version")


def _with_checked_names(res: RecordedResource, inputs: struct_pb2.Struct) -> tuple[struct_pb2.Struct, bool]:
    """The inputs after a configured provider's Check: a name it assigned (kept in the recorded outputs)."""
    extra: dict[str, Any] = {}
    if res.type.startswith("aws:") and "name" not in inputs.fields and isinstance(res.outputs.get("name"), str) \
            and res.outputs["name"] != UNKNOWN and not any(k.endswith("amePrefix") for k in res.inputs):
        extra["name"] = res.outputs["name"]
    metadata = res.outputs.get("metadata")
    given = res.inputs.get("metadata")
    if res.type.startswith("kubernetes:") and isinstance(metadata, Mapping) and isinstance(metadata.get("name"), str) \
            and metadata["name"] != UNKNOWN and not (isinstance(given, Mapping) and given.get("name")):
        extra["metadata"] = {**(given if isinstance(given, Mapping) else {}), "name": metadata["name"]}
    if not extra:
        return inputs, False
    checked = struct_pb2.Struct()
    checked.CopyFrom(inputs)
    converted = engine_struct(json_format.ParseDict(extra, struct_pb2.Struct()))
    for key in extra:
        checked.fields[key].CopyFrom(converted.fields[key])
    return checked, True


def engine_resources(resources: Sequence[RecordedResource], *, stack: str, project: str,
                     stack_config: Mapping[str, str], dry_run: bool = True) -> list[EngineResource]:
    """Every resource the engine knows, in registration order, default providers before their first user.

    `dry_run` (a preview): a resource of an unconfigured provider gets no checked name and reaches
    AnalyzeStack with no properties (module docstring, "Unconfigured providers").
    """
    out: list[EngineResource] = []
    defaults: dict[str, RecordedResource] = {}
    recorded_by_urn = {r.urn: r for r in resources}
    for recorded in resources:
        res = recorded
        provider_urn = res.provider.rsplit("::", 1)[0] if res.provider else ""
        needs_default = (res.custom and not res.provider and res.type != STACK_TYPE
                         and not res.type.startswith(PROVIDER_PREFIX))
        if needs_default:
            package = _package(res.type)
            if package not in defaults:
                prov = default_provider(package, res.version, stack, project, stack_config)
                defaults[package] = prov
                out.append(EngineResource(prov, prov.properties, prov.properties, "", analyzed=True))
            provider_urn = defaults[package].urn
            res = replace(res, provider=f"{provider_urn}::{UNKNOWN}")
        provider = recorded_by_urn.get(provider_urn) or defaults.get(_package(res.type))
        not_configured = dry_run and res.custom and not res.read and provider is not None and unconfigured(provider)
        inputs = engine_struct(_as_struct(res.properties))
        checked = False
        if res.custom and not res.read and not not_configured:
            inputs, checked = _with_checked_names(res, inputs)
        outputs = _final_state(res, inputs)
        if not_configured:
            out.append(EngineResource(res, inputs, struct_pb2.Struct(), provider_urn, analyzed=not res.remote,
                                      program_outputs=outputs))
            continue
        if res.remote and not res.read:
            # The provider's Construct registers the component itself, with `{}` as its props (a component
            # that is not remote registers no args: pulumi/pulumi sdk/nodejs/resource.ts, ComponentResource's
            # constructor, `props: remote || opts?.urn ? args : {}`), and that registration is analyzed like any
            # component's: resource policies see the type and URN with no property.
            out.append(EngineResource(res, struct_pb2.Struct(), outputs, provider_urn, analyzed=True))
            continue
        out.append(EngineResource(res, inputs, outputs, provider_urn, analyzed=not res.read and not res.remote,
                                  checked_name=checked))
    return out


def program_view(items: Sequence[EngineResource]) -> list[EngineResource]:
    """`items` with the outputs the program knows where the engine sends `{}`: what the offline gate reads."""
    return [replace(i, outputs=i.program_outputs, program_outputs=None) if i.program_outputs is not None else i
            for i in items]


def remediated(item: EngineResource, inputs: struct_pb2.Struct) -> EngineResource:
    """`item` with the inputs a remediation produced: what the step creates, and what the stack sees."""
    new_inputs = struct_pb2.Struct()
    new_inputs.CopyFrom(inputs)
    if item.emptied:  # the step still previews an empty map; what the program knew follows the remediation
        return replace(item, inputs=new_inputs, program_outputs=_final_state(item.res, new_inputs))
    return replace(item, inputs=new_inputs, outputs=_final_state(item.res, new_inputs))


def provider_message(item: EngineResource, by_urn: Mapping[str, EngineResource]
                     ) -> analyzer_pb2.AnalyzerProviderResource | None:
    """The provider as the engine describes it: type, URN, name and its inputs."""
    if not item.provider_urn:
        return None
    prov = by_urn.get(item.provider_urn)
    if prov is None:
        return None
    return analyzer_pb2.AnalyzerProviderResource(type=prov.res.type, urn=prov.res.urn, name=prov.res.name,
                                                 properties=prov.inputs)


def stack_tags(project: str, runtime: str, description: str | None,
               stack_config: Mapping[str, str]) -> dict[str, str]:
    """The stack tags the CLI computes for a stack (module docstring)."""
    tags = {"pulumi:project": project, "pulumi:runtime": runtime}
    if description:
        tags["pulumi:description"] = description
    raw = stack_config.get("pulumi:tags")
    if raw:
        try:
            extra = json.loads(raw)
        except json.JSONDecodeError:
            extra = None
        if isinstance(extra, dict):
            tags.update({str(k): str(v) for k, v in extra.items()})
    return tags


def not_seen_offline(resources: Sequence[RecordedResource]) -> list[dict[str, str]]:
    """Remote components whose children the offline preview neither sees nor emulates."""
    emulated_parents = {r.parent for r in resources if r.emulated}
    by_urn = {r.urn: r for r in resources}
    gaps = []
    for r in resources:
        extra = not_emulated(r.inputs) if r.type == "eks:index:Cluster" else []
        if r.remote and r.urn in emulated_parents and extra:
            gaps.append({"urn": r.urn, "type": r.type,
                         "judged_by_real_preview": "what pulumi-eks adds beside the emulated children: "
                                                   + ", ".join(why for why, _ in extra),
                         "why": "its provider does not run offline; the rest of its children are emulated"})
            continue
        if not r.remote or r.urn in emulated_parents:
            continue
        why = "a remote component's own inputs are never analyzed; its provider does not run offline"
        missing = (uncovered(r.inputs) if r.type == "eks:index:Cluster"
                   else uncovered_mng(r.inputs, by_urn.get) if r.type == MANAGED_NODE_GROUP else [])
        if missing:
            why += "; its children are emulated only without " + ", ".join(missing)
        gaps.append({
            "urn": r.urn,
            "type": r.type,
            "judged_by_real_preview": REMOTE_CHILDREN.get(
                r.type, f"the children the {_package(r.type)} provider registers for this component"),
            "why": why,
        })
    return gaps


def emulated_children(resources: Sequence[RecordedResource]) -> list[dict[str, str]]:
    """The children a remote component's provider registers, emulated offline: what the real preview judges."""
    parents = {r.urn: r.parent or "" for r in resources if r.emulated}

    def component(urn: str) -> str:  # the remote component the emulated child belongs to
        while urn in parents:
            urn = parents[urn]
        return urn

    return [{"urn": r.urn, "type": r.type, "parent": r.parent or "", "component": component(r.urn),
             "source": r.emulated} for r in resources if r.emulated]
