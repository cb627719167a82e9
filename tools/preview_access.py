"""`python -m tools.preview_access --stack STACK`: refuse a pull-request preview whose identity can write the cluster.

A pull request runs its own copy of `pull-request.yml`, so whatever the `preview-<stack>` role can do, any
pull request can do, unreviewed. The program gives the roles in `cluster.previewPrincipalArns` a view-only
access entry (docs/ci-cd.md, "Who can write where"), but the role a repository really puts in that
environment may hold more: it may also be a deployer, an admin, hold a namespace-scoped edit policy, or sit in
a Kubernetes group bound to a writing role. This check asks the cluster itself, as the identity the job runs
as, and the cloud-preview job runs it after assuming the role and before `pulumi preview`:

- where: the cluster `gpu-platform:cluster.name` in the region `aws:region` of Pulumi.<stack>.yaml (the aws CLI
  is given `--region`, so a job whose own region differs still asks the stack's);
- what the program writes: the program runs once under the offline mocks as the preview of an existing stack
  (`tools.preview` phase `update`), and every Kubernetes object it registers gives a namespace and a kind;
  a Helm release gives its namespace and the kinds charts install (`CHART_NAMESPACED`, `CHART_CLUSTER`);
- the whole rule set in each of those namespaces (SelfSubjectRulesReview): any rule with a write verb fails
  (`WRITE_VERBS`). The RBAC authorizer lists its rules there; an authorizer webhook, which is how EKS applies
  access policies, may not, and the review then says `incomplete`:
  https://kubernetes.io/docs/reference/access-authn-authz/authorization/#checking-api-access ;
- so each write of the footprint is also asked one by one (SelfSubjectAccessReview, answered by every
  authorizer): create, update, patch and delete of each kind in its namespace, and of each cluster-scoped kind.

Both reviews are allowed to every authenticated user (the `system:basic-user` role:
https://kubernetes.io/docs/reference/access-authn-authz/rbac/#discovery-roles).

EKS has no cluster of that name in that region: exit 0 only when the stack has no state yet (`pulumi stack
export --stack STACK` lists no resource, or the backend has no such stack), as before its first `pulumi up`;
a stack with state and no cluster is a check that could not be made (wrong region or account).

Exit 0: every write denied, or no cluster and no state (nothing to write to); 1: a write is allowed (one line per
write, and the fix); 2: the check could not be made (one line: the aws CLI, pulumi or the API failed).
The `aws` and `pulumi` CLIs on PATH; the program's runtime (requirements.txt) for the footprint.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

PROG = "python -m tools.preview_access"
REPO = Path(__file__).resolve().parent.parent

# Verbs that change something (or grant the power to): https://kubernetes.io/docs/reference/access-authn-authz/
# authorization/#determine-the-request-verb (escalate, bind, impersonate: the RBAC special verbs).
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection", "escalate", "bind",
                         "impersonate", "*"})
# The verbs asked one by one for each kind the program writes.
ASKED_VERBS = ("create", "update", "patch", "delete")
# What the charts of the program install besides their workloads: in the release's namespace, and cluster-wide
# (the GPU Operator, Karpenter, KEDA and kube-prometheus-stack charts ship CRDs, cluster roles, webhooks; KEDA an
# APIService for its metrics server).
CHART_NAMESPACED = (("apps", "deployments"), ("apps", "daemonsets"), ("", "services"), ("", "serviceaccounts"),
                    ("", "configmaps"), ("", "secrets"), ("rbac.authorization.k8s.io", "roles"),
                    ("rbac.authorization.k8s.io", "rolebindings"))
CHART_CLUSTER = (("apiextensions.k8s.io", "customresourcedefinitions"),
                 ("rbac.authorization.k8s.io", "clusterroles"), ("rbac.authorization.k8s.io", "clusterrolebindings"),
                 ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
                 ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
                 ("apiregistration.k8s.io", "apiservices"), ("", "namespaces"))
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
# What every authenticated user may create (`system:basic-user`): the reviews themselves, which write nothing.
SELF_REVIEWS = frozenset({"selfsubjectaccessreviews", "selfsubjectrulesreviews", "selfsubjectreviews"})


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


@dataclass(frozen=True)
class Footprint:
    """Where the program writes: namespaced kinds per namespace, and cluster-scoped kinds."""

    namespaced: frozenset[tuple[str, str, str]]  # (namespace, group, resource)
    cluster: frozenset[tuple[str, str]]  # (group, resource)

    @property
    def namespaces(self) -> list[str]:
        return sorted({namespace for namespace, _, _ in self.namespaced})

    def writes(self) -> list[Write]:
        found = [Write(verb, group, resource, namespace) for namespace, group, resource in sorted(self.namespaced)
                 for verb in ASKED_VERBS]
        return found + [Write(verb, group, resource) for group, resource in sorted(self.cluster)
                        for verb in ASKED_VERBS]


class AccessCheckError(Exception):
    """The check could not be made; the message says why, on one line."""


def plural(kind: str) -> str:
    """The resource name of a kind as Kubernetes guesses it: lower case, "es" after s, "ies" for y, else "s".

    Source: kubernetes/apimachinery pkg/api/meta/restmapper.go `UnsafeGuessKindToResource`.
    """
    lower = kind.lower()
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + "s"


def footprint(resources: Iterable[tuple[str, Mapping[str, Any]]]) -> Footprint:
    """The footprint of (Pulumi type, inputs) pairs: Kubernetes objects and Helm releases; the rest is ignored."""
    namespaced: set[tuple[str, str, str]] = set()
    cluster: set[tuple[str, str]] = set()
    for type_, inputs in resources:
        if not type_.startswith("kubernetes:"):
            continue
        if type_ == HELM_RELEASE:
            release = str(inputs.get("namespace") or "default")
            namespaced.update((release, group, resource) for group, resource in CHART_NAMESPACED)
            cluster.update(CHART_CLUSTER)
            continue
        _, group_version, kind = type_.split(":", 2)
        group = group_version.rsplit("/", 1)[0] if "/" in group_version else ""
        group = "" if group == "core" else group
        if group in ("yaml", "kustomize") or (group == "helm.sh" and kind == "Chart"):
            continue  # components: their children are registered as objects of their own
        raw = inputs.get("metadata")
        metadata: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        namespace = metadata.get("namespace")
        if kind == "Namespace":
            name = metadata.get("name")
            cluster.add(("", "namespaces"))
            if isinstance(name, str) and name:
                namespaced.update((name, g, r) for g, r in CHART_NAMESPACED)
        elif isinstance(namespace, str) and namespace:
            namespaced.add((namespace, group, plural(kind)))
        else:
            cluster.add((group, plural(kind)))
    return Footprint(frozenset(namespaced), frozenset(cluster))


def program_footprint(stack: str, today: datetime.date | None, program: Path = REPO) -> Footprint:
    """Run the program as the preview of the existing stack (offline mocks) and take its footprint."""
    from tools.preview.command import run_program  # noqa: PLC0415 (the Pulumi SDK: only when the cluster exists)
    from tools.preview.stack_files import PreviewError, load_project, load_stack_config  # noqa: PLC0415

    try:
        project = load_project(program)
        config = load_stack_config(program / f"Pulumi.{stack}.yaml", project.name, program)
        recording = run_program(project, stack, config, "update", today)
    except PreviewError as err:
        raise AccessCheckError(f"the program's footprint: {str(err).splitlines()[0]}") from err
    return footprint((r.type, r.inputs) for r in recording.resources)


def stack_cluster(stack: str, program: Path = REPO) -> tuple[str, str]:
    """`gpu-platform:cluster.name` and `aws:region` of Pulumi.<stack>.yaml."""
    path = program / f"Pulumi.{stack}.yaml"
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))["config"]
        name = str(config["gpu-platform:cluster"]["name"])
    except (OSError, yaml.YAMLError, KeyError, TypeError) as err:
        raise AccessCheckError(f"{path}: no gpu-platform:cluster.name ({err})") from err
    region = config.get("aws:region")
    if not isinstance(region, str) or not region:
        raise AccessCheckError(f"{path}: no aws:region: the cluster's region cannot be known; fix: set aws:region")
    return name, region


def _run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(list(command), capture_output=True, text=True, check=False)
    except OSError as err:
        raise AccessCheckError(f"{' '.join(command)}: {err}") from err


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    return (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]


def aws(*args: str) -> dict[str, Any]:
    """`aws ARGS --output json`, parsed; AccessCheckError naming the command and the CLI's last line."""
    proc = _run(["aws", *args, "--output", "json"])
    if proc.returncode != 0:
        raise AccessCheckError(f"aws {' '.join(args)}: {_last_line(proc)}")
    data = json.loads(proc.stdout)
    if not isinstance(data, dict):
        raise AccessCheckError(f"aws {' '.join(args)}: not a JSON object")
    return data


def endpoint(name: str, region: str) -> tuple[str, str] | None:
    """The cluster's API endpoint and CA (base64 PEM); None when EKS has no such cluster in `region`."""
    try:
        cluster = aws("eks", "describe-cluster", "--name", name, "--region", region)["cluster"]
    except AccessCheckError as err:
        if "ResourceNotFoundException" in str(err):
            return None
        raise
    if not isinstance(cluster, dict):
        raise AccessCheckError(f"aws eks describe-cluster --name {name}: no cluster object")
    return str(cluster["endpoint"]), str(cluster["certificateAuthority"]["data"])


def state_resources(stack: str) -> int:
    """How many resources the stack's state holds (`pulumi stack export`); 0 when the backend has no such stack."""
    proc = _run(["pulumi", "stack", "export", "--stack", stack, "--non-interactive"])
    if proc.returncode != 0:
        # The CLI's error for a stack the backend does not hold (pulumi/pulumi pkg/cmd/pulumi, `requireStack`).
        if f"no stack named '{stack}'" in proc.stderr:
            return 0
        raise AccessCheckError(f"pulumi stack export --stack {stack}: {_last_line(proc)}")
    try:
        deployment = json.loads(proc.stdout).get("deployment") or {}
        return len(deployment.get("resources") or [])
    except (ValueError, AttributeError) as err:
        raise AccessCheckError(f"pulumi stack export --stack {stack}: not a deployment ({err})") from err


Post = Callable[[str, dict[str, Any]], dict[str, Any]]


def poster(url: str, ca_b64: str, token: str) -> Post:
    """POST a review to the API server at `url` (https, trusting `ca_b64`) as the holder of `token`."""
    context = ssl.create_default_context(cadata=base64.b64decode(ca_b64).decode("ascii")) \
        if url.startswith("https://") else None

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{url}{path}", data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(request, context=context, timeout=30) as resp:
                answer = json.load(resp)
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise AccessCheckError(f"{url}: {body.get('kind')} failed ({err})") from err
        if not isinstance(answer, dict):
            raise AccessCheckError(f"{url}: {body.get('kind')}: not a JSON object")
        return answer

    return post


REVIEWS = "/apis/authorization.k8s.io/v1/"


def write_rules(post: Post, namespace: str) -> list[str]:
    """The rules with a write verb that the API server lists for the caller in `namespace` (SelfSubjectRulesReview)."""
    answer = post(REVIEWS + "selfsubjectrulesreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": namespace}})
    status = answer.get("status")
    if not isinstance(status, dict):
        raise AccessCheckError(f"SelfSubjectRulesReview in namespace {namespace}: no status")
    found = []
    for rule in status.get("resourceRules") or []:
        verbs = sorted(WRITE_VERBS & set(rule.get("verbs") or []))
        if verbs and not set(rule.get("resources") or ["*"]) <= SELF_REVIEWS:
            groups = ",".join(g or '""' for g in rule.get("apiGroups") or [])
            resources = ",".join(rule.get("resources") or [])
            found.append(f"{'/'.join(verbs)} {resources} (apiGroups {groups}) in namespace {namespace}")
    return found


def allowed(post: Post, write: Write) -> bool:
    answer = post(REVIEWS + "selfsubjectaccessreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": write.attributes()}})
    status = answer.get("status")
    if not isinstance(status, dict):
        raise AccessCheckError(f"SelfSubjectAccessReview for {write}: no status")
    return status.get("allowed", False) is True


def allowed_writes(post: Post, where: Footprint) -> tuple[list[str], int]:
    """Every write the caller may make where the program writes, and how many reviews were asked."""
    found: list[str] = []
    for namespace in where.namespaces:
        found += write_rules(post, namespace)
    writes = where.writes()
    found += [str(write) for write in writes if allowed(post, write)]
    return found, len(where.namespaces) + len(writes)


def _identity(region: str) -> str:
    return str(aws("sts", "get-caller-identity", "--region", region)["Arn"])


def _token(name: str, region: str) -> str:
    status = aws("eks", "get-token", "--cluster-name", name, "--region", region).get("status")
    if not isinstance(status, dict) or "token" not in status:
        raise AccessCheckError(f"aws eks get-token --cluster-name {name}: no status.token")
    return str(status["token"])


def main(argv: Sequence[str] | None = None, *, where: Footprint | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description="Refuse a preview identity that can write the cluster.")
    parser.add_argument("--stack", required=True)
    parser.add_argument("--today", type=datetime.date.fromisoformat, default=None,
                        help="the date the program judges lifecycles at (default: today), as `pulumi preview` would")
    args = parser.parse_args(argv)
    try:
        name, region = stack_cluster(args.stack)
        found = endpoint(name, region)
        if found is None:
            held = state_resources(args.stack)
            if held:
                raise AccessCheckError(
                    f"EKS has no cluster {name!r} in {region} (aws:region of Pulumi.{args.stack}.yaml) but stack "
                    f"{args.stack!r} holds {held} resources: the job's AWS account is not the stack's, or the "
                    "cluster was deleted outside Pulumi")
            print(f"{PROG}: cluster {name!r} does not exist in {region} and stack {args.stack!r} has no state yet: "
                  "nothing a preview could write to")
            return 0
        post = poster(*found, _token(name, region))
        writes, asked = allowed_writes(post, where or program_footprint(args.stack, args.today))
        identity = _identity(region)
    except AccessCheckError as err:
        print(f"{PROG}: cannot check the preview identity's access: {err}", file=sys.stderr)
        return 2
    for write in writes:
        print(f"::error::{identity} may {write} in cluster {name!r}: a pull request's code runs as it and could "
              f"write to the cluster; fix: give the preview-{args.stack} environment a role listed only in "
              "cluster.previewPrincipalArns (view-only), in no other principal list nor writing Kubernetes group",
              file=sys.stderr)
    if not writes:
        print(f"{PROG}: {identity} may make none of the program's writes in cluster {name!r} "
              f"({region}; {asked} reviews)")
    return 1 if writes else 0


if __name__ == "__main__":
    sys.exit(main())
