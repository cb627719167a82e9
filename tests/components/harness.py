"""Run the program (or one component) under the recording mocks (tools/engine/mocks/); hand back what it registered."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pulumi
import yaml
from pulumi.runtime import settings
from pulumi.runtime.config import set_all_config
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from components.config import StackConfig, load_stack_config
from components.program import build, export
from tools.engine.mocks.monitor import RecordingMocks, RecordingMonitor
from tools.engine.records import RecordedResource

REPO = Path(__file__).resolve().parents[2]
TODAY = date(2026, 11, 29)


def stack_values(stack: str) -> dict[str, Any]:
    """The `gpu-platform:` keys (prefix stripped) of Pulumi.<stack>.yaml in this repository."""
    config = yaml.safe_load((REPO / f"Pulumi.{stack}.yaml").read_text())["config"]
    return {k.split(":", 1)[1]: v for k, v in config.items() if k.startswith("gpu-platform:")}


def _unregistered_order(resources: list[RecordedResource]) -> list[RecordedResource]:
    """The resources in an order that is neither their registration order nor their names' order, and the same on
    every run (by a hash of each URN). Registration order changes with timing (outputs resolve on the event loop),
    so a test that compares a list against it passes on one machine and fails on another; here such a test fails
    every time. A test whose contract is the order reads `Run.registration_order` and says why."""
    return sorted(resources, key=lambda r: hashlib.sha256(r.urn.encode()).hexdigest())


@dataclass
class Run:
    resources: list[RecordedResource]
    registration_order: list[RecordedResource]
    outputs: dict[str, dict[str, Any]]
    invokes: list[tuple[str, dict[str, Any]]]

    def of_type(self, type_: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.type == type_]

    def one(self, type_: str, name_part: str = "") -> RecordedResource:
        found = [r for r in self.of_type(type_) if name_part in r.name]
        assert len(found) == 1, f"expected one {type_} matching {name_part!r}, found {[r.name for r in found]}"
        return found[0]

    def named(self, name: str) -> RecordedResource:
        found = [r for r in self.resources if r.name == name]
        assert len(found) == 1, f"expected one resource named {name!r}, found {len(found)}"
        return found[0]

    @property
    def registered(self) -> list[RecordedResource]:
        """Everything except the root stack."""
        return [r for r in self.resources if r.type != "pulumi:pulumi:Stack"]


def _start(
    values: Mapping[str, Any], stack: str, region: str, preview: bool = True,
    aws_config: Mapping[str, Any] | None = None, account: str | None = None,
) -> tuple[RecordingMocks, RecordingMonitor]:
    """Point the Pulumi runtime at fresh recording mocks with `values` as the stack's config.

    `preview=True` is a `pulumi preview` (`is_dry_run()` True); False is a `pulumi up` update.
    `aws_config`: more `aws:` keys (without the prefix), e.g. `profile`, `assumeRoles`.
    `account`: the account the run is in (`get_caller_identity`); default the mocks' documentation account.
    """
    mocks = RecordingMocks(region=region, config=dict(values))
    if account is not None:
        mocks.account = account
    monitor = RecordingMonitor(mocks)
    extra = {f"aws:{k}": v if isinstance(v, str) else json.dumps(v) for k, v in (aws_config or {}).items()}
    set_all_config({"aws:region": region, **extra,
                    **{f"gpu-platform:{k}": json.dumps(v) for k, v in values.items()}})
    settings.ROOT.set(None)
    pulumi.runtime.set_mocks(mocks, project="gpu-platform", stack=stack, preview=preview, monitor=monitor)
    return mocks, monitor


def _program(stack: str, program: Callable[[StackConfig], Any] | None) -> Callable[[], None]:
    def body() -> None:
        config = load_stack_config(pulumi.Config(), stack_file=f"Pulumi.{stack}.yaml", today=TODAY)
        if program is None:
            export(build(config))
        else:
            program(config)

    return body


def _result(mocks: RecordingMocks, monitor: RecordingMonitor) -> Run:
    # What the program registered: not the children emulated for pulumi-eks (tests/tools/test_eks_children.py).
    program = [r for r in monitor.resources_in_order() if not r.emulated]
    return Run(_unregistered_order(program), program, dict(monitor.resource_outputs), list(mocks.invokes))


def run(
    values: Mapping[str, Any],
    program: Callable[[StackConfig], Any] | None = None,
    *,
    stack: str = "dev",
    region: str = "us-west-2",
    preview: bool = True,
    aws_config: Mapping[str, Any] | None = None,
    account: str | None = None,
) -> Run:
    """Load `values` as the stack's `gpu-platform:` config and run `program` (default: the whole program)."""
    mocks, monitor = _start(values, stack, region, preview, aws_config, account)
    try:
        _sync_await(run_pulumi_func(_program(stack, program)))
    finally:
        set_all_config({})
    return _result(mocks, monitor)


def run_rejected(
    values: Mapping[str, Any], *, stack: str = "dev", preview: bool = True, aws_config: Mapping[str, Any] | None = None,
    account: str | None = None,
) -> tuple[Run, Exception]:
    """Run the whole program, which must fail: (what it registered before failing, the error)."""
    mocks, monitor = _start(values, stack, "us-west-2", preview, aws_config, account)
    try:
        _sync_await(run_pulumi_func(_program(stack, None)))
    except Exception as exc:  # noqa: BLE001 - handed back to the test, which asserts on it
        return _result(mocks, monitor), exc
    finally:
        set_all_config({})
    raise AssertionError("the program was expected to fail but ran to the end")


def resolved_exports(values: Mapping[str, Any], *, stack: str = "dev") -> dict[str, Any]:
    """The stack outputs `export` would publish, resolved."""
    captured: dict[str, Any] = {}

    def program(config: StackConfig) -> None:
        pulumi.Output.from_input(build(config).exports()).apply(captured.update)

    run(values, program, stack=stack)
    return captured
