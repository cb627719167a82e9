"""The GitHub workflows validate, are zizmor-clean at every severity, and run what docs/ci-cd.md documents.

Every check runs on the real `.github/workflows/` and on a deliberately bad workflow in tmp_path, so
each one is shown to catch something.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.shared import REPO

WORKFLOWS = REPO / ".github" / "workflows"
CI_DOC = REPO / "docs" / "ci-cd.md"
BIN = Path(sys.executable).parent

# Checked out with fetch (github:<owner>/<name>) and `git rev-parse <tag>^{commit}` on 2026-11-30.
PINNED_ACTIONS = {
    "actions/cache": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
    "actions/checkout": ("3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    # Fetched on 2026-12-05 (github:actions/create-github-app-token, github:actions/download-artifact).
    "actions/create-github-app-token": ("1b10c78c7865c340bc4f6099eb2f838309f1e8c3", "v3.1.1"),
    "actions/download-artifact": ("3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c", "v8.0.1"),
    "actions/setup-python": ("5fda3b95a4ea91299a34e894583c3862153e4b97", "v7.0.0"),
    "actions/upload-artifact": ("bbbca2ddaa5d8feaa63e36b76fdaad77386f024f", "v7.0.0"),
    "aws-actions/configure-aws-credentials": ("e6de054238d6b7531b4efff3b6587d9aade6a06c", "v6.2.3"),
    "pulumi/auth-actions": ("141415910c3beb54e03b48e9057c204c97b956f2", "v2.1.0"),
    "pulumi/actions": ("8e5e406f4007fca908480587cb9893c07090f58d", "v7.0.0"),
}
SEVERITIES_THAT_FAIL = {"informational", "low", "medium", "high"}
OFFLINE_GATE = "$/.github/workflows/offline-gate.yml"  # GitHub's self-repository form (zizmor: self-repository)
DEPLOY_RUNNER = ("${{ vars.DEPLOY_RUNNER && format(vars.DEPLOY_RUNNER, github.run_id, github.run_attempt) "
                 "|| 'ubuntu-24.04' }}")
PREVIEW_RUNNER = DEPLOY_RUNNER.replace("DEPLOY_RUNNER", "PREVIEW_RUNNER")
PREVIEW_JOBS = ("preview-dev", "preview-prod")
USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>\S+)(?:\s+#\s*(?P<comment>\S+))?\s*$")

BAD_WORKFLOW = """\
name: bad
on:
  pull_request_target:
jobs:
  build:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@v4
        with:
          ref: ${{ github.event.pull_request.head.sha }}
      - run: echo "${{ github.event.pull_request.title }}"
      - run: curl -fsSL https://example.com/install.sh | sh
"""


def _tool(name: str) -> str:
    path = BIN / name
    found = str(path) if path.is_file() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; it is pinned in requirements-dev.txt (make venv installs it)")
    return found


def workflow_files(directory: Path = WORKFLOWS) -> list[Path]:
    return sorted([*directory.glob("*.yml"), *directory.glob("*.yaml")])


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path}: not a mapping"
    return data


def jobs(path: Path) -> dict[str, dict[str, Any]]:
    return dict(load(path)["jobs"])


def steps(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for job_id, job in jobs(path).items():
        for step in job.get("steps", []):
            yield job_id, step


def check_schema(paths: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *map(str, paths)],
                          capture_output=True, text=True, check=False)


def zizmor_findings(directory: Path) -> list[dict[str, Any]]:
    """zizmor's findings of any severity under its auditor persona (every audit, pedantic ones included); a file it
    cannot parse fails the test."""
    proc = subprocess.run([_tool("zizmor"), "--offline", "--persona", "auditor", "--strict-collection", "--format",
                           "json", str(directory)],
                          capture_output=True, text=True, check=False, cwd=directory)
    try:
        findings = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"zizmor printed no JSON (exit {proc.returncode}): {proc.stderr[-2000:]}")
    assert isinstance(findings, list)
    return [f for f in findings if f["determinations"]["severity"].lower() in SEVERITIES_THAT_FAIL]


def readme_ci_section() -> str:
    """docs/ci-cd.md, the CI/CD documentation, whole."""
    return CI_DOC.read_text(encoding="utf-8")


def ci_documentation() -> str:
    """docs/ci-cd.md: a command it shows in a code block is documented."""
    return readme_ci_section()


def documented_commands(section: str) -> set[str]:
    """Every line of the section's code blocks, without a trailing `# comment`, whitespace collapsed."""
    commands: set[str] = set()
    for block in re.findall(r"```[a-z]*\n(.*?)```", section, flags=re.S):
        for line in block.splitlines():
            command = re.sub(r"\s+#\s.*$", "", line).strip()
            if command:
                commands.add(" ".join(command.split()))
    return commands


def run_commands(paths: list[Path]) -> Iterator[tuple[Path, str]]:
    for path in paths:
        for _, step in steps(path):
            for line in str(step.get("run", "")).splitlines():
                command = line.strip()
                if command and not command.startswith("#"):
                    yield path, " ".join(command.split())


def pulumi_action_commands(path: Path) -> Iterator[str]:
    """What each pulumi/actions step runs, as the CLI spells it (matrix `include` rows expanded)."""
    for job in jobs(path).values():
        rows = job.get("strategy", {}).get("matrix", {}).get("include", [{}])
        for step in job.get("steps", []):
            if not str(step.get("uses", "")).startswith("pulumi/actions@"):
                continue
            inputs = step.get("with", {})
            if "command" not in inputs:
                continue  # install only
            for row in rows:
                values = {key: _expand_matrix(str(inputs.get(key, "")), row) for key in
                          ("command", "stack-name", "policyPacks", "policyPackConfigs")}
                command = f"pulumi {values['command']} --stack {values['stack-name']}"
                command += "".join(f" --policy-pack {p}" for p in values["policyPacks"].split())
                command += "".join(f" --policy-pack-config {c}" for c in values["policyPackConfigs"].split())
                yield command


def _expand_matrix(raw: str, row: dict[str, Any]) -> str:
    return re.sub(r"\$\{\{\s*matrix\.([\w-]+)\s*\}\}", lambda m: str(row[m.group(1)]), raw)


def undocumented(paths: list[Path], section: str) -> list[str]:
    documented = documented_commands(section)
    missing = [f"{p.name}: {c}" for p, c in run_commands(paths) if c not in documented]
    missing += [f"{p.name}: {c}" for p in paths for c in pulumi_action_commands(p) if c not in documented]
    return missing


@pytest.fixture
def bad_workflows(tmp_path: Path) -> Path:
    directory = tmp_path / ".github" / "workflows"
    directory.mkdir(parents=True)
    (directory / "bad.yml").write_text(BAD_WORKFLOW, encoding="utf-8")
    return directory


def test_the_workflows_the_issue_asks_for_exist() -> None:
    names = {p.name for p in workflow_files()}
    assert {"pull-request.yml", "deploy.yml", "calendar.yml", "publish-policy-pack.yml"} <= names


def test_every_workflow_validates_against_the_github_workflow_schema() -> None:
    proc = check_schema(workflow_files())
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_schema_check_rejects_a_job_without_runs_on_or_uses(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  build:\n    steps:\n      - run: make test\n", encoding="utf-8")
    proc = check_schema([broken])
    assert proc.returncode == 1
    assert "broken.yml" in proc.stdout + proc.stderr


def test_zizmor_finds_nothing_at_any_severity() -> None:
    findings = zizmor_findings(WORKFLOWS)
    assert findings == [], [(f["ident"], f["determinations"]["severity"], f["desc"]) for f in findings]


def test_zizmor_catches_injection_dangerous_trigger_and_unpinned_action(bad_workflows: Path) -> None:
    idents = {f["ident"] for f in zizmor_findings(bad_workflows)}
    assert {"template-injection", "dangerous-triggers", "unpinned-uses"} <= idents


def test_zizmor_run_fails_on_a_workflow_it_cannot_parse(tmp_path: Path) -> None:
    (tmp_path / "unparsable.yml").write_text("on: push\njobs:\n  x:\n    run: a: b: c\n", encoding="utf-8")
    proc = subprocess.run([_tool("zizmor"), "--offline", "--strict-collection", "--format", "json", str(tmp_path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode != 0


def actionlint(paths: list[Path]) -> subprocess.CompletedProcess[str]:
    """actionlint's own checks (expressions, contexts, needs, permissions, action inputs); shellcheck and pyflakes
    off (`-shellcheck= -pyflakes=`), so the result does not depend on what else the machine has installed."""
    return subprocess.run([_tool("actionlint"), "-shellcheck=", "-pyflakes=", "-no-color", *map(str, paths)],
                          capture_output=True, text=True, check=False)


def test_actionlint_finds_nothing() -> None:
    proc = actionlint(workflow_files())
    assert (proc.returncode, proc.stdout + proc.stderr) == (0, "")


def test_actionlint_catches_an_unknown_job_output_and_a_missing_needs(tmp_path: Path) -> None:
    (tmp_path / "bad.yml").write_text(
        "on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo\n"
        "  b:\n    needs: c\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo ${{ needs.a.outputs.x }}\n",
        encoding="utf-8")
    proc = actionlint([tmp_path / "bad.yml"])
    assert proc.returncode == 1
    assert 'job "b" needs job "c" which does not exist' in proc.stdout


def test_third_party_actions_are_pinned_to_the_fetched_release_commit_with_the_tag_beside_it() -> None:
    seen = set()
    for path in workflow_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = USES_LINE.match(line)
            if match is None or match["ref"].startswith(("./", "$/")):
                continue
            action, _, ref = match["ref"].partition("@")
            where = f"{path.name}:{number}"
            assert action in PINNED_ACTIONS, f"{where}: {action} is not in the table of fetched release commits"
            sha, tag = PINNED_ACTIONS[action]
            assert (ref, match["comment"]) == (sha, tag), f"{where}: pin {action} to {sha} # {tag}"
            seen.add(action)
    assert seen == set(PINNED_ACTIONS)


def test_the_pin_check_rejects_a_tag_reference(bad_workflows: Path) -> None:
    line = next(x for x in (bad_workflows / "bad.yml").read_text().splitlines() if "uses:" in x)
    match = USES_LINE.match(line)
    assert match is not None
    _, _, ref = match["ref"].partition("@")
    assert not re.fullmatch(r"[0-9a-f]{40}", ref)


def test_workflows_grant_nothing_by_default_and_every_job_declares_its_permissions() -> None:
    for path in workflow_files():
        assert load(path).get("permissions") == {}, f"{path.name}: set `permissions: {{}}` at the top"
        for job_id, job in jobs(path).items():
            assert "permissions" in job, f"{path.name}: job {job_id} declares no permissions"
            granted = job["permissions"]
            assert isinstance(granted, dict), f"{path.name}: job {job_id}: list each permission"
            assert set(granted.values()) <= {"read", "write", "none"}
            writes = {k for k, v in granted.items() if v == "write"}
            allowed = {"id-token", "pull-requests"}
            if (path.name, job_id) == ("calendar.yml", "matrix-review"):
                allowed.add("contents")  # pushes the branch of the refresh pull request
            assert writes <= allowed, f"{path.name}: job {job_id} writes {writes}"


def test_only_jobs_that_assume_the_aws_role_ask_for_an_oidc_token() -> None:
    for path in workflow_files():
        for job_id, job in jobs(path).items():
            assumes = any(str(s.get("uses", "")).startswith("aws-actions/configure-aws-credentials@")
                          for s in job.get("steps", []))
            # a Pulumi team token is exchanged for the job's OIDC token too (docs/ci-cd.md, "Pulumi tokens")
            exchanges = any(str(s.get("uses", "")).startswith("pulumi/auth-actions@") for s in job.get("steps", []))
            calls = str(job.get("uses", "")).startswith(("./", "$/"))
            if not calls:
                wants = job.get("permissions", {}).get("id-token") == "write"
                assert wants == (assumes or exchanges), f"{path.name}: {job_id}"
            if assumes:
                inputs = next(s["with"] for s in job["steps"] if "configure-aws-credentials" in str(s.get("uses")))
                assert "aws-access-key-id" not in inputs and "aws-secret-access-key" not in inputs
                assert "environment" in job, f"{path.name}: {job_id} assumes a role outside an environment"


def test_no_run_step_interpolates_an_expression_into_the_shell() -> None:
    for path in workflow_files():
        for job_id, step in steps(path):
            assert "${{" not in str(step.get("run", "")), f"{path.name}: {job_id}: pass it through env instead"


def test_every_workflow_command_is_documented_in_the_readme_ci_section() -> None:
    assert undocumented(workflow_files(), ci_documentation()) == []


def test_an_undocumented_command_is_reported(bad_workflows: Path) -> None:
    missing = undocumented(workflow_files(bad_workflows), ci_documentation())
    assert "bad.yml: curl -fsSL https://example.com/install.sh | sh" in missing


def test_the_pulumi_cli_version_is_the_release_of_the_pinned_sdk() -> None:
    pin = re.search(r"^pulumi==(\S+)$", (REPO / "requirements.txt").read_text(), flags=re.M)
    assert pin is not None
    versions = {str(s["with"]["pulumi-version"]) for p in workflow_files() for _, s in steps(p)
                if str(s.get("uses", "")).startswith("pulumi/actions@")}
    assert versions == {pin.group(1)}
    assert f"CLI {pin.group(1)}" in readme_ci_section()


def test_cloud_steps_use_the_policy_pack_and_each_stacks_own_policy_config() -> None:
    commands = [c for p in workflow_files() for c in pulumi_action_commands(p)]
    assert commands, "no pulumi/actions step runs a command"
    for command in commands:
        stack = command.split("--stack ")[1].split()[0]
        assert "--policy-pack policies" in command
        config = REPO / "policies" / "config" / f"{stack}.json"
        assert (f"--policy-pack-config policies/config/{stack}.json" in command) == config.is_file(), command
    assert {c.split()[1] for c in commands} == {"preview", "up"}


def test_pull_requests_gate_offline_then_preview_only_where_secrets_exist() -> None:
    pr = jobs(WORKFLOWS / "pull-request.yml")
    assert pr["offline-gate"]["uses"] == OFFLINE_GATE
    for job_id in PREVIEW_JOBS:
        preview = pr[job_id]
        assert preview["needs"] == "offline-gate"
        assert "github.event.pull_request.head.repo.full_name == github.repository" in preview["if"]
        assert next(s for s in preview["steps"] if "command" in s.get("with", {}))["with"]["comment-on-pr"]
    assert load(WORKFLOWS / "pull-request.yml")[True] == {"pull_request": {"branches": ["main"]}}


def test_deploy_runs_the_gate_then_dev_then_prod_one_deployment_per_stack() -> None:
    deploy = jobs(WORKFLOWS / "deploy.yml")
    assert deploy["offline-gate"]["uses"] == OFFLINE_GATE
    assert deploy["up-dev"]["needs"] == "offline-gate"
    assert deploy["preview-prod-main"]["needs"] == "up-dev"
    assert deploy["up-prod"]["needs"] == "preview-prod-main"
    assert deploy["preview-prod-main"]["environment"] == "preview-prod-main"
    for stack in ("dev", "prod"):
        job = deploy[f"up-{stack}"]
        assert job["environment"] == stack
        assert job["concurrency"] == {"group": f"deploy-{stack}", "cancel-in-progress": False}
    assert load(WORKFLOWS / "deploy.yml")[True] == {"push": {"branches": ["main"]}}


def test_deploy_previews_with_the_pack_before_each_up() -> None:
    # pulumi/actions runs `up` through the Automation API, which passes --skip-preview (pulumi/pulumi
    # v3.206.0 sdk/nodejs/automation/stack.ts line 198, bundled by pulumi/actions v7.0.0): only a preview of its
    # own stops a mandatory stack policy before anything is created.
    # prod: the preview is the saved plan's, in its own job before the approval (tests/ci/test_cloud_identities.py).
    deploy = jobs(WORKFLOWS / "deploy.yml")
    for stack, jobs_of_stack in (("dev", ("up-dev",)), ("prod", ("preview-prod-main", "up-prod"))):
        actions = [s for job_id in jobs_of_stack for s in deploy[job_id]["steps"]
                   if "pulumi/actions" in str(s.get("uses")) and "command" in s.get("with", {})]
        assert [s["with"]["command"] for s in actions] == ["preview", "up"]
        preview, up = (s["with"] for s in actions)
        assert preview["policyPacks"] == up["policyPacks"] == "policies"
        assert preview.get("policyPackConfigs") == up.get("policyPackConfigs")
        assert preview["stack-name"] == up["stack-name"] == stack


def test_the_offline_gate_runs_make_test_and_the_gate_and_keeps_the_artefacts() -> None:
    gate_steps = [s for _, s in steps(WORKFLOWS / "offline-gate.yml")]
    runs = [s.get("run") for s in gate_steps]
    assert runs.index("bash .ci/run") < runs.index("make gate")
    ci_step = next(s for s in gate_steps if s.get("run") == "bash .ci/run")
    assert "if" not in ci_step, "every caller, the calendar's real-date run too, runs make test"
    upload = next(s for s in gate_steps if "upload-artifact" in str(s.get("uses")))
    assert upload["if"] == "${{ always() }}" and upload["with"]["path"] == "out/"
    ci_run = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test$", ci_run, flags=re.M), ".ci/run must run make test (which runs tests/ci)"
    assert ci_run.index("\nmake upstream\n") < ci_run.index("\nmake test"), ".ci/run fills the upstream cache first"


def test_the_upstream_cache_is_restored_by_the_lockfile_before_make_upstream_runs() -> None:
    gate_steps = [s for _, s in steps(WORKFLOWS / "offline-gate.yml")]
    cache = next(i for i, s in enumerate(gate_steps) if str(s.get("uses", "")).startswith("actions/cache@"))
    key = "upstream-${{ hashFiles('upstream.lock.json') }}"
    assert gate_steps[cache]["with"] == {"path": ".upstream-cache", "key": key}
    assert cache < [s.get("run") for s in gate_steps].index("bash .ci/run")
    assert ".upstream-cache" in (REPO / ".gitignore").read_text(encoding="utf-8")


def test_every_workflow_fills_the_upstream_cache_first() -> None:
    """Each workflow's first job is the offline gate (whose .ci/run runs make upstream) or runs make upstream."""
    for path in workflow_files():
        if path.name == "offline-gate.yml":
            continue
        first = next(iter(jobs(path).values()))
        runs = [str(s.get("run", "")) for s in first.get("steps", [])]
        assert first.get("uses") == OFFLINE_GATE or any("upstream" in r.split() for r in runs), path.name


def test_pip_caches_outside_the_tag_triggered_publication() -> None:
    for path in workflow_files():
        for job_id, step in steps(path):
            if not str(step.get("uses", "")).startswith("actions/setup-python@"):
                continue
            cached = step["with"].get("cache") == "pip"
            publishes = path.name == "publish-policy-pack.yml" or (path.name, job_id) == (
                "calendar.yml", "matrix-review")
            assert cached != publishes, f"{path.name}: {job_id}"
            if cached:
                assert "requirements.txt" in step["with"]["cache-dependency-path"].split()


def _cloud_jobs() -> list[tuple[str, dict[str, Any]]]:
    """The deploy and preview jobs; e2e.yml's jobs (their own account, runner and installs) are checked by
    tests/e2e/test_workflow.py."""
    return [(f"{p.name}:{job_id}", job) for p in workflow_files() if p.name != "e2e.yml"
            for job_id, job in jobs(p).items()
            if any("configure-aws-credentials" in str(s.get("uses")) for s in job.get("steps", []))]


def test_cloud_jobs_run_on_their_runner_setting_and_install_only_the_runtime() -> None:
    assert len(_cloud_jobs()) >= 5
    for where, job in _cloud_jobs():
        assert job["runs-on"] == (PREVIEW_RUNNER if where.startswith("pull-request.yml:") else DEPLOY_RUNNER), where
        runs = [str(s.get("run", "")) for s in job["steps"]]
        assert "make program-venv pack-venv" in runs, where
        assert not any("make venv" in r for r in runs), f"{where}: the development tools are not needed there"


def test_the_pinned_cli_is_installed_before_the_pack_venv() -> None:
    for path in workflow_files():
        for job_id, job in jobs(path).items():
            names = [("cli" if str(s.get("uses", "")).startswith("pulumi/actions@") else str(s.get("run", "")))
                     for s in job.get("steps", [])]
            pack = next((i for i, n in enumerate(names) if "pack-venv" in n), None)
            if pack is not None:
                assert "cli" in names[:pack], f"{path.name}: {job_id} installs the pack before the pinned CLI"


def test_prod_deploys_only_when_its_environment_has_a_required_reviewer() -> None:
    prod = jobs(WORKFLOWS / "deploy.yml")["up-prod"]
    runs = [str(s.get("run", "")) for s in prod["steps"]]
    check = runs.index("bash .ci/require-reviewers prod")
    checkout = next(i for i, s in enumerate(prod["steps"]) if _is_checkout(s))
    first_command = next(i for i, s in enumerate(prod["steps"]) if "command" in s.get("with", {}))
    assert checkout < check < first_command, "after the checkout (the script is a repository file), before any pulumi"
    assert prod["permissions"]["actions"] == "read"
    script = (REPO / ".ci" / "require-reviewers").read_text(encoding="utf-8")
    assert "environment_rules.py" in script  # the checks: tests/ci/test_environment_rules.py
    rules = (REPO / ".ci" / "environment_rules.py").read_text(encoding="utf-8")
    assert '"required_reviewers"' in rules and "return 1" in rules


def test_a_failed_cloud_preview_comments_its_mandatory_violations() -> None:
    for job_id in PREVIEW_JOBS:
        preview = jobs(WORKFLOWS / "pull-request.yml")[job_id]
        step = next(s for s in preview["steps"] if "tools.ci_comment" in str(s.get("run")))
        assert step["if"] == "${{ failure() && steps.preview.outcome == 'failure' }}"
        assert next(s for s in preview["steps"] if s.get("id") == "preview")["with"]["command"] == "preview"
        assert "gh pr comment" in step["run"]


def test_the_calendar_runs_weekly_at_the_real_date_and_lists_stale_matrix_rows() -> None:
    calendar = load(WORKFLOWS / "calendar.yml")
    assert set(calendar[True]) == {"schedule", "workflow_dispatch"}
    assert calendar["jobs"]["offline-gate-at-real-date"]["with"] == {"real-date": True}
    real_date_steps = [s for _, s in steps(WORKFLOWS / "offline-gate.yml") if s.get("if") == "${{ inputs.real-date }}"]
    assert "make gate TODAY=" in [s.get("run") for s in real_date_steps]
    ahead = [s for _, s in steps(WORKFLOWS / "offline-gate.yml") if "+28 days" in str(s.get("run"))]
    assert [s["if"] for s in ahead] == ["${{ inputs.real-date && !cancelled() }}"]
    runs = [c for _, c in run_commands([WORKFLOWS / "calendar.yml"])]
    assert ".venv/bin/python -m tools.matrix stale --days 180" in runs
    assert ".venv/bin/python -m tools.matrix refresh --fetch --write" in runs
    refresh = runs.index(".venv/bin/python -m tools.matrix refresh --fetch --write")
    assert refresh < runs.index("bash .ci/open-refresh-pr")
    # The price table's Karpenter batch is re-read in the same job, before the pull request (docs/cost.md).
    assert refresh < runs.index(".venv/bin/python -m tools.cost refresh") < runs.index("bash .ci/open-refresh-pr")
    assert "policies/gpu_guard/pricing/prices.yaml" in (REPO / ".ci" / "open-refresh-pr").read_text(encoding="utf-8")


def test_publishing_is_guarded_by_a_tag_and_an_environment_secret() -> None:
    publish = load(WORKFLOWS / "publish-policy-pack.yml")
    assert publish[True] == {"push": {"tags": ["policy-pack-v*"]}}
    job = publish["jobs"]["publish"]
    assert job["environment"] == "policy-publish"
    step = next(s for s in job["steps"] if "pulumi policy publish" in str(s.get("run")))
    assert step["env"]["PULUMI_ACCESS_TOKEN"] == "${{ secrets.PULUMI_ACCESS_TOKEN }}"
    assert step["working-directory"] == "policies"


def test_the_calendar_matrix_commands_are_ones_tools_matrix_accepts() -> None:
    runs = [c for _, c in run_commands([WORKFLOWS / "calendar.yml"]) if "-m tools.matrix" in c]
    assert runs
    for command in runs:
        argv = shlex.split(command)
        assert argv[0] == ".venv/bin/python"
        args = argv[3:]
        if args[0] == "stale":  # offline and cheap: run it, at a pinned date
            proc = subprocess.run([sys.executable, "-m", "tools.matrix", *args, "--today", "2026-11-30"], cwd=REPO,
                                  capture_output=True, text=True, check=False)
            assert proc.returncode == 0, proc.stderr
            assert "180 days" in proc.stdout
        else:  # --fetch reads the live sources: check that the options exist
            proc = subprocess.run([sys.executable, "-m", "tools.matrix", args[0], "--help"], cwd=REPO,
                                  capture_output=True, text=True, check=False)
            assert proc.returncode == 0, proc.stderr
            assert all(option in proc.stdout for option in args[1:]), proc.stdout


# --- every job starts in an empty workspace ---------------------------------------------------------------------

def _is_checkout(step: dict[str, Any]) -> bool:
    return str(step.get("uses", "")).startswith("actions/checkout@")


def runs_before_checkout(paths: list[Path]) -> list[str]:
    """Steps that would run something of the repository before the job's checkout put it there.

    A job starts in an empty workspace (or, on a persistent self-hosted runner, in what an earlier run left):
    until `actions/checkout`, a `run:` step or a local action (`uses: ./...`) finds no file of this commit.
    A remote action (`uses: owner/repo@sha`) brings its own code and may come first.
    """
    found = []
    for path in paths:
        for job_id, job in jobs(path).items():
            for number, step in enumerate(job.get("steps", []), start=1):
                if _is_checkout(step):
                    break
                if "run" in step or str(step.get("uses", "")).startswith("./"):
                    what = step.get("name") or step.get("run") or step.get("uses")
                    found.append(f"{path.name}: job {job_id}, step {number} ({what}) runs before actions/checkout")
    return found


def test_no_job_runs_a_repository_file_before_its_checkout() -> None:
    assert runs_before_checkout(workflow_files()) == []
    for path in workflow_files():
        for job_id, job in jobs(path).items():
            if "steps" in job:  # a job that calls a reusable workflow has none; the callee is checked itself
                assert any(_is_checkout(s) for s in job["steps"]), f"{path.name}: job {job_id} has no checkout"


def test_a_step_before_the_checkout_is_reported(tmp_path: Path) -> None:
    (tmp_path / "early.yml").write_text("""\
on: push
jobs:
  deploy:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97
      - name: guard
        run: bash .ci/require-reviewers prod
      - uses: ./.github/actions/local
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1
      - run: make test
""", encoding="utf-8")
    assert runs_before_checkout([tmp_path / "early.yml"]) == [
        "early.yml: job deploy, step 2 (guard) runs before actions/checkout",
        "early.yml: job deploy, step 3 (./.github/actions/local) runs before actions/checkout",
    ]
