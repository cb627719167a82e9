"""`python -m tools.preview_access --stack STACK`: refuse a pull-request preview whose identity can write the cluster.

A pull request runs its own copy of `pull-request.yml`, so whatever the `preview-<stack>` role can do, any
pull request can do, unreviewed. The program gives the roles in `cluster.previewPrincipalArns` a view-only
access entry (docs/ci-cd.md, "Who can write where"), but the role a repository really puts in that
environment may hold more: it may also be a deployer, an admin, or in a Kubernetes group bound to a
writing role. This check asks the cluster itself, as the identity the job runs as, whether it may make the
writes the program makes (SelfSubjectAccessReview, which every authenticated user may create:
https://kubernetes.io/docs/reference/access-authn-authz/authorization/#checking-api-access), so access
policies and RBAC groups are judged alike. The cloud-preview job runs it after assuming the role and
before `pulumi preview`.

Exit 0: every write denied, or the cluster does not exist yet (nothing to write to); 1: a write is allowed
(one line per write, and the fix); 2: the check could not be made (one line: the aws CLI or the API failed).
Standard library and PyYAML only (the cloud jobs install the program's runtime); the `aws` CLI on PATH.
"""

from __future__ import annotations

import argparse
import base64
import json
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

PROG = "python -m tools.preview_access"
REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Write:
    """One write the program makes, as a SelfSubjectAccessReview's resourceAttributes."""

    verb: str
    group: str
    resource: str
    namespace: str = ""

    def attributes(self) -> dict[str, str]:
        found = {"verb": self.verb, "group": self.group, "resource": self.resource}
        return {**found, "namespace": self.namespace} if self.namespace else found

    def __str__(self) -> str:
        kind = f"{self.resource}.{self.group}" if self.group else self.resource
        return f"{self.verb} {kind}" + (f" in namespace {self.namespace}" if self.namespace else "")


# Cluster-scoped and namespaced writes of the program: CRDs and cluster roles of the charts (GPU Operator,
# Karpenter, KEDA), workloads and namespaces. AmazonEKSViewPolicy allows none of them.
WRITES = (
    Write("create", "apiextensions.k8s.io", "customresourcedefinitions"),
    Write("create", "rbac.authorization.k8s.io", "clusterrolebindings"),
    Write("patch", "apps", "deployments", "kube-system"),
    Write("delete", "", "namespaces"),
)


class AccessCheckError(Exception):
    """The check could not be made; the message says why, on one line."""


def cluster_name(stack: str, program: Path = REPO) -> str:
    """`gpu-platform:cluster.name` of Pulumi.<stack>.yaml."""
    path = program / f"Pulumi.{stack}.yaml"
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))["config"]
        return str(config["gpu-platform:cluster"]["name"])
    except (OSError, yaml.YAMLError, KeyError, TypeError) as err:
        raise AccessCheckError(f"{path}: no gpu-platform:cluster.name ({err})") from err


def aws(*args: str) -> dict[str, object]:
    """`aws ARGS --output json`, parsed; AccessCheckError naming the command and the CLI's last line."""
    proc = subprocess.run(["aws", *args, "--output", "json"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        raise AccessCheckError(f"aws {' '.join(args)}: {last}")
    data = json.loads(proc.stdout)
    if not isinstance(data, dict):
        raise AccessCheckError(f"aws {' '.join(args)}: not a JSON object")
    return data


def endpoint(name: str) -> tuple[str, str] | None:
    """The cluster's API endpoint and CA (base64 PEM); None when EKS has no such cluster."""
    try:
        cluster = aws("eks", "describe-cluster", "--name", name)["cluster"]
    except AccessCheckError as err:
        if "ResourceNotFoundException" in str(err):
            return None
        raise
    if not isinstance(cluster, dict):
        raise AccessCheckError(f"aws eks describe-cluster --name {name}: no cluster object")
    return str(cluster["endpoint"]), str(cluster["certificateAuthority"]["data"])


def _context(ca_b64: str) -> ssl.SSLContext:
    """A TLS context that trusts the cluster's own CA (EKS serves its API with a certificate of that CA)."""
    return ssl.create_default_context(cadata=base64.b64decode(ca_b64).decode("ascii"))


def reviewer(url: str, ca_b64: str, token: str) -> Callable[[Write], bool]:
    """Ask the API server at `url` (https, trusting `ca_b64`), as the holder of `token`, whether a write is allowed."""
    context = _context(ca_b64) if url.startswith("https://") else None

    def allowed(write: Write) -> bool:
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": write.attributes()}}
        request = urllib.request.Request(
            f"{url}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(request, context=context, timeout=30) as resp:
                return json.load(resp)["status"].get("allowed", False) is True
        except (urllib.error.URLError, OSError, KeyError, ValueError) as err:
            raise AccessCheckError(f"{url}: SelfSubjectAccessReview for {write} failed ({err})") from err

    return allowed


def allowed_writes(ask: Callable[[Write], bool], writes: Sequence[Write] = WRITES) -> list[Write]:
    return [write for write in writes if ask(write)]


def _identity() -> str:
    return str(aws("sts", "get-caller-identity")["Arn"])


def _token(name: str) -> str:
    status = aws("eks", "get-token", "--cluster-name", name).get("status")
    if not isinstance(status, dict) or "token" not in status:
        raise AccessCheckError(f"aws eks get-token --cluster-name {name}: no status.token")
    return str(status["token"])


def main(argv: Sequence[str] | None = None, *, ask: Callable[[Write], bool] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description="Refuse a preview identity that can write the cluster.")
    parser.add_argument("--stack", required=True)
    args = parser.parse_args(argv)
    try:
        name = cluster_name(args.stack)
        if ask is None:
            found = endpoint(name)
            if found is None:
                print(f"{PROG}: cluster {name!r} does not exist yet: nothing a preview could write to")
                return 0
            ask = reviewer(*found, _token(name))
        writes = allowed_writes(ask)
        identity = _identity()
    except AccessCheckError as err:
        print(f"{PROG}: cannot check the preview identity's access: {err}", file=sys.stderr)
        return 2
    for write in writes:
        print(f"::error::{identity} may {write} in cluster {name!r}: a pull request's code runs as it and could "
              f"write to the cluster; fix: give the preview-{args.stack} environment a role listed only in "
              "cluster.previewPrincipalArns (view-only), in no other principal list nor writing Kubernetes group",
              file=sys.stderr)
    if not writes:
        print(f"{PROG}: {identity} may make none of the {len(WRITES)} writes checked in cluster {name!r}")
    return 1 if writes else 0


if __name__ == "__main__":
    sys.exit(main())
