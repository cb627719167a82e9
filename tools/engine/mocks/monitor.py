"""Recording mocks: run a Pulumi Python program with no cloud account and no Pulumi CLI.

`RecordingMonitor` stands in for the engine's resource monitor. It records every resource the program
registers (custom resources, local components, remote components such as pulumi-eks's
`eks:index:Cluster`, providers, `.get()` reads) as a `tools.engine.records.RecordedResource`, with the parent,
provider, options, dependencies and the raw protobuf Struct the engine would receive.

`RecordingMocks` answers the provider: every invoke a real program makes (`tools.engine.mocks.invokes.INVOKES`)
and plausible, deterministic outputs for every resource (`tools.engine.mocks.outputs.RESOURCE_OUTPUTS`, a table
by type token that other modules extend with `register_outputs`), so every `apply` runs.

With `unknown_outputs=True` (a first `pulumi preview`: the stack does not exist, nothing has been
created) the monitor answers like the engine in a dry run: a custom resource's id and every output it
did not send as an input are unknown, and so is every output of a remote component; invokes still
answer (data sources are read during preview). A resource's own inputs stay what the program sent.
Source: https://github.com/pulumi/pulumi/blob/master/pkg/resource/deploy/step_generator.go (a create in
preview: the new state's outputs are the provider's preview of the create, computed values unknown)

A registration under a provider the engine leaves unconfigured in that preview (one whose inputs hold an
unknown other than `version`: the Kubernetes provider built from a new cluster's kubeconfig) gets an empty
object back, as the engine answers it: the unconfigured provider's preview Create returns an empty map
(pulumi/pulumi@1b5949891b pkg/resource/plugin/provider_plugin.go lines 1064-1080 and 1430-1440; stored as
the outputs by pkg/resource/deploy/step.go lines 445/459). The Python SDK then resolves every output the
response lacks as unknown in a dry run, the program's own literal inputs included (sdk/python/lib/pulumi/
runtime/rpc.py in 3.272.0, lines 1534-1551: inputs fill missing outputs only outside a dry run; 1618-1621:
a missing output is unknown in a dry run). So `Release(namespace=ns.metadata.name)` registers with an
unknown `namespace` there. The recording keeps what the program sent and what the object would hold.

The pulumi SDK's own MockMonitor drops `parent`, `protect`, dependencies and the raw Struct, which is why
the monitor methods are overridden here.
Source: https://github.com/pulumi/pulumi/blob/master/sdk/python/lib/pulumi/runtime/mocks.py
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime import rpc
from pulumi.runtime.mocks import MockCallArgs, MockMonitor, MockResourceArgs, Mocks
from pulumi.runtime.proto import provider_pb2, resource_pb2
from pulumi.runtime.settings import get_organization, get_project, get_stack
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from tools.engine.mocks.eks import RESOURCE_REFERENCE_OUTPUTS, answer_eks_cluster, get_log_groups
from tools.engine.mocks.eks_children import Child, construct_cluster, uncovered
from tools.engine.mocks.eks_nodegroups import MANAGED_NODE_GROUP, construct_managed_node_group, uncovered_mng
from tools.engine.mocks.invokes import INVOKES, MockValueError, eks_cluster_description
from tools.engine.mocks.kubernetes_yaml import REGISTER_URL as YAML_REGISTER_URL
from tools.engine.mocks.kubernetes_yaml import YAML_COMPONENTS, NotEmulated
from tools.engine.mocks.kubernetes_yaml import objects as yaml_objects
from tools.engine.mocks.methods import answer_method
from tools.engine.mocks.outputs import (
    RESOURCE_OUTPUTS,
    models_outputs,
    outputs_for,
    register_outputs,
    state_chosen_unknown,
)
from tools.engine.mocks.own_package import OwnPackage, is_own
from tools.engine.mocks.stack_refs import outputs_for_reference
from tools.engine.mocks.values import (
    ACCOUNT_ID,
    DEFAULT_EKS_VERSION,
    DEFAULT_REGION,
    PARTITION,
    InvokeFailure,
    MockContext,
    ResourceRequest,
    stable_hex,
    stable_uuid,
)
from tools.engine.records import UNKNOWN, RecordedResource, has_unknown

# pulumi-eks's Cluster and the log-group lookup of components/cluster.py (see tools/engine/mocks/eks.py).
register_outputs("eks:index:Cluster", answer_eks_cluster)
INVOKES["aws:cloudwatch/getLogGroups:getLogGroups"] = get_log_groups

__all__ = [
    "ACCOUNT_ID",
    "DEFAULT_EKS_VERSION",
    "DEFAULT_REGION",
    "INVOKES",
    "RESOURCE_OUTPUTS",
    "MockContext",
    "MockValueError",
    "RecordingMocks",
    "RecordingMonitor",
    "ResourceRequest",
    "UnknownInvokeError",
    "plain",
    "register_outputs",
    "stable_hex",
    "stable_uuid",
]

# Signatures of the special objects in a property Struct.
# Source: https://github.com/pulumi/pulumi/blob/master/sdk/python/lib/pulumi/runtime/rpc.py
SIG_KEY = "4dabf18193072939515e22adb298388d"
SIG_SECRET = "1b47061264138c4ac30d75fd1eb44270"
SIG_RESOURCE = "5cf8f73096256a8f31e491e813e4eb8e"
SIG_ASSET = "c44067f5952c0a294b673a41bacd8c17"
SIG_ARCHIVE = "0def7320c3a5731c473e5ecbe6d01bc7"
SIG_OUTPUT = "d0e6a833031e9bbcd3f4e8bde6ca49a4"

STACK_TYPE = "pulumi:pulumi:Stack"


STACK_REFERENCE = "pulumi:pulumi:StackReference"


def stack_reference_outputs(name: str, stack_outputs: Mapping[str, Mapping[str, Any]], *, organization: str,
                            project: str) -> dict[str, Any] | None:
    """What the engine's read of another stack answers: its outputs, known in a preview too (the engine reads the
    referenced stack's state in its Read, which runs in a preview too: pulumi/pulumi@1b5949891b
    pkg/resource/deploy/builtins.go lines 278-284 and 371, `readStackReference`).

    Offline, the outputs are those given with `--stack-outputs` for the stack the name resolves to as the engine
    resolves it (tools/engine/mocks/stack_refs.py); None when they were not given: then they are not known, in every
    phase (`RecordingMonitor.ReadResource`), and tools/engine/unseen.py makes what depends on the reference pending.
    """
    given = outputs_for_reference(name, stack_outputs, organization, project)
    if given is None:
        return None
    return {"name": name, "outputs": dict(given), "secretOutputNames": []}


class UnknownInvokeError(Exception):
    """The program called a provider function the mocks have no answer for."""


# --------------------------------------------------------------------------------------------------
# Struct -> plain values
# --------------------------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A protobuf Struct/Value as plain JSON-able Python, the way a policy or a reviewer reads it.

    Secrets are unwrapped, resource references become their URN, assets their path/text/uri, unknowns
    stay `UNKNOWN`, and integral numbers become ints (protobuf has only doubles).
    """
    if isinstance(value, struct_pb2.Struct):
        sig = value.fields.get(SIG_KEY)
        if sig is not None:
            kind = sig.string_value
            if kind == SIG_SECRET:
                return plain(value.fields["value"]) if "value" in value.fields else None
            if kind == SIG_RESOURCE:
                return value.fields["urn"].string_value
            if kind in (SIG_ASSET, SIG_ARCHIVE):
                return {k: plain(v) for k, v in sorted(value.fields.items()) if k != SIG_KEY}
            if kind == SIG_OUTPUT:
                return plain(value.fields["value"]) if "value" in value.fields else UNKNOWN
        return {k: plain(value.fields[k]) for k in sorted(value.fields)}
    if isinstance(value, struct_pb2.ListValue):
        return [plain(v) for v in value.values]
    if isinstance(value, struct_pb2.Value):
        which = value.WhichOneof("kind")
        if which == "struct_value":
            return plain(value.struct_value)
        if which == "list_value":
            return plain(value.list_value)
        if which == "number_value":
            n = value.number_value
            return int(n) if n.is_integer() and abs(n) < 2**53 else n
        if which == "bool_value":
            return value.bool_value
        if which == "string_value":
            return value.string_value
        return None
    return value


def _copy_struct(src: struct_pb2.Struct) -> struct_pb2.Struct:
    dst = struct_pb2.Struct()
    dst.CopyFrom(src)
    return dst


# --------------------------------------------------------------------------------------------------
# The mocks and the monitor
# --------------------------------------------------------------------------------------------------


@dataclass
class RecordingMocks(Mocks):
    """Answers invokes from INVOKES and resources from RESOURCE_OUTPUTS, deterministically.

    `config` is the stack's project config (the `<project>:` keys without the prefix, parsed values),
    read only where a real answer depends on the account (the version an adopted cluster reports).
    `unknown_outputs` reproduces a first preview: ids and computed outputs unknown (module docstring).
    """

    region: str = DEFAULT_REGION
    account: str = ACCOUNT_ID
    partition: str = PARTITION
    config: Mapping[str, Any] = field(default_factory=dict)
    invokes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    unknown_outputs: bool = False
    dry_run: bool = True  # a preview: a registration under an unconfigured provider answers `{}` (docstring)
    # A preview of a changed stack (`--phase update`): resources (logical name or URN) whose update makes their
    # computed outputs unknown, and resource types that are replaced (id unknown too: "the cluster is replaced").
    changed: frozenset[str] = frozenset()
    replaced_types: frozenset[str] = frozenset()
    # Other stacks' outputs (`--stack-outputs NAME=FILE`), by the name a StackReference is given (`stack_reference`).
    stack_outputs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def context(self, region: str | None = None) -> MockContext:
        return MockContext(region=region or self.region, account=self.account, partition=self.partition,
                           config=self.config)

    def answer_invoke(self, token: str, args: dict[str, Any], region: str | None = None) -> dict[str, Any]:
        handler = INVOKES.get(token)
        if handler is None:
            raise UnknownInvokeError(
                f"the program called {token} with {sorted(args)} and the offline mocks have no answer for it; "
                "add a handler for this token to the INVOKES table in tools/engine/mocks/invokes.py"
            )
        self.invokes.append((token, args))
        return handler(args, self.context(region))

    def is_changed(self, req: ResourceRequest) -> bool:
        """A resource this preview updates or replaces (`changed`, `replaced_types`)."""
        return req.type in self.replaced_types or req.name in self.changed or req.urn in self.changed

    def answer_resource(self, req: ResourceRequest) -> tuple[str, dict[str, Any]]:
        """(id, outputs) of a created resource; in a first preview the id is "" and computed outputs unknown.

        A changed resource in the preview of an existing stack is answered the same way, its id kept unless its
        type is replaced: the engine previews an update or a replacement without calling the provider's Update
        or Create, so what the provider computes is unknown (pulumi/pulumi pkg/resource/deploy/step.go, the
        preview of UpdateStep and CreateStep/ReplaceStep).
        """
        outputs = outputs_for(req)
        if self.dry_run and not self.unknown_outputs:  # `update`: what the cloud chose at create is in the state
            outputs = state_chosen_unknown(req, outputs, UNKNOWN)
        changed = self.is_changed(req)
        if (self.unknown_outputs or changed) and not req.type.startswith("pulumi:providers:"):
            # The engine previews a create without calling the provider's Create: what the program sent is
            # known, everything the provider computes is not; a remote component's outputs all wait.
            keep = {} if req.remote else dict(req.inputs)
            keep.update(_checked_names(req, outputs))
            unknown_id = self.unknown_outputs or req.type in self.replaced_types
            kept_id = "" if unknown_id or not req.custom else str(outputs.get("id") or f"{req.name}-{req.h(length=8)}")
            outputs = {k: keep.get(k, UNKNOWN) for k in outputs if k != "id"}
            return kept_id, outputs
        if not req.custom:
            return "", outputs
        id_ = str(outputs.get("id") or f"{req.name}-{req.h(length=8)}")
        return id_, outputs

    # The pulumi.runtime.Mocks interface, for callers that use the stock MockMonitor.
    def call(self, args: MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return self.answer_invoke(args.token, dict(args.args)), None

    def new_resource(self, args: MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        req = ResourceRequest(type=args.typ, name=args.name, urn=f"urn:pulumi:mock::mock::{args.typ}::{args.name}",
                              inputs=dict(args.inputs), custom=bool(args.custom), remote=False,
                              ctx=self.context())
        return self.answer_resource(req)


def _checked_names(req: ResourceRequest, outputs: Mapping[str, Any]) -> dict[str, Any]:
    """Names a provider assigns in Check, which runs during preview too: known in a first preview.

    Pulumi's auto-name (`<logical>-<7 hex>`) of an AWS resource without `name`/`namePrefix`, and the
    Kubernetes provider's `metadata.name` of an object without one. A name the cloud generates at create
    (`namePrefix`, `nodeGroupNamePrefix`) stays unknown.
    Source: https://www.pulumi.com/docs/iac/concepts/resources/names/#autonaming
    """
    if req.remote or not req.custom:
        return {}
    if req.type.startswith("aws:") and "name" in outputs and not any(k.endswith("amePrefix") for k in req.inputs):
        return {"name": outputs["name"]}
    metadata = outputs.get("metadata")
    if req.type.startswith("kubernetes:") and isinstance(metadata, Mapping) and "name" in metadata:
        given = req.inputs.get("metadata")
        return {"metadata": {**(given if isinstance(given, Mapping) else {}), "name": metadata["name"]}}
    return {}


def _qualified_type(parent: str, type_: str) -> str:
    if parent:
        parent_type = parent.split("::")[2]
        if parent_type != STACK_TYPE:
            return f"{parent_type}${type_}"
    return type_


class RecordingMonitor(MockMonitor):
    """A MockMonitor that keeps every registration as a RecordedResource (see the module docstring)."""

    mocks: RecordingMocks

    def __init__(self, mocks: RecordingMocks) -> None:
        super().__init__(mocks)
        self.mocks = mocks
        self.recorded: dict[str, RecordedResource] = {}
        self.order: list[str] = []
        self.resource_outputs: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._provider_regions: dict[str, str] = {}
        self.own_package = OwnPackage(self)  # this repository's package, built by its plugin (own_package.py)

    # -- helpers ----------------------------------------------------------------------------------

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The URN the engine builds: the parent's full qualified type chain, the root stack left out.

        (The SDK's MockMonitor keeps only the parent's last type and includes the stack.)
        Source: https://github.com/pulumi/pulumi/blob/master/sdk/go/common/resource/urn.go (NewURN)
        """
        return f"urn:pulumi:{get_stack()}::{get_project()}::{_qualified_type(parent, type_)}::{name}"

    def _aliases(self, request: Any) -> tuple[str, ...]:
        """Alias URNs, as the engine resolves alias specs (defaults: this resource's name, type, parent)."""
        urns = list(request.aliasURNs)
        for alias in request.aliases:
            if alias.urn:
                urns.append(alias.urn)
                continue
            spec = alias.spec
            parent = "" if spec.noParent else (spec.parentUrn or request.parent)
            urns.append(
                f"urn:pulumi:{spec.stack or get_stack()}::{spec.project or get_project()}::"
                f"{_qualified_type(parent, spec.type or request.type)}::{spec.name or request.name}"
            )
        return tuple(dict.fromkeys(urns))

    def _unconfigured(self, provider_ref: str) -> bool:
        """The resource's explicit provider holds an unknown input other than `version` (provider_plugin.go
        lines 1064-1080): the engine leaves it unconfigured in this preview. A default provider is configured
        from the stack's config, which holds no unknown."""
        provider = self.recorded.get(provider_ref.rsplit("::", 1)[0]) if provider_ref else None
        return provider is not None and any(has_unknown(v) for k, v in provider.inputs.items() if k != "version")

    def _region_for(self, provider_ref: str) -> str | None:
        return self._provider_regions.get(provider_ref.rsplit("::", 1)[0]) if provider_ref else None

    def _record(self, res: RecordedResource) -> None:
        with self._lock:
            if res.urn in self.recorded:
                raise ValueError(
                    f"duplicate resource URN {res.urn}: two resources of type {res.type} named {res.name!r} "
                    "under the same parent; give them distinct names"
                )
            self.recorded[res.urn] = res
            self.order.append(res.urn)

    def _outputs_struct(self, outputs: dict[str, Any]) -> struct_pb2.Struct:
        result: struct_pb2.Struct = _sync_await(rpc.serialize_properties(outputs, {}))
        return result

    # -- ResourceMonitor --------------------------------------------------------------------------

    def RegisterResource(self, request: Any) -> Any:
        urn = self.make_urn(request.parent, request.type, request.name)
        _ensure_event_loop()  # type: ignore[no-untyped-call]
        inputs = plain(request.object)
        timeouts = request.customTimeouts
        base = {
            "urn": urn,
            "type": request.type,
            "name": request.name,
            "parent": request.parent or None,
            "custom": bool(request.custom),
            "inputs": inputs,
            "properties": _copy_struct(request.object),
            "provider": request.provider,
            "protect": bool(request.protect),
            "dependencies": tuple(request.dependencies),
            "property_dependencies": {k: tuple(v.urns) for k, v in request.propertyDependencies.items()},
            "remote": bool(request.remote),
            "ignore_changes": tuple(request.ignoreChanges),
            "delete_before_replace": bool(request.deleteBeforeReplace) if request.deleteBeforeReplaceDefined
            else None,
            "additional_secret_outputs": tuple(request.additionalSecretOutputs),
            "aliases": self._aliases(request),
            "custom_timeouts": (timeouts.create, timeouts.update, timeouts.delete),
            "retain_on_delete": bool(request.retainOnDelete),
            "version": request.version,
        }
        if request.type == STACK_TYPE:
            self._record(RecordedResource(**base))
            return resource_pb2.RegisterResourceResponse(urn=urn)

        if request.remote and is_own(request.type) and self.own_package.not_built(request) is None:
            return self.own_package.construct(request, inputs)  # the plugin registers it and its children here
        if request.type.startswith("pulumi:providers:") and isinstance(inputs.get("region"), str):
            self._provider_regions[urn] = inputs["region"]
        req = ResourceRequest(type=request.type, name=request.name, urn=urn, inputs=inputs,
                              custom=bool(request.custom), remote=bool(request.remote),
                              ctx=self.mocks.context(self._region_for(request.provider)))
        id_, outputs = self.mocks.answer_resource(req)
        # A custom resource answers with its inputs plus the provider's outputs; a remote component with
        # the outputs its provider registers; a local component only has what it passes to register_outputs.
        state: dict[str, Any] = {}
        if request.custom:
            state = {**inputs, **outputs}
        elif request.remote:
            state = dict(outputs)
        state.pop("id", None)
        self._record(RecordedResource(**base, id=id_, outputs=state))
        self.resources[urn] = MockMonitor.ResourceRegistration(urn, id_, state)
        if self.mocks.dry_run and request.custom and self._unconfigured(request.provider):
            # The engine's answer (module docstring): `{}`, and the SDK makes every output unknown.
            return resource_pb2.RegisterResourceResponse(urn=urn, id=id_, object=struct_pb2.Struct())
        if request.remote and request.type == "eks:index:Cluster" and not uncovered(inputs):
            # pulumi-eks's Construct registers the cluster's children through the engine, in a preview too.
            construct_cluster(urn, request.name, inputs, outputs=state, partition=req.ctx.partition,
                              register=lambda child: self._register_child(req.ctx, child))
        if request.remote and request.type == MANAGED_NODE_GROUP and not uncovered_mng(inputs, self.recorded.get):
            construct_managed_node_group(urn, request.name, inputs, recorded=self.recorded,
                                         register=lambda child: self._register_child(req.ctx, child),
                                         invoke=lambda token, args: self.mocks.answer_invoke(token, args,
                                                                                             req.ctx.region))
        if request.remote and request.type in YAML_COMPONENTS:
            self._construct_yaml(req.ctx, urn, request, inputs)
        if request.custom and not self.mocks.dry_run and not models_outputs(request.type):
            # An update of a resource whose provider the mocks do not model (pulumi-docker-build's Image): what it
            # computes (`ref`, `digest`) is not known; the response says so, as the engine does for a create it
            # elides (proto/pulumi/resource.proto at pulumi/pulumi@1b5949891b line 296, `unknown`: "SDKs should
            # resolve outputs as unknown"), rather than the None the SDK would make of a missing output.
            return resource_pb2.RegisterResourceResponse(urn=urn, id=id_, object=self._outputs_struct(state),
                                                         unknown=True)
        if request.remote and not self.mocks.dry_run and request.type not in RESOURCE_OUTPUTS:
            # An update (`pulumi up`): the component's provider would answer its outputs (awsx's `repository`, a
            # resource), which the mocks do not know; a made-up None crashed the program's `apply`. They resolve as
            # unknown instead, as the SDK resolves a registration the engine reports as not succeeded (sdk/python/
            # lib/pulumi/runtime/resource.py in 3.272.0, lines 1374-1406: "resolve all of its outputs as unknown so
            # the rest of the program can continue"); tools/engine/unseen.py makes what reads them pending.
            return resource_pb2.RegisterResourceResponse(urn=urn, id=id_, object=struct_pb2.Struct(),
                                                         result=resource_pb2.Result.FAIL)
        if request.remote and request.type == "eks:index:Cluster":
            # The Cluster's resource-reference outputs (`eksCluster`, `core`, ...) are live resources the mocks cannot
            # hand back: unknown, as the SDK resolves what it is not told, not a None the program's `apply` reads
            # (pulumi-eks examples/cluster-py reads `cluster.eks_cluster.version` in phase up).
            state = {**dict.fromkeys(RESOURCE_REFERENCE_OUTPUTS, UNKNOWN), **state}
        return resource_pb2.RegisterResourceResponse(urn=urn, id=id_, object=self._outputs_struct(state))

    def _register_child(self, ctx: MockContext, child: Child) -> tuple[str, dict[str, Any]]:
        """Record one child a remote component's provider registers (tools/engine/mocks/eks_children.py).

        It is answered like a registration of the program (`RecordingMocks.answer_resource`); returns its URN
        and state, with `id` (unknown in a first preview).
        """
        urn = self.make_urn(child.parent, child.type, child.name)
        id_, state = "", {}
        if child.custom:
            req = ResourceRequest(type=child.type, name=child.name, urn=urn, inputs=child.inputs, custom=True,
                                  remote=False, ctx=ctx)
            id_, outputs = self.mocks.answer_resource(req)
            state = {**child.inputs, **outputs}
            state.pop("id", None)
        self._record(RecordedResource(
            urn=urn, type=child.type, name=child.name, parent=child.parent, custom=child.custom,
            inputs=child.inputs, properties=json_format.ParseDict(child.inputs, struct_pb2.Struct()),
            dependencies=tuple(dict.fromkeys([*child.depends_on, *(u for urns in child.property_dependencies.values()
                                                                   for u in urns)])),
            property_dependencies={k: tuple(v) for k, v in child.property_dependencies.items() if v},
            id=id_, outputs=state, ignore_changes=child.ignore_changes,
            emulated=child.cite.url(),
        ))
        return urn, {**state, "id": id_ or UNKNOWN}

    def _construct_yaml(self, ctx: MockContext, urn: str, request: Any, inputs: dict[str, Any]) -> None:
        """Record the objects pulumi-kubernetes's ConfigFile/ConfigGroup Construct registers, where the manifests
        can be read here (tools/engine/mocks/kubernetes_yaml.py); else none, and the component stays unjudged."""
        try:
            found = yaml_objects(request.type, request.name, inputs, Path.cwd())
        except NotEmulated:
            return
        # The children take the component's provider (its `providers` map, else `provider`), as Construct's
        # `pulumi.Parent(comp)` passes it on.
        provider = request.providers.get("kubernetes", "") or request.provider
        for obj in found:
            child_urn = self.make_urn(urn, obj.type, obj.name)
            req = ResourceRequest(type=obj.type, name=obj.name, urn=child_urn, inputs=obj.inputs, custom=True,
                                  remote=False, ctx=ctx)
            id_, outputs = self.mocks.answer_resource(req)
            state = {**obj.inputs, **outputs}
            state.pop("id", None)
            self._record(RecordedResource(
                urn=child_urn, type=obj.type, name=obj.name, parent=urn, custom=True, inputs=obj.inputs,
                properties=json_format.ParseDict(obj.inputs, struct_pb2.Struct()), provider=provider, id=id_,
                outputs=state, emulated=YAML_REGISTER_URL,
            ))

    def ReadResource(self, request: Any) -> Any:
        urn = self.make_urn(request.parent, request.type, request.name)
        _ensure_event_loop()  # type: ignore[no-untyped-call]
        inputs = plain(request.properties)
        req = ResourceRequest(type=request.type, name=request.name, urn=urn, inputs=inputs, custom=True,
                              remote=False, ctx=self.mocks.context(self._region_for(request.provider)))
        # A read asks the provider even during preview: its state is known.
        outputs = outputs_for(req)
        if request.type == "aws:eks/cluster:Cluster":
            outputs = {**outputs, **eks_cluster_description(request.id, req.ctx)}
        unanswered = False
        if request.type == STACK_REFERENCE:
            given = stack_reference_outputs(request.id, self.mocks.stack_outputs, organization=get_organization(),
                                            project=get_project())
            unanswered = given is None
            outputs = {"name": request.id, "outputs": UNKNOWN, "secretOutputNames": UNKNOWN} if given is None \
                else given
        state = {**inputs, **outputs, "id": request.id}
        self._record(
            RecordedResource(
                urn=urn, type=request.type, name=request.name, parent=request.parent or None, custom=True,
                inputs=inputs, properties=_copy_struct(request.properties), provider=request.provider,
                dependencies=tuple(request.dependencies), id=request.id, outputs=state, read=True,
            )
        )
        self.resources[urn] = MockMonitor.ResourceRegistration(urn, request.id, state)
        if unanswered and not self.mocks.dry_run:
            # `up` with no `--stack-outputs` for it: the outputs stay unknown, never the None the SDK makes of an
            # unknown or a missing output outside a dry run (a program's `apply` calling a string method on one
            # crashed). A read answered `unknown` resolves what it lacks as unknown (sdk/python/lib/pulumi/runtime/
            # resource.py in 3.272.0, lines 930-943, `resolve_missing_as_unknown`).
            known = {k: v for k, v in state.items() if v != UNKNOWN}
            return resource_pb2.ReadResourceResponse(urn=urn, properties=self._outputs_struct(known), unknown=True)
        return resource_pb2.ReadResourceResponse(urn=urn, properties=self._outputs_struct(state))

    def RegisterResourceOutputs(self, request: Any) -> Any:
        with self._lock:
            self.resource_outputs[request.urn] = plain(request.outputs)
        return empty_pb2.Empty()

    def Invoke(self, request: Any) -> Any:
        if request.tok == "pulumi:pulumi:getResource":
            return super().Invoke(request)  # type: ignore[no-untyped-call]
        _ensure_event_loop()  # type: ignore[no-untyped-call]
        args = plain(request.args)
        response = resource_pb2.ResourceInvokeResponse()
        try:
            ret = self.mocks.answer_invoke(request.tok, args, self._region_for(request.provider))
        except InvokeFailure as failure:  # the provider's own error (not found): the program sees a failed invoke
            response.failures.add(property="", reason=str(failure))
            return response
        getattr(response, "return").CopyFrom(self._outputs_struct(ret))  # `return` is a Python keyword
        return response

    def Call(self, request: Any) -> Any:
        """A method call on a remote component (tools/engine/mocks/methods.py). `plain` reads `__self__`, a resource
        reference, as its URN: deserializing it would rebuild the component through `get_resource` on this
        thread's event loop, not the program's ('attached to a different loop')."""
        _ensure_event_loop()  # type: ignore[no-untyped-call]
        args = plain(request.args)
        self_urn = args.pop("__self__", None)
        if isinstance(self_urn, str):
            with self._lock:
                component = self.recorded.get(self_urn)
            outputs = component.outputs if component is not None else {}
            region = self.mocks.context(self._region_for(component.provider if component else "")).region
            ret = answer_method(request.tok, outputs, args, region)
        else:
            ret = self.mocks.answer_invoke(request.tok, args, self._region_for(request.provider))
        response = provider_pb2.CallResponse()
        getattr(response, "return").CopyFrom(self._outputs_struct(ret))
        return response

    def GetDeploymentInfo(self, request: Any) -> Any:
        """The SDK's mock features plus `outputValues`, which the engine supports (pulumi/pulumi@1b5949891b
        pkg/resource/deploy/source_eval.go lines 961-962, 996-997): the SDK then sends a remote component's inputs as
        output values, each unknown or secret where it is, not a whole input wrapped as one (pulumi 3.272.0
        pulumi/runtime/resource.py line 236, rpc.py lines 659-661); `plain` and tools/engine/view.py read both."""
        info = super().GetDeploymentInfo(request)  # type: ignore[no-untyped-call]
        info.supportedFeatures.append(resource_pb2.RESOURCE_MONITOR_FEATURE_OUTPUT_VALUES)
        return info

    def SupportsFeature(self, request: Any) -> Any:
        if request.id == "outputValues":
            return resource_pb2.SupportsFeatureResponse(hasSupport=True)
        return super().SupportsFeature(request)  # type: ignore[no-untyped-call]

    def close(self) -> None:
        """Stop the package plugin a program run started (tools/engine/mocks/own_package.py)."""
        self.own_package.close()

    # -- results ----------------------------------------------------------------------------------

    def resources_in_order(self) -> list[RecordedResource]:
        """Every registration in order; a local component's `outputs` are what it registered."""
        with self._lock:
            result = []
            for urn in self.order:
                res = self.recorded[urn]
                if not res.custom and not res.remote and urn in self.resource_outputs:
                    res = dataclasses.replace(res, outputs=dict(self.resource_outputs[urn]))
                result.append(res)
            return result
