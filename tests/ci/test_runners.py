"""No pull-request job can land on a runner that a deploy job uses.

A `pull_request` run executes the pull request's own workflow file and code, unreviewed. On a self-hosted
runner (or a CodeBuild project) that a deploy job also uses, that code can read the host's own role and leave
files the reviewed deploy picks up later: plugins, caches, tool caches ("Security hardening for self-hosted
runners": https://docs.github.com/en/actions/security-for-github-actions/security-guides/security-hardening-for-github-actions#hardening-for-self-hosted-runners).
So each job's `runs-on` is resolved to every value it can take (each `||` fallback, the value of each `&&`,
`format(vars.X, ...)` as `vars.X`, matrix rows expanded), and a pull-request job (its workflow, or the workflow
that calls its reusable one, runs on `pull_request`/`pull_request_target`) may share none with a deploy job (one
that assumes an AWS role or reads a secret, in any other workflow). GitHub-hosted image labels are exempt: each
job gets a fresh virtual machine that is discarded after it
(https://docs.github.com/en/actions/concepts/runners/github-hosted-runners).
"""

from __future__ import annotations

import itertools
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.ci.test_access import PULL_REQUEST_EVENTS
from tests.ci.test_workflows import WORKFLOWS, jobs, load, workflow_files
from tests.shared import REPO

# GitHub-hosted standard runner labels: https://docs.github.com/en/actions/reference/runners/github-hosted-runners
GITHUB_HOSTED = re.compile(r"^(ubuntu|windows|macos)-(latest|\d+(\.\d+)?)(-arm)?$")
EXPRESSION = re.compile(r"^\$\{\{(.*)\}\}$", re.S)


def _split_top(text: str, operator: str) -> list[str]:
    """`text` split on `operator` outside parentheses and quotes."""
    parts, depth, quoted, start, i = [], 0, False, 0, 0
    while i < len(text):
        char = text[i]
        if char == "'":
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
        elif not quoted and char == ")":
            depth -= 1
        elif not quoted and depth == 0 and text.startswith(operator, i):
            parts.append(text[start:i])
            start = i + len(operator)
            i = start
            continue
        i += 1
    return [*parts, text[start:]]


def _operand(text: str, row: dict[str, Any]) -> set[str]:
    text = text.strip()
    literal = re.fullmatch(r"'((?:[^']|'')*)'", text)
    if literal:
        return {literal.group(1).replace("''", "'")}
    matrix = re.fullmatch(r"matrix\.([\w-]+)", text)
    if matrix and matrix.group(1) in row:
        return {str(row[matrix.group(1)])}
    variable = re.fullmatch(r"vars\.(\w+)", text) or re.fullmatch(r"format\(\s*vars\.(\w+)\s*,.*\)", text, re.S)
    if variable:
        return {f"vars.{variable.group(1)}"}
    return {f"unresolved: {text}"}


def runner_values(runs_on: Any, row: dict[str, Any] | None = None) -> set[str]:
    """Every value `runs-on` can resolve to, for one matrix row."""
    row = row or {}
    if isinstance(runs_on, list):
        return set().union(*(runner_values(item, row) for item in runs_on))
    if isinstance(runs_on, dict):
        return runner_values(runs_on.get("labels") or runs_on.get("group") or "", row)
    expression = EXPRESSION.match(str(runs_on).strip())
    if not expression:
        return {str(runs_on)}
    found: set[str] = set()
    for alternative in _split_top(expression.group(1), "||"):
        found |= _operand(_split_top(alternative, "&&")[-1], row)  # `a && b` is b when it is chosen
    return found


def _rows(job: dict[str, Any]) -> list[dict[str, Any]]:
    matrix = job.get("strategy", {}).get("matrix", {})
    axes = {k: v for k, v in matrix.items() if k not in ("include", "exclude") and isinstance(v, list)}
    rows = [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())] if axes else []
    return rows + list(matrix.get("include", [])) or [{}]


def _events(path: Path) -> set[str]:
    trigger = load(path)[True]
    return set(trigger) if isinstance(trigger, (dict, list)) else {str(trigger)}


def _deploys(job: dict[str, Any]) -> bool:
    steps = job.get("steps", [])
    return any("configure-aws-credentials" in str(s.get("uses")) for s in steps) or "secrets." in str(job)


def _job_runners(path: Path, directory: Path, seen: frozenset[Path] = frozenset()) -> list[tuple[str, dict[str, Any],
                                                                                                  set[str]]]:
    """(job id, job, runner values) of a workflow, reusable workflows it calls (`$/` or `./`) included."""
    found = []
    for job_id, job in jobs(path).items():
        called = re.fullmatch(r"[$.]/\.github/workflows/(.+)", str(job.get("uses", "")))
        if called and (directory / called.group(1)) not in seen:
            inner = directory / called.group(1)
            found += [(f"{job_id}/{i}", j, v) for i, j, v in _job_runners(inner, directory, seen | {path})]
            continue
        values = set().union(*(runner_values(job.get("runs-on", ""), row) for row in _rows(job)))
        found.append((job_id, job, values))
    return found


def shared_runners(paths: list[Path]) -> list[str]:
    """Each runner value that a pull-request job and a deploy job can both resolve to (GitHub-hosted exempt)."""
    directory = paths[0].parent if paths else WORKFLOWS
    pull_requests, deploys = [], []
    for path in paths:
        pr = bool(_events(path) & PULL_REQUEST_EVENTS)
        for job_id, job, values in _job_runners(path, directory):
            if pr:
                pull_requests.append((f"{path.name}: {job_id}", values))
            elif _deploys(job):
                deploys.append((f"{path.name}: {job_id}", values))
    found = []
    for (pr_job, pr_values), (deploy_job, deploy_values) in itertools.product(pull_requests, deploys):
        unresolved = sorted(v for v in pr_values | deploy_values if v.startswith("unresolved: "))
        found += [f"{pr_job} / {deploy_job}: cannot tell the runner apart ({v})" for v in unresolved]
        for value in sorted((pr_values & deploy_values) - set(unresolved)):
            if not GITHUB_HOSTED.match(value):
                found.append(f"{pr_job} and {deploy_job} can both run on {value}")
    return sorted(set(found))


def test_no_pull_request_job_shares_a_runner_with_a_deploy_job() -> None:
    assert shared_runners(workflow_files()) == []
    preview = jobs(WORKFLOWS / "pull-request.yml")["preview-prod"]
    assert runner_values(preview["runs-on"]) == {"vars.PREVIEW_RUNNER", "ubuntu-24.04"}
    assert runner_values(jobs(WORKFLOWS / "deploy.yml")["up-prod"]["runs-on"]) == {"vars.DEPLOY_RUNNER",
                                                                                 "ubuntu-24.04"}


PR = """\
on: pull_request
jobs:
  preview:
    runs-on: {runs_on}
    environment: preview-prod
    steps:
      - run: echo
"""
DEPLOY = """\
on: push
jobs:
  up:
    runs-on: ${{ vars.DEPLOY_RUNNER && format(vars.DEPLOY_RUNNER, github.run_id) || 'ubuntu-24.04' }}
    environment: prod
    steps:
      - uses: aws-actions/configure-aws-credentials@e6de054238d6b7531b4efff3b6587d9aade6a06c
"""


@pytest.mark.parametrize(("runs_on", "message"), [
    ("${{ vars.DEPLOY_RUNNER && format(vars.DEPLOY_RUNNER, github.run_id) || 'ubuntu-24.04' }}",
     "pr.yml: preview and deploy.yml: up can both run on vars.DEPLOY_RUNNER"),
    ("${{ vars.PREVIEW_RUNNER || vars.DEPLOY_RUNNER }}",
     "pr.yml: preview and deploy.yml: up can both run on vars.DEPLOY_RUNNER"),
    ("${{ matrix.runner }}\n    strategy:\n      matrix:\n        runner: [ubuntu-24.04, vars.DEPLOY_RUNNER]",
     "pr.yml: preview and deploy.yml: up can both run on vars.DEPLOY_RUNNER"),
    ("${{ fromJSON(vars.RUNNERS)[0] }}",
     "pr.yml: preview / deploy.yml: up: cannot tell the runner apart (unresolved: fromJSON(vars.RUNNERS)[0])"),
])
def test_a_pull_request_job_that_can_reach_the_deploy_runner_is_reported(tmp_path: Path, runs_on: str,
                                                                         message: str) -> None:
    (tmp_path / "pr.yml").write_text(PR.format(runs_on=runs_on), encoding="utf-8")
    (tmp_path / "deploy.yml").write_text(DEPLOY, encoding="utf-8")
    assert message in shared_runners(sorted(tmp_path.glob("*.yml")))
    # Its own variable, GitHub-hosted fallback: nothing shared.
    (tmp_path / "pr.yml").write_text(PR.format(runs_on="${{ vars.PREVIEW_RUNNER || 'ubuntu-24.04' }}"),
                                     encoding="utf-8")
    assert shared_runners(sorted(tmp_path.glob("*.yml"))) == []


def test_a_self_hosted_label_on_both_sides_is_reported(tmp_path: Path) -> None:
    (tmp_path / "pr.yml").write_text(PR.format(runs_on="[self-hosted, vpc]"), encoding="utf-8")
    (tmp_path / "deploy.yml").write_text(DEPLOY.replace("${{ vars.DEPLOY_RUNNER && format(vars.DEPLOY_RUNNER, "
                                                        "github.run_id) || 'ubuntu-24.04' }}", "[self-hosted, vpc]"),
                                         encoding="utf-8")
    assert shared_runners(sorted(tmp_path.glob("*.yml"))) == [
        "pr.yml: preview and deploy.yml: up can both run on self-hosted",
        "pr.yml: preview and deploy.yml: up can both run on vpc"]


def test_a_repository_that_gives_both_variables_one_value_is_refused_by_the_preview_job(tmp_path: Path) -> None:
    script = REPO / ".ci" / "separate-runners"

    def run(**env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", str(script)], env={"PATH": "/usr/bin:/bin", **env}, capture_output=True,
                              text=True, check=False)

    same = run(PREVIEW_RUNNER="codebuild-deploy-{0}-{1}", DEPLOY_RUNNER="codebuild-deploy-{0}-{1}")
    assert same.returncode == 1
    assert same.stderr.startswith("::error::PREVIEW_RUNNER and DEPLOY_RUNNER are both 'codebuild-deploy-{0}-{1}'")
    assert run(PREVIEW_RUNNER="codebuild-preview-{0}-{1}", DEPLOY_RUNNER="codebuild-deploy-{0}-{1}").returncode == 0
    assert run().returncode == 0
    steps = jobs(WORKFLOWS / "pull-request.yml")["preview-dev"]["steps"]
    step = next(s for s in steps if s.get("run") == "bash .ci/separate-runners")
    assert step["env"] == {"PREVIEW_RUNNER": "${{ vars.PREVIEW_RUNNER }}", "DEPLOY_RUNNER": "${{ vars.DEPLOY_RUNNER }}"}
