"""`python -m tools.preview_access`: the cloud preview stops when the identity it runs as can write the cluster.

Run end to end: a stand-in `aws` CLI on PATH (describe-cluster, get-token, get-caller-identity) and a loopback
API server answering SelfSubjectAccessReviews, so the request the tool sends and the verdict it reads are real.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.ci.test_workflows import WORKFLOWS, jobs
from tests.policies.conftest_registry import fake_server
from tests.shared import REPO
from tools import preview_access

IDENTITY = "arn:aws:sts::123456789012:assumed-role/gpu-platform-preview-prod/gh"
FAKE_AWS = """\
#!/bin/sh
case "$1 $2" in
  "eks describe-cluster")
    if [ -n "$FAKE_NO_CLUSTER" ]; then
      echo "An error occurred (ResourceNotFoundException) when calling DescribeCluster: No cluster found" >&2
      exit 254
    fi
    printf '{"cluster": {"endpoint": "%s", "certificateAuthority": {"data": "eA=="}}}' "$FAKE_URL" ;;
  "eks get-token") printf '{"status": {"token": "k8s-aws-v1.fake"}}' ;;
  "sts get-caller-identity") printf '{"Arn": "%s"}' "$FAKE_IDENTITY" ;;
  *) echo "unexpected: $*" >&2; exit 2 ;;
esac
"""


@contextmanager
def api_server(allowed_verbs: set[str]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A loopback API server answering SelfSubjectAccessReviews: allowed when the verb is in `allowed_verbs`."""
    seen: list[dict[str, Any]] = []

    def review(handler: http.server.BaseHTTPRequestHandler) -> None:
        asked = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
        seen.append({"path": handler.path, "auth": handler.headers["Authorization"], "review": asked})
        asked["status"] = {"allowed": asked["spec"]["resourceAttributes"]["verb"] in allowed_verbs}
        body = json.dumps(asked).encode()
        handler.send_response(201)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    with fake_server(review) as (url, _):
        yield url, seen


def _run(tmp_path: Path, url: str, **env: str) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "aws").write_text(FAKE_AWS, encoding="utf-8")
    (bin_dir / "aws").chmod(0o755)
    environ = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_URL": url,
               "FAKE_IDENTITY": IDENTITY, **env}
    return subprocess.run([sys.executable, "-m", "tools.preview_access", "--stack", "prod"], cwd=REPO, env=environ,
                          capture_output=True, text=True, check=False)


def test_a_view_only_identity_passes_after_asking_for_every_write(tmp_path: Path) -> None:
    with api_server({"get", "list", "watch"}) as (url, seen):
        proc = _run(tmp_path, url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (f"python -m tools.preview_access: {IDENTITY} may make none of the 4 writes "
                                   "checked in cluster 'gpu-prod'")
    assert [s["review"]["spec"]["resourceAttributes"] for s in seen] == [w.attributes() for w in preview_access.WRITES]
    assert {s["path"] for s in seen} == {"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"}
    assert {s["auth"] for s in seen} == {"Bearer k8s-aws-v1.fake"}
    assert {s["review"]["kind"] for s in seen} == {"SelfSubjectAccessReview"}


def test_an_identity_that_can_write_stops_the_preview_one_line_per_write(tmp_path: Path) -> None:
    with api_server({"create"}) as (url, _):
        proc = _run(tmp_path, url)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"::error::{IDENTITY} may {write} in cluster 'gpu-prod': a pull request's code runs as it and could write "
        "to the cluster; fix: give the preview-prod environment a role listed only in cluster.previewPrincipalArns "
        "(view-only), in no other principal list nor writing Kubernetes group"
        for write in ("create customresourcedefinitions.apiextensions.k8s.io",
                      "create clusterrolebindings.rbac.authorization.k8s.io")]


def test_a_cluster_that_does_not_exist_yet_has_nothing_to_check(tmp_path: Path) -> None:
    with api_server(set()) as (url, seen):
        proc = _run(tmp_path, url, FAKE_NO_CLUSTER="1")
    assert proc.returncode == 0, proc.stderr
    assert "cluster 'gpu-prod' does not exist yet" in proc.stdout
    assert seen == []


def test_an_api_server_that_does_not_answer_is_a_check_that_could_not_be_made(tmp_path: Path) -> None:
    with api_server(set()) as (url, _):
        pass  # closed: nothing listens there any more
    proc = _run(tmp_path, url)
    assert proc.returncode == 2
    assert proc.stderr.startswith("python -m tools.preview_access: cannot check the preview identity's access: ")
    assert len(proc.stderr.splitlines()) == 1


def test_the_cluster_name_comes_from_the_stack_file() -> None:
    assert preview_access.cluster_name("prod") == "gpu-prod"
    with pytest.raises(preview_access.AccessCheckError, match=r"Pulumi\.nope\.yaml: no gpu-platform:cluster\.name"):
        preview_access.cluster_name("nope")


def test_the_cloud_preview_checks_its_role_after_assuming_it_and_before_previewing() -> None:
    steps = jobs(WORKFLOWS / "pull-request.yml")["cloud-preview"]["steps"]
    names = [("role" if "configure-aws-credentials" in str(s.get("uses")) else
              "check" if "tools.preview_access" in str(s.get("run")) else
              "preview" if s.get("with", {}).get("command") == "preview" else "") for s in steps]
    assert names.index("role") < names.index("check") < names.index("preview")
    check = steps[names.index("check")]
    assert check["run"] == '.venv/bin/python -m tools.preview_access --stack "$STACK"'
    assert check["env"] == {"STACK": "${{ matrix.stack }}"}
