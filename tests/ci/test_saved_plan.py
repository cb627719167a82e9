"""prod's saved plan (tools/saved_plan.py, .ci/on-main): sealed without plaintext secrets, applied only as sealed.

The recovery path of a plan that failed partway (docs/ci-cd.md, "When a saved plan fails") as far as it runs
offline: the update that failed moves the stack's version, and the plan is refused until a new preview and a new
approval; a plan from another run or commit, or with other bytes, is refused the same way.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.shared import REPO
from tools import saved_plan
from tools.plan_values import SIG_KEY, SIG_SECRET
from tools.saved_plan import PlanRefused

URN = "urn:pulumi:prod::gpu-platform::gpu-platform:components:Cluster$aws:eks/cluster:Cluster::gpu-cluster"
QUEUE = "urn:pulumi:prod::gpu-platform::aws:sqs/queue:Queue::interruptions"
ROLE = "urn:pulumi:prod::gpu-platform::aws:iam/role:Role::nodes"


def _plan(secret: dict[str, Any] | None = None) -> dict[str, Any]:
    inputs: dict[str, Any] = {"name": "gpu-cluster"}
    if secret is not None:
        inputs["password"] = secret
    return {"manifest": {"time": "2026-12-05T06:00:00Z", "version": "3.272.0"}, "config": {},
            "resourcePlans": {
                URN: {"goal": {"type": "aws:eks/cluster:Cluster", "name": "gpu-cluster",
                               "inputDiff": {"adds": inputs}}, "steps": ["update"]},
                QUEUE: {"steps": ["delete"]},
                ROLE: {"steps": ["same"]},
            }}


def _history(version: int) -> list[dict[str, Any]]:
    return [{"version": version, "kind": "update", "result": "succeeded"}] if version else []


@pytest.fixture
def sealed(tmp_path: Path) -> Path:
    (tmp_path / "plan.json").write_text(json.dumps(_plan({SIG_KEY: SIG_SECRET, "ciphertext": "v1:abc"})))
    (tmp_path / "history.json").write_text(json.dumps(_history(7)))
    saved_plan.seal(tmp_path / "plan.json", tmp_path / "history.json", tmp_path / "out", stack="prod", run_id="100",
                    run_attempt="1", sha="c0ffee")
    return tmp_path / "out"


def _verify(directory: Path, history: int, **changed: str) -> saved_plan.Seal:
    (directory.parent / "now.json").write_text(json.dumps(_history(history)))
    expected = {"stack": "prod", "run_id": "100", "sha": "c0ffee",
                "plan_sha256": saved_plan.sha256(directory / "plan.json")} | changed
    return saved_plan.verify(directory, directory.parent / "now.json", **expected)


def test_an_encrypted_secret_is_sealed_with_its_operations_for_the_reviewer(sealed: Path) -> None:
    manifest = json.loads((sealed / "manifest.json").read_text())
    assert manifest == {"runId": "100", "runAttempt": "1", "sha": "c0ffee", "stack": "prod", "stackVersion": 7,
                        "planSha256": saved_plan.sha256(sealed / "plan.json")}
    summary = (sealed / "plan.md").read_text()
    assert "| delete | 1 |" in summary and "| same | 1 |" in summary and "| update | 1 |" in summary
    # The delete first: what a reviewer must not miss.
    assert summary.index("| **delete** | `aws:sqs/queue:Queue` | `interruptions` |") < summary.index(
        "| **update** | `aws:eks/cluster:Cluster` | `gpu-cluster` |")
    assert "nodes" not in summary


@pytest.mark.parametrize(("secret", "what"), [
    ({SIG_KEY: SIG_SECRET, "plaintext": "\"hunter2\""}, "resourcePlans." + URN
     + ".goal.inputDiff.adds.password: a secret value written in plaintext"),
    ("AKIAIOSFODNN7EXAMPLE", "resourcePlans." + URN + ".goal.inputDiff.adds.password: an AWS access key id"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMII", "resourcePlans." + URN
     + ".goal.inputDiff.adds.password: a PEM private key"),
])
def test_a_plaintext_secret_stops_the_seal_and_nothing_is_written(tmp_path: Path, secret: Any, what: str) -> None:
    plan = _plan()
    plan["resourcePlans"][URN]["goal"]["inputDiff"]["adds"]["password"] = secret
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    (tmp_path / "history.json").write_text("[]")
    with pytest.raises(PlanRefused) as refused:
        saved_plan.seal(tmp_path / "plan.json", tmp_path / "history.json", tmp_path / "out", stack="prod",
                        run_id="1", run_attempt="1", sha="s")
    assert what in str(refused.value) and "1 secret(s) in the clear" in str(refused.value)
    assert not (tmp_path / "out").exists()


def test_the_sealed_plan_is_applied_in_its_run_at_its_commit_while_the_stack_has_not_moved(sealed: Path) -> None:
    assert _verify(sealed, 7).stack_version == 7


def test_after_an_update_that_failed_partway_the_plan_is_refused_until_a_new_preview_and_approval(
        sealed: Path) -> None:
    # `pulumi up --plan` failed at some resource: the steps before it were applied and recorded as update 8.
    with pytest.raises(PlanRefused) as refused:
        _verify(sealed, 8)
    message = str(refused.value)
    assert "was at update 7 when the plan was previewed and is at update 8 now" in message
    assert "Re-run all jobs of this run (a new preview, a new plan, a new approval)" in message


def test_an_update_that_lands_between_the_history_read_and_the_seal_is_refused(tmp_path: Path) -> None:
    # deploy.yml reads the history (update 7) BEFORE the preview; an earlier run's up-prod (another concurrency
    # group) applies update 8 while this run previews: the plan was computed against 7 or 8, it is sealed at 7.
    (tmp_path / "before.json").write_text(json.dumps(_history(7)))
    (tmp_path / "plan.json").write_text(json.dumps(_plan()))
    saved_plan.seal(tmp_path / "plan.json", tmp_path / "before.json", tmp_path / "out", stack="prod", run_id="100",
                    run_attempt="1", sha="c0ffee")
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["stackVersion"] == 7
    with pytest.raises(PlanRefused, match="was at update 7 when the plan was previewed and is at update 8 now"):
        _verify(tmp_path / "out", 8)


def test_a_running_update_is_neither_sealed_nor_verified(tmp_path: Path, sealed: Path) -> None:
    running = [{"version": 8, "kind": "update", "result": "in-progress"}]
    (tmp_path / "running.json").write_text(json.dumps(running))
    (tmp_path / "plan.json").write_text(json.dumps(_plan()))
    message = (r"update 8 of the stack is still running \(result 'in-progress'\), so its state is not settled; fix: "
               r"let it finish, then Re-run all jobs")
    with pytest.raises(PlanRefused, match=message):
        saved_plan.seal(tmp_path / "plan.json", tmp_path / "running.json", tmp_path / "fresh", stack="prod",
                        run_id="100", run_attempt="1", sha="c0ffee")
    assert not (tmp_path / "fresh").exists()  # nothing written
    with pytest.raises(PlanRefused, match=message):
        saved_plan.verify(sealed, tmp_path / "running.json", stack="prod", run_id="100", sha="c0ffee",
                          plan_sha256=saved_plan.sha256(sealed / "plan.json"))


@pytest.mark.parametrize(("changed", "message"), [
    ({"run_id": "101"}, "the plan was sealed by run 100, this is run 101"),
    ({"sha": "decade"}, "the plan was previewed at commit c0ffee, this job checked out decade"),
    ({"plan_sha256": "0" * 64}, "not the plan the reviewers were shown"),
    ({"plan_sha256": ""}, "the preview job passed no plan sha256"),
    ({"stack": "dev"}, "the plan is stack 'prod''s, not 'dev''s"),
])
def test_a_plan_of_another_run_commit_or_content_is_refused(sealed: Path, changed: dict[str, str],
                                                            message: str) -> None:
    with pytest.raises(PlanRefused, match=message.replace("(", r"\(").replace(")", r"\)")):
        _verify(sealed, 7, **changed)


def test_a_plan_changed_after_the_seal_is_refused(sealed: Path) -> None:
    digest = saved_plan.sha256(sealed / "plan.json")
    (sealed / "plan.json").write_text(json.dumps(_plan()))
    with pytest.raises(PlanRefused, match="not the plan the reviewers were shown"):
        _verify(sealed, 7, plan_sha256=digest)


def test_the_command_line_writes_the_summary_and_the_job_output(sealed: Path, tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "GITHUB_RUN_ID": "100", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_SHA": "c0ffee",
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(tmp_path / "output")}
    proc = subprocess.run([sys.executable, "-m", "tools.saved_plan", "seal", str(tmp_path / "plan.json"), "--stack",
                           "prod", "--history", str(tmp_path / "history.json"), "--out", str(tmp_path / "cli")],
                          cwd=REPO, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    digest = saved_plan.sha256(tmp_path / "cli" / "plan.json")
    assert (tmp_path / "output").read_text() == f"plan-sha256={digest}\n"
    assert "## The update plan of `prod`" in (tmp_path / "summary.md").read_text()
    (tmp_path / "history.json").write_text(json.dumps(_history(8)))
    proc = subprocess.run([sys.executable, "-m", "tools.saved_plan", "verify", str(tmp_path / "cli"), "--stack",
                           "prod", "--history", str(tmp_path / "history.json"), "--plan-sha256", digest],
                          cwd=REPO, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 1 and proc.stderr.startswith("error: stack 'prod' was at update 7")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def clone(tmp_path: Path) -> tuple[Path, str, str]:
    origin = tmp_path / "origin"
    origin.mkdir()
    _git(origin, "init", "-q", "-b", "main")
    _git(origin, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "a")
    on_main = _git(origin, "rev-parse", "HEAD")
    _git(origin, "switch", "-q", "-c", "side")
    _git(origin, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "b")
    side = _git(origin, "rev-parse", "HEAD")
    _git(origin, "switch", "-q", "main")
    subprocess.run(["git", "clone", "-q", str(origin), str(tmp_path / "clone")], check=True)
    return tmp_path / "clone", on_main, side


def _on_main(repo: Path, commit: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(REPO / ".ci" / "on-main"), commit], cwd=repo, capture_output=True, text=True,
                          check=False)


def test_only_a_commit_on_main_may_be_published(clone: tuple[Path, str, str]) -> None:
    repo, on_main, side = clone
    assert _on_main(repo, on_main).returncode == 0
    refused = _on_main(repo, side)
    assert refused.returncode == 1
    assert f"commit {side} is not on main: only a commit merged into main" in refused.stderr


def test_without_mains_history_nothing_is_published(clone: tuple[Path, str, str]) -> None:
    repo, on_main, _ = clone
    _git(repo, "update-ref", "-d", "refs/remotes/origin/main")
    refused = _on_main(repo, on_main)
    assert refused.returncode == 1 and "origin/main is not in this checkout" in refused.stderr


# ---- the values the reviewer reads (issue 54: the summary showed operation, type and name only) ----------------

def _state(inputs: dict[str, Any]) -> dict[str, Any]:
    """What `pulumi stack export` writes (pulumi/pulumi sdk/go/common/apitype/core.go DeploymentV3, ResourceV3)."""
    return {"version": 3, "deployment": {"manifest": {}, "resources": [
        {"urn": URN, "type": "aws:eks/cluster:Cluster", "inputs": inputs, "outputs": {}}]}}


def _changed_plan() -> dict[str, Any]:
    plan = _plan()
    plan["resourcePlans"][URN]["goal"]["inputDiff"] = {
        "updates": {"version": "1.35", "encryptionConfig": {SIG_KEY: SIG_SECRET, "ciphertext": "v1:new"},
                    "roleArn": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"},
        "adds": {"tags": {"team": "ml"}},
        "deletes": ["enabledClusterLogTypes"]}
    return plan


def test_the_summary_shows_each_changed_input_before_and_after_with_secrets_masked(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(_changed_plan()))
    (tmp_path / "history.json").write_text(json.dumps(_history(7)))
    state = _state({"version": "1.34", "encryptionConfig": {SIG_KEY: SIG_SECRET, "ciphertext": "v1:old"},
                    "roleArn": "arn:aws:iam::123456789012:role/old", "enabledClusterLogTypes": ["api", "audit"]})
    (tmp_path / "state.json").write_text(json.dumps(state))
    sealed = saved_plan.seal(tmp_path / "plan.json", tmp_path / "history.json", tmp_path / "out", stack="prod",
                             run_id="100", run_attempt="1", sha="c0ffee", state_path=tmp_path / "state.json")
    text = (tmp_path / "out" / "plan.md").read_text()
    assert "| `aws:eks/cluster:Cluster` `gpu-cluster` | `version` | `1.34` | `1.35` |" in text
    assert "| `aws:eks/cluster:Cluster` `gpu-cluster` | `encryptionConfig` | `[secret]` | `[secret]` |" in text
    assert "v1:old" not in text and "v1:new" not in text
    assert "`(unknown at preview: any value is accepted)`" in text
    assert '| `tags` | (absent) | `{"team":"ml"}` |' in text
    assert '| `enabledClusterLogTypes` | `["api","audit"]` | (absent) |' in text
    assert sealed.state_sha256 == saved_plan.sha256(tmp_path / "state.json")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["stateSha256"] == sealed.state_sha256


def test_a_state_that_is_not_an_export_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(_changed_plan()))
    (tmp_path / "history.json").write_text(json.dumps(_history(7)))
    (tmp_path / "state.json").write_text(json.dumps({"resources": []}))
    with pytest.raises(PlanRefused, match="pulumi stack export --stack prod"):
        saved_plan.seal(tmp_path / "plan.json", tmp_path / "history.json", tmp_path / "out", stack="prod",
                        run_id="100", run_attempt="1", sha="c0ffee", state_path=tmp_path / "state.json")


def test_the_prod_preview_exports_the_state_before_the_preview_and_seals_it() -> None:
    import yaml  # noqa: PLC0415

    steps = yaml.safe_load((REPO / ".github" / "workflows" / "deploy.yml").read_text())["jobs"]["preview-prod-main"][
        "steps"]
    runs = [str(s.get("run", "")) for s in steps]
    export = next(i for i, r in enumerate(runs) if "pulumi stack export --stack" in r)
    preview = next(i for i, s in enumerate(steps) if s.get("with", {}).get("command") == "preview")
    seal = next(i for i, r in enumerate(runs) if "tools.saved_plan seal" in r)
    assert export < preview < seal
    assert '--state "$RUNNER_TEMP/prod-state.json"' in runs[seal]


# ---- what the plan does not bind: remediations run after the plan check ------------------------------------------

def test_the_pack_has_no_remediation_policy_in_any_stack() -> None:
    """pulumi/pulumi pkg/resource/deploy/step_generator.go (v3.259.0) checks the plan at line 1395, then calls
    `Remediate` at 1438: a remediation would rewrite inputs the reviewer never saw. No policy of the pack may
    remediate, by its default or by a stack's policy config."""
    from pulumi_policy import EnforcementLevel  # noqa: PLC0415

    from policies.gpu_guard.base import all_policies  # noqa: PLC0415

    # pulumi_policy keeps a resource policy's remediation callback in `_ResourceValidationPolicy__remediate`
    # (pulumi_policy/policy.py, ResourceValidationPolicy.__init__); None when the policy only validates.
    remediating = [p.name for p in all_policies()
                   if getattr(p, "enforcement_level", None) == EnforcementLevel.REMEDIATE
                   or getattr(p, "_ResourceValidationPolicy__remediate", None) is not None]
    assert remediating == []
    for config in sorted((REPO / "policies" / "config").glob("*.json")):
        levels = {name: (value or {}).get("enforcementLevel") if isinstance(value, dict) else value
                  for name, value in json.loads(config.read_text()).items()}
        assert "remediate" not in levels.values(), config.name
