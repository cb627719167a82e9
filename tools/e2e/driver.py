"""The e2e driver: one run, step by step, through the Pulumi Automation API (`pulumi.automation`), and the cleanup
that follows it whatever failed.

Main steps (a failure stops them): preflight, estimate, quota, snapshot, stack, up, probe, inference,
sleep-and-wake, roll. Cleanup steps (always, once something may exist): pre-destroy (Ingresses and their ALBs,
ScaledObjects, PVCs, Karpenter NodePools and their nodes), destroy (continue-on-error), stack-rm (only when
destroy succeeded: a stack whose destroy failed keeps its state, so `pulumi destroy` can be run again), sweep
(everything still tagged with the run, then the tagging API must find nothing).

Every dependency is injected (`Deps`): tests/e2e/test_driver.py runs the driver against fakes of the Automation
API, AWS, kubectl and the ALB, with a failure at every step.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from components.inference.budget import POD_START_SECONDS
from tools.e2e import images, model_snapshot
from tools.e2e.calls import (
    ALB_BUDGET,
    CLEANUP_RESERVE,
    CLEANUP_STEPS,
    CREATES_FROM,
    DESTROY_FLOOR,
    EXPECTED_MINUTES,
    GPU_NODE_BUDGET,
    LIMIT_MINUTES,
    MAIN_STEPS,
    PROBE_BUDGET,
    ROLL_BUDGET,
    SAMPLE_EVERY,
    SLEEP_SLACK,
    SWEEP_RESERVE,
    Deps,
    State,
    StepError,
    bounded,
    cluster_kubeconfig,
    empty_or_explain,
    manual_commands,
    sweep_within,
)
from tools.e2e.cap import cost, preflight
from tools.e2e.cleanup import cleanup_run
from tools.e2e.inference import Answer
from tools.e2e.kube import Kube, longest_gap
from tools.e2e.report import Report, Row
from tools.e2e.runid import RUN_ID_RE, Selector, new_run_id, run_tags
from tools.e2e.signals import Interrupted, SignalGuard, on_github
from tools.e2e.stack import Inputs, e2e_config, load_dev, shape

# Re-exported: tests and `python -m tools.e2e` name them through the driver.
__all__ = ["CLEANUP_STEPS", "CREATES_FROM", "EXPECTED_MINUTES", "LIMIT_MINUTES", "MAIN_STEPS", "SWEEP_RESERVE",
           "Deps", "Driver", "StepError", "cleanup_run", "deployer_arn", "empty_or_explain"]


def deployer_arn(caller: str) -> str:
    """The role behind an assumed-role session ARN (the EKS access entry wants the role, not the session)."""
    match = re.match(r"^arn:(?P<p>[^:]+):sts::(?P<a>\d+):assumed-role/(?P<r>[^/]+)/", caller)
    return f"arn:{match['p']}:iam::{match['a']}:role/{match['r']}" if match else caller


class Driver:
    def __init__(self, env: Mapping[str, str], deps: Deps, *, repo: Path, out: Path,
                 run_suffix: str | None = None, limit_minutes: int = LIMIT_MINUTES, run_id: str | None = None) -> None:
        self.env = env
        self.deps = deps
        self.repo = repo
        self.started = deps.clock()
        self.limit = limit_minutes * 60
        if run_id is not None and not RUN_ID_RE.match(run_id):
            raise ValueError(f"not a run id: {run_id!r} (e2e-<YYYYmmddHHMM>-<suffix>)")
        self.state = State(run_id=run_id or new_run_id(deps.now(), run_suffix))
        self.out = out / self.state.run_id
        self.report = Report(self.state.run_id)
        self.guard = SignalGuard(deps.log, on_github(env))  # replaced by the one `run` installs

    # ---- sequencing ------------------------------------------------------------------------------------------

    def run(self) -> Report:
        steps: dict[str, Callable[[], str]] = {
            "preflight": self.preflight, "estimate": self.estimate, "quota": self.quota,
            "snapshot": self.snapshot, "stack": self.create_stack, "up": self.up, "probe": self.probe,
            "inference": self.inference, "sleep-and-wake": self.sleep_and_wake, "roll": self.roll}
        reached = -1
        interrupted = False
        with SignalGuard(self.deps.log, on_github(self.env)) as guard:
            self.guard = guard
            try:
                for index, name in enumerate(MAIN_STEPS):
                    reached = index
                    if not self._step(name, steps[name], main=True):
                        break
            except Interrupted as signal_:
                interrupted = True
                self.report.rows.append(Row(MAIN_STEPS[reached], 0.0, "failed",
                                            f"interrupted by {signal_}; the pulumi command in flight, if any, was "
                                            "stopped with pulumi cancel"))
            finally:
                guard.cleaning = True
                if reached >= CREATES_FROM:
                    if interrupted and guard.github:
                        for step in CLEANUP_STEPS:
                            self._skip(step, "GitHub cancelled the run (SIGKILL follows within 10 s): the workflow's "
                                       "cleanup job destroys and sweeps it")
                    else:
                        self.cleanup()
                self.report.write(self.out)
        return self.report

    def cleanup(self) -> None:
        if self.state.stack is not None:
            if self.state.kube is None:
                self._kube_from_eks()
            if self.state.kube is not None:
                self._step("pre-destroy", self.pre_destroy)
            else:
                self._skip("pre-destroy", f"no cluster {self.state.run_id} with an endpoint in EKS: up failed before "
                           "creating it, so there is nothing in a cluster to empty")
            self._step("destroy", self.destroy)
            if self.state.destroyed:
                self._step("stack-rm", self.stack_rm)
            else:
                self._skip("stack-rm", "kept: destroy failed, so the stack's state still names what it created; "
                           + manual_commands(self.state.run_id))
        else:
            for name in ("pre-destroy", "destroy", "stack-rm"):
                self._skip(name, "no stack was created")
        self._step("sweep", self.sweep)

    def _step(self, name: str, fn: Callable[[], str], *, main: bool = False) -> bool:
        start = self.deps.clock()
        self.deps.log(f"== e2e {self.state.run_id}: {name}")
        try:
            if main and self._left() <= 0:
                raise StepError(f"the wall-clock limit ({self.limit // 60} min, less "
                                f"{CLEANUP_RESERVE // 60} min kept for cleanup) is spent")
            detail = fn()
        except Exception as error:  # noqa: BLE001  # any failure is reported, and cleanup runs
            self.report.rows.append(Row(name, self.deps.clock() - start, "failed", f"{type(error).__name__}: {error}"))
            self.deps.log(f"!! {name} failed: {error}")
            return False
        self.report.rows.append(Row(name, self.deps.clock() - start, "passed", detail))
        return True

    def _skip(self, name: str, why: str) -> None:
        self.report.rows.append(Row(name, 0.0, "skipped", why))

    def _left(self) -> float:
        return self.limit - CLEANUP_RESERVE - (self.deps.clock() - self.started)

    def _cleanup_left(self) -> float:
        """What destroy may take: the rest of the limit less the sweep's reserve, and never less than the floor."""
        return max(DESTROY_FLOOR, self.limit - SWEEP_RESERVE - (self.deps.clock() - self.started))

    def _budget(self, seconds: float) -> float:
        return max(0.0, min(seconds, self._left()))

    def _clients(self) -> Callable[[str], Any]:
        session = self.deps.session(self.state.region)
        cache: dict[str, Any] = {}

        def client(service: str) -> Any:
            if service not in cache:
                cache[service] = session.client(service)
            return cache[service]
        return client

    # ---- main steps ------------------------------------------------------------------------------------------

    def preflight(self) -> str:
        needs = preflight.check(self.env, which=self.deps.which, run=self.deps.run, session_factory=self.deps.session)
        if not needs.ok:
            raise StepError(needs.message())
        self.state.region = needs.found["region"]
        self.state.max_usd = float(needs.found["max_usd"])
        self.state.caller = needs.found.get("caller", "")
        return f"account {needs.found.get('account', '?')}, {self.state.region}, backend {needs.found.get('backend')}"

    def _inputs(self, snapshot_id: str) -> Inputs:
        cidrs = tuple(c.strip() for c in self.env.get("E2E_ENDPOINT_CIDRS", "").split(",") if c.strip())
        if not cidrs:
            cidrs = (f"{self.deps.public_ip()}/32",)
        return Inputs(run_id=self.state.run_id, region=self.state.region, snapshot_id=snapshot_id,
                      snapshot_gib=model_snapshot.SNAPSHOT_GIB, ingress_host=self.env["E2E_INGRESS_HOST"],
                      certificate_arn=self.env["E2E_CERTIFICATE_ARN"], endpoint_cidrs=cidrs,
                      deployer_arn=deployer_arn(self.state.caller),
                      cleanup_arn=self.env.get("E2E_CLEANUP_ROLE_ARN") or None)

    def estimate(self) -> str:
        user_snapshot = self.env.get("E2E_SNAPSHOT_ID", "")
        config = e2e_config(load_dev(self.repo), self._inputs(user_snapshot or "snap-00000000000000000"),
                            self.deps.now())
        est = cost.estimate(shape(config, own_snapshot_gib=0 if user_snapshot else model_snapshot.SNAPSHOT_GIB),
                            limit_hours=self.limit / 3600, expected_hours=EXPECTED_MINUTES / 60)
        self.report.estimate = est.as_dict()
        self.deps.log(est.table())
        cost.refuse_above(est, self.state.max_usd)
        self.state.config = config
        return (f"estimate USD {est.at_limit_usd:.2f} within the limit, expected USD {est.expected_usd:.2f}, "
                f"USD {est.cleanup_fails_usd:.2f} if cleanup fails "
                f"(MAX_USD {self.state.max_usd:.2f})")

    def quota(self) -> str:
        clients = self._clients()
        quotas, ec2 = clients("service-quotas"), clients("ec2")
        gpu = cost.check_quota(quotas, cost.GPU_QUOTA_CODE, int(self.report.estimate["peak_gpu_vcpus"]),
                               cost.running_vcpus(ec2, cost.GPU_QUOTA_CODE))
        standard = cost.check_quota(quotas, cost.STANDARD_QUOTA_CODE, int(self.report.estimate["peak_standard_vcpus"]),
                                    cost.running_vcpus(ec2, cost.STANDARD_QUOTA_CODE))
        return f"{gpu}; {standard}"

    def snapshot(self) -> str:
        clients = self._clients()
        user = self.env.get("E2E_SNAPSHOT_ID", "")
        if user:
            found = clients("ec2").describe_snapshots(SnapshotIds=[user])["Snapshots"]
            if not found:
                raise StepError(f"E2E_SNAPSHOT_ID {user}: no such snapshot in {self.state.region}")
            self.state.snapshot_id, self.state.user_snapshot = user, True
            return f"the user's snapshot {user} (never tagged with the run, protected from the sweep)"
        self.out.mkdir(parents=True, exist_ok=True)
        image = model_snapshot.build_image(model_snapshot.MODEL_DIR, self.out / "models.ext4")
        snapshot_id = model_snapshot.upload(clients("ebs"), image, run_tags(self.state.run_id),
                                            f"gpu-platform e2e model, run {self.state.run_id}")
        self.state.snapshot_id = snapshot_id
        clients("ec2").get_waiter("snapshot_completed").wait(SnapshotIds=[snapshot_id])
        return f"made {snapshot_id} ({model_snapshot.SNAPSHOT_GIB} GiB, tagged with the run)"

    def _write_config(self, config: dict[str, Any], name: str) -> Path:
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / name
        path.write_text(yaml.safe_dump(config, sort_keys=True), encoding="utf-8")
        return path

    def create_stack(self) -> str:
        config = e2e_config(load_dev(self.repo), self._inputs(self.state.snapshot_id), self.deps.now())
        self._hold_images_back(config)
        self.state.config_file = self._write_config(config, f"Pulumi.{self.state.run_id}.yaml")
        auto = self.deps.automation
        options = auto.LocalWorkspaceOptions(env_vars={"GPU_PLATFORM_CONFIG_FILE": str(self.state.config_file)})
        self.state.stack = auto.create_stack(stack_name=self.state.run_id, work_dir=str(self.repo), opts=options)
        return f"stack {self.state.run_id}, config {self.state.config_file}"

    def _hold_images_back(self, config: dict[str, Any]) -> None:
        """First `up` one image behind; the roll's config carries the current images."""
        from policies.gpu_guard.matrix import load_matrix  # noqa: PLC0415  # the matrix loads only here

        ssm = self._clients()("ssm")
        rolled = yaml.safe_load(yaml.safe_dump(config))
        cfg, new = config["config"], rolled["config"]
        kubernetes = str(cfg["gpu-platform:cluster"]["kubernetesVersion"])
        matrix = load_matrix()
        for old_group, new_group in zip(cfg.get("gpu-platform:gpuNodeGroups", []),
                                        new.get("gpu-platform:gpuNodeGroups", []), strict=True):
            image = matrix.node_image(old_group["os"], str(old_group.get("kubeletVersion", kubernetes)), "x86_64")
            if image is None:
                raise StepError(f"no node image in the matrix for {old_group['os']} on Kubernetes {kubernetes}")
            previous, current = images.ubuntu_images(ssm, image.ssm_parameter)
            old_group["imageId"], new_group["imageId"] = previous, current
        for old_pool, new_pool in zip((cfg.get("gpu-platform:karpenter") or {}).get("pools", []),
                                      (new.get("gpu-platform:karpenter") or {}).get("pools", []), strict=True):
            if "imageVersion" in old_pool:
                versions = images.bottlerocket_versions(ssm, kubernetes)
                old_pool["imageVersion"] = self.env.get("E2E_KARPENTER_FROM_VERSION") or images.one_before(
                    versions, str(new_pool["imageVersion"]))
        self.state.roll_config = rolled

    def _policy_args(self) -> dict[str, Any]:
        packs = {"policy_packs": [str(self.repo / "policies")]}
        dev_policy = self.repo / "policies" / "config" / "dev.json"
        if dev_policy.is_file():
            packs["policy_pack_configs"] = [str(dev_policy)]
        return packs

    def up(self) -> str:
        assert self.state.config_file is not None
        stack, config_file = self.state.stack, str(self.state.config_file)
        result = bounded("up", lambda: stack.up(on_output=self.deps.log, color="never", config_file=config_file,
                                                **self._policy_args()), self._left(), stack.cancel, self.deps.log,
                         interrupt_grace=self.guard.grace)
        self.state.outputs = {k: v.value for k, v in self.state.stack.outputs().items()}
        self.state.kubeconfig = self.out / "kubeconfig"
        kubeconfig = self.state.outputs.get("kubeconfig")
        text = kubeconfig if isinstance(kubeconfig, str) else yaml.safe_dump(kubeconfig)
        self.state.kubeconfig.write_text(text, encoding="utf-8")
        self.state.kubeconfig.chmod(0o600)
        self.state.kube = self.deps.kube(self.state.kubeconfig)
        changes = getattr(getattr(result, "summary", None), "resource_changes", None) or {}
        return f"up: {dict(changes)}"

    def _kube_from_eks(self) -> None:
        """After an `up` that failed before exporting its kubeconfig: the cluster's own, read from EKS."""
        try:
            text = cluster_kubeconfig(self._clients()("eks"), self.state.run_id, self.state.region)
        except Exception as error:  # noqa: BLE001  # reported; destroy and the sweep still run
            self.deps.log(f"!! reading the cluster from EKS failed: {error}")
            return
        if text is None:
            return
        self.state.kubeconfig = self.out / "kubeconfig"
        self.state.kubeconfig.parent.mkdir(parents=True, exist_ok=True)
        self.state.kubeconfig.write_text(text, encoding="utf-8")
        self.state.kubeconfig.chmod(0o600)
        self.state.kube = self.deps.kube(self.state.kubeconfig)

    def _kube(self) -> Kube:
        if self.state.kube is None:
            raise StepError("no kubeconfig: up did not finish")
        return self.state.kube

    def probe(self) -> str:
        kube = self._kube()
        groups = self.state.config["config"].get("gpu-platform:gpuNodeGroups", [])
        waited = [f"{g['name']} {kube.wait_gpu_node(g['name'], self._budget(GPU_NODE_BUDGET)):.0f} s" for g in groups]
        namespace = str(self.state.outputs.get("gpuOperatorNamespace", "gpu-operator"))
        verdicts = []
        for pool, test in sorted((self.state.outputs.get("smokeTests") or {}).items()):
            verdicts.append(f"{pool}: {kube.wait_probe(namespace, str(test['job']), self._budget(PROBE_BUDGET))}")
        if not verdicts:
            raise StepError("the stack runs no probe Job (gpuOperator.smokeTest is off in Pulumi.dev.yaml)")
        return f"GPU node ready ({', '.join(waited)}); probe " + "; ".join(verdicts)

    def _service(self) -> tuple[str, str, int]:
        services = self.state.config["config"].get("gpu-platform:inferenceServices", [])
        if not services:
            raise StepError("dev's config has no inference service to send a request to")
        service = services[0]
        return str(service["name"]), str(service.get("namespace", "inference")), int(service.get("startupSeconds", 600))

    def _ask(self) -> Answer:
        name, namespace, _ = self._service()
        alb = self._kube().ingress_hostname(namespace, name)
        if not alb:
            return Answer(0, "the Ingress has no ALB address yet")
        return self.deps.infer(alb, self.env["E2E_INGRESS_HOST"])

    def _until_answer(self, budget: float) -> tuple[Answer, float]:
        start = self.deps.clock()
        while True:
            answer = self._ask()
            if answer.ok or self.deps.clock() - start > budget:
                return answer, self.deps.clock() - start
            self.deps.sleep(SAMPLE_EVERY)

    def inference(self) -> str:
        name, namespace, startup = self._service()
        kube = self._kube()
        kube.force_activation(namespace, name, True)
        kube.until(f"{namespace}/{name} ready", lambda: kube.ready_replicas(namespace, name) >= 1,
                   self._budget(POD_START_SECONDS + startup))
        answer, took = self._until_answer(self._budget(ALB_BUDGET))
        if not answer.ok:
            raise StepError(f"no right answer through the ALB after {took:.0f} s: {answer.problem}")
        return f"right answer through the ALB ({took:.0f} s after the replica was ready)"

    def sleep_and_wake(self) -> str:
        name, namespace, startup = self._service()
        kube = self._kube()
        kube.force_activation(namespace, name, False)
        slept = kube.until(f"{namespace}/{name} at zero replicas", lambda: kube.replicas(namespace, name) == 0,
                           self._budget(stack_cooldown(self.state.config) + SLEEP_SLACK))
        asleep = self._ask()
        if asleep.ok:
            raise StepError("the service answered at zero replicas")
        # The components have no request-driven wake (docs/serving.md: the workload's own metrics cannot wake it
        # from zero); the refused request is answered by the runbook's wake, and the wake is timed from it.
        kube.force_activation(namespace, name, True)
        budget = POD_START_SECONDS + startup
        answer, took = self._until_answer(self._budget(budget + ALB_BUDGET))
        if not answer.ok:
            raise StepError(f"not awake {took:.0f} s after the first request: {answer.problem}")
        if took > budget:
            raise StepError(f"woke in {took:.0f} s, above the startup budget of {budget} s "
                            f"(POD_START_SECONDS {POD_START_SECONDS} + startupSeconds {startup})")
        return (f"slept after {slept:.0f} s; first request refused ({asleep.problem}); woke in {took:.0f} s "
                f"(budget {budget} s)")

    def roll(self) -> str:
        name, namespace, startup = self._service()
        kube = self._kube()
        path = self._write_config(self.state.roll_config, f"Pulumi.{self.state.run_id}.rolled.yaml")
        samples: list[tuple[float, bool]] = []
        disrupted: list[int] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                with contextlib.suppress(Exception):
                    samples.append((self.deps.clock(), self._ask().ok))
                    disrupted.append(kube.disrupted_nodes())
                stop.wait(SAMPLE_EVERY)
        sampler = threading.Thread(target=sample, daemon=True)
        rolled_at = self.deps.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        sampler.start()
        try:
            # `up` returns once the managed node group's rolling update is done; Karpenter's drift follows it.
            stack = self.state.stack
            bounded("the roll's up", lambda: stack.up(on_output=self.deps.log, color="never", config_file=str(path),
                                                      **self._policy_args()), self._left(), stack.cancel,
                    self.deps.log, interrupt_grace=self.guard.grace)
            self.state.config_file = path
            kube.until("Karpenter's drifted nodes replaced",
                       lambda: kube.nodeclaims_older_than(rolled_at) == 0 and kube.disrupted_nodes() == 0
                       and kube.ready_replicas(namespace, name) >= 1, self._budget(ROLL_BUDGET))
        finally:
            stop.set()
            sampler.join(timeout=SAMPLE_EVERY * 3)
        outage = longest_gap(samples)
        budget = POD_START_SECONDS + startup
        peak = max(disrupted, default=0)
        if outage > budget:
            raise StepError(f"serving interrupted for {outage:.0f} s during the roll, above the budget of {budget} s")
        if peak > 1:
            raise StepError(f"{peak} nodes disrupted at once, above the NodePools' budget of 1")
        return f"rolled; longest interruption {outage:.0f} s (budget {budget} s), at most {peak} node(s) disrupted"

    # ---- cleanup steps ---------------------------------------------------------------------------------------

    def pre_destroy(self) -> str:
        return empty_or_explain(self._kube())

    def destroy(self) -> str:
        kwargs: dict[str, Any] = {"on_output": self.deps.log, "color": "never", "continue_on_error": True}
        if self.state.config_file is not None:
            kwargs["config_file"] = str(self.state.config_file)
        stack = self.state.stack
        result = bounded("destroy", lambda: stack.destroy(**kwargs), self._cleanup_left(), stack.cancel,
                         self.deps.log)
        self.state.destroyed = True
        changes = getattr(getattr(result, "summary", None), "resource_changes", None) or {}
        return f"destroy (continue-on-error): {dict(changes)}"

    def stack_rm(self) -> str:
        self.state.stack.workspace.remove_stack(self.state.run_id)
        return f"stack {self.state.run_id} removed"

    def sweep(self) -> str:
        protect = frozenset({self.state.snapshot_id} if self.state.user_snapshot else set())
        user = self.env.get("E2E_SNAPSHOT_ID")
        if user:
            protect |= {user}
        result = sweep_within(self.deps, self._clients(), Selector(run_id=self.state.run_id, protect=protect),
                              limit_s=self.limit, started=self.started)
        self.report.sweep = result.as_dict()
        if not result.ok:
            raise StepError(f"{len(result.left)} resource(s) still tagged with the run, {len(result.failed)} "
                            f"error(s); removed {len(result.removed)}")
        return f"removed {len(result.removed)} resource(s); the tagging API finds nothing tagged with the run"


def stack_cooldown(config: dict[str, Any]) -> int:
    services = config.get("config", {}).get("gpu-platform:inferenceServices", [])
    return max((int(s.get("autoscaling", {}).get("cooldownSeconds", 300)) for s in services), default=300)
