"""No pull-request job holds a credential that can decrypt, export or import prod's state, nor write any stack.

What a pull request's job may hold for Pulumi state (docs/ci-cd.md, "The state a pull request cannot touch"):
- no stored secret at all (`secrets.*` other than GITHUB_TOKEN), so no `PULUMI_ACCESS_TOKEN` of an environment;
- `pulumi/auth-actions` only for a team token (never an organization token, which is admin, nor a personal one),
  of the team the documentation's authorization policy admits for that job's own environment and workflow on a
  pull-request ref, and whose scopes on the stacks are read-only (no `stack:write`, no `stack:import`) and never
  name prod;
- a job that previews prod holds no Pulumi Cloud token: its backend is a `file://` folder of the job.
Scope names: https://www.pulumi.com/docs/administration/access-identity/rbac/scopes/stacks/ ;
permission sets (`Stack Read` includes `stack:export` and `stack:decrypt`):
https://www.pulumi.com/docs/administration/concepts/rbac/permission-sets/
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.ci.test_access import PULL_REQUEST_EVENTS, SECRET, _environments
from tests.ci.test_workflows import CI_DOC, WORKFLOWS, jobs, load, workflow_files
from tests.shared import REPO

# Scopes that write a stack's state or settings (the rest of `Stack Write` and `Stack Admin`).
WRITING_SCOPES = {"stack:write", "stack:import", "stack:delete", "stack:cancel_update", "stack:transfer",
                  "stack_deployment:create", "stack_deployment_settings:write", "stack_tags:update"}
TEAM_TOKEN = "urn:pulumi:token-type:access_token:team"


def documented_team_grants(text: str) -> dict[str, dict[str, Any]]:
    """team -> {environment, workflow ref, stacks, scopes} from the table of the section on the state."""
    section = text[text.index("### The state a pull request cannot touch"):]
    section = section[: section.find("\n## ", 1)]
    found: dict[str, dict[str, Any]] = {}
    for row in section.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if not row.startswith("| `") or len(cells) != 5:
            continue
        team, sub, stacks, scopes = (re.findall(r"`([^`]+)`", cell) for cell in cells[:4])
        environment = re.search(r":environment:([\w-]+):", sub[0]) if sub else None
        found[team[0]] = {"sub": sub[0] if sub else "", "environment": environment.group(1) if environment else "",
                          "stacks": set(stacks), "scopes": set(scopes)}
    return found


def pr_state_credentials(paths: list[Path], grants: dict[str, dict[str, Any]]) -> list[str]:
    """Each way a pull-request job could hold a credential over prod's state, or write any stack's."""
    found = []
    for path in paths:
        trigger = load(path)[True]
        events = set(trigger) if isinstance(trigger, (dict, list)) else {trigger}
        if not events & PULL_REQUEST_EVENTS:
            continue
        workflow = path.name
        for job_id, job in jobs(path).items():
            where = f"{workflow}: job {job_id}"
            text = str(job)
            secrets = {m.group(1) or "[...]" for m in SECRET.finditer(text)} - {"GITHUB_TOKEN"}
            if secrets or job.get("secrets") == "inherit":
                found.append(f"{where} reads secrets {sorted(secrets) or ['inherit']}")
            steps = job.get("steps", [])
            environments = _environments(job)
            stacks = {str(s.get("with", {}).get("stack-name")) for s in steps if "stack-name" in s.get("with", {})}
            exchanges = [s for s in steps if str(s.get("uses", "")).startswith("pulumi/auth-actions@")]
            for step in exchanges:
                inputs = step.get("with", {})
                if inputs.get("requested-token-type") != TEAM_TOKEN:
                    found.append(f"{where} asks for a {inputs.get('requested-token-type')} token, not a team token")
                    continue
                team = str(inputs.get("scope", "")).removeprefix("team:")
                grant = grants.get(team)
                if grant is None:
                    found.append(f"{where} asks for team {team!r}, which no documented policy admits")
                    continue
                if grant["environment"] not in environments or not grant["sub"].endswith(
                        f".github/workflows/{workflow}@refs/pull/*/merge"):
                    found.append(f"{where}: team {team!r} is admitted for {grant['sub']!r}, not for this job's "
                                 f"environment {environments} on a pull-request ref")
                if grant["scopes"] & WRITING_SCOPES:
                    found.append(f"{where}: team {team!r} may {sorted(grant['scopes'] & WRITING_SCOPES)}")
                if "prod" in grant["stacks"] or "prod" in stacks:
                    found.append(f"{where}: team {team!r} reaches the prod stack, whose state it could export and "
                                 "decrypt")
            if "prod" in stacks or any(e.endswith("prod") for e in environments):
                cloud = [s for s in steps if s.get("with", {}).get("command")]
                if exchanges or any(not str(s["with"].get("cloud-url", "")).startswith("file://") for s in cloud):
                    found.append(f"{where} previews prod with a Pulumi Cloud backend")
            if "PULUMI_ACCESS_TOKEN" in text:
                found.append(f"{where} sets PULUMI_ACCESS_TOKEN")
    return found


def _grants() -> dict[str, dict[str, Any]]:
    return documented_team_grants(CI_DOC.read_text(encoding="utf-8"))


def test_no_pull_request_job_holds_a_credential_over_prods_state() -> None:
    assert pr_state_credentials(workflow_files(), _grants()) == []
    grant = _grants()["gpu-platform-pr-preview"]
    assert grant["environment"] == "preview-dev"
    assert grant["stacks"] == {"dev"}
    # Pulumi's `Stack Read` permission set ("allows for running previews"), nothing of `Stack Write`.
    assert grant["scopes"] == {"stack:read", "stack:export", "stack:encrypt", "stack:decrypt", "stack_deployment:read",
                               "stack_deployment_settings:read", "stack_access:read", "stack_schedule:read"}
    preview = jobs(WORKFLOWS / "pull-request.yml")["preview-prod"]
    assert next(s for s in preview["steps"] if s.get("id") == "preview")["with"]["cloud-url"] == (
        "file://${{ runner.temp }}/pulumi-state")


def test_the_prod_plan_team_reads_prod_from_main_only_and_only_the_plan_job_asks_for_it(tmp_path: Path) -> None:
    grant = _grants()["gpu-platform-prod-plan"]
    assert grant["environment"] == "preview-prod-main" and grant["stacks"] == {"prod"}
    assert grant["sub"].endswith(":job_workflow_ref:<OWNER>/<REPO>/.github/workflows/deploy.yml@refs/heads/main")
    assert grant["scopes"] == _grants()["gpu-platform-pr-preview"]["scopes"], "Stack Read, nothing of Stack Write"
    askers = [(p.name, job_id) for p in workflow_files() for job_id, job in jobs(p).items()
              for s in job.get("steps", []) if str(s.get("with", {}).get("scope")) == "team:gpu-platform-prod-plan"]
    assert askers == [("deploy.yml", "preview-prod-main")]
    # A pull request that asks for it is reported, twice over.
    bad = tmp_path / "bad.yml"
    bad.write_text(PR.format(stack="dev", steps=EXCHANGE.format(token=TEAM_TOKEN, team="gpu-platform-prod-plan")),
                   encoding="utf-8")
    found = pr_state_credentials([bad], _grants())
    assert any("team 'gpu-platform-prod-plan' is admitted for" in line for line in found), found
    assert any("team 'gpu-platform-prod-plan' reaches the prod stack" in line for line in found), found


def test_the_prod_stack_file_holds_nothing_only_prods_own_stack_could_decrypt() -> None:
    # preview-prod previews Pulumi.prod.yaml in a backend of its own, with a passphrase that protects nothing:
    # a `secure:` value (encrypted for prod's Pulumi Cloud stack) would fail it, and must not be decryptable there.
    config = yaml.safe_load((REPO / "Pulumi.prod.yaml").read_text(encoding="utf-8"))
    assert "secure" not in json.dumps(config)
    assert "secretsprovider" not in config and "encryptedkey" not in config


def test_the_deploy_jobs_hold_a_token_no_pull_request_job_can_reach() -> None:
    # The deploy jobs' team tokens are issued for the `dev` and `prod` environments' subjects only, which admit
    # `main` (docs/ci-cd.md, "Pulumi tokens"; tests/ci/test_pulumi_tokens.py checks the teams).
    for job_id in ("up-dev", "up-prod"):
        job = jobs(WORKFLOWS / "deploy.yml")[job_id]
        assert "secrets.PULUMI_ACCESS_TOKEN" not in str(job)
        assert f"team:gpu-platform-deploy-{job_id.removeprefix('up-')}" in str(job)
        assert _environments(job) == [job_id.removeprefix("up-")]
    pr_environments = {e for job in jobs(WORKFLOWS / "pull-request.yml").values() for e in _environments(job)}
    assert pr_environments.isdisjoint({"dev", "prod"})


PR = """\
on: pull_request
jobs:
  preview:
    environment: preview-{stack}
    steps:
{steps}
      - uses: pulumi/actions@8e5e406f4007fca908480587cb9893c07090f58d
        with:
          command: preview
          stack-name: {stack}
"""
EXCHANGE = """\
      - uses: pulumi/auth-actions@141415910c3beb54e03b48e9057c204c97b956f2
        with:
          organization: acme
          requested-token-type: {token}
          scope: team:{team}"""
SUB = "repo:o/r:environment:preview-dev:job_workflow_ref:o/r/.github/workflows/bad.yml@refs/pull/*/merge"
GRANTS: dict[str, dict[str, Any]] = {"pr": {"sub": SUB, "environment": "preview-dev", "stacks": {"dev"},
                                            "scopes": {"stack:read", "stack:export", "stack:decrypt"}}}


@pytest.mark.parametrize(("stack", "steps", "grants", "message"), [
    ("dev", "      - run: pulumi preview\n        env:\n          TOKEN: ${{ secrets.PULUMI_ACCESS_TOKEN }}",
     GRANTS, "bad.yml: job preview reads secrets ['PULUMI_ACCESS_TOKEN']"),
    ("dev", EXCHANGE.format(token="urn:pulumi:token-type:access_token:organization", team="pr"), GRANTS,
     "bad.yml: job preview asks for a urn:pulumi:token-type:access_token:organization token, not a team token"),
    ("dev", EXCHANGE.format(token=TEAM_TOKEN, team="deployers"), GRANTS,
     "bad.yml: job preview asks for team 'deployers', which no documented policy admits"),
    ("dev", EXCHANGE.format(token=TEAM_TOKEN, team="pr"),
     {"pr": {**GRANTS["pr"], "scopes": {"stack:read", "stack:import"}}},
     "bad.yml: job preview: team 'pr' may ['stack:import']"),
    ("prod", EXCHANGE.format(token=TEAM_TOKEN, team="pr"), GRANTS,
     "bad.yml: job preview previews prod with a Pulumi Cloud backend"),
    ("dev", EXCHANGE.format(token=TEAM_TOKEN, team="pr"),
     {"pr": {**GRANTS["pr"], "sub": SUB.replace("@refs/pull/*/merge", "@refs/heads/main")}},
     "bad.yml: job preview: team 'pr' is admitted for"),
])
def test_a_pull_request_credential_over_state_is_reported(tmp_path: Path, stack: str, steps: str,
                                                          grants: dict[str, dict[str, Any]], message: str) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(PR.format(stack=stack, steps=steps), encoding="utf-8")
    assert any(line.startswith(message) for line in pr_state_credentials([bad], grants)), \
        pr_state_credentials([bad], grants)
