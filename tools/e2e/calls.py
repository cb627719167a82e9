"""What the e2e run and its cleanup share: the steps and their budgets, a failed step, a `pulumi` call bounded by
the wall clock and stopped by `pulumi cancel` (on its limit, or on a signal: signals.py), and the dependencies the
driver is handed (`Deps`, faked by tests/e2e)."""

from __future__ import annotations

import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from tools.e2e.inference import Answer
from tools.e2e.kube import ClusterUnreachable, Kube
from tools.e2e.runid import Selector
from tools.e2e.signals import Interrupted
from tools.e2e.sweep.retry import Retry
from tools.e2e.sweep.sweeper import Sweeper, SweepResult

MAIN_STEPS = ("preflight", "estimate", "quota", "snapshot", "stack", "up", "probe", "inference", "sleep-and-wake",
              "roll")
CLEANUP_STEPS = ("pre-destroy", "destroy", "stack-rm", "sweep")
CREATES_FROM = MAIN_STEPS.index("snapshot")  # the first step that can leave something in the account

# Budgets in seconds: what each wait allows (the wall-clock limit bounds them all).
LIMIT_MINUTES = 240           # the whole run, cleanup included; the workflow's timeout-minutes is above it
CLEANUP_RESERVE = 75 * 60     # kept for pre-destroy, destroy and the sweep when the main steps run long
GPU_NODE_BUDGET = 20 * 60
PROBE_BUDGET = 20 * 60        # the operator's driver install on Ubuntu, then the probe
ALB_BUDGET = 15 * 60          # the controller provisions the ALB and registers the target
SLEEP_SLACK = 10 * 60         # after cooldownSeconds, KEDA's polling and the HPA's scale-in
ROLL_BUDGET = 60 * 60
PRE_DESTROY_BUDGET = 15 * 60
SWEEP_RESERVE = 30 * 60       # kept after destroy for the sweep: its retries and waits end within it
SWEEP_FLOOR = 10 * 60         # the sweep always gets this long, even when the limit is spent
DESTROY_FLOOR = 10 * 60       # destroy always gets this long, even when the limit is spent
CANCEL_GRACE = 5 * 60         # how long a canceled `pulumi` call gets to stop
CLEANUP_LIMIT_MINUTES = 110   # the workflow's cleanup job (timeout-minutes: 120) and some margin
SAMPLE_EVERY = 10.0
# Expected duration of a run that passes (for the expected cost): up 35 min, probe 15, inference 10,
# sleep and wake 35, roll 40, pre-destroy 10, destroy 25, sweep 10.
EXPECTED_MINUTES = 180


class StepError(Exception):
    """A step failed; the message is the report's detail."""


def bounded(what: str, call: Callable[[], Any], seconds: float, cancel: Callable[[], None],
            log: Callable[[str], None], *, grace: float = CANCEL_GRACE, interrupt_grace: float = CANCEL_GRACE) -> Any:
    """`call()` (a blocking `pulumi up`/`destroy`), stopped with `cancel()` (`Stack.cancel`, `pulumi cancel`)
    when it runs past `seconds`. The Automation API has no timeout of its own (pulumi 3.272
    `automation/_stack.py` `up`/`destroy`), and a `pulumi` process killed by the job's timeout leaves the update
    in progress on Pulumi Cloud, or the lock file on a self-managed backend; `pulumi cancel` ends the update
    (https://www.pulumi.com/docs/iac/cli/commands/pulumi_cancel/), and the CLI that ran it then stops."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = call()
        except BaseException as error:  # noqa: BLE001  # handed back to the caller's thread
            box["error"] = error

    worker = threading.Thread(target=target, name=f"pulumi-{what}", daemon=True)
    try:
        worker.start()  # inside: a signal can come while start() waits for the thread to run
        worker.join(max(seconds, 0.0))
    except Interrupted as signal_:
        # A signal (signals.py) while `pulumi` runs: stop the update, so no destroy races it and no lock is left.
        log(f"!! {signal_} during {what}: pulumi cancel")
        try:
            cancel()
        except Exception as error:  # noqa: BLE001  # it may have ended by itself meanwhile
            log(f"!! pulumi cancel failed: {error}")
        worker.join(interrupt_grace)
        raise
    if worker.is_alive():
        log(f"!! {what} ran past its {seconds / 60:.1f} min: pulumi cancel")
        try:
            cancel()
        except Exception as error:  # noqa: BLE001  # reported in the step's error below
            log(f"!! pulumi cancel failed: {error}")
        worker.join(grace)
        raise StepError(f"{what} ran past the wall-clock limit ({seconds / 60:.1f} min left for it) and was "
                        "canceled (pulumi cancel)")
    if "error" in box:
        raise box["error"]
    return box.get("result")


def cancel_update(stack: Any) -> str:
    """`pulumi cancel` for an update a killed run left in progress; an error means there was none to cancel
    (the CLI refuses when no update is running: pulumi 3.272 `automation/_stack.py` `Stack.cancel`)."""
    try:
        stack.cancel()
    except Exception as error:  # noqa: BLE001  # CommandError: nothing to cancel
        return f"no update was in progress ({str(error).strip().splitlines()[-1] if str(error).strip() else error})"
    return "canceled an update left in progress"


def empty_or_explain(kube: Kube) -> str:
    """Pre-destroy; an unreachable cluster fails the step with what that leaves to destroy and the sweep."""
    try:
        return "; ".join(kube.empty_cluster(PRE_DESTROY_BUDGET)) or "the cluster answered and had nothing to delete"
    except ClusterUnreachable as error:
        raise StepError(f"the cluster's API server did not answer ({error}); nothing was removed in the cluster, so "
                        "the ALBs, volumes and Karpenter nodes its controllers made are left to destroy and to the "
                        "sweep, the backstop") from error


def cluster_kubeconfig(eks: Any, name: str, region: str) -> str | None:
    """A kubeconfig for the run's cluster read from EKS itself (DescribeCluster), for a cleanup whose `up` failed
    before the stack exported one (or whose outputs never resolved): the cluster is named after the run
    (tools/e2e/stack.py), and the token comes from `aws eks get-token`, as pulumi-eks's own kubeconfig does
    (https://docs.aws.amazon.com/eks/latest/userguide/create-kubeconfig.html). None when no such cluster exists or
    it has no endpoint yet: there is nothing in a cluster to empty then."""
    try:
        cluster = eks.describe_cluster(name=name)["cluster"]
    except Exception as error:  # ResourceNotFoundException: up failed before the cluster
        if "ResourceNotFound" in type(error).__name__ or "ResourceNotFound" in str(error):
            return None
        raise
    endpoint, ca = cluster.get("endpoint"), (cluster.get("certificateAuthority") or {}).get("data")
    if not endpoint or not ca:
        return None
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": name,
        "clusters": [{"name": name, "cluster": {"server": endpoint, "certificate-authority-data": ca}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "users": [{"name": name, "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1", "command": "aws",
            "args": ["eks", "get-token", "--cluster-name", name, "--region", region]}}}],
    }, sort_keys=False)


def manual_commands(run_id: str) -> str:
    """What an operator runs for a stack whose destroy failed (the stack keeps its state and its lock, if any)."""
    return (f"by hand: `pulumi cancel --yes --stack {run_id}` (if an update is still in progress), "
            f"`pulumi destroy --yes --continue-on-error --stack {run_id}`, then `pulumi stack rm --yes {run_id}`; "
            f"once `python -m tools.e2e sweep --run-id {run_id}` reports nothing left, "
            f"`pulumi stack rm --yes --force {run_id}` removes a stack whose resources are already gone")


@dataclass
class Deps:
    automation: Any                                   # the pulumi.automation module, or a fake of it
    session: Callable[[str | None], Any]              # boto3.Session(region_name=...)
    kube: Callable[[Path], Kube]
    infer: Callable[[str, str], Answer]
    which: Callable[[str], str | None]
    run: Callable[[list[str]], Any]
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    now: Callable[[], datetime] = lambda: datetime.now(UTC)
    log: Callable[[str], None] = print
    public_ip: Callable[[], str] = lambda: urllib.request.urlopen(  # a fixed https URL
        "https://checkip.amazonaws.com", timeout=10).read().decode().strip()


@dataclass
class State:
    run_id: str
    region: str = ""
    max_usd: float = 0.0
    caller: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    config_file: Path | None = None
    snapshot_id: str = ""
    user_snapshot: bool = False
    stack: Any = None
    outputs: dict[str, Any] = field(default_factory=dict)
    kubeconfig: Path | None = None
    kube: Kube | None = None
    roll_config: dict[str, Any] = field(default_factory=dict)
    destroyed: bool = False


def sweep_within(deps: Deps, clients: Callable[[str], Any], selector: Selector, *, limit_s: float,
                 started: float) -> SweepResult:
    """The sweep, every retry and wait of it ending within what is left of the limit (at least SWEEP_FLOOR): the
    reserve SWEEP_RESERVE kept for it, not the sweeper's own per-call budgets."""
    left = max(SWEEP_FLOOR, limit_s - (deps.clock() - started))
    return Sweeper(clients, selector, log=deps.log, sleep=deps.sleep, clock=deps.clock,
                   retry=Retry(sleep=deps.sleep, clock=deps.clock), deadline=deps.clock() + left).sweep()
