"""The engine's side of the provider protocol, for tests: the plugin as a subprocess, the mock monitor over gRPC.

`ProviderProcess` starts `python provider <engine address>` as the Python language host runs a plugin folder
(pulumi v3.259.0 sdk/python/cmd/pulumi-language-python/main.go:1550-1625) and reads the port the plugin
prints on its first stdout line (pulumi 3.272.0 pulumi/provider/server.py:537-542). `MonitorServer` serves
tools/engine/mocks' RecordingMonitor as the ResourceMonitor (and a minimal Engine for logs) on a local port:
the plugin's Construct registers its children there, as it would with the engine's resource monitor.
"""

from __future__ import annotations

import contextvars
import os
import subprocess
import sys
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2
from pulumi.runtime.proto import engine_pb2_grpc, provider_pb2, provider_pb2_grpc, resource_pb2_grpc

from policies.gpu_guard.calendar import TODAY_ENV
from tools.engine.mocks.monitor import RecordingMonitor

REPO = Path(__file__).resolve().parents[2]
_MONITOR_METHODS = ("RegisterResource", "RegisterResourceOutputs", "ReadResource", "Invoke", "Call",
                    "GetDeploymentInfo", "RegisterPackage", "SignalAndWaitForShutdown")


class _Monitor(resource_pb2_grpc.ResourceMonitorServicer):
    """Each call runs in a copy of the test's context: the Pulumi settings (stack, project) live in contextvars."""

    def __init__(self, monitor: RecordingMonitor) -> None:
        settings = contextvars.copy_context()
        for method in _MONITOR_METHODS:
            target = getattr(monitor, method)
            setattr(self, method, lambda request, context, target=target: settings.copy().run(target, request))


class _Engine(engine_pb2_grpc.EngineServicer):
    def __init__(self) -> None:
        self.logs: list[tuple[int, str]] = []

    def Log(self, request: Any, context: Any) -> Any:
        self.logs.append((request.severity, request.message))
        return empty_pb2.Empty()


class MonitorServer:
    """The RecordingMonitor and a log-collecting Engine on one local gRPC port."""

    def __init__(self, monitor: RecordingMonitor) -> None:
        self.engine = _Engine()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        resource_pb2_grpc.add_ResourceMonitorServicer_to_server(_Monitor(monitor), self.server)
        engine_pb2_grpc.add_EngineServicer_to_server(self.engine, self.server)
        self.address = f"127.0.0.1:{self.server.add_insecure_port('127.0.0.1:0')}"
        self.server.start()

    def stop(self) -> None:
        self.server.stop(grace=None)


class ProviderProcess:
    """The plugin, started as the engine starts it; `stub` speaks ResourceProvider to it.

    `today`: the day the plugin judges lifecycles on, handed to it as the `pulumi` command would hand it
    (the plugin inherits the command's environment, where a user sets GPU_PLATFORM_TODAY); a test never lets
    the plugin read the calendar, so it is required.
    """

    def __init__(self, engine_address: str, *, today: str) -> None:
        env = {**os.environ, TODAY_ENV: today}
        self.process = subprocess.Popen(
            [sys.executable, str(REPO / "provider"), engine_address], cwd=REPO / "provider",
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        if not line.isdigit():
            self.process.kill()
            errors = self.process.stderr.read() if self.process.stderr else ""
            raise RuntimeError(f"the plugin printed {line!r} instead of its port: {errors}")
        self.port = int(line)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")
        self.stub = provider_pb2_grpc.ResourceProviderStub(self.channel)

    def schema(self) -> str:
        return str(self.stub.GetSchema(provider_pb2.GetSchemaRequest()).schema)

    def stop(self) -> None:
        self.channel.close()
        self.process.kill()
        self.process.wait(timeout=10)
