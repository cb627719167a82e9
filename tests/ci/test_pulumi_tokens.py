"""Pulumi tokens no wider than their job (docs/ci-cd.md, "Pulumi tokens"; issue 54): every job that deploys or reads
a stack's state exchanges its OIDC token for a team token of the team the table names, and reads no stored
PULUMI_ACCESS_TOKEN; a stored token remains only where the table says (policy publishing, e2e)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.shared import REPO

WORKFLOWS = REPO / ".github" / "workflows"
TEAM_TOKEN = "urn:pulumi:token-type:access_token:team"
# job -> the team its token must be of (None: no Pulumi Cloud token at all).
EXPECTED_TEAMS = {
    ("pull-request.yml", "preview-dev"): "gpu-platform-pr-preview",
    ("deploy.yml", "up-dev"): "gpu-platform-deploy-dev",
    ("deploy.yml", "preview-prod-main"): "gpu-platform-prod-plan",
    ("deploy.yml", "up-prod"): "gpu-platform-deploy-prod",
    ("calendar.yml", "deployed-state"): "gpu-platform-analyze-${{ matrix.stack }}",
}
STORED_ALLOWED = {("publish-policy-pack.yml", "publish"), ("e2e.yml", "e2e"), ("e2e.yml", "cleanup")}


def _jobs(name: str) -> dict[str, Any]:
    return dict(yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))["jobs"])


def token_problems(workflows: Path) -> list[str]:
    problems = []
    for path in sorted(workflows.glob("*.yml")):
        for job_id, job in yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"].items():
            text = yaml.safe_dump(job)
            key = (path.name, job_id)
            stored = "secrets.PULUMI_ACCESS_TOKEN" in text
            if stored and key not in STORED_ALLOWED:
                problems.append(f"{path.name}: job {job_id} reads the stored PULUMI_ACCESS_TOKEN")
            auth = [s for s in job.get("steps", []) if "pulumi/auth-actions@" in str(s.get("uses", ""))]
            if key in EXPECTED_TEAMS:
                got = [(s["with"].get("requested-token-type"), s["with"].get("scope")) for s in auth]
                if got != [(TEAM_TOKEN, f"team:{EXPECTED_TEAMS[key]}")]:
                    problems.append(f"{path.name}: job {job_id} must exchange its OIDC token for a team token of "
                                    f"{EXPECTED_TEAMS[key]}, has {got}")
                if job.get("permissions", {}).get("id-token") != "write":
                    problems.append(f"{path.name}: job {job_id} cannot get an OIDC token (permissions id-token)")
            elif auth:
                problems.append(f"{path.name}: job {job_id} asks for a Pulumi token the table does not list")
    return problems


def test_the_workflows_hold_to_the_token_table() -> None:
    assert token_problems(WORKFLOWS) == []


def test_the_table_in_the_docs_names_the_same_teams() -> None:
    text = (REPO / "docs" / "ci-cd.md").read_text(encoding="utf-8")
    section = text[text.index("### Pulumi tokens"):]
    section = section[: section.index("\n### ", 1)]
    teams = set(re.findall(r"\| `(gpu-platform-[\w<>-]+)` \|", section))
    expected = {t.replace("${{ matrix.stack }}", "<stack>") for t in EXPECTED_TEAMS.values()}
    assert teams == expected


@pytest.mark.parametrize(("mutation", "says"), [
    (lambda jobs: jobs["up-dev"]["steps"][3].setdefault("env", {}).update(
        PULUMI_ACCESS_TOKEN="${{ secrets.PULUMI_ACCESS_TOKEN }}"), "reads the stored PULUMI_ACCESS_TOKEN"),
    (lambda jobs: [s["with"].update(scope="team:gpu-platform-deploy-prod") for s in jobs["up-dev"]["steps"]
                   if "auth-actions" in str(s.get("uses", ""))], "team token of gpu-platform-deploy-dev"),
])
def test_a_wider_token_is_found(tmp_path: Path, mutation: Any, says: str) -> None:
    for path in WORKFLOWS.glob("*.yml"):
        (tmp_path / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    data = yaml.safe_load((tmp_path / "deploy.yml").read_text(encoding="utf-8"))
    mutation(data["jobs"])
    (tmp_path / "deploy.yml").write_text(yaml.safe_dump(data), encoding="utf-8")
    assert any(says in p for p in token_problems(tmp_path))
