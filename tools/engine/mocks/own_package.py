"""Our own component package (`provider/`, `gpu-platform:index:*`), built in the gate by its own plugin, as the engine
builds it: a Construct call.

A program that uses the package through a generated SDK registers each component with `remote=true`. The engine does
not record that registration: it hands it to the package's provider, whose `Construct` registers the component and its
children through the engine's resource monitor, and answers the program with the component's URN and outputs
(pulumi/pulumi@1b5949891b pkg/resource/deploy/source_eval.go lines 2826-2945: Construct with the request's inputs,
dependencies, property dependencies, providers, protect, aliases, ...; the result's URN and outputs are the
registration's answer, `OutputDependencies` its property dependencies; pkg/resource/plugin/provider_plugin.go lines
1996-2220: the ConstructRequest built from it, with the deployment's project, stack, organization, config, dry run
and monitor address). Offline the same happens here: `OwnPackage.construct` starts the package's plugin as the Python
language host starts a plugin folder (`python provider <engine address>`: pulumi v3.259.0
sdk/python/cmd/pulumi-language-python/main.go lines 1550-1625; it prints its port: pulumi 3.272.0
pulumi/provider/server.py lines 537-542), serves the RecordingMonitor to it over gRPC (with an Engine that takes its
logs), and calls `Construct` with the RegisterResource request as the engine's monitor received it. The plugin runs
`provider/host.py`'s ComponentProvider: `provider/validate.py` judges the inputs as the stack file, the classes of
`components/` register the children under the component's URN (pulumi 3.272.0 pulumi/provider/server.py lines
150-192 `_construct`: `reset_options` with the request's monitor, `_construct_options` makes the request's parent
the component's parent; pulumi/provider/experimental/component.py lines 80-101: the component's outputs are its
state). So the children's types, names, parents, inputs and options are the ones a real `pulumi preview` records,
and the pack judges them like the repository's own stack, in every phase: in a preview an input the program cannot
know yet is sent as unknown and stays unknown in the plugin.

Nothing here depends on the program's language: the hook takes the RegisterResource request (type, name, inputs,
options) and a `ConstructInfo` (what the engine knows of the deployment), so a Node program's registrations are built
the same way.

A registration asking for another version of the package than this tree's plugin reports (`version`, which a
generated SDK sets to its own) is not built: the real engine would run that version's plugin, whose code is not here.
It stays a remote component the gate did not see (tools/engine/unseen.py), counted unjudged with that reason.
A rejected input fails the run with the engine's one line for it (`ConstructConfigError`).
"""

from __future__ import annotations

import atexit
import contextvars
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2
from pulumi.runtime import config as pulumi_config
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.proto import (
    engine_pb2_grpc,
    errors_pb2,
    provider_pb2,
    provider_pb2_grpc,
    resource_pb2,
    resource_pb2_grpc,
    status_pb2,
)

REPO = Path(__file__).resolve().parents[3]
PLUGIN_DIR = REPO / "provider"
PACKAGE = "gpu-platform"
TYPE_PREFIX = f"{PACKAGE}:index:"
# What each component registers (components/ through provider/hosted.py), by type: what the policies could judge of it
# when it is not built (tools/engine/coverage/unjudged.py). tests/tools/test_own_package.py checks it against a build.
HOLDS: dict[str, tuple[str, ...]] = {
    f"{TYPE_PREFIX}SystemNodeGroup": ("aws:eks/nodeGroup:NodeGroup", "aws:ec2/launchTemplate:LaunchTemplate"),
    f"{TYPE_PREFIX}GpuManagedNodeGroup": ("aws:eks/", "aws:ec2/launchTemplate:LaunchTemplate", "aws:autoscaling/",
                                          "aws:iam/"),
    f"{TYPE_PREFIX}KarpenterGpuPool": ("kubernetes:karpenter.sh/v1:NodePool",
                                       "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "pulumi:providers:"),
    # The namespace, the Helm release, one NVIDIADriver per Ubuntu pool, the smoke test's objects.
    f"{TYPE_PREFIX}GpuOperatorRelease": ("kubernetes:", "pulumi:providers:"),
    f"{TYPE_PREFIX}InferenceService": ("kubernetes:", "aws:ebs/", "aws:ec2/", "pulumi:providers:"),
}
# Why one of ours is unjudged: it is built only at this tree's version (`OwnPackage.not_built`).
NOT_BUILT = (f"the gate builds {PACKAGE} components with this tree's plugin (provider/), and the program asks for "
             "another version of the package, whose plugin the engine would run")
# The monitor's methods the plugin calls (the SDK's ResourceMonitor client).
_MONITOR_METHODS = ("RegisterResource", "RegisterResourceOutputs", "ReadResource", "Invoke", "Call",
                    "GetDeploymentInfo", "RegisterPackage", "SignalAndWaitForShutdown")


def is_own(type_: str) -> bool:
    """A component of this repository's package (`gpu-platform:index:<Name>`)."""
    return type_.startswith(TYPE_PREFIX)


class ConstructConfigError(Exception):
    """The plugin refused the component (an input the stack checks reject, or an error in its constructor): the
    engine's one line for it, `<type> resource '<name>' has a problem: ...` (source_eval.go lines 2890-2893,
    `errorToMessage` at 2251-2278; sdk/go/common/diag/errors.go line 37)."""


@dataclass(frozen=True)
class ConstructInfo:
    """What the engine knows of the deployment and hands every Construct (source_eval.go lines 604-613)."""

    project: str
    stack: str
    organization: str
    config: Mapping[str, str]
    secret_keys: tuple[str, ...]
    dry_run: bool
    parallel: int = 4


def program_info() -> ConstructInfo:
    """The deployment of the program the gate runs in this process (tools/preview/command.py `run_program` configures
    the SDK's settings and config as the language host does); read in the monitor call, which runs in the program's
    context (the SDK runs the RPC with `wrap_with_context`)."""
    config = {k: v if isinstance(v, str) else str(v) for k, v in pulumi_config.CONFIG.get().items()}
    return ConstructInfo(project=pulumi_settings.get_project(), stack=pulumi_settings.get_stack(),
                         organization=pulumi_settings.get_organization(), config=config,
                         secret_keys=tuple(sorted(pulumi_config._SECRET_KEYS.get())),
                         dry_run=pulumi_settings.is_dry_run())


def program_log(request: Any) -> None:
    """A plugin's log line, to the program's engine (the gate's RecordingEngine), as the CLI shows it with the run's."""
    engine = pulumi_settings.get_engine()
    if engine is not None:
        engine.Log(request)


class _Monitor(resource_pb2_grpc.ResourceMonitorServicer):
    """The RecordingMonitor's methods, each run in a copy of `context` (the SDK's settings live in contextvars)."""

    def __init__(self, monitor: Any, context: contextvars.Context) -> None:
        for method in _MONITOR_METHODS:
            target = getattr(monitor, method)
            setattr(self, method, lambda request, _, target=target: context.copy().run(target, request))


class _Engine(engine_pb2_grpc.EngineServicer):
    def __init__(self, log: Callable[[Any], None], context: contextvars.Context) -> None:
        self._log = log
        self._context = context
        self.logs: list[tuple[int, str]] = []

    def Log(self, request: Any, context: Any) -> Any:
        self.logs.append((request.severity, request.message))
        self._context.copy().run(self._log, request)
        return empty_pb2.Empty()


class MonitorServer:
    """A RecordingMonitor and an Engine on one local gRPC port: where a plugin's Construct registers its children."""

    def __init__(self, monitor: Any, *, log: Callable[[Any], None] = lambda _: None,
                 context: contextvars.Context | None = None) -> None:
        context = context if context is not None else contextvars.copy_context()
        self.engine = _Engine(log, context)
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
        resource_pb2_grpc.add_ResourceMonitorServicer_to_server(_Monitor(monitor, context), self.server)
        engine_pb2_grpc.add_EngineServicer_to_server(self.engine, self.server)
        self.address = f"127.0.0.1:{self.server.add_insecure_port('127.0.0.1:0')}"
        self.server.start()

    def stop(self) -> None:
        self.server.stop(grace=None)


class PluginProcess:
    """The package's plugin, started as the engine starts it; `stub` speaks ResourceProvider to it.

    `env`: variables besides this process's environment (the plugin inherits the `pulumi` command's: the day it judges
    lifecycles on is `GPU_PLATFORM_TODAY` there, docs/component-package.md)."""

    def __init__(self, engine_address: str, *, env: Mapping[str, str] | None = None) -> None:
        # stderr to a file and stdout drained after the port line: a pipe nobody reads would stop the plugin once
        # its warnings fill the pipe's buffer.
        self.errors = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [sys.executable, str(PLUGIN_DIR), engine_address], cwd=PLUGIN_DIR, stdout=subprocess.PIPE,
            stderr=self.errors, text=True, env={**os.environ, **(env or {})})
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        if not line.isdigit():
            self.process.kill()
            self.process.wait(timeout=10)
            self.errors.seek(0)
            raise RuntimeError(f"the {PACKAGE} plugin ({PLUGIN_DIR}) printed {line!r} instead of its port: "
                               f"{self.errors.read()}")
        threading.Thread(target=self.process.stdout.read, daemon=True).start()
        self.port = int(line)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")
        self.stub = provider_pb2_grpc.ResourceProviderStub(self.channel)

    def version(self) -> str:
        return str(self.stub.GetPluginInfo(empty_pb2.Empty()).version)

    def stop(self) -> None:
        self.channel.close()
        self.process.kill()
        self.process.wait(timeout=10)
        self.errors.close()


def construct_request(request: Any, info: ConstructInfo, monitor_address: str) -> Any:
    """The ConstructRequest the engine sends for a remote RegisterResource (provider_plugin.go lines 2146-2187: the
    inputs as the program sent them, unknowns and secrets kept; dependencies; property dependencies as input
    dependencies; the options; the deployment's info)."""
    timeouts = request.customTimeouts
    out = provider_pb2.ConstructRequest(
        project=info.project, stack=info.stack, organization=info.organization, config=dict(info.config),
        configSecretKeys=list(info.secret_keys), dryRun=info.dry_run, parallel=info.parallel,
        monitorEndpoint=monitor_address, type=request.type, name=request.name, parent=request.parent,
        protect=request.protect, providers=dict(request.providers), dependencies=list(request.dependencies),
        inputDependencies={k: provider_pb2.ConstructRequest.PropertyDependencies(urns=list(v.urns))
                           for k, v in request.propertyDependencies.items()},
        additionalSecretOutputs=list(request.additionalSecretOutputs), deletedWith=request.deletedWith,
        deleteBeforeReplace=request.deleteBeforeReplace, ignoreChanges=list(request.ignoreChanges),
        replaceOnChanges=list(request.replaceOnChanges), retainOnDelete=request.retainOnDelete,
        aliases=list(request.aliases), accepts_output_values=True)
    out.inputs.CopyFrom(request.object)
    if request.HasField("customTimeouts"):
        out.customTimeouts.CopyFrom(provider_pb2.ConstructRequest.CustomTimeouts(
            create=timeouts.create, update=timeouts.update, delete=timeouts.delete))
    return out


def register_response(response: Any) -> Any:
    """The program's answer (source_eval.go lines 2911-2934 and the response after them): the component's URN, its
    outputs, and each output's dependencies."""
    return resource_pb2.RegisterResourceResponse(
        urn=response.urn, object=response.state,
        propertyDependencies={k: resource_pb2.RegisterResourceResponse.PropertyDependencies(urns=list(v.urns))
                              for k, v in response.stateDependencies.items()})


def refusal(error: grpc.RpcError, type_: str, name: str, inputs: Mapping[str, Any]) -> str:
    """The engine's message for a failed Construct: `<type> resource '<name>' has a problem: <message>`, each input
    property error as `property <path> with value '<value>' has a problem: <reason>` (errorToMessage)."""
    message = str(error.details() or "") if hasattr(error, "details") else str(error)
    problems = []
    for detail in _status_details(error):
        for item in detail.errors:
            value = _at_path(inputs, item.property_path)
            shown = "" if value is _MISSING else f" with value '{value}'"
            problems.append(f"property {item.property_path}{shown} has a problem: {item.reason}")
    text = "; ".join(filter(None, [message, *problems]))
    return f"{type_} resource '{name}' has a problem: {text}"


def _status_details(error: grpc.RpcError) -> list[Any]:
    metadata = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    found = []
    for key, value in metadata or ():
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for any_detail in status.details:
            detail = errors_pb2.InputPropertiesError()
            if any_detail.Unpack(detail):
                found.append(detail)
    return found


_MISSING = object()


def _at_path(inputs: Mapping[str, Any], path: str) -> Any:
    node: Any = inputs
    for part in path.replace("[", ".").replace("]", "").split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


@dataclass
class OwnPackage:
    """The package's plugin for one program run, started at its first component; `close` stops it.

    `info` and `log` are the deployment and the engine's log the plugin gets (defaults: the program in this process)."""

    monitor: Any
    info: Callable[[], ConstructInfo] = program_info
    log: Callable[[Any], None] = program_log
    server: MonitorServer | None = None
    plugin: PluginProcess | None = None
    plugin_version: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _start(self) -> None:
        if self.plugin is None:
            self.server = MonitorServer(self.monitor, log=self.log)
            self.plugin = PluginProcess(self.server.address)
            self.plugin_version = self.plugin.version()
            atexit.register(self.close)  # never outlive the gate, whatever path ends the run

    def not_built(self, request: Any) -> str | None:
        """Why a registration of ours is not built here (another version of the package); None when it is."""
        with self._lock:
            self._start()
        if request.version and request.version != self.plugin_version:
            return (f"the program asks for {PACKAGE} {request.version}; the gate builds the package from this tree's "
                    f"code ({PACKAGE} {self.plugin_version}), and the engine would run the plugin the program asks for")
        return None

    def construct(self, request: Any, inputs: Mapping[str, Any]) -> Any:
        """The engine's answer to a remote RegisterResource of ours: Construct, then the component's URN and outputs.

        Constructs run one at a time, so the recording's order does not depend on thread timing."""
        info = self.info()
        with self._lock:
            self._start()
            assert self.plugin is not None and self.server is not None
            try:
                response = self.plugin.stub.Construct(construct_request(request, info, self.server.address))
            except grpc.RpcError as error:
                raise ConstructConfigError(refusal(error, request.type, request.name, inputs)) from None
        return register_response(response)

    def close(self) -> None:
        with self._lock:
            if self.plugin is not None:
                self.plugin.stop()
                self.plugin = None
            if self.server is not None:
                self.server.stop()
                self.server = None
