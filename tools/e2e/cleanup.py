"""The workflow's cleanup job for one run (`make e2e-cleanup`), whatever happened to the run's own job."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tools.e2e.calls import (
    CLEANUP_LIMIT_MINUTES,
    DESTROY_FLOOR,
    SWEEP_RESERVE,
    Deps,
    StepError,
    bounded,
    cancel_update,
    cluster_kubeconfig,
    empty_or_explain,
    manual_commands,
    sweep_within,
)
from tools.e2e.report import Report, Row
from tools.e2e.runid import Selector


def cleanup_run(run_id: str, deps: Deps, *, repo: Path, region: str, protect: frozenset[str],
                limit_minutes: int = CLEANUP_LIMIT_MINUTES) -> Report:
    """The workflow's cleanup job (under `always()`), for a run whose own job may have been killed before its
    cleanup: cancel the update a killed `pulumi` left in progress (its lock would refuse destroy), pre-destroy
    where the cluster still answers, destroy (continue-on-error, bounded by the job's limit less the sweep's
    reserve) and stack rm where the stack exists, then the sweep. Each step is reported; none stops the next."""
    report = Report(run_id)
    started = deps.clock()
    clients_cache: dict[str, Any] = {}
    session = deps.session(region)

    def clients(service: str) -> Any:
        if service not in clients_cache:
            clients_cache[service] = session.client(service)
        return clients_cache[service]

    def step(name: str, fn: Callable[[], str]) -> None:
        start = deps.clock()
        try:
            report.rows.append(Row(name, deps.clock() - start, "passed", fn()))
        except Exception as error:  # noqa: BLE001  # reported; the next step runs
            report.rows.append(Row(name, deps.clock() - start, "failed", f"{type(error).__name__}: {error}"))

    stack: Any = None
    try:
        stack = deps.automation.select_stack(stack_name=run_id, work_dir=str(repo))
    except Exception as error:  # noqa: BLE001  # no stack: nothing for destroy, the sweep still runs
        report.rows.append(Row("destroy", 0.0, "skipped", f"no stack {run_id}: {error}"))
    if stack is not None:
        def pre_destroy() -> str:
            kubeconfig = stack.outputs().get("kubeconfig")
            value = None if kubeconfig is None else kubeconfig.value
            if value is None:
                # up failed before exporting it: the cluster's own, from EKS
                value = cluster_kubeconfig(clients("eks"), run_id, region)
                if value is None:
                    return f"no cluster {run_id} with an endpoint in EKS: nothing in a cluster to empty"
            path = repo / "out" / "e2e" / run_id / "kubeconfig"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(value if isinstance(value, str) else yaml.safe_dump(value), encoding="utf-8")
            path.chmod(0o600)
            return empty_or_explain(deps.kube(path))
        def destroy() -> str:
            left = max(DESTROY_FLOOR, limit_minutes * 60 - SWEEP_RESERVE - (deps.clock() - started))
            bounded("destroy", lambda: stack.destroy(on_output=deps.log, color="never", continue_on_error=True),
                    left, stack.cancel, deps.log)
            return "destroyed (continue-on-error)"

        def stack_rm() -> str:
            stack.workspace.remove_stack(run_id)
            return f"stack {run_id} removed"

        step("cancel", lambda: cancel_update(stack))
        step("pre-destroy", pre_destroy)
        step("destroy", destroy)
        if report.rows[-1].result == "passed":
            step("stack-rm", stack_rm)
        else:
            report.rows.append(Row("stack-rm", 0.0, "skipped", "kept: destroy failed; " + manual_commands(run_id)))

    def sweep() -> str:
        result = sweep_within(deps, clients, Selector(run_id=run_id, protect=protect), limit_s=limit_minutes * 60,
                              started=started)
        report.sweep = result.as_dict()
        if not result.ok:
            raise StepError(f"{len(result.left)} left, {len(result.failed)} error(s)")
        return f"removed {len(result.removed)}; nothing tagged with the run is left"
    step("sweep", sweep)
    return report
