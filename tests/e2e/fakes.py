"""Fakes the driver runs against: the Automation API's workspace and stack (same signatures as
`pulumi.automation`'s, tests/e2e/test_driver.py checks), kubectl, the ALB, SSM and Service Quotas; a clock
whose sleep moves time on. AWS itself is moto."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi.automation as auto

from tools.e2e.inference import Answer
from tools.e2e.kube import KubeError


class Boom(RuntimeError):
    """The injected failure."""


@dataclass
class Clock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 1.0)


@dataclass
class Calls:
    log: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    fail: set[str] = field(default_factory=set)
    hang: set[str] = field(default_factory=set)  # `pulumi` calls that run until canceled
    locked: bool = False  # the stacks hold an update a killed `pulumi` left in progress
    signal_on: dict[str, int] = field(default_factory=dict)  # a call that sends this process a signal (Ctrl-C, ...)

    def record(self, name: str, **kwargs: Any) -> None:
        self.log.append((name, kwargs))
        if name in self.signal_on:
            os.kill(os.getpid(), self.signal_on.pop(name))
        if name in self.fail:
            raise Boom(f"injected failure in {name}")

    def names(self) -> list[str]:
        return [n for n, _ in self.log]


class FakeWorkspace:
    def __init__(self, calls: Calls) -> None:
        self.calls = calls

    def remove_stack(self, stack_name: str, force: bool | None = None, preserve_config: bool | None = None) -> None:
        self.calls.record("remove_stack", stack_name=stack_name, force=force, preserve_config=preserve_config)


class FakeStack:
    def __init__(self, calls: Calls, name: str) -> None:
        self.calls = calls
        self.name = name
        self.workspace = FakeWorkspace(calls)
        self.ups = 0
        self.canceled = threading.Event()
        self.in_progress = calls.locked  # an update a killed run left in progress: destroy refused until cancel

    def cancel(self) -> None:
        self.calls.record("cancel")
        if not self.in_progress:
            raise auto.CommandError(auto.CommandResult(stdout="", stderr="error: no update in progress",
                                                       code=255))
        self.in_progress = False
        self.canceled.set()

    def _hang(self, name: str) -> None:
        """An injected `pulumi` call that runs until canceled, as the CLI does when `pulumi cancel` ends it."""
        if name in self.calls.hang:
            self.in_progress = True
            self.canceled.wait(5)
            raise auto.CommandError(auto.CommandResult(stdout="", stderr="error: update canceled", code=255))

    def up(self, parallel: int | None = None, message: str | None = None, target: list[str] | None = None,
           exclude: list[str] | None = None, policy_packs: list[str] | None = None,
           policy_pack_configs: list[str] | None = None, expect_no_changes: bool | None = None,
           diff: bool | None = None, target_dependents: bool | None = None,
           exclude_dependents: bool | None = None, replace: list[str] | None = None, color: str | None = None,
           on_output: Callable[[str], Any] | None = None, on_error: Callable[[str], Any] | None = None,
           on_event: Any = None, program: Any = None, plan: str | None = None, show_secrets: bool = True,
           log_flow: bool | None = None, log_verbosity: int | None = None, log_to_std_err: bool | None = None,
           tracing: str | None = None, debug: bool | None = None, suppress_outputs: bool | None = None,
           suppress_progress: bool | None = None, continue_on_error: bool | None = None,
           attach_debugger: bool | None = None, refresh: bool | None = None, config_file: str | None = None,
           run_program: bool | None = None) -> Any:
        self.ups += 1
        name = "up" if self.ups == 1 else "up-roll"
        self.calls.record(name, policy_packs=policy_packs, policy_pack_configs=policy_pack_configs, color=color,
                          on_output=on_output, config_file=config_file)
        self._hang(name)
        assert config_file is not None and Path(config_file).is_file()
        return None

    def outputs(self) -> MutableMapping[str, auto.OutputValue]:
        self.calls.record("outputs")
        return {
            "kubeconfig": auto.OutputValue("apiVersion: v1\nkind: Config\n", True),
            "gpuOperatorNamespace": auto.OutputValue("gpu-operator", False),
            "smokeTests": auto.OutputValue({"l4-spot": {"job": "cuda-smoke-l4-spot", "image": "x"}}, False),
        }

    def destroy(self, parallel: int | None = None, message: str | None = None, target: list[str] | None = None,
                target_dependents: bool | None = None, color: str | None = None,
                on_output: Callable[[str], Any] | None = None, on_error: Callable[[str], Any] | None = None,
                on_event: Any = None, show_secrets: bool = True, log_flow: bool | None = None,
                log_verbosity: int | None = None, log_to_std_err: bool | None = None, tracing: str | None = None,
                exclude_protected: bool | None = None, debug: bool | None = None,
                suppress_outputs: bool | None = None, suppress_progress: bool | None = None,
                continue_on_error: bool | None = None, remove: bool | None = None, refresh: bool | None = None,
                preview_only: bool | None = None, run_program: bool | None = None, config_file: str | None = None,
                program: Any = None, diff: bool | None = None) -> Any:
        self.calls.record("destroy", continue_on_error=continue_on_error, color=color, on_output=on_output,
                          config_file=config_file)
        if self.in_progress:
            raise auto.CommandError(auto.CommandResult(stdout="", stderr="error: [409] Conflict: Another update is "
                                                       "currently in progress.", code=255))
        self._hang("destroy")
        return None


class FakeAutomation:
    """The part of the `pulumi.automation` module the driver uses."""

    LocalWorkspaceOptions = auto.LocalWorkspaceOptions

    def __init__(self, calls: Calls) -> None:
        self.calls = calls
        self.stacks: list[FakeStack] = []

    def select_stack(self, stack_name: str, project_name: str | None = None, program: Any = None,
                     work_dir: str | None = None, opts: auto.LocalWorkspaceOptions | None = None) -> FakeStack:
        self.calls.record("select_stack", stack_name=stack_name, work_dir=work_dir, opts=opts)
        stack = FakeStack(self.calls, stack_name)
        self.stacks.append(stack)
        return stack

    def create_stack(self, stack_name: str, project_name: str | None = None, program: Any = None,
                     work_dir: str | None = None, opts: auto.LocalWorkspaceOptions | None = None) -> FakeStack:
        self.calls.record("create_stack", stack_name=stack_name, work_dir=work_dir, opts=opts)
        stack = FakeStack(self.calls, stack_name)
        self.stacks.append(stack)
        return stack


@dataclass
class FakeKube:
    calls: Calls
    clock: Clock
    replicas_now: int = 0
    activated: bool = False

    def until(self, what: str, ready: Callable[[], bool], budget: float) -> float:
        start = self.clock()
        while not ready():
            if self.clock() - start > budget:
                raise KubeError(f"{what}: not after {budget:.0f} s")
            self.clock.sleep(10)
        return self.clock() - start

    def wait_gpu_node(self, pool: str, budget: float) -> float:
        self.calls.record("wait_gpu_node", pool=pool)
        return 60.0

    def wait_probe(self, namespace: str, job: str, budget: float) -> str:
        self.calls.record("wait_probe", namespace=namespace, job=job)
        return "verdict: pass (pool l4-spot, driver expected 580.173.02)"

    def force_activation(self, namespace: str, name: str, on: bool) -> None:
        self.calls.record("force_activation", on=on)
        self.activated = on
        self.replicas_now = 1 if on else 0

    def ready_replicas(self, namespace: str, name: str) -> int:
        return self.replicas_now

    def replicas(self, namespace: str, name: str) -> int:
        if "replicas" in self.calls.fail:
            return 1  # never sleeps
        return self.replicas_now

    def ingress_hostname(self, namespace: str, name: str) -> str:
        return "k8s-inference-abc.us-west-2.elb.amazonaws.com"

    def disrupted_nodes(self) -> int:
        return 0

    def nodeclaims_older_than(self, stamp: str) -> int:
        return 0

    def empty_cluster(self, budget: float) -> list[str]:
        self.calls.record("empty_cluster")
        return ["deleted 1 Ingress(es)"]


def fake_infer(kube: FakeKube, calls: Calls) -> Callable[[str, str], Answer]:
    def infer(alb: str, host: str) -> Answer:
        if "infer" in calls.fail or not kube.activated:
            return Answer(503, "HTTP 503: no healthy target")
        return Answer(200, "")
    return infer


class FakeSSM:
    """GetParameterHistory of Canonical's parameter and the Bottlerocket version paths."""

    class _Pages:
        def __init__(self, pages: list[dict[str, Any]]) -> None:
            self.pages = pages

        def paginate(self, **_: Any) -> list[dict[str, Any]]:
            return self.pages

    def get_paginator(self, operation: str) -> _Pages:
        if operation == "get_parameter_history":
            history = [{"Version": 1, "Value": "ami-0old"}, {"Version": 2, "Value": "ami-0new"}]
            return self._Pages([{"Parameters": history}])
        base = "/aws/service/bottlerocket/aws-k8s-1.35-nvidia/x86_64/"
        return self._Pages([{"Parameters": [{"Name": f"{base}{v}/image_id"} for v in ("1.66.0", "1.67.1", "1.68.0")]}])


class FakeQuotas:
    class exceptions:  # boto3's spelling
        class NoSuchResourceException(Exception):
            pass

    def __init__(self, value: float) -> None:
        self.value = value

    def get_service_quota(self, ServiceCode: str, QuotaCode: str) -> dict[str, Any]:
        return {"Quota": {"Value": self.value}}


class FakeSession:
    """A boto3 session on moto, with SSM and Service Quotas faked (moto has neither the public parameters nor the
    ec2 quotas); records which services were asked for."""

    def __init__(self, region: str | None, real: Any, services: list[str], quota: float) -> None:
        self.real = real
        self.services = services
        self.quota = quota

    def get_credentials(self) -> object:
        return object()

    def client(self, service: str, **_: Any) -> Any:
        self.services.append(service)
        if service == "ssm":
            return FakeSSM()
        if service == "service-quotas":
            return FakeQuotas(self.quota)
        return self.real.client(service)


def completed(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(command, 0, "User: ci\nBackend URL: file:///tmp/state\n", "")


def base_env(**overrides: str) -> Mapping[str, str]:
    # moto's account (moto.core DEFAULT_ACCOUNT_ID): the one account the run may act in.
    env = {"MAX_USD": "40", "E2E_AWS_ACCOUNT_ID": "123456789012", "E2E_REGION": "us-west-2",
           "E2E_INGRESS_HOST": "e2e.example.com",
           "E2E_CERTIFICATE_ARN": "arn:aws:acm:us-west-2:123456789012:certificate/e2e",
           "E2E_ENDPOINT_CIDRS": "198.51.100.7/32", "PULUMI_BACKEND_URL": "file:///tmp/state"}
    env.update(overrides)
    return {k: v for k, v in env.items() if v}
