"""The e2e workflow: actionlint and zizmor (auditor persona) clean, OIDC only with no standing key, one run at a
time per account and never cancelled half-way, a cleanup job under always() that destroys and sweeps the run
whatever happened to it, a wall-clock limit above the driver's own, and the scheduled TTL sweep."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.ci.test_workflows import _tool as tool
from tools.e2e.driver import LIMIT_MINUTES

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "e2e.yml"


@pytest.fixture(scope="module")
def workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_actionlint_finds_nothing_in_any_workflow() -> None:
    workflows = sorted(str(p) for p in (REPO / ".github" / "workflows").glob("*.yml"))
    proc = subprocess.run([tool("actionlint"), "-no-color", *workflows], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n"
                   "      - run: echo ${{ github.event.nope.title }}\n        if: ${{ steps.x.outputs }}\n"
                   "      - uses: actions/checkout\n", encoding="utf-8")
    proc = subprocess.run([tool("actionlint"), "-no-color", str(bad)], capture_output=True, text=True, check=False)
    assert proc.returncode != 0


def test_zizmor_auditor_finds_nothing() -> None:
    proc = subprocess.run([tool("zizmor"), "--persona", "auditor", "--offline", "--format", "json", WORKFLOW.name],
                          capture_output=True, text=True, check=False, cwd=WORKFLOW.parent)
    assert json.loads(proc.stdout) == [], proc.stdout


def test_it_runs_on_demand_and_sweeps_on_a_schedule(workflow: dict[Any, Any]) -> None:
    triggers = workflow[True]
    assert set(triggers) == {"workflow_dispatch", "schedule"}
    assert triggers["workflow_dispatch"]["inputs"]["max-usd"]["required"] is True
    jobs = workflow["jobs"]
    assert jobs["sweep"]["if"] == "${{ github.event_name == 'schedule' }}"
    assert any(s.get("run") == "make e2e-sweep" for s in jobs["sweep"]["steps"])
    for name in ("offline-gate", "e2e"):
        assert "workflow_dispatch" in jobs[name]["if"]


def test_oidc_only_no_standing_keys(workflow: dict[Any, Any]) -> None:
    assert workflow["permissions"] == {}
    text = WORKFLOW.read_text(encoding="utf-8")
    for forbidden in ("aws-access-key-id", "aws-secret-access-key", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        assert forbidden not in text
    for name, job in workflow["jobs"].items():
        assumes = [s for s in job.get("steps", []) if "configure-aws-credentials" in str(s.get("uses"))]
        if assumes:
            assert job["permissions"]["id-token"] == "write", name
            role = {"e2e": "E2E_AWS_ROLE_ARN", "e2e-cleanup": "E2E_CLEANUP_ROLE_ARN"}[job["environment"]]
            assert assumes[0]["with"]["role-to-assume"] == "${{ vars." + role + " }}"


def test_one_run_at_a_time_per_account_never_cancelled(workflow: dict[Any, Any]) -> None:
    run = workflow["jobs"]["e2e"]["concurrency"]
    assert run == {"group": "e2e-account-${{ vars.E2E_AWS_ACCOUNT_ID }}", "cancel-in-progress": False}
    for job in workflow["jobs"].values():
        if "concurrency" in job:
            assert job["concurrency"]["cancel-in-progress"] is False


def test_the_cleanup_runs_whatever_the_run_did(workflow: dict[Any, Any]) -> None:
    cleanup = workflow["jobs"]["cleanup"]
    assert cleanup["needs"] == "e2e"
    assert cleanup["if"].startswith("${{ always() && ")
    step = next(s for s in cleanup["steps"] if s.get("run") == "make e2e-cleanup")
    assert step["env"]["E2E_RUN_ID"] == "${{ needs.e2e.outputs.run-id }}"
    e2e = workflow["jobs"]["e2e"]
    assert e2e["outputs"]["run-id"] == "${{ steps.run-id.outputs.run-id }}"
    names = [s.get("id") or s.get("run") or s.get("uses") for s in e2e["steps"]]
    assert names.index("run-id") < names.index("make e2e"), "the run id must exist before the run starts"
    upload = next(s for s in e2e["steps"] if "upload-artifact" in str(s.get("uses")))
    assert upload["if"] == "${{ always() }}"


def test_every_job_has_a_wall_clock_limit_above_the_driver_s(workflow: dict[Any, Any]) -> None:
    jobs = workflow["jobs"]
    for name, job in jobs.items():
        if "uses" not in job:
            assert isinstance(job.get("timeout-minutes"), int), name
    assert jobs["e2e"]["timeout-minutes"] > LIMIT_MINUTES
    assume = next(s for s in jobs["e2e"]["steps"] if "configure-aws-credentials" in str(s.get("uses")))
    assert assume["with"]["role-duration-seconds"] >= LIMIT_MINUTES * 60


def test_the_run_gets_its_cap_and_settings_through_env_never_the_shell(workflow: dict[Any, Any]) -> None:
    step = next(s for s in workflow["jobs"]["e2e"]["steps"] if s.get("run") == "make e2e")
    assert step["env"]["MAX_USD"] == "${{ inputs.max-usd }}"
    for name in ("E2E_REGION", "E2E_INGRESS_HOST", "E2E_CERTIFICATE_ARN", "E2E_RUN_ID", "PULUMI_ACCESS_TOKEN"):
        assert name in step["env"], name


def _env_of_make(job: dict[Any, Any]) -> dict[str, str]:
    steps = [s for s in job["steps"] if str(s.get("run", "")).startswith("make e2e")]
    assert len(steps) == 1, steps
    return dict(steps[0].get("env", {}))


@pytest.mark.parametrize("name", ["e2e", "cleanup", "sweep"])
def test_every_e2e_command_knows_the_one_account_it_may_act_in(workflow: dict[Any, Any], name: str) -> None:
    """Preflight, cleanup and the sweep compare the caller's account with E2E_AWS_ACCOUNT_ID (tools/e2e/cap/
    preflight.py); the `make e2e` step did not pass it (issue 54)."""
    assert _env_of_make(workflow["jobs"][name])["E2E_AWS_ACCOUNT_ID"] == "${{ vars.E2E_AWS_ACCOUNT_ID }}"


@pytest.mark.parametrize(("name", "environment", "role"), [
    ("e2e", "e2e", "E2E_AWS_ROLE_ARN"),
    ("cleanup", "e2e-cleanup", "E2E_CLEANUP_ROLE_ARN"),
    ("sweep", "e2e-cleanup", "E2E_CLEANUP_ROLE_ARN"),
])
def test_cleanup_and_the_sweep_run_unreviewed_under_the_delete_only_role(workflow: dict[Any, Any], name: str,
                                                                         environment: str, role: str) -> None:
    """The `e2e` environment's reviewer gated the cleanup and the scheduled sweep too, so a rejected or unattended
    approval left a run's resources billing. They now run in `e2e-cleanup` (no reviewer) with the role that can only
    read and delete the run's resources; the trust policy of each role names its environment and this workflow."""
    from tools.e2e import iam_policy  # noqa: PLC0415

    job = workflow["jobs"][name]
    assert job["environment"] == environment
    configure = [s for s in job["steps"] if "configure-aws-credentials" in str(s.get("uses", ""))]
    assert [s["with"]["role-to-assume"] for s in configure] == ["${{ vars." + role + " }}"]
    trust = (iam_policy.TRUST_POLICY if environment == "e2e" else iam_policy.CLEANUP_TRUST_POLICY).read_text()
    assert f":environment:{environment}:job_workflow_ref:" in trust and WORKFLOW.name + "@refs/heads/main" in trust


def test_the_run_lets_the_cleanup_role_into_its_cluster(workflow: dict[Any, Any]) -> None:
    from tools.e2e.stack import Inputs, e2e_config, load_dev  # noqa: PLC0415

    assert _env_of_make(workflow["jobs"]["e2e"])["E2E_CLEANUP_ROLE_ARN"] == "${{ vars.E2E_CLEANUP_ROLE_ARN }}"
    from datetime import UTC, datetime  # noqa: PLC0415

    cleanup = "arn:aws:iam::123456789012:role/gpu-platform-e2e-cleanup"
    inputs = Inputs(run_id="e2e-202612050600-t1", region="us-west-2", snapshot_id="snap-0123456789abcdef0",
                    snapshot_gib=1, ingress_host="e2e.example.com",
                    certificate_arn="arn:aws:acm:us-west-2:123456789012:certificate/e2e",
                    endpoint_cidrs=("192.0.2.1/32",), deployer_arn="arn:aws:iam::123456789012:role/gpu-platform-e2e",
                    cleanup_arn=cleanup)
    config = e2e_config(load_dev(REPO), inputs, datetime(2026, 12, 5, 6, 0, tzinfo=UTC))
    assert config["config"]["gpu-platform:cluster"]["adminPrincipalArns"] == [cleanup]
