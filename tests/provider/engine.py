"""The engine's side of the provider protocol, for tests: the plugin as a subprocess, the mock monitor over gRPC.

The gate builds the package's components the same way (tools/engine/mocks/own_package.py), so both come from there:
`ProviderProcess` starts `python provider <engine address>` as the Python language host runs a plugin folder
(pulumi v3.259.0 sdk/python/cmd/pulumi-language-python/main.go:1550-1625) and reads the port the plugin prints on its
first stdout line (pulumi 3.272.0 pulumi/provider/server.py:537-542). `MonitorServer` serves tools/engine/mocks'
RecordingMonitor as the ResourceMonitor (and an Engine that keeps the logs) on a local port: the plugin's Construct
registers its children there, as it would with the engine's resource monitor.
"""

from __future__ import annotations

from pulumi.runtime.proto import provider_pb2

from policies.gpu_guard.calendar import TODAY_ENV
from tools.engine.mocks.own_package import REPO, MonitorServer, PluginProcess

__all__ = ["REPO", "MonitorServer", "ProviderProcess"]


class ProviderProcess(PluginProcess):
    """The plugin, started as the engine starts it; `stub` speaks ResourceProvider to it.

    `today`: the day the plugin judges lifecycles on, handed to it as the `pulumi` command would hand it
    (the plugin inherits the command's environment, where a user sets GPU_PLATFORM_TODAY); a test never lets
    the plugin read the calendar, so it is required.
    """

    def __init__(self, engine_address: str, *, today: str) -> None:
        super().__init__(engine_address, env={TODAY_ENV: today})

    def schema(self) -> str:
        return str(self.stub.GetSchema(provider_pb2.GetSchemaRequest()).schema)
