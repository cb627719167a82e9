"""The same stack prints the same lists whatever order Pulumi's threads finish in (issue 55).

The Python SDK sends each registration from a worker thread, so resources that wait on nothing of each other reach
the monitor in an order that changes from run to run: a year-ahead run printed the API server's findings for
`triton-dev` and `vllm-dev` swapped. These tests run the shipped dev stack with registrations delayed in two
opposite schedules and require the same recording, logs and API-server verdicts from both.
"""

from __future__ import annotations

import datetime
import itertools
import threading
import time
import zlib
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import SHIPPED_DAY
from tests.shared import REPO, upstream_cache
from tools.apiserver.check import check_resources
from tools.engine.mocks.monitor import RecordingMonitor
from tools.engine.records import RecordedResource, engine_order
from tools.preview.command import run_program
from tools.preview.model import Recording
from tools.preview.stack_files import load_project, load_stack_config


def _resource(name: str, parent: str | None = None, depends: tuple[str, ...] = (), provider: str = "",
              inputs_from: tuple[str, ...] = ()) -> RecordedResource:
    return RecordedResource(urn=f"urn:{name}", type="t:index:T", name=name, parent=parent, custom=True, inputs={},
                            properties=None, dependencies=depends, provider=provider,
                            property_dependencies={"x": inputs_from} if inputs_from else {})


def test_the_engine_order_puts_each_resource_after_what_it_needs_and_is_the_same_for_every_arrival_order() -> None:
    stack = _resource("stack")
    provider = _resource("k8s", parent="urn:stack")
    a = _resource("zeta", parent="urn:stack", provider="urn:k8s::id-1")
    b = _resource("alpha", parent="urn:stack", depends=("urn:zeta",))
    c = _resource("beta", parent="urn:stack", inputs_from=("urn:alpha",))
    d = _resource("gamma", parent="urn:stack")
    resources = [stack, provider, a, b, c, d]
    orders = {tuple(r.urn for r in engine_order(list(p))) for p in itertools.permutations(resources)}
    assert orders == {("urn:stack", "urn:gamma", "urn:k8s", "urn:zeta", "urn:alpha", "urn:beta")}


def test_a_cycle_drops_nothing() -> None:
    a = _resource("a", depends=("urn:b",))
    b = _resource("b", depends=("urn:a",))
    assert [r.urn for r in engine_order([b, a, _resource("c")])] == ["urn:c", "urn:a", "urn:b"]


def _delayed(schedule: Callable[[str], float], arrivals: list[str]) -> Callable[..., Any]:
    original = RecordingMonitor.RegisterResource
    lock = threading.Lock()

    def register(self: RecordingMonitor, request: Any) -> Any:
        time.sleep(schedule(request.name))
        response = original(self, request)
        with lock:
            arrivals.append(f"{request.type}::{request.name}")
        return response

    return register


def _run(monkeypatch: pytest.MonkeyPatch, schedule: Callable[[str], float]) -> tuple[Recording, list[str]]:
    arrivals: list[str] = []
    with monkeypatch.context() as patch:
        patch.setattr(RecordingMonitor, "RegisterResource", _delayed(schedule, arrivals))
        project = load_project(REPO)
        config = load_stack_config(REPO / "Pulumi.dev.yaml", project.name, REPO)
        recording = run_program(project, "dev", config, "preview", datetime.date.fromisoformat(SHIPPED_DAY))
    return recording, arrivals


def _spread(name: str) -> float:
    return (zlib.crc32(name.encode()) % 8) / 1000


def test_the_dev_stack_records_and_checks_the_same_under_opposite_thread_timings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    first, first_arrivals = _run(monkeypatch, _spread)
    second, second_arrivals = _run(monkeypatch, lambda name: 0.008 - _spread(name))
    # The delays did reorder the registrations (else this test would prove nothing)...
    assert sorted(first_arrivals) == sorted(second_arrivals) and first_arrivals != second_arrivals
    # ...and nothing read from the recording depends on it.
    assert [r.urn for r in first.resources] == [r.urn for r in second.resources]
    assert first.logs == second.logs
    api = [check_resources(r.resources, upstream_cache()).as_json() for r in (first, second)]
    assert api[0] == api[1]
