"""No identity a pull request can act as may write to prod; the identities that can are behind the review guard.

Two halves, each shown to catch its defect on a bad input:
- the cluster: `components.cluster.ACCESS_POLICY_BY_KEY` gives the pull-request preview roles
  (`cluster.previewPrincipalArns`) a view-only access entry in every stack, prod included;
- the workflows: a job whose AWS role can write (any environment but `preview-*`) never runs for a pull
  request, and a prod job checks out, then runs `.ci/require-reviewers prod` before any pulumi command.
docs/ci-cd.md's table "Who can write where" names the same access policy for each principal list.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from components import cluster, iam
from components.config import ClusterConfig
from tests.ci.test_workflows import CI_DOC, WORKFLOWS, _expand_matrix, jobs, load, workflow_files
from tests.shared import REPO

# AmazonEKSViewPolicy: get, list and watch only
# (https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html).
READ_ONLY_POLICIES = {iam.VIEW_POLICY}
PREVIEW_ROLE = "arn:aws:iam::123456789012:role/gpu-platform-preview-prod"
DEPLOY_ROLE = "arn:aws:iam::123456789012:role/gpu-platform-deploy-prod"
PULL_REQUEST_EVENTS = {"pull_request", "pull_request_target"}


def _cluster(stack: str, **extra: Any) -> ClusterConfig:
    raw = yaml.safe_load((REPO / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8"))["config"]
    return ClusterConfig.model_validate({**raw["gpu-platform:cluster"], **extra})


def previewers_who_can_write(config: ClusterConfig) -> list[str]:
    """Each preview principal whose access entry gets a policy other than a read-only one."""
    previewers = set(config.preview_principal_arns)
    return [f"{grant.principal_arn}: {grant.policy}" for grant in cluster.access_grants(config)
            if grant.principal_arn in previewers and grant.policy not in READ_ONLY_POLICIES]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_no_preview_principal_can_write_to_the_shipped_stacks(stack: str) -> None:
    # The shipped stack files carry the CI roles of the shipped workflows (tests/ci/test_pull_request_path.py).
    config = _cluster(stack)
    (preview,), (deploy,) = config.preview_principal_arns, config.deployer_principal_arns
    assert previewers_who_can_write(config) == []
    grants = {g.principal_arn: g.policy for g in cluster.access_grants(config)}
    assert grants[preview] == iam.VIEW_POLICY
    assert grants[deploy] == iam.CLUSTER_ADMIN_POLICY  # the deploy role writes, behind the review guard


def test_a_preview_principal_with_cluster_admin_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(cluster.ACCESS_POLICY_BY_KEY, "previewPrincipalArns", iam.CLUSTER_ADMIN_POLICY)
    config = _cluster("prod", previewPrincipalArns=[PREVIEW_ROLE])
    assert previewers_who_can_write(config) == [f"{PREVIEW_ROLE}: {iam.CLUSTER_ADMIN_POLICY}"]


def test_every_principal_list_has_an_access_policy() -> None:
    keys = {str(path[0]) for path, _ in _cluster("prod", previewPrincipalArns=[PREVIEW_ROLE],
                                                 deployerPrincipalArns=[DEPLOY_ROLE],
                                                 adminPrincipalArns=["arn:aws:iam::123456789012:role/a"]).principals()}
    assert keys == set(cluster.ACCESS_POLICY_BY_KEY)


# --- the workflows: who can reach an identity that writes ----------------------------------------------------

def _environments(job: dict[str, Any]) -> list[str]:
    """The job's environment names, matrix rows expanded (`preview-${{ matrix.stack }}`)."""
    raw = job.get("environment")
    name = str(raw.get("name") if isinstance(raw, dict) else raw or "")
    matrix = job.get("strategy", {}).get("matrix", {})
    axes = {k: v for k, v in matrix.items() if k not in ("include", "exclude") and isinstance(v, list)}
    rows = [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())] if axes else []
    rows += matrix.get("include", [])
    return sorted({_expand_matrix(name, row) for row in rows or [{}]})


def _index(steps: list[dict[str, Any]], predicate: Any) -> int | None:
    return next((i for i, s in enumerate(steps) if predicate(s)), None)


PREVIEW_COMMANDS = {"preview", "login", "stack history", "stack export"}


def unguarded_writers(paths: list[Path]) -> list[str]:
    """Jobs in which an identity that can write a stack runs without the review guard.

    A job assumes the role its environment names. `preview-*` roles are the view-only preview principals: such
    a job may run `pulumi preview` only. Every other environment's role (`dev`, `prod`) is a deployer with
    cluster-admin: its job must not run for a pull request (whose workflow file the pull request itself
    writes), and for prod it must run `.ci/require-reviewers prod` after its checkout and before any pulumi
    command (GitHub holds the job for the environment's required reviewers; the script refuses an
    environment that has none).
    """
    found = []
    for path in paths:
        trigger = load(path)[True]
        events = set(trigger) if isinstance(trigger, (dict, list)) else {trigger}
        for job_id, job in jobs(path).items():
            steps = job.get("steps", [])
            if not any("configure-aws-credentials" in str(s.get("uses")) for s in steps):
                continue
            commands = [s["with"]["command"] for s in steps if "command" in s.get("with", {})]
            commands += [m for s in steps for m in re.findall(r"\bpulumi (stack \w+|\w+)", str(s.get("run", "")))]
            for environment in _environments(job):
                where = f"{path.name}: job {job_id} ({environment or 'no environment'})"
                if environment.startswith("preview-"):
                    # `login`: preview-prod's backend of its own (tests/ci/test_state_credentials.py: never a token).
                    # `stack history`, `stack export`: the saved plan's job reads the stack's last update and the old
                    # values of what the plan changes (tools/saved_plan.py, tools/plan_values.py); both only read.
                    if set(commands) - PREVIEW_COMMANDS:
                        found.append(f"{where}: a preview role runs {sorted(set(commands) - PREVIEW_COMMANDS)}")
                    continue
                if events & PULL_REQUEST_EVENTS:
                    found.append(f"{where}: an identity that can write runs for a pull request")
                if environment != "prod":
                    continue
                checkout = _index(steps, lambda s: str(s.get("uses", "")).startswith("actions/checkout@"))
                guard = _index(steps, lambda s: s.get("run") == "bash .ci/require-reviewers prod")
                first = _index(steps, lambda s: "command" in s.get("with", {}) or "pulumi " in str(s.get("run", "")))
                if guard is None or checkout is None or not checkout < guard < (first if first is not None else 1e9):
                    found.append(f"{where}: no `bash .ci/require-reviewers prod` between the checkout and the "
                                 "first pulumi command")
    return found


def test_no_identity_that_can_write_prod_runs_without_the_review_guard() -> None:
    assert unguarded_writers(workflow_files()) == []
    cloud = {(p.name, job_id): _environments(job) for p in workflow_files() for job_id, job in jobs(p).items()
             if "environment" in job}
    assert cloud[("pull-request.yml", "preview-dev")] == ["preview-dev"]
    assert cloud[("pull-request.yml", "preview-prod")] == ["preview-prod"]
    assert cloud[("deploy.yml", "up-prod")] == ["prod"]
    assert cloud[("deploy.yml", "preview-prod-main")] == ["preview-prod-main"]


BAD = """\
on: {event}
jobs:
  cloud:
    runs-on: ubuntu-24.04
    environment: {environment}
    steps:
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1
      - uses: aws-actions/configure-aws-credentials@e6de054238d6b7531b4efff3b6587d9aade6a06c
      - uses: pulumi/actions@8e5e406f4007fca908480587cb9893c07090f58d
        with:
          command: {command}
          stack-name: prod
"""


@pytest.mark.parametrize(("event", "environment", "command", "message"), [
    ("pull_request", "prod", "preview",
     "bad.yml: job cloud (prod): an identity that can write runs for a pull request"),
    ("push", "prod", "up", "bad.yml: job cloud (prod): no `bash .ci/require-reviewers prod` between the checkout "
                           "and the first pulumi command"),
    ("pull_request", "preview-prod", "up", "bad.yml: job cloud (preview-prod): a preview role runs ['up']"),
])
def test_a_writer_without_the_guard_is_reported(tmp_path: Path, event: str, environment: str, command: str,
                                                message: str) -> None:
    (tmp_path / "bad.yml").write_text(BAD.format(event=event, environment=environment, command=command),
                                      encoding="utf-8")
    assert message in unguarded_writers([tmp_path / "bad.yml"])


SECRET = re.compile(r"\bsecrets\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)|\bsecrets\s*\[")


def secrets_outside_environments(paths: list[Path]) -> list[str]:
    """Jobs that read a secret (other than GITHUB_TOKEN) without naming an environment.

    A job without `environment:` can reach repository (and organisation) secrets only, and those any workflow run
    of the repository reads: a push of any branch, a `workflow_dispatch` from any branch, with no deployment
    branch rule and no reviewer in between. An environment's secrets reach only jobs that name it, once its
    protection rules (deployment branches, reviewers) pass. The workflow's own `env:` and a reusable workflow's
    `secrets: inherit` count as the job's.
    Source: https://docs.github.com/en/actions/security-for-github-actions/security-guides/using-secrets-in-github-actions
    Source: https://docs.github.com/en/actions/managing-workflow-runs-and-deployments/managing-deployments/managing-environments-for-deployment#environment-secrets
    """
    found = []
    for path in paths:
        workflow_env = yaml.safe_dump(load(path).get("env") or {})
        for job_id, job in jobs(path).items():
            text = workflow_env + yaml.safe_dump(job)
            names = {m.group(1) or "[...]" for m in SECRET.finditer(text)} - {"GITHUB_TOKEN"}
            if job.get("secrets") == "inherit":
                names.add("inherit")
            if names and not job.get("environment"):
                found.append(f"{path.name}: job {job_id} reads secrets {sorted(names)} without an environment")
    return found


def test_every_job_that_reads_a_secret_names_an_environment() -> None:
    assert secrets_outside_environments(workflow_files()) == []
    calendar = jobs(WORKFLOWS / "calendar.yml")["deployed-state"]
    assert _environments(calendar) == ["analyze-dev", "analyze-prod"]


@pytest.mark.parametrize(("job", "message"), [
    ("env:\n      TOKEN: ${{ secrets.PULUMI_ACCESS_TOKEN }}",
     "bad.yml: job read reads secrets ['PULUMI_ACCESS_TOKEN'] without an environment"),
    ("uses: ./.github/workflows/x.yml\n    secrets: inherit",
     "bad.yml: job read reads secrets ['inherit'] without an environment"),
    ("env:\n      TOKEN: ${{ secrets['NPM_TOKEN'] }}",
     "bad.yml: job read reads secrets ['[...]'] without an environment"),
])
def test_a_secret_outside_an_environment_is_reported(tmp_path: Path, job: str, message: str) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(f"on: push\njobs:\n  read:\n    runs-on: ubuntu-24.04\n    {job}\n", encoding="utf-8")
    assert secrets_outside_environments([bad]) == [message]
    guarded = tmp_path / "guarded.yml"
    guarded.write_text(f"on: push\njobs:\n  read:\n    environment: analyze\n    {job}\n", encoding="utf-8")
    assert secrets_outside_environments([guarded]) == []
    token = tmp_path / "token.yml"
    token.write_text("on: push\njobs:\n  read:\n    env:\n      T: ${{ secrets.GITHUB_TOKEN }}\n", encoding="utf-8")
    assert secrets_outside_environments([token]) == []


# --- docs/ci-cd.md says the same ----------------------------------------------------------------------------------

def documented_policies(text: str) -> dict[str, str]:
    """`cluster.<key>` -> the access policy its row of the table "Who can write where" names."""
    section = text[text.index("## Who can write where"):]
    section = section[: section.find("\n## ", 1)]
    found = {}
    for row in section.splitlines():
        key = re.search(r"`cluster\.(\w+)`", row)
        policy = re.search(r"`(AmazonEKS\w+Policy)`", row)
        if row.startswith("|") and key and policy:
            found[key.group(1)] = policy.group(1)
    return found


def test_the_access_table_of_the_documentation_matches_the_code() -> None:
    assert documented_policies(CI_DOC.read_text(encoding="utf-8")) == cluster.ACCESS_POLICY_BY_KEY


def test_a_wrong_row_in_the_access_table_is_a_difference() -> None:
    text = CI_DOC.read_text(encoding="utf-8")
    wrong = re.sub(r"(`cluster\.previewPrincipalArns`.*?)`AmazonEKSViewPolicy`", r"\1`AmazonEKSClusterAdminPolicy`",
                   text, count=1)
    assert documented_policies(wrong)["previewPrincipalArns"] == iam.CLUSTER_ADMIN_POLICY


def test_the_deploy_workflow_is_the_only_one_that_names_prod() -> None:
    names = {p.name for p in workflow_files() for job in jobs(p).values() if "prod" in _environments(job)}
    assert names == {"deploy.yml"}
    assert load(WORKFLOWS / "deploy.yml")[True] == {"push": {"branches": ["main"]}}
