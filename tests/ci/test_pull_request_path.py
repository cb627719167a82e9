"""The pull-request path after the first deploy, walked with the shipped stack files and workflows.

For each stack, in the order a team meets it:
1. the deploy job's run after the first `pulumi up` (the cluster exists, EKS holds the creator's entry of the deploy
   role): the role the pull-request job assumes gets exactly one access entry with AmazonEKSViewPolicy, the
   deploy role one with AmazonEKSClusterAdminPolicy;
2. the access check of the pull-request job (`python -m tools.preview_access`, the job's own command line) against
   a cluster that authorizes by exactly those entries: it passes for the preview role and stops the deploy role;
   without the preview role's entry the cluster answers 401, the check cannot be made, and every pull request
   would be red (the defect of issue 40);
3. the preview as the pull-request principal: the program plans the same entries and refuses nothing.
The roles come from the workflows: the pull-request job's environment `preview-<stack>` holds the role
`gpu-platform-preview-<stack>` and the deploy job's `<stack>` the role `gpu-platform-deploy-<stack>`
(docs/ci-cd.md, environments table); the shipped stack files must list exactly those.
"""

from __future__ import annotations

import copy
import http.server
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from components import iam
from tests.ci.test_access import _environments
from tests.ci.test_workflows import WORKFLOWS, jobs
from tests.components.harness import Run, run, stack_values
from tests.policies.conftest_registry import fake_server
from tests.shared import REPO
from tools.engine.mocks import monitor as mocks
from tools.engine.mocks.values import InvokeFailure

ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
# The verbs of each EKS access policy: https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html
POLICY_ALLOWS: dict[str, Callable[[Mapping[str, str]], bool]] = {
    iam.VIEW_POLICY: lambda attrs: attrs["verb"] in {"get", "list", "watch"} and attrs["resource"] != "secrets",
    iam.CLUSTER_ADMIN_POLICY: lambda attrs: True,
}
ASSUMED = re.compile(r"^arn:aws:sts::(\d{12}):assumed-role/([^/]+)/.+$")
FAKE_AWS = """\
#!/bin/sh
case "$1 $2" in
  "eks describe-cluster")
    printf '{"cluster": {"endpoint": "%s", "certificateAuthority": {"data": "eA=="}}}' "$FAKE_URL" ;;
  "eks get-token") printf '{"status": {"token": "k8s-aws-v1.%s"}}' "$FAKE_IDENTITY" ;;
  "sts get-caller-identity") printf '{"Arn": "%s"}' "$FAKE_IDENTITY" ;;
  *) echo "unexpected: $*" >&2; exit 2 ;;
esac
"""


def workflow_role(stack: str, workflow: str, job_id: str) -> str:
    """The role name the job assumes: its environment holds the role named like the job's `role-session-name`
    (`gpu-platform-preview-<stack>`, `gpu-platform-deploy-<stack>`: docs/ci-cd.md, environments table)."""
    job = jobs(WORKFLOWS / workflow)[job_id]
    assert any(stack == e.removeprefix("preview-") for e in _environments(job))
    return str(next(s["with"]["role-session-name"] for s in job["steps"] if "configure-aws" in str(s.get("uses"))))


def principals(stack: str) -> tuple[str, str]:
    """(preview principal, deploy principal) of the shipped stack file, checked against the workflows' roles."""
    cluster = stack_values(stack)["cluster"]
    (preview,) = cluster["previewPrincipalArns"]
    (deploy,) = cluster["deployerPrincipalArns"]
    assert preview.rsplit("/", 1)[1] == workflow_role(stack, "pull-request.yml", f"preview-{stack}")
    assert deploy.rsplit("/", 1)[1] == workflow_role(stack, "deploy.yml", f"up-{stack}")
    return preview, deploy


def _session(role_arn: str, name: str) -> str:
    return role_arn.replace(":iam::", ":sts::").replace(":role/", ":assumed-role/") + f"/{name}"


def deployed(monkeypatch: pytest.MonkeyPatch, cluster: str, entries: set[str], caller: str) -> None:
    """The account after the first `pulumi up`: the cluster and its access entries exist; `caller` runs Pulumi."""
    monkeypatch.setitem(mocks.INVOKES, "aws:eks/getClusters:getClusters", lambda a, c: {"id": c.region,
                                                                                        "names": [cluster]})

    def entry(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
        if args["principalArn"] not in entries:
            raise InvokeFailure(f"reading EKS Access Entry ({cluster}:{args['principalArn']}): couldn't find resource")
        return {"id": f"{cluster}:{args['principalArn']}", "clusterName": cluster,
                "principalArn": args["principalArn"], "type": "STANDARD"}

    monkeypatch.setitem(mocks.INVOKES, "aws:eks/getAccessEntry:getAccessEntry", entry)
    account = caller.split(":")[4]
    monkeypatch.setitem(mocks.INVOKES, "aws:index/getCallerIdentity:getCallerIdentity",
                        lambda a, c: {"id": account, "accountId": account, "userId": "AROAEXAMPLE:x",
                                      "arn": _session(caller, "gh")})


def access(result: Run) -> dict[str, list[str]]:
    """principal -> the access policies of its entries (node roles' EC2_LINUX entries left out)."""
    found: dict[str, list[str]] = {r.inputs["principalArn"]: [] for r in result.of_type(ENTRY)
                                   if r.inputs.get("type") != "EC2_LINUX"}
    for association in result.of_type(ASSOCIATION):
        found.setdefault(association.inputs["principalArn"], []).append(association.inputs["policyArn"])
    return found


@contextmanager
def cluster_api(entries: Mapping[str, list[str]]) -> Iterator[str]:
    """An API server that authenticates `k8s-aws-v1.<session ARN>` tokens and authorizes by the access entries.

    A principal without an entry gets 401, as EKS answers it; reviews are answered from its policies' verbs.
    """

    def review(handler: http.server.BaseHTTPRequestHandler) -> None:
        session = handler.headers["Authorization"].removeprefix("Bearer k8s-aws-v1.")
        match = ASSUMED.match(session)
        role = f"arn:aws:iam::{match[1]}:role/{match[2]}" if match else ""
        policies = entries.get(role)
        body = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
        if policies is None:
            answer, code = {"kind": "Status", "status": "Failure", "reason": "Unauthorized", "code": 401}, 401
        elif body["kind"] == "SelfSubjectRulesReview":
            answer, code = {**body, "status": {"resourceRules": [], "incomplete": True}}, 201
        else:
            attrs = body["spec"]["resourceAttributes"]
            answer = {**body, "status": {"allowed": any(POLICY_ALLOWS[p](attrs) for p in policies)}}
            code = 201
        data = json.dumps(answer).encode()
        handler.send_response(code)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    with fake_server(review) as (url, _):
        yield url


def access_check(tmp_path: Path, stack: str, url: str, identity: str) -> subprocess.CompletedProcess[str]:
    """The pull-request job's step, as it runs there: `.venv/bin/python -m tools.preview_access --stack "$STACK"`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "aws").write_text(FAKE_AWS, encoding="utf-8")
    (bin_dir / "aws").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_URL": url, "FAKE_IDENTITY": identity}
    return subprocess.run([sys.executable, "-m", "tools.preview_access", "--stack", stack, "--today", "2026-11-30"],
                          cwd=REPO, env=env, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_pull_request_path_after_the_first_deploy(stack: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    preview, deploy = principals(stack)
    values = stack_values(stack)
    name = values["cluster"]["name"]

    # 1. The deploy job's next `pulumi up`: the preview role's entry is view-only, the deploy role's admin.
    deployed(monkeypatch, name, {deploy, preview}, caller=deploy)
    after = access(run(values, stack=stack, preview=False))
    assert after[preview] == [iam.access_policy_arn(iam.VIEW_POLICY)]
    assert after[deploy] == [iam.access_policy_arn(iam.CLUSTER_ADMIN_POLICY)]
    entries = {p: [a.rsplit("/", 1)[1] for a in arns] for p, arns in after.items()}

    # 2. The access check, as the role the pull-request job assumes (role-session-name of the workflow).
    session_name = workflow_role(stack, "pull-request.yml", f"preview-{stack}")
    with cluster_api(entries) as url:
        passed = access_check(tmp_path, stack, url, _session(preview, session_name))
        stopped = access_check(tmp_path, stack, url, _session(deploy, session_name))
    assert passed.returncode == 0, passed.stderr
    assert re.fullmatch(rf"python -m tools.preview_access: {re.escape(_session(preview, session_name))} may make "
                        rf"none of the program's writes in cluster '{name}' \(us-west-2; \d+ reviews\)\n",
                        passed.stdout)
    assert stopped.returncode == 1
    assert f"may create customresourcedefinitions.apiextensions.k8s.io in cluster '{name}'" in stopped.stderr

    # 3. The preview, as the pull-request principal: the same entries planned, nothing refused, nothing to fix.
    deployed(monkeypatch, name, {deploy, preview}, caller=preview)
    caplog.clear()
    assert access(run(values, stack=stack)) == after
    assert not [r.getMessage() for r in caplog.records if preview in r.getMessage()]


def test_without_the_preview_roles_entry_the_check_cannot_be_made(tmp_path: Path) -> None:
    # The shipped stack files before issue 40: no previewPrincipalArns, so the role has no entry and EKS answers 401.
    preview, deploy = principals("dev")
    with cluster_api({deploy: [iam.CLUSTER_ADMIN_POLICY]}) as url:
        proc = access_check(tmp_path, "dev", url, _session(preview, "gpu-platform-preview-dev"))
    assert proc.returncode == 2
    assert "cannot check the preview identity's access" in proc.stderr and "401" in proc.stderr


def test_the_shipped_ci_roles_differ_per_stack_and_sit_in_the_documentation_account() -> None:
    found = {stack: principals(stack) for stack in ("dev", "prod")}
    assert len({arn for pair in found.values() for arn in pair}) == 4
    values = copy.deepcopy(stack_values("prod"))["cluster"]
    assert all(arn.split(":")[4] == "111122223333" for arn in (*values["previewPrincipalArns"],
                                                               *values["deployerPrincipalArns"]))


def test_the_offline_preview_runs_as_the_deploy_role_and_advises_accordingly(caplog: pytest.LogCaptureFixture) -> None:
    # `make preview` (no mocks patched): the caller is the stack's deploy role, listed, so EKS's creator entry needs
    # no advice; unlisted, the advice is to list the deploy identity as a deployer, never to make a preview role one.
    preview, deploy = principals("dev")
    run(stack_values("dev"))
    assert not [r.getMessage() for r in caplog.records if "creator's admin access entry" in r.getMessage()]
    caplog.clear()
    values = copy.deepcopy(stack_values("dev"))
    values["cluster"]["deployerPrincipalArns"] = []
    run(values)
    (advice,) = [r.getMessage() for r in caplog.records if "creator's admin access entry" in r.getMessage()]
    assert advice.startswith(f"{deploy} creates cluster 'gpu-dev' and gets the creator's admin access entry")
    assert "list it in cluster.deployerPrincipalArns" in advice
    assert "a pull-request preview role (cluster.previewPrincipalArns) never runs `pulumi up`" in advice
    assert preview not in advice
