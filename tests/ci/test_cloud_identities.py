"""Every workflow, whatever its name (issue 47, "Done when"): who holds which identity, and what prod applies.

The checks walk `.github/workflows/*.y*ml` generically, so a workflow added later (an e2e run, a release) is held
to the same rules: AWS only through OIDC and an environment's role, pull requests only with `preview-*` roles and
no Pulumi credential over prod, the job token at most `pull-requests: write`, prod's `up` only of a plan sealed in
the same run for the same commit, the pack published only from a commit on `main` behind reviewers. Each check is
also run on a bad workflow in tmp_path, to show it catches what it names.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.ci.test_access import PULL_REQUEST_EVENTS, _environments
from tests.ci.test_workflows import CI_DOC, WORKFLOWS, jobs, load, workflow_files

# The role comes from the job's environment (vars.AWS_ROLE_ARN in the shipped workflows), never a secret or a literal.
ROLE_FROM_ENVIRONMENT = re.compile(r"\$\{\{ vars\.[A-Za-z0-9_]+ }}")
# The permissions of the job's GITHUB_TOKEN that may be `write`; `id-token: write` asks GitHub for an OIDC token and
# grants the job token nothing (https://docs.github.com/en/actions/reference/security/oidc).
TOKEN_WRITES = {"pull-requests"}
OIDC = "id-token"
PROD_PLAN_TEAM = "team:gpu-platform-prod-plan"


def _events(path: Path) -> set[str]:
    trigger = load(path)[True]
    return set(trigger) if isinstance(trigger, (dict, list)) else {trigger}


def _uses(step: dict[str, Any], action: str) -> bool:
    return str(step.get("uses", "")).startswith(f"{action}@")


def _pulumi(step: dict[str, Any]) -> dict[str, Any]:
    return dict(step.get("with", {})) if _uses(step, "pulumi/actions") and "command" in step.get("with", {}) else {}


def aws_identity_problems(paths: list[Path]) -> list[str]:
    """AWS only through OIDC and an environment's role; a pull request's role only from a `preview-*` environment."""
    found = []
    for path in paths:
        for job_id, job in jobs(path).items():
            where = f"{path.name}: job {job_id}"
            for step in job.get("steps", []):
                given = step.get("with", {}) or {}
                env = step.get("env", {}) or {}
                if {"aws-access-key-id", "aws-secret-access-key"} & set(given) or "AWS_SECRET_ACCESS_KEY" in env:
                    found.append(f"{where}: a standing AWS key; use OIDC (id-token: write and role-to-assume)")
                if not _uses(step, "aws-actions/configure-aws-credentials"):
                    continue
                if not ROLE_FROM_ENVIRONMENT.fullmatch(str(given.get("role-to-assume", ""))) or not job.get(
                        "environment"):
                    found.append(f"{where}: the role must be an environment's variable (${{{{ vars.<NAME> }}}}, "
                                 "as AWS_ROLE_ARN), in a job that names its environment")
                if _events(path) & PULL_REQUEST_EVENTS:
                    for environment in _environments(job):
                        if not environment.startswith("preview-"):
                            found.append(f"{where}: a pull request assumes the role of environment "
                                         f"{environment or '(none)'}; only preview-* environments")
    return found


def pulumi_credential_problems(paths: list[Path]) -> list[str]:
    """No pull-request job holds a Pulumi credential that reaches prod's state."""
    found = []
    for path in paths:
        if not _events(path) & PULL_REQUEST_EVENTS:
            continue
        for job_id, job in jobs(path).items():
            where = f"{path.name}: job {job_id}"
            if "PULUMI_ACCESS_TOKEN" in str(job.get("env", {})):
                found.append(f"{where}: PULUMI_ACCESS_TOKEN in the job's env")
            for step in job.get("steps", []):
                if "PULUMI_ACCESS_TOKEN" in str(step.get("env", {})):
                    found.append(f"{where}: PULUMI_ACCESS_TOKEN in a step's env")
                if _uses(step, "pulumi/auth-actions") and str(step.get("with", {}).get("scope")) == PROD_PLAN_TEAM:
                    found.append(f"{where}: the prod plan team's token ({PROD_PLAN_TEAM})")
                given = _pulumi(step)
                if given.get("stack-name") == "prod" and not str(given.get("cloud-url", "")).startswith("file://"):
                    found.append(f"{where}: previews prod against a Pulumi Cloud backend (prod's state)")
    return found


def token_permission_problems(paths: list[Path]) -> list[str]:
    """The job token is read-only everywhere but `pull-requests: write`; no workflow grants anything by default."""
    found = []
    for path in paths:
        if load(path).get("permissions") != {}:
            found.append(f"{path.name}: top-level permissions must be {{}}")
        for job_id, job in jobs(path).items():
            for scope, level in (job.get("permissions") or {}).items():
                if level == "write" and scope not in TOKEN_WRITES | {OIDC}:
                    found.append(f"{path.name}: job {job_id}: {scope}: write; the job token may write only "
                                 f"{', '.join(sorted(TOKEN_WRITES))} (a GitHub App token for more)")
    return found


def _index(steps: list[dict[str, Any]], predicate: Any) -> int:
    return next((i for i, s in enumerate(steps) if predicate(s)), -1)


def saved_plan_problems(paths: list[Path]) -> list[str]:
    """Prod's `up` applies only the plan sealed by the job it needs, in this run, for this commit, checked first."""
    found = []
    for path in paths:
        all_jobs = jobs(path)
        for job_id, job in all_jobs.items():
            steps = job.get("steps", [])
            ups = [i for i, s in enumerate(steps) if _pulumi(s).get("command") in ("up", "update")
                   and _pulumi(s).get("stack-name") == "prod"]
            runs = " ".join(str(s.get("run", "")) for s in steps)
            where = f"{path.name}: job {job_id}"
            if re.search(r"\bpulumi (up|update)\b.*(-s|--stack)[ =]\"?prod", runs):
                found.append(f"{where}: `pulumi up` on prod outside pulumi/actions' plan input")
            for up in ups:
                plan = str(_pulumi(steps[up]).get("plan", ""))
                download = _index(steps, lambda s: _uses(s, "actions/download-artifact"))
                verify = _index(steps, lambda s: "tools.saved_plan verify" in str(s.get("run", "")))
                if not plan:
                    found.append(f"{where}: prod's up without `plan:` (an update plan of a reviewed preview)")
                    continue
                if download < 0 or {"run-id", "github-token", "repository"} & set(steps[download].get("with", {})):
                    found.append(f"{where}: the plan must be an artifact of this run (download-artifact without "
                                 "run-id, github-token or repository)")
                    continue
                if not download < verify < up:
                    found.append(f"{where}: `tools.saved_plan verify` must run between the download and the up")
                    continue
                source = str(steps[verify].get("env", {}).get("PLAN_SHA256", ""))
                match = re.fullmatch(r"\$\{\{ needs\.([\w-]+)\.outputs\.plan-sha256 }}", source)
                needs = job.get("needs", [])
                needs = [needs] if isinstance(needs, str) else needs
                if match is None or match[1] not in needs:
                    found.append(f"{where}: the plan's sha256 must come from a job it needs "
                                 "(needs.<job>.outputs.plan-sha256)")
                    continue
                sealer = all_jobs[match[1]]
                sealing = sealer.get("steps", [])
                saved = _index(sealing, lambda s: _pulumi(s).get("command") == "preview"
                               and _pulumi(s).get("stack-name") == "prod" and _pulumi(s).get("plan"))
                seal = _index(sealing, lambda s: "tools.saved_plan seal" in str(s.get("run", "")))
                if not 0 <= saved < seal or sealer.get("outputs", {}).get("plan-sha256") != (
                        "${{ steps." + str(sealing[seal].get("id")) + ".outputs.plan-sha256 }}"):
                    found.append(f"{where}: job {match[1]} must save prod's plan, seal it, and output its sha256")
                history = _index(sealing, lambda s: "pulumi stack history" in str(s.get("run", "")))
                if not 0 <= history < saved:
                    found.append(f"{where}: job {match[1]} must read prod's `pulumi stack history` before the preview "
                                 "(the version it seals; an update landing after the read then refuses the plan)")
                upload = _index(sealing, lambda s: _uses(s, "actions/upload-artifact"))
                artifact = str(sealer.get("outputs", {}).get("plan-artifact", ""))
                if (upload < 0 or not artifact or str(sealing[upload].get("with", {}).get("name")) != artifact
                        or steps[download].get("with", {}).get("name")
                        != "${{ needs." + match[1] + ".outputs.plan-artifact }}"):
                    found.append(f"{where}: the plan artifact's name must be job {match[1]}'s output `plan-artifact`, "
                                 "the name it uploaded (one per run attempt)")
                if str(sealer.get("environment", "")) in ("prod", ""):
                    found.append(f"{where}: the plan's preview must run in an environment of its own, not prod's: "
                                 "reviewers approve prod after the plan exists")
    return found


def publication_problems(paths: list[Path]) -> list[str]:
    """`pulumi policy publish` only from a commit on main, behind an environment with required reviewers."""
    found = []
    for path in paths:
        for job_id, job in jobs(path).items():
            steps = job.get("steps", [])
            publish = _index(steps, lambda s: "pulumi policy publish" in str(s.get("run", "")))
            if publish < 0:
                continue
            where = f"{path.name}: job {job_id}"
            environment = str(job.get("environment", ""))
            checkout = _index(steps, lambda s: _uses(s, "actions/checkout"))
            on_main = _index(steps, lambda s: s.get("run") == "bash .ci/on-main")
            guard = f"bash .ci/require-reviewers {environment}"
            reviewers = next((i for i, s in enumerate(steps) if s.get("run") == guard), -1)
            if not environment:
                found.append(f"{where}: publishes outside an environment")
            if checkout < 0 or str(steps[checkout].get("with", {}).get("fetch-depth")) != "0":
                found.append(f"{where}: the checkout must fetch main's history (fetch-depth: 0)")
            if not 0 <= on_main < publish:
                found.append(f"{where}: `bash .ci/on-main` (git merge-base --is-ancestor) must run before publishing")
            if not 0 <= reviewers < publish:
                found.append(f"{where}: `bash .ci/require-reviewers {environment}` must run before publishing")
    return found


CHECKS = (aws_identity_problems, pulumi_credential_problems, token_permission_problems, saved_plan_problems,
          publication_problems)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_the_workflows_hold_to_it(check: Any) -> None:
    assert check(workflow_files()) == []


def test_the_walk_covers_every_workflow_file_and_the_prod_up() -> None:
    assert {p.name for p in workflow_files()} >= {"deploy.yml", "pull-request.yml", "publish-policy-pack.yml",
                                                  "calendar.yml", "offline-gate.yml"}
    assert workflow_files() == sorted([*WORKFLOWS.glob("*.yml"), *WORKFLOWS.glob("*.yaml")])
    prod_ups = [(p.name, j) for p in workflow_files() for j, job in jobs(p).items()
                for s in job.get("steps", []) if _pulumi(s).get("command") == "up" and _pulumi(s).get("stack-name")
                == "prod"]
    assert prod_ups == [("deploy.yml", "up-prod")]


STEPS = {
    "checkout": "      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1\n",
    "aws": ("      - uses: aws-actions/configure-aws-credentials@e6de054238d6b7531b4efff3b6587d9aade6a06c\n"
            "        with:\n          role-to-assume: ${{ vars.AWS_ROLE_ARN }}\n          aws-region: eu-west-1\n"),
    "key": ("      - uses: aws-actions/configure-aws-credentials@e6de054238d6b7531b4efff3b6587d9aade6a06c\n"
            "        with:\n          aws-access-key-id: ${{ secrets.KEY }}\n"
            "          aws-secret-access-key: ${{ secrets.SECRET }}\n"),
    "preview-prod-cloud": ("      - uses: pulumi/actions@8e5e406f4007fca908480587cb9893c07090f58d\n"
                           "        with:\n          command: preview\n          stack-name: prod\n"),
    "token": "      - run: echo\n        env:\n          PULUMI_ACCESS_TOKEN: ${{ secrets.PULUMI_ACCESS_TOKEN }}\n",
    "up-prod": ("      - uses: pulumi/actions@8e5e406f4007fca908480587cb9893c07090f58d\n"
                "        with:\n          command: up\n          stack-name: prod\n"),
    "download-other-run": ("      - uses: actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c\n"
                           "        with:\n          name: prod-plan\n          run-id: 42\n"
                           "          github-token: ${{ github.token }}\n"),
    "publish": "      - run: pulumi policy publish org\n",
}


def _bad(tmp_path: Path, on: str, environment: str, permissions: str, *parts: str) -> list[Path]:
    text = (f"on: {on}\npermissions: {{}}\njobs:\n  job:\n    runs-on: ubuntu-24.04\n"
            + (f"    environment: {environment}\n" if environment else "")
            + f"    permissions: {permissions}\n    steps:\n" + "".join(STEPS[p] for p in parts))
    path = tmp_path / "bad.yml"
    path.write_text(text, encoding="utf-8")
    return [path]


@pytest.mark.parametrize(("check", "on", "environment", "permissions", "parts", "message"), [
    (aws_identity_problems, "pull_request", "prod", "{}", ("aws",),
     "bad.yml: job job: a pull request assumes the role of environment prod; only preview-* environments"),
    (aws_identity_problems, "push", "dev", "{}", ("key",),
     "bad.yml: job job: a standing AWS key; use OIDC (id-token: write and role-to-assume)"),
    (aws_identity_problems, "push", "", "{}", ("aws",),
     "bad.yml: job job: the role must be an environment's variable (${{ vars.<NAME> }}, as AWS_ROLE_ARN), in a job "
     "that names its environment"),
    (pulumi_credential_problems, "pull_request", "preview-prod", "{}", ("preview-prod-cloud",),
     "bad.yml: job job: previews prod against a Pulumi Cloud backend (prod's state)"),
    (pulumi_credential_problems, "pull_request", "preview-dev", "{}", ("token",),
     "bad.yml: job job: PULUMI_ACCESS_TOKEN in a step's env"),
    (token_permission_problems, "workflow_dispatch", "", "{contents: write}", (),
     "bad.yml: job job: contents: write; the job token may write only pull-requests (a GitHub App token for "
     "more)"),
    (saved_plan_problems, "push", "prod", "{}", ("up-prod",),
     "bad.yml: job job: prod's up without `plan:` (an update plan of a reviewed preview)"),
    (publication_problems, "push", "policy-publish", "{}", ("checkout", "publish"),
     "bad.yml: job job: `bash .ci/on-main` (git merge-base --is-ancestor) must run before publishing"),
])
def test_a_bad_workflow_is_reported(tmp_path: Path, check: Any, on: str, environment: str, permissions: str,
                                    parts: tuple[str, ...], message: str) -> None:
    assert message in check(_bad(tmp_path, on, environment, permissions, *parts))


def test_a_plan_from_another_run_is_reported(tmp_path: Path) -> None:
    deploy = (WORKFLOWS / "deploy.yml").read_text(encoding="utf-8")
    plan_step = ("          name: ${{ needs.preview-prod-main.outputs.plan-artifact }}\n"
                 "          path: ${{ runner.temp }}/sealed-plan\n")
    assert plan_step in deploy
    (tmp_path / "deploy.yml").write_text(deploy.replace(plan_step, plan_step + "          run-id: 42\n"
                                                        "          github-token: ${{ github.token }}\n"),
                                         encoding="utf-8")
    assert saved_plan_problems([tmp_path / "deploy.yml"]) == [
        "deploy.yml: job up-prod: the plan must be an artifact of this run (download-artifact without run-id, "
        "github-token or repository)"]


def test_a_history_read_after_the_preview_is_reported(tmp_path: Path) -> None:
    deploy = (WORKFLOWS / "deploy.yml").read_text(encoding="utf-8")
    start = deploy.index("      - name: the last update of prod, before the preview")
    end = deploy.index("      - name: pulumi preview prod with the policy pack, saving the plan")
    seal = deploy.index("      - id: seal\n")
    moved = deploy[:start] + deploy[end:seal] + deploy[start:end] + deploy[seal:]
    (tmp_path / "deploy.yml").write_text(moved, encoding="utf-8")
    assert saved_plan_problems([tmp_path / "deploy.yml"]) == [
        "deploy.yml: job up-prod: job preview-prod-main must read prod's `pulumi stack history` before the preview "
        "(the version it seals; an update landing after the read then refuses the plan)"]


@pytest.mark.parametrize("name", ["prod-plan", "${{ needs.preview-prod-main.outputs.plan-sha256 }}"])
def test_a_plan_artifact_not_named_by_the_preview_jobs_output_is_reported(tmp_path: Path, name: str) -> None:
    deploy = (WORKFLOWS / "deploy.yml").read_text(encoding="utf-8")
    wanted = "          name: ${{ needs.preview-prod-main.outputs.plan-artifact }}\n"
    assert deploy.count(wanted) == 1
    (tmp_path / "deploy.yml").write_text(deploy.replace(wanted, f"          name: {name}\n"), encoding="utf-8")
    assert saved_plan_problems([tmp_path / "deploy.yml"]) == [
        "deploy.yml: job up-prod: the plan artifact's name must be job preview-prod-main's output `plan-artifact`, "
        "the name it uploaded (one per run attempt)"]


def test_a_plan_previewed_in_the_prod_environment_is_reported(tmp_path: Path) -> None:
    deploy = (WORKFLOWS / "deploy.yml").read_text(encoding="utf-8")
    assert deploy.count("    environment: preview-prod-main\n") == 1
    (tmp_path / "deploy.yml").write_text(deploy.replace("    environment: preview-prod-main\n",
                                                        "    environment: prod\n"), encoding="utf-8")
    assert any("not prod's: reviewers approve prod after the plan exists" in p
               for p in saved_plan_problems([tmp_path / "deploy.yml"]))


# --- the bootstrap checklist (docs/ci-cd.md) names what the workflows use, and nothing else ------------------------

CHECKLIST_NAME = re.compile(r"\b(environment|variable|secret)\s+`([A-Za-z0-9_-]+)`")


def checklist_names(text: str) -> set[tuple[str, str]]:
    section = text.split("### Bootstrap checklist\n", 1)[1]
    section = re.split(r"\n##+ ", section, maxsplit=1)[0]
    return {(kind, name) for kind, name in CHECKLIST_NAME.findall(section)}


def workflow_names(paths: list[Path]) -> set[tuple[str, str]]:
    names: set[tuple[str, str]] = set()
    for path in paths:
        text = path.read_text(encoding="utf-8")
        names |= {("variable", v) for v in re.findall(r"\bvars\.([A-Za-z0-9_]+)", text)}
        names |= {("secret", v) for v in re.findall(r"\bsecrets\.([A-Za-z0-9_]+)", text) if v != "GITHUB_TOKEN"}
        names |= {("environment", e) for job in jobs(path).values() for e in _environments(job) if e}
    return names


def test_the_bootstrap_checklist_names_exactly_what_the_workflows_use() -> None:
    listed = checklist_names(CI_DOC.read_text(encoding="utf-8"))
    used = workflow_names(workflow_files())
    assert sorted(used - listed) == [], "used by a workflow, missing from docs/ci-cd.md's bootstrap checklist"
    assert sorted(listed - used) == [], "in the bootstrap checklist, used by no workflow"


ENVIRONMENT_BULLET = re.compile(r"^   - (environment `.*?)(?=^   - |^\d+\. |\Z)", re.M | re.S)


def checklist_environments(text: str) -> tuple[dict[str, set[tuple[str, str]]], set[str]]:
    """Step 7's environments -> the variables and secrets listed with each; the variables named elsewhere (step 6's
    repository variables)."""
    section = text.split("### Bootstrap checklist\n", 1)[1]
    section = re.split(r"\n##+ ", section, maxsplit=1)[0]
    listed: dict[str, set[tuple[str, str]]] = {}
    for bullet in ENVIRONMENT_BULLET.findall(section):
        head, tail = re.split(r"(?<=[`)]):\s", bullet, maxsplit=1)
        for environment in re.findall(r"environment `([^`]+)`", head):
            listed[environment] = {(k, n) for k, n in CHECKLIST_NAME.findall(tail) if k != "environment"}
    outside = ENVIRONMENT_BULLET.sub("", section)
    return listed, {n for k, n in CHECKLIST_NAME.findall(outside) if k == "variable"}


def environment_names(paths: list[Path], repository: set[str]) -> dict[str, set[tuple[str, str]]]:
    """Environment -> the variables (not `repository`'s) and secrets the jobs that run in it read."""
    used: dict[str, set[tuple[str, str]]] = {}
    for path in paths:
        for job in jobs(path).values():
            text = str(job)
            names = {("variable", v) for v in re.findall(r"\bvars\.([A-Za-z0-9_]+)", text) if v not in repository}
            names |= {("secret", v) for v in re.findall(r"\bsecrets\.([A-Za-z0-9_]+)", text) if v != "GITHUB_TOKEN"}
            for environment in filter(None, _environments(job)):
                used.setdefault(environment, set()).update(names)
    return used


def test_each_environment_of_the_checklist_lists_what_its_jobs_read() -> None:
    # Per environment, so that a secret named for one environment is not excused by its use in another.
    listed, repository = checklist_environments(CI_DOC.read_text(encoding="utf-8"))
    used = environment_names(workflow_files(), repository)
    assert {e: sorted(n) for e, n in listed.items() if used.get(e) != n} == {}
    assert {e: sorted(used.get(e, set())) for e, n in listed.items() if used.get(e) != n} == {}


def test_a_secret_listed_under_the_wrong_environment_is_a_difference(tmp_path: Path) -> None:
    (tmp_path / "w.yml").write_text("on: push\npermissions: {}\njobs:\n  j:\n    runs-on: ${{ vars.RUNNER }}\n"
                                    "    environment: a\n    steps:\n      - run: echo ${{ secrets.T }}\n"
                                    "  k:\n    runs-on: x\n    environment: b\n    steps:\n      - run: echo\n",
                                    encoding="utf-8")
    text = ("### Bootstrap checklist\n\n6. the repository's variable `RUNNER`\n7. **Environments**:\n"
            "   - environment `a`: nothing;\n   - environment `b` (branch `main`): secret `T`\n\n## Next\n")
    listed, repository = checklist_environments(text)
    assert listed == {"a": set(), "b": {("secret", "T")}} and repository == {"RUNNER"}
    assert environment_names([tmp_path / "w.yml"], repository) == {"a": {("secret", "T")}, "b": set()}


def test_a_name_missing_from_either_side_is_a_difference(tmp_path: Path) -> None:
    (tmp_path / "w.yml").write_text("on: push\npermissions: {}\njobs:\n  j:\n    runs-on: x\n    environment: "
                                    "staging\n    steps:\n      - run: echo ${{ vars.NEW_VAR }}\n",
                                    encoding="utf-8")
    assert workflow_names([tmp_path / "w.yml"]) == {("environment", "staging"), ("variable", "NEW_VAR")}
    text = "### Bootstrap checklist\n\n1. environment `staging`: secret `OLD`\n\n## Next\nvariable `NOT_HERE`\n"
    assert checklist_names(text) == {("environment", "staging"), ("secret", "OLD")}
