"""A policy pack process started once and asked about many previews (watch mode, and a pack started early).

`run_gate` starts the pack, asks it, stops it: one process per preview, as the engine does. `WarmPack`
splits that in two: `start()` launches the process (it imports the SDK, the pack and the matrix while
the caller does something else, such as running the program), `judge()` waits for its port the first
time and then holds one conversation per call, each the whole analyzer protocol of one preview
(Handshake, ConfigureStack, GetAnalyzerInfo, Configure, Analyze per resource, AnalyzeStack), so every
call sees its own stack and policy config exactly as a fresh pack would.

The process environment (`PULUMI_PROJECT`, `PULUMI_STACK`, `PULUMI_DRY_RUN`, `PULUMI_CONFIG`) is fixed
when it starts, as it is for the engine's; `judge` refuses another project, stack or phase, so a caller
that changes them starts another pack.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from types import TracebackType
from typing import Any

import grpc
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from tools.engine.conversation import ALL_PHASES, Conversation, GateResult, Phase, check_pack, pack_python
from tools.engine.pack_process import DUMMY_ENGINE_ADDRESS, GRPC_OPTIONS, PackProcess
from tools.engine.policy_config import GateError, LoadedPolicyConfig
from tools.engine.records import RecordedResource
from tools.engine.view import EngineResource, engine_resources


class WarmPack:
    """One policy pack process for one project, stack and phase; `judge` as many stacks as needed."""

    def __init__(self, *, pack_dir: Path, stack: str, project: str, phase: Phase = "preview",
                 stack_config: Mapping[str, str] | None = None, python: str | None = None,
                 organization: str = "organization", timeout_s: float = 120) -> None:
        if phase not in ALL_PHASES:
            raise GateError(f"phase {phase!r} is not one of {', '.join(ALL_PHASES)}")
        self.pack_dir = Path(pack_dir).resolve()
        self.stack, self.project, self.phase, self.organization = stack, project, phase, organization
        self.timeout_s = timeout_s
        self._python = python
        self._stack_config = dict(stack_config or {})
        self._pack: PackProcess | None = None
        self._channel: grpc.Channel | None = None
        self._stub: analyzer_pb2_grpc.AnalyzerStub | None = None

    # ------------------------------------------------------------------ process
    def start(self) -> WarmPack:
        """Launch the pack process; returns at once (the pack imports while the caller works)."""
        if self._pack is not None:
            return self
        check_pack(self.pack_dir)
        env = dict(os.environ)
        env.pop("PULUMI_CONFIG", None)
        env.update({"PULUMI_PROJECT": self.project, "PULUMI_STACK": self.stack,
                    "PULUMI_DRY_RUN": "false" if self.phase == "up" else "true",
                    "PULUMI_ORGANIZATION": self.organization})
        if self._stack_config:
            env["PULUMI_CONFIG"] = json.dumps(self._stack_config)
        # Source: pulumi-analyzer-policy-python in pulumi/pulumi sdk/python/cmd: `python -u -m pulumi.policy`.
        cmd = [self._python or pack_python(self.pack_dir), "-u", "-m", "pulumi.policy", DUMMY_ENGINE_ADDRESS,
               str(self.pack_dir)]
        self._pack = PackProcess(cmd, self.pack_dir, env).__enter__()
        return self

    def _connect(self, deadline: float) -> tuple[analyzer_pb2_grpc.AnalyzerStub, PackProcess]:
        pack = self.start()._pack
        assert pack is not None
        if self._stub is None:
            port = pack.wait_for_port(deadline)
            channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=GRPC_OPTIONS)
            try:
                grpc.channel_ready_future(channel).result(timeout=max(0.0, deadline - time.monotonic()))
            except grpc.FutureTimeoutError:
                channel.close()
                self.close()
                raise GateError(
                    f"could not connect to the policy pack's analyzer on port {port}.{pack.stderr_tail()}"
                ) from None
            self._channel, self._stub = channel, analyzer_pb2_grpc.AnalyzerStub(channel)
        return self._stub, pack

    @property
    def alive(self) -> bool:
        return self._pack is not None and self._pack.returncode is None

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()
        if self._pack is not None:
            self._pack.stop()
        self._pack = self._channel = self._stub = None

    def __enter__(self) -> WarmPack:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # ------------------------------------------------------------------ `pulumi policy analyze`
    def analyze(self, items: Sequence[EngineResource], *, stack: str, project: str,
                policy_config: Mapping[str, Any] | None = None, stack_config: Mapping[str, str] | None = None,
                config_source: str | None = None, today: date | None = None,
                tags: Mapping[str, str] | None = None) -> GateResult:
        """The pack over an existing state (`tools.engine.analyze`): every item analyzed with its inputs as a dry
        run, remediations reported and not applied, AnalyzeStack with every item's outputs."""
        if config_source is None:
            config_source = (str(policy_config.source) if isinstance(policy_config, LoadedPolicyConfig)
                             else "policy config")
        deadline = time.monotonic() + self.timeout_s
        stub, pack = self._connect(deadline)
        conversation = Conversation(stub, pack, deadline)
        conversation.apply_remediations = False
        try:
            return conversation.run(
                items, pack_dir=self.pack_dir,
                configure=analyzer_pb2.AnalyzerStackConfigureRequest(
                    stack=stack, project=project, organization=self.organization, dry_run=True,
                    config=dict(stack_config or {}), tags=dict(tags or {}),
                ),
                policy_config=policy_config, config_source=config_source, today=today,
                stack_blocks="after-update", dry_run=True,
                root_stack_urn=f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}",
            )
        except GateError:
            if not self.alive:
                self.close()
            raise

    # ------------------------------------------------------------------ one preview
    def judge(self, resources: Sequence[RecordedResource], *, stack: str, project: str, phase: Phase,
              policy_config: Mapping[str, Any] | None = None, stack_config: Mapping[str, str] | None = None,
              config_source: str | None = None, today: date | None = None,
              tags: Mapping[str, str] | None = None, skip_preview: bool = False,
              known: Sequence[RecordedResource] | None = None, offline_only: bool = True) -> GateResult:
        """Ask the pack about every resource and the stack (see `gate.run_gate` for the arguments; `known`: the
        stack as the first `pulumi up` leaves it, for the offline-only verdicts of a first preview; `offline_only`
        False: the caller drops those verdicts, so the pack is not asked for them)."""
        if (stack, project, phase) != (self.stack, self.project, self.phase):
            raise GateError(f"this pack was started for {self.project}/{self.stack} ({self.phase}), not "
                            f"{project}/{stack} ({phase}); start another")
        if config_source is None:
            config_source = (str(policy_config.source) if isinstance(policy_config, LoadedPolicyConfig)
                             else "policy config")
        dry_run = phase != "up"
        items = engine_resources(resources, stack=stack, project=project, stack_config=stack_config or {},
                                 dry_run=dry_run)
        deadline = time.monotonic() + self.timeout_s
        stub, pack = self._connect(deadline)
        conversation = Conversation(stub, pack, deadline)
        try:
            return conversation.run(
                items,
                pack_dir=self.pack_dir,
                configure=analyzer_pb2.AnalyzerStackConfigureRequest(
                    stack=stack, project=project, organization=self.organization, dry_run=dry_run,
                    config=dict(stack_config or {}), tags=dict(tags or {}),
                ),
                policy_config=policy_config,
                config_source=config_source,
                today=today,
                stack_blocks="after-update" if (skip_preview or not dry_run) else "before-create",
                dry_run=dry_run,
                root_stack_urn=f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}",
                known=None if known is None else engine_resources(known, stack=stack, project=project,
                                                                  stack_config=stack_config or {}, dry_run=False),
                offline_only=offline_only,
            )
        except GateError:
            if not self.alive:
                self.close()  # `_rpc` stopped the process; the next judge starts a fresh one
            raise
