"""`python -m tools.preview_access`: the cloud preview stops when the identity it runs as can write the cluster.

Run against stand-ins of what the job talks to: an `aws` CLI on PATH (describe-cluster, get-token,
get-caller-identity) that knows one cluster in one region only, a `pulumi` CLI whose `stack export` holds a
given number of resources (or no stack), and a loopback API server (the registry tests' fake_server) answering
SelfSubjectRulesReviews and SelfSubjectAccessReviews from an authorizer: the request the tool sends and the
verdict it reads are real HTTP.
"""

from __future__ import annotations

import http.server
import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.ci.test_workflows import WORKFLOWS, jobs
from tests.policies.conftest_registry import fake_server
from tools import preview_access
from tools.preview_access import Footprint

IDENTITY = "arn:aws:sts::123456789012:assumed-role/gpu-platform-preview-prod/gh"
FAKE_AWS = """\
#!/bin/sh
region=""
prev=""
for arg in "$@"; do
  if [ "$prev" = "--region" ]; then region="$arg"; fi
  prev="$arg"
done
echo "$*" >> "$FAKE_LOG"
case "$1 $2" in
  "eks describe-cluster")
    if [ -n "$FAKE_NO_CLUSTER" ] || [ "$region" != "$FAKE_CLUSTER_REGION" ]; then
      echo "An error occurred (ResourceNotFoundException) when calling DescribeCluster: No cluster found" >&2
      exit 254
    fi
    printf '{"cluster": {"endpoint": "%s", "certificateAuthority": {"data": "eA=="}}}' "$FAKE_URL" ;;
  "eks get-token") printf '{"status": {"token": "k8s-aws-v1.fake"}}' ;;
  "sts get-caller-identity") printf '{"Arn": "%s"}' "$FAKE_IDENTITY" ;;
  *) echo "unexpected: $*" >&2; exit 2 ;;
esac
"""
FAKE_PULUMI = """\
#!/bin/sh
echo "$*" >> "$FAKE_LOG"
if [ "$FAKE_STATE" = "none" ]; then
  echo "error: no stack named '$4' found" >&2
  exit 255
fi
printf '{"version": 3, "deployment": {"resources": ['
i=0
while [ "$i" -lt "$FAKE_STATE" ]; do
  [ "$i" -gt 0 ] && printf ','
  printf '{"urn": "urn:pulumi:prod::gpu-platform::x::r%s"}' "$i"
  i=$((i + 1))
done
printf ']}}'
"""
# The verbs of the EKS access policies (https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html):
# AmazonEKSViewPolicy reads (no Secrets), AmazonEKSClusterAdminPolicy does anything.
VIEW_VERBS = frozenset({"get", "list", "watch"})
# What `system:basic-user` lets everyone do: create the reviews themselves (never a write the check reports).
BASIC_USER_RULE = {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
                   "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]}
SMALL = Footprint(namespaced=frozenset({("inference", "apps", "deployments"), ("inference", "", "services")}),
                  cluster=frozenset({("apiextensions.k8s.io", "customresourcedefinitions")}))


@dataclass
class Authorizer:
    """A cluster's answers: `allows` decides SelfSubjectAccessReviews; `rules` is the RBAC rule set per namespace.

    `incomplete`: the rules review lists RBAC only and says so, as on EKS where access policies are a webhook.
    """

    allows: Callable[[Mapping[str, str]], bool]
    rules: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)
    incomplete: bool = True


def view_only(attrs: Mapping[str, str]) -> bool:
    return attrs["verb"] in VIEW_VERBS and attrs["resource"] != "secrets"


@contextmanager
def api_server(authorizer: Authorizer) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    def review(handler: http.server.BaseHTTPRequestHandler) -> None:
        asked = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
        seen.append({"path": handler.path, "auth": handler.headers["Authorization"], "review": asked})
        if asked["kind"] == "SelfSubjectRulesReview":
            namespace = asked["spec"]["namespace"]
            asked["status"] = {"resourceRules": [BASIC_USER_RULE, *authorizer.rules.get(namespace, [])],
                               "nonResourceRules": [], "incomplete": authorizer.incomplete}
        else:
            asked["status"] = {"allowed": authorizer.allows(asked["spec"]["resourceAttributes"])}
        body = json.dumps(asked).encode()
        handler.send_response(201)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    with fake_server(review) as (url, _):
        yield url, seen


def fake_clis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, *, identity: str = IDENTITY,
              cluster_region: str = "us-west-2", state: str = "none", **env: str) -> Path:
    """Put the stand-in `aws` and `pulumi` on PATH (for this process and its children); return their log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, text in (("aws", FAKE_AWS), ("pulumi", FAKE_PULUMI)):
        (bin_dir / name).write_text(text, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    log = tmp_path / "calls.log"
    values = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_URL": url, "FAKE_IDENTITY": identity,
              "FAKE_CLUSTER_REGION": cluster_region, "FAKE_STATE": state, "FAKE_LOG": str(log), **env}
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return log


def test_a_view_only_identity_passes_after_asking_for_every_rule_and_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with api_server(Authorizer(view_only)) as (url, seen):
        log = fake_clis(tmp_path, monkeypatch, url)
        code = preview_access.main(["--stack", "prod"], where=SMALL)
    assert code == 0, capsys.readouterr().err
    assert capsys.readouterr().out.strip() == (
        f"python -m tools.preview_access: {IDENTITY} may make none of the program's writes in cluster 'gpu-prod' "
        "(us-west-2; 13 reviews)")
    kinds = [s["review"]["kind"] for s in seen]
    assert kinds == ["SelfSubjectRulesReview"] + ["SelfSubjectAccessReview"] * 12
    assert seen[0]["review"]["spec"] == {"namespace": "inference"}
    assert [s["review"]["spec"]["resourceAttributes"] for s in seen[1:]] == [w.attributes() for w in SMALL.writes()]
    assert {s["auth"] for s in seen} == {"Bearer k8s-aws-v1.fake"}
    # Every aws call names the stack's region (aws:region of Pulumi.prod.yaml), whatever the job's own region.
    assert all(line.endswith("--region us-west-2 --output json") for line in log.read_text().splitlines())


@pytest.mark.parametrize(("authorizer", "lines"), [
    # An edit policy scoped to the namespace the program writes: the access reviews see it (the EKS webhook).
    (Authorizer(lambda a: view_only(a) or a.get("namespace") == "inference"),
     [f"{verb} {kind} in namespace inference" for kind in ("services", "deployments.apps")
      for verb in ("create", "update", "patch", "delete")]),
    # An RBAC role that may only escalate in the namespace: no asked verb, the rules review finds it.
    (Authorizer(view_only, rules={"inference": [
        {"verbs": ["get", "escalate"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"]}]}),
     ["escalate roles (apiGroups rbac.authorization.k8s.io) in namespace inference"]),
    (Authorizer(view_only, rules={"inference": [{"verbs": ["*"], "apiGroups": [""], "resources": ["configmaps"]}]}),
     ['* configmaps (apiGroups "") in namespace inference']),
    (Authorizer(lambda a: a["verb"] == "create" and not a.get("namespace")),
     ["create customresourcedefinitions.apiextensions.k8s.io"]),
])
def test_an_identity_that_can_write_stops_the_preview_one_line_per_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], authorizer: Authorizer,
    lines: list[str]
) -> None:
    with api_server(authorizer) as (url, _):
        fake_clis(tmp_path, monkeypatch, url)
        code = preview_access.main(["--stack", "prod"], where=SMALL)
    assert code == 1
    assert capsys.readouterr().err.splitlines() == [
        f"::error::{IDENTITY} may {line} in cluster 'gpu-prod': a pull request's code runs as it and could write "
        "to the cluster; fix: give the preview-prod environment a role listed only in cluster.previewPrincipalArns "
        "(view-only), in no other principal list nor writing Kubernetes group" for line in lines]


def test_no_cluster_and_no_state_has_nothing_to_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for state in ("none", "0"):
        with api_server(Authorizer(view_only)) as (url, seen):
            log = fake_clis(tmp_path, monkeypatch, url, FAKE_NO_CLUSTER="1", state=state)
            assert preview_access.main(["--stack", "prod"], where=SMALL) == 0
        assert seen == []
        assert "cluster 'gpu-prod' does not exist in us-west-2 and stack 'prod' has no state yet" in \
            capsys.readouterr().out
        assert "stack export --stack prod --non-interactive" in log.read_text()


def test_a_cluster_in_another_region_than_the_stacks_is_not_mistaken_for_no_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The job's own region (AWS_REGION) is not the stack's: the tool asks the stack's region. Here EKS has the
    # cluster only elsewhere while the stack holds state: that is no "first deploy", and no pass.
    with api_server(Authorizer(lambda a: True)) as (url, seen):
        fake_clis(tmp_path, monkeypatch, url, cluster_region="eu-central-1", state="42", AWS_REGION="eu-central-1")
        assert preview_access.main(["--stack", "prod"], where=SMALL) == 2
    assert seen == []
    assert capsys.readouterr().err.splitlines() == [
        "python -m tools.preview_access: cannot check the preview identity's access: EKS has no cluster 'gpu-prod' in "
        "us-west-2 (aws:region of Pulumi.prod.yaml) but stack 'prod' holds 42 resources: the job's AWS account is "
        "not the stack's, or the cluster was deleted outside Pulumi"]


def test_an_api_server_that_does_not_answer_is_a_check_that_could_not_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with api_server(Authorizer(view_only)) as (url, _):
        pass  # closed: nothing listens there any more
    fake_clis(tmp_path, monkeypatch, url)
    assert preview_access.main(["--stack", "prod"], where=SMALL) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m tools.preview_access: cannot check the preview identity's access: ")
    assert len(err.splitlines()) == 1


def test_the_cluster_and_its_region_come_from_the_stack_file(tmp_path: Path) -> None:
    assert preview_access.stack_cluster("prod") == ("gpu-prod", "us-west-2")
    with pytest.raises(preview_access.AccessCheckError, match=r"Pulumi\.nope\.yaml: no gpu-platform:cluster\.name"):
        preview_access.stack_cluster("nope")
    (tmp_path / "Pulumi.x.yaml").write_text("config:\n  gpu-platform:cluster:\n    name: c\n", encoding="utf-8")
    with pytest.raises(preview_access.AccessCheckError, match=r"Pulumi\.x\.yaml: no aws:region"):
        preview_access.stack_cluster("x", tmp_path)


def test_the_footprint_holds_objects_releases_and_cluster_scoped_kinds() -> None:
    found = preview_access.footprint([
        ("kubernetes:apps/v1:Deployment", {"metadata": {"namespace": "inference"}}),
        ("kubernetes:networking.k8s.io/v1:Ingress", {"metadata": {"namespace": "inference"}}),
        ("kubernetes:karpenter.sh/v1:NodePool", {"metadata": {"name": "gpu"}}),
        ("kubernetes:core/v1:Namespace", {"metadata": {"name": "inference"}}),
        ("kubernetes:helm.sh/v3:Release", {"namespace": "keda"}),
        ("kubernetes:yaml/v2:ConfigGroup", {}),
        ("aws:eks/cluster:Cluster", {}),
    ])
    assert found.namespaces == ["inference", "keda"]
    assert ("inference", "apps", "deployments") in found.namespaced
    assert ("inference", "networking.k8s.io", "ingresses") in found.namespaced
    assert ("keda", "rbac.authorization.k8s.io", "rolebindings") in found.namespaced
    assert {("karpenter.sh", "nodepools"), ("", "namespaces"),
            ("apiextensions.k8s.io", "customresourcedefinitions")} <= found.cluster
    assert not any(group == "yaml" for group, _ in found.cluster)
    assert [preview_access.plural(k) for k in ("Ingress", "NetworkPolicy", "EC2NodeClass", "ConfigMap")] == [
        "ingresses", "networkpolicies", "ec2nodeclasses", "configmaps"]


def test_the_cloud_preview_checks_its_role_after_assuming_it_and_before_previewing() -> None:
    for job_id in ("preview-dev", "preview-prod"):
        steps = jobs(WORKFLOWS / "pull-request.yml")[job_id]["steps"]
        names = [("role" if "configure-aws-credentials" in str(s.get("uses")) else
                  "check" if "tools.preview_access" in str(s.get("run")) else
                  "preview" if s.get("with", {}).get("command") == "preview" else "") for s in steps]
        assert names.index("role") < names.index("check") < names.index("preview")
        check = steps[names.index("check")]
        assert check["run"] == '.venv/bin/python -m tools.preview_access --stack "$STACK"'
        assert check["env"]["STACK"] == job_id.removeprefix("preview-")

