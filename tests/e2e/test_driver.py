"""The driver's sequencing through fakes of the Automation API, kubectl and the ALB, with AWS mocked by moto: a run
that passes, a failure at every step (destroy and the sweep still run once anything may exist; nothing at all
runs before), and the fakes' signatures against the installed `pulumi.automation`."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pulumi.automation as auto
import pytest

from tests.e2e.fakes import (
    Calls,
    Clock,
    FakeAutomation,
    FakeKube,
    FakeSession,
    FakeStack,
    FakeWorkspace,
    base_env,
    completed,
    fake_infer,
)
from tools.e2e.driver import CLEANUP_STEPS, CREATES_FROM, MAIN_STEPS, Deps, Driver, cleanup_run, deployer_arn
from tools.e2e.kube import Kube
from tools.e2e.runid import RUN_TAG
from tools.e2e.stack import PROJECT

REPO = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 12, 5, 6, 0, tzinfo=UTC)


@pytest.fixture
def user_snapshot(aws: Any) -> str:
    ec2 = aws.client("ec2")
    volume = ec2.create_volume(AvailabilityZone="us-west-2a", Size=20)["VolumeId"]
    return str(ec2.create_snapshot(VolumeId=volume)["SnapshotId"])


class Harness:
    def __init__(self, aws: Any, tmp: Path, *, fail: set[str], quota: float = 1000, **env: str) -> None:
        self.calls = Calls(fail=fail)
        self.clock = Clock()
        self.services: list[str] = []
        self.automation = FakeAutomation(self.calls)
        self.kube = FakeKube(self.calls, self.clock)
        self.env = base_env(**env)
        deps = Deps(automation=self.automation,
                    session=lambda region: FakeSession(region, aws, self.services, quota),
                    kube=lambda _: cast(Kube, self.kube), infer=fake_infer(self.kube, self.calls),
                    which=lambda tool: f"/usr/bin/{tool}", run=completed, clock=self.clock, sleep=self.clock.sleep,
                    now=lambda: NOW, log=lambda _: None, public_ip=lambda: "198.51.100.7")
        self.driver = Driver(self.env, deps, repo=REPO, out=tmp, run_suffix="test1")

    def rows(self) -> dict[str, str]:
        return {r.step: r.result for r in self.driver.report.rows}


def test_a_run_that_passes_goes_through_every_step_then_cleans_up(aws: Any, tmp_path: Path,
                                                                   user_snapshot: str) -> None:
    h = Harness(aws, tmp_path, fail=set(), E2E_SNAPSHOT_ID=user_snapshot)
    report = h.driver.run()
    assert [r.step for r in report.rows] == [*MAIN_STEPS, *CLEANUP_STEPS]
    assert report.ok, report.markdown()
    assert h.calls.names()[:4] == ["create_stack", "up", "outputs", "wait_gpu_node"]
    assert h.calls.names()[-3:] == ["empty_cluster", "destroy", "remove_stack"]
    destroy = dict(h.calls.log)["destroy"]
    assert destroy["continue_on_error"] is True
    # the user's snapshot is protected and untouched
    assert aws.client("ec2").describe_snapshots(SnapshotIds=[user_snapshot])["Snapshots"]
    saved = (tmp_path / h.driver.state.run_id / "report.json").read_text()
    assert '"ok": true' in saved


@pytest.mark.parametrize("step", MAIN_STEPS)
def test_a_failure_at_any_step_still_destroys_and_sweeps(aws: Any, tmp_path: Path, user_snapshot: str,
                                                         step: str) -> None:
    injected: dict[str, tuple[set[str], dict[str, str]]] = {
        "preflight": (set(), {"MAX_USD": ""}),
        "estimate": (set(), {"MAX_USD": "1"}),
        "quota": (set(), {}),
        "snapshot": (set(), {"E2E_SNAPSHOT_ID": "snap-0000000000000dead"}),
        "stack": ({"create_stack"}, {}),
        "up": ({"up"}, {}),
        "probe": ({"wait_probe"}, {}),
        "inference": ({"infer"}, {}),
        "sleep-and-wake": ({"replicas"}, {}),
        "roll": ({"up-roll"}, {}),
    }
    fail, env = injected[step]
    env = {"E2E_SNAPSHOT_ID": user_snapshot, **env}
    h = Harness(aws, tmp_path, fail=fail, quota=0 if step == "quota" else 1000, **env)
    report = h.driver.run()

    assert report.failed_step == step, report.markdown()
    rows = h.rows()
    index = MAIN_STEPS.index(step)
    assert all(rows.get(s) is None for s in MAIN_STEPS[index + 1:]), "a step ran after the failure"
    if index < CREATES_FROM:
        # Nothing was created: no stack, no destroy, no sweep, and no AWS call but reads (STS's identity, the
        # quotas, EC2's running instances for the quota check).
        assert "create_stack" not in h.calls.names() and "destroy" not in h.calls.names()
        assert "sweep" not in rows
        assert set(h.services) <= {"sts", "service-quotas", "ec2"}
        return
    assert rows["sweep"] == "passed", report.markdown()
    if "create_stack" in h.calls.names() and step != "stack":
        assert rows["destroy"] == "passed"
        assert dict(h.calls.log)["destroy"]["continue_on_error"] is True
        assert rows["stack-rm"] == "passed"
        assert ("empty_cluster" in h.calls.names()) == (index > MAIN_STEPS.index("up"))
    else:
        assert rows["destroy"] == "skipped" and rows["stack-rm"] == "skipped"


def test_a_failed_destroy_keeps_the_stack_and_still_sweeps(aws: Any, tmp_path: Path, user_snapshot: str) -> None:
    h = Harness(aws, tmp_path, fail={"destroy"}, E2E_SNAPSHOT_ID=user_snapshot)
    report = h.driver.run()
    rows = h.rows()
    assert rows["destroy"] == "failed" and rows["stack-rm"] == "skipped" and rows["sweep"] == "passed"
    assert "remove_stack" not in h.calls.names()
    assert report.failed_step == "destroy"
    kept = next(r.detail for r in report.rows if r.step == "stack-rm")
    run_id = h.driver.state.run_id
    assert f"`pulumi destroy --yes --continue-on-error --stack {run_id}`" in kept
    assert f"`pulumi cancel --yes --stack {run_id}`" in kept and f"`pulumi stack rm --yes {run_id}`" in kept


def test_the_sweep_removes_what_the_run_tagged_after_a_failure(aws: Any, tmp_path: Path, user_snapshot: str) -> None:
    h = Harness(aws, tmp_path, fail={"up"}, E2E_SNAPSHOT_ID=user_snapshot)
    run_id = h.driver.state.run_id
    ec2 = aws.client("ec2")
    # What an interrupted `up` left outside the stack's state: a tagged VPC.
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16", TagSpecifications=[
        {"ResourceType": "vpc", "Tags": [{"Key": RUN_TAG, "Value": run_id}]}])["Vpc"]["VpcId"]
    report = h.driver.run()
    assert report.sweep["removed"] == [f"ec2-vpc {vpc}"]
    assert "ec2-vpc" in report.markdown()


def test_the_stack_config_carries_the_run_tags_and_the_cheapest_types(aws: Any, tmp_path: Path,
                                                                       user_snapshot: str) -> None:
    h = Harness(aws, tmp_path, fail={"up"}, E2E_SNAPSHOT_ID=user_snapshot)
    h.driver.run()
    import yaml  # noqa: PLC0415

    assert h.driver.state.config_file is not None
    config = yaml.safe_load(h.driver.state.config_file.read_text())["config"]
    run_id = h.driver.state.run_id
    assert config["aws:defaultTags"]["tags"][RUN_TAG] == run_id
    assert config[f"{PROJECT}:tags"][RUN_TAG] == run_id
    assert config[f"{PROJECT}:cluster"]["name"] == run_id
    assert config[f"{PROJECT}:gpuNodeGroups"][0]["instanceTypes"] == ["g6.xlarge"]
    assert config[f"{PROJECT}:gpuNodeGroups"][0]["imageId"] == "ami-0old"
    assert config[f"{PROJECT}:karpenter"]["pools"][0]["instanceTypes"] == ["g4dn.xlarge"]
    assert config[f"{PROJECT}:karpenter"]["pools"][0]["imageVersion"] == "v1.67.1"
    rolled = h.driver.state.roll_config["config"]
    assert rolled[f"{PROJECT}:gpuNodeGroups"][0]["imageId"] == "ami-0new"
    assert rolled[f"{PROJECT}:karpenter"]["pools"][0]["imageVersion"] == "v1.68.0"
    assert config[f"{PROJECT}:inferenceServices"][0]["modelVolume"]["snapshotId"] == user_snapshot


def test_the_deployer_is_the_role_behind_the_session() -> None:
    assert deployer_arn("arn:aws:sts::123456789012:assumed-role/gpu-platform-e2e/GitHubActions") == \
        "arn:aws:iam::123456789012:role/gpu-platform-e2e"
    assert deployer_arn("arn:aws:iam::123456789012:user/alice") == "arn:aws:iam::123456789012:user/alice"


# ---- the fakes against the real pulumi.automation --------------------------------------------------------------

FAKES_AND_REAL = [
    (FakeAutomation.create_stack, auto.create_stack, True),
    (FakeAutomation.select_stack, auto.select_stack, True),
    (FakeStack.up, auto.Stack.up, False),
    (FakeStack.destroy, auto.Stack.destroy, False),
    (FakeStack.outputs, auto.Stack.outputs, False),
    (FakeStack.cancel, auto.Stack.cancel, False),
    (FakeWorkspace.remove_stack, auto.LocalWorkspace.remove_stack, False),
]


@pytest.mark.parametrize(("fake", "real", "module_function"), FAKES_AND_REAL,
                         ids=[r.__qualname__ for _, r, _ in FAKES_AND_REAL])
def test_each_fake_has_the_real_signature(fake: Any, real: Any, module_function: bool) -> None:
    fake_params = list(inspect.signature(fake).parameters.values())
    if module_function:
        fake_params = fake_params[1:]  # the fake module's method has self; the real one is a function
    real_params = list(inspect.signature(real).parameters.values())
    assert [(p.name, p.kind, p.default) for p in fake_params] == [(p.name, p.kind, p.default) for p in real_params]


def test_every_call_the_driver_made_binds_to_the_real_api(aws: Any, tmp_path: Path, user_snapshot: str) -> None:
    h = Harness(aws, tmp_path, fail=set(), E2E_SNAPSHOT_ID=user_snapshot)
    h.driver.run()
    real: dict[str, Callable[..., Any]] = {
        "create_stack": auto.create_stack, "up": auto.Stack.up, "up-roll": auto.Stack.up,
        "destroy": auto.Stack.destroy, "remove_stack": auto.LocalWorkspace.remove_stack}
    checked = 0
    for name, kwargs in h.calls.log:
        if name in real:
            arguments = kwargs if name == "create_stack" else {"self": None, **kwargs}
            inspect.signature(real[name]).bind(**arguments)
            checked += 1
    assert checked == 5
    # The driver reaches remove_stack through the stack's `workspace` attribute, set by Stack's constructor.
    assert "workspace" in inspect.signature(auto.Stack.__init__).parameters
    assert "self.workspace = workspace" in inspect.getsource(auto.Stack.__init__)
    assert isinstance(h.automation.stacks[0].workspace, FakeWorkspace)


@pytest.mark.parametrize("stack_exists", [True, False])
def test_the_workflow_cleanup_destroys_the_stack_when_it_exists_and_always_sweeps(
        aws: Any, tmp_path: Path, stack_exists: bool) -> None:
    h = Harness(aws, tmp_path, fail=set() if stack_exists else {"select_stack"})
    run_id = h.driver.state.run_id
    aws.client("ec2").create_vpc(CidrBlock="10.9.0.0/16", TagSpecifications=[
        {"ResourceType": "vpc", "Tags": [{"Key": RUN_TAG, "Value": run_id}]}])
    report = cleanup_run(run_id, h.driver.deps, repo=tmp_path, region="us-west-2", protect=frozenset())
    rows = {r.step: r.result for r in report.rows}
    if stack_exists:
        assert rows == {"cancel": "passed", "pre-destroy": "passed", "destroy": "passed", "stack-rm": "passed",
                        "sweep": "passed"}
        assert "no update was in progress" in report.rows[0].detail
        assert dict(h.calls.log)["destroy"]["continue_on_error"] is True
    else:
        assert rows == {"destroy": "skipped", "sweep": "passed"}
    assert len(report.sweep["removed"]) == 1


def test_an_up_past_the_wall_clock_is_canceled_and_cleanup_still_destroys(aws: Any, tmp_path: Path,
                                                                          user_snapshot: str) -> None:
    """The Automation API's `up` has no timeout: the driver runs it in a thread and `pulumi cancel`s it at the
    limit, so the stack is not left locked for destroy."""
    h = Harness(aws, tmp_path, fail=set(), E2E_SNAPSHOT_ID=user_snapshot)
    h.calls.hang = {"up"}
    h.driver._left = lambda: 0.2  # type: ignore[method-assign]  # 0.2 s of real time left for `up`
    report = h.driver.run()
    rows = h.rows()
    assert report.failed_step == "up"
    up = next(r.detail for r in report.rows if r.step == "up")
    assert "ran past the wall-clock limit" in up and "pulumi cancel" in up
    names = h.calls.names()
    assert names.index("up") < names.index("cancel") < names.index("destroy")
    assert rows["destroy"] == "passed" and rows["stack-rm"] == "passed" and rows["sweep"] == "passed"


def test_the_workflow_cleanup_cancels_an_update_a_killed_run_left_in_progress(aws: Any, tmp_path: Path) -> None:
    """Without the cancel, destroy meets "Another update is currently in progress" and the stack stays."""
    h = Harness(aws, tmp_path, fail=set())
    h.calls.locked = True
    report = cleanup_run(h.driver.state.run_id, h.driver.deps, repo=tmp_path, region="us-west-2",
                         protect=frozenset())
    rows = {r.step: (r.result, r.detail) for r in report.rows}
    assert rows["cancel"] == ("passed", "canceled an update left in progress")
    assert rows["destroy"][0] == "passed" and rows["stack-rm"][0] == "passed"
    assert h.calls.names().index("cancel") < h.calls.names().index("destroy")


def _eks_cluster(aws: Any, name: str) -> None:
    ec2 = aws.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.8.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.8.1.0/24")["Subnet"]["SubnetId"]
    aws.client("eks").create_cluster(name=name, roleArn="arn:aws:iam::123456789012:role/eks",
                                     resourcesVpcConfig={"subnetIds": [subnet]})


def test_a_failed_up_whose_cluster_exists_still_empties_it_before_destroy(aws: Any, tmp_path: Path,
                                                                         user_snapshot: str) -> None:
    """`up` failed after EKS created the cluster but before the stack exported its kubeconfig: pre-destroy was
    skipped, so the ALBs, volumes and Karpenter nodes the cluster's controllers made waited for the sweep (issue 54).
    The cleanup reads the run's cluster from EKS and empties it."""
    h = Harness(aws, tmp_path, fail={"up"}, E2E_SNAPSHOT_ID=user_snapshot)
    _eks_cluster(aws, h.driver.state.run_id)
    h.driver.run()
    rows = h.rows()
    assert rows["up"] == "failed" and rows["pre-destroy"] == "passed", h.driver.report.markdown()
    names = h.calls.names()
    assert names.index("empty_cluster") < names.index("destroy")
    import yaml  # noqa: PLC0415

    kubeconfig = yaml.safe_load((h.driver.state.kubeconfig or Path()).read_text())
    user = kubeconfig["users"][0]["user"]["exec"]
    assert user["command"] == "aws"
    assert user["args"] == ["eks", "get-token", "--cluster-name", h.driver.state.run_id, "--region", "us-west-2"]


def test_a_failed_up_with_no_cluster_says_so_and_destroys(aws: Any, tmp_path: Path, user_snapshot: str) -> None:
    h = Harness(aws, tmp_path, fail={"up"}, E2E_SNAPSHOT_ID=user_snapshot)
    h.driver.run()
    row = next(r for r in h.driver.report.rows if r.step == "pre-destroy")
    assert row.result == "skipped" and f"no cluster {h.driver.state.run_id} with an endpoint in EKS" in row.detail
    assert h.rows()["destroy"] == "passed" and h.rows()["sweep"] == "passed"
