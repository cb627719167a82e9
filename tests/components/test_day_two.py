"""Day two (issue 16): several deployers, access entries keyed by principal, credentials, zones, service range.

The access-entry tests replay what the engine does between two runs of the program: the resources of
the old run are the state, those of the new run the goal; a name in both with another principal is a
replacement (principalArn forces one), which the engine performs by creating the new entry first and
deleting the old one last; a name only in the state is deleted last too. EKS holds one entry per
principal, so creating an entry for a principal that a live entry still holds fails with 409.
Sources:
- https://www.pulumi.com/docs/iac/concepts/resources/options/deletebeforereplace/ (create, then delete)
- https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html (ResourceInUseException)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from components.config import ConfigError, load_stack_config
from tests.components.harness import TODAY, Run, run, run_rejected, stack_values
from tools.engine.mocks import monitor as mocks
from tools.engine.mocks.monitor import RecordingMonitor
from tools.engine.mocks.values import ACCOUNT_ID, InvokeFailure

ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
A = "arn:aws:iam::210987654321:role/platform-admins"
B = "arn:aws:iam::210987654321:role/oncall"
C = "arn:aws:iam::210987654321:user/alice"
CI = "arn:aws:iam::210987654321:role/github-deploy"
# The offline caller (tools/engine/mocks/invokes.py): the stack's deploy role, assumed, in the mocks' account.
CALLER = f"arn:aws:iam::{ACCOUNT_ID}:role/gpu-platform-deploy-dev"
REAL_CIDR = "34.223.10.0/24"  # outside the documentation ranges a real `pulumi up` refuses


def _dev(**cluster: Any) -> dict[str, Any]:
    """Pulumi.dev.yaml with the principal lists each test names (the shipped CI identities left out)."""
    values = copy.deepcopy(stack_values("dev"))
    values["cluster"].update({"deployerPrincipalArns": [], "previewPrincipalArns": [], **cluster})
    return values


def entries(result: Run) -> dict[str, str]:
    """Pulumi name -> principal of every access entry the run registered (the node role's are not here)."""
    return {r.name: r.inputs["principalArn"] for r in result.of_type(ENTRY) if r.inputs.get("type") != "EC2_LINUX"}


def engine_steps(state: Mapping[str, str], goal: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(operation, name, principal) in the engine's order: creates and replacements first, deletes last."""
    first = [("create", n, p) for n, p in goal.items() if n not in state]
    first += [("replace", n, p) for n, p in goal.items() if n in state and state[n] != p]
    last = [("delete", n, state[n]) for n in state if n not in goal]
    last += [("delete-replaced", n, state[n]) for n, p in goal.items() if n in state and state[n] != p]
    return first + last


def conflicts(state: Mapping[str, str], goal: Mapping[str, str]) -> list[str]:
    """The principals whose CreateAccessEntry would answer 409 when the engine moves from `state` to `goal`."""
    live = list(state.values())
    found: list[str] = []
    for op, _, principal in engine_steps(state, goal):
        if op in ("create", "replace"):
            if principal in live:
                found.append(principal)
            live.append(principal)
        else:
            live.remove(principal)
    return found


def test_the_replay_finds_the_409_of_entries_keyed_by_position():
    # What the program did before: `admin-{i}`. Removing A from [A, B] gives admin-0 B while admin-1 holds B.
    state = {"admin-0": A, "admin-1": B}
    assert engine_steps(state, {"admin-0": B}) == [
        ("replace", "admin-0", B), ("delete", "admin-1", B), ("delete-replaced", "admin-0", A)]
    assert conflicts(state, {"admin-0": B}) == [B]
    assert conflicts(state, {"admin-0": B, "admin-1": A}) == [B, A]  # a reorder


def test_removing_an_admin_deletes_only_its_entry_and_nothing_is_created_twice():
    before = entries(run(_dev(adminPrincipalArns=[A, B, C])))
    after = entries(run(_dev(adminPrincipalArns=[B, C])))
    assert sorted(before.values()) == sorted([A, B, C]) and sorted(after.values()) == sorted([B, C])
    steps = engine_steps(before, after)
    assert [(op, p) for op, _, p in steps] == [("delete", A)]
    assert conflicts(before, after) == []


def test_reordering_admins_changes_nothing():
    before = run(_dev(adminPrincipalArns=[A, B, C]))
    after = run(_dev(adminPrincipalArns=[C, A, B]))
    assert engine_steps(entries(before), entries(after)) == []
    assert ({r.name: r.inputs for r in before.of_type(ASSOCIATION)}
            == {r.name: r.inputs for r in after.of_type(ASSOCIATION)})


def test_moving_a_principal_from_admin_to_deployer_keeps_its_entry(monkeypatch: pytest.MonkeyPatch):
    # A cluster that exists (on a new one the first deployer is its creator, left to EKS: below).
    _cluster_exists(monkeypatch, "gpu-dev", with_entries={A, CI})
    before = entries(run(_dev(adminPrincipalArns=[A, CI])))
    after = entries(run(_dev(adminPrincipalArns=[A], deployerPrincipalArns=[CI])))
    assert before == after


def test_every_entry_is_named_by_its_principal(monkeypatch: pytest.MonkeyPatch):
    _cluster_exists(monkeypatch, "gpu-dev", with_entries=set())
    result = run(_dev(adminPrincipalArns=[A], deployerPrincipalArns=[CI], previewPrincipalArns=[B],
                      opsReadOnlyPrincipalArn=C))
    names = entries(result)
    assert sorted(names.values()) == sorted([A, B, C, CI])
    assert all(name.split("-access-")[1].startswith(arn.rsplit("/", 1)[1]) for name, arn in names.items())
    policies = {r.inputs["principalArn"]: r.inputs["policyArn"].rsplit("/", 1)[1] for r in result.of_type(ASSOCIATION)}
    assert policies == {A: "AmazonEKSClusterAdminPolicy", CI: "AmazonEKSClusterAdminPolicy",
                        B: "AmazonEKSViewPolicy", C: "AmazonEKSViewPolicy"}


# --- duplicates are refused in config ---------------------------------------------------------------


@pytest.mark.parametrize(("cluster", "path", "earlier"), [
    ({"adminPrincipalArns": [A, A]}, "cluster.adminPrincipalArns[1]", "cluster.adminPrincipalArns[0]"),
    ({"adminPrincipalArns": [A], "opsReadOnlyPrincipalArn": A}, "cluster.adminPrincipalArns[0]",
     "cluster.opsReadOnlyPrincipalArn"),
    ({"deployerPrincipalArns": [CI], "adminPrincipalArns": [CI]}, "cluster.adminPrincipalArns[0]",
     "cluster.deployerPrincipalArns[0]"),
    ({"previewPrincipalArns": [B, B]}, "cluster.previewPrincipalArns[1]", "cluster.previewPrincipalArns[0]"),
])
def test_a_principal_listed_twice_is_refused_before_anything_is_registered(
    cluster: dict[str, Any], path: str, earlier: str
):
    result, error = run_rejected(_dev(**cluster))
    assert isinstance(error, ConfigError)
    assert str(error).startswith(f"Pulumi.dev.yaml: {path} = ")
    assert f"a principal gets one access entry; {earlier} already lists it" in str(error)
    assert "fix: remove it from " in str(error)
    assert result.registered == []


# --- the identity running Pulumi: the creator's entry, adopted later ---------------------------------


@pytest.fixture
def import_ids() -> Iterator[dict[str, str]]:
    """`<type>::<name>` -> the `import` option the resource was registered with."""
    seen: dict[str, str] = {}
    original = RecordingMonitor.RegisterResource

    def recording(self: RecordingMonitor, request: Any) -> Any:
        seen[f"{request.type}::{request.name}"] = request.importId
        return original(self, request)

    RecordingMonitor.RegisterResource = recording  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        RecordingMonitor.RegisterResource = original  # type: ignore[method-assign]


def _cluster_exists(monkeypatch: pytest.MonkeyPatch, name: str, with_entries: set[str]) -> None:
    monkeypatch.setitem(mocks.INVOKES, "aws:eks/getClusters:getClusters",
                        lambda args, ctx: {"id": ctx.region, "names": [name]})

    def entry(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
        if args["principalArn"] not in with_entries:
            raise InvokeFailure(f"reading EKS Access Entry ({name}:{args['principalArn']}): couldn't find resource")
        return {"id": f"{name}:{args['principalArn']}", "clusterName": name, "principalArn": args["principalArn"],
                "type": "STANDARD"}

    monkeypatch.setitem(mocks.INVOKES, "aws:eks/getAccessEntry:getAccessEntry", entry)


def test_the_creator_listed_as_deployer_is_left_to_eks_when_the_cluster_is_created(import_ids: dict[str, str]):
    # pulumi-eks creates the cluster with bootstrapClusterCreatorAdminPermissions: true (cluster.ts:733-752):
    # an entry of ours for the same principal would answer 409.
    result = run(_dev(deployerPrincipalArns=[CALLER, CI]))
    assert sorted(entries(result).values()) == [CI]
    assert not any(import_ids[f"{ENTRY}::{name}"] for name in entries(result))


def test_the_next_run_adopts_the_creator_entry_whoever_runs_it(
    monkeypatch: pytest.MonkeyPatch, import_ids: dict[str, str]
):
    _cluster_exists(monkeypatch, "gpu-dev", with_entries={CALLER, CI})
    result = run(_dev(deployerPrincipalArns=[CALLER, CI], adminPrincipalArns=[A]))
    named = {arn: name for name, arn in entries(result).items()}
    assert sorted(named) == sorted([A, CALLER, CI])
    assert import_ids[f"{ENTRY}::{named[CALLER]}"] == f"gpu-dev:{CALLER}"
    # Already ours: the id the state holds, which the engine treats as no import.
    assert import_ids[f"{ENTRY}::{named[CI]}"] == f"gpu-dev:{CI}"
    assert import_ids[f"{ENTRY}::{named[A]}"] == ""  # new: created
    assert import_ids[f"{ASSOCIATION}::{named[CALLER]}"] == (
        f"gpu-dev#{CALLER}#arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy")


def test_an_unlisted_deployer_without_an_entry_stops_the_up_with_the_fix(monkeypatch: pytest.MonkeyPatch):
    _cluster_exists(monkeypatch, "gpu-dev", with_entries={CI})
    values = _dev(deployerPrincipalArns=[CI], endpointPublicAccessCidrs=[REAL_CIDR])
    result, error = run_rejected(values, preview=False)
    assert isinstance(error, ConfigError)
    assert str(error).startswith(f"Pulumi.dev.yaml: cluster.deployerPrincipalArns: {CALLER} runs Pulumi but has "
                                 "no access entry in cluster 'gpu-dev'")
    assert "fix: add it to cluster.deployerPrincipalArns" in str(error)
    assert result.of_type("aws:eks/nodeGroup:NodeGroup") == []


def _caller(role: str) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """getCallerIdentity answering a session of `role` (an assumed-role ARN; the mocks map it back to the role)."""
    session = role.replace(":iam::", ":sts::").replace(":role/", ":assumed-role/") + "/session"
    return lambda args, ctx: {"id": "210987654321", "accountId": "210987654321", "userId": "AROAEXAMPLE:x",
                              "arn": session}


def test_the_first_deployer_creates_the_cluster_and_another_identity_is_refused_until_it_exists(
    monkeypatch: pytest.MonkeyPatch,
):
    # The creator comes from the configuration (deployerPrincipalArns[0]), not from who runs Pulumi: its entry is
    # left to EKS; another deployer's first `pulumi up` is refused; once the cluster exists both run it.
    person = "arn:aws:iam::210987654321:role/alice"
    for creator, other in ((person, CI), (CI, person)):
        values = _dev(deployerPrincipalArns=[creator, other], endpointPublicAccessCidrs=[REAL_CIDR])
        # A real `pulumi up` also refuses the documentation snapshot id (components/deploy_checks.py): a real one.
        values["inferenceServices"][0]["modelVolume"]["snapshotId"] = "snap-0a1b2c3d4e5f60718"
        monkeypatch.setitem(mocks.INVOKES, "aws:index/getCallerIdentity:getCallerIdentity", _caller(other))
        refused, error = run_rejected(values, preview=False)
        assert isinstance(error, ConfigError)
        assert str(error).startswith(
            f"Pulumi.dev.yaml: cluster.deployerPrincipalArns[0] = {creator!r} creates cluster 'gpu-dev' (EKS gives "
            f"it the creator's admin access entry, so this stack leaves its entry out), but {other} runs this "
            "`pulumi up`")
        assert str(error).endswith("fix: run the first `pulumi up` as the first entry of "
                                   "cluster.deployerPrincipalArns, or list this identity first there")
        assert refused.of_type(ENTRY) == []
        monkeypatch.setitem(mocks.INVOKES, "aws:index/getCallerIdentity:getCallerIdentity", _caller(creator))
        first = run(values, preview=False)
        assert sorted(entries(first).values()) == [other]
        _cluster_exists(monkeypatch, "gpu-dev", with_entries={person, CI})
        for runner in (creator, other):
            monkeypatch.setitem(mocks.INVOKES, "aws:index/getCallerIdentity:getCallerIdentity", _caller(runner))
            second = run(values, preview=False)
            assert conflicts(entries(first), entries(second)) == []
            assert sorted(entries(second).values()) == sorted([person, CI])
        monkeypatch.setitem(mocks.INVOKES, "aws:eks/getClusters:getClusters", lambda a, c: {"id": "x", "names": []})


def test_prod_registers_the_same_resources_whichever_ci_role_runs_it(monkeypatch: pytest.MonkeyPatch):
    # preview-prod-main saves the plan as the preview role, up-prod applies it as the deploy role (deploy.yml):
    # the engine refuses `up --plan` when a resource is not in the plan, or a planned one is not registered.
    values = stack_values("prod")
    urns: dict[str, set[str]] = {}
    for key in ("previewPrincipalArns", "deployerPrincipalArns"):
        role = values["cluster"][key][0]
        monkeypatch.setitem(mocks.INVOKES, "aws:index/getCallerIdentity:getCallerIdentity", _caller(role))
        urns[key] = {r.urn for r in run(values, stack="prod").resources}
    assert urns["previewPrincipalArns"] == urns["deployerPrincipalArns"]
    entry_principals = {u.rsplit("::", 1)[1] for u in urns["deployerPrincipalArns"] if f"{ENTRY}::" in u}
    assert any("preview-prod" in name for name in entry_principals)  # its view-only entry is in both
    assert not any("deploy-prod" in name for name in entry_principals)  # the creator's is EKS's, in both


# --- the Kubernetes provider authenticates as the AWS provider (pulumi-eks#669) ------------------------


def _token_args(result: Run) -> list[str]:
    kubeconfig = json.loads(result.one("pulumi:providers:kubernetes").inputs["kubeconfig"])
    return list(kubeconfig["users"][0]["user"]["exec"]["args"])


def test_the_kubeconfig_uses_the_stack_aws_profile():
    result = run(stack_values("dev"), aws_config={"profile": "platform-dev"})
    assert _token_args(result)[-2:] == ["--profile", "platform-dev"]
    assert result.one("eks:index:Cluster").inputs["providerCredentialOpts"] == {"profileName": "platform-dev"}


def test_the_kubeconfig_assumes_the_stack_role():
    role = "arn:aws:iam::210987654321:role/platform-deploy"
    result = run(stack_values("dev"), aws_config={"assumeRoles": [{"roleArn": role}]})
    assert _token_args(result)[-2:] == ["--role-arn", role]


def test_without_profile_or_role_the_kubeconfig_uses_the_default_chain():
    assert "--profile" not in _token_args(run(stack_values("dev")))


def test_a_chain_of_roles_is_refused_with_the_profile_fix():
    roles = [{"roleArn": A}, {"roleArn": B}]
    result, error = run_rejected(stack_values("dev"), aws_config={"assumeRoles": roles})
    assert "aws:assumeRoles" in str(error) and "name it in aws:profile instead" in str(error)
    assert result.of_type("eks:index:Cluster") == []


# --- zones by zone ID -------------------------------------------------------------------------------


def test_zones_are_chosen_by_id_without_the_ids_eks_refuses():
    # us-east-1 in the mocks: use1-az1..az4; EKS refuses control-plane subnets in use1-az3.
    # Source: https://docs.aws.amazon.com/eks/latest/userguide/network-reqs.html
    values = _dev(availabilityZones=3)
    subnets = run(values, region="us-east-1").of_type("aws:ec2/subnet:Subnet")
    zone_ids = {s.inputs["availabilityZoneId"] for s in subnets}
    assert zone_ids == {"use1-az1", "use1-az2", "use1-az4"}
    assert all("availabilityZone" not in s.inputs for s in subnets)


# --- the VPC and the service range ------------------------------------------------------------------


@pytest.mark.parametrize("cidr", ["172.20.0.0/16", "172.20.128.0/20", "172.20.0.0/24"])
def test_a_vpc_overlapping_the_service_range_is_refused_at_config_time(cidr: str):
    with pytest.raises(ConfigError) as error:
        load_stack_config(_dev(vpcCidr=cidr), stack_file="Pulumi.dev.yaml", today=TODAY)
    assert str(error.value).startswith(f'Pulumi.dev.yaml: cluster.vpcCidr = "{cidr}": the VPC must not overlap '
                                       "the cluster's Kubernetes service range 172.20.0.0/16")


@pytest.mark.parametrize("cidr", ["172.16.0.0/16", "172.21.0.0/16", "10.40.0.0/16"])
def test_a_vpc_beside_the_service_range_is_accepted(cidr: str):
    assert load_stack_config(_dev(vpcCidr=cidr), stack_file="Pulumi.dev.yaml", today=TODAY).cluster.vpc_cidr == cidr


# --- the GPU Operator chart upgrade, CRDs included ------------------------------------------------------


def test_an_operator_chart_bump_upgrades_its_crds_through_the_chart_hook():
    # Helm leaves CRDs alone on upgrade; the chart's pre-upgrade hook applies them when `operator.upgradeCRD`
    # is on, and Helm must skip OpenAPI validation (chart v26.7.0 values.yaml 87-89; NVIDIA's upgrade guide).
    release = run(stack_values("dev")).one("kubernetes:helm.sh/v3:Release", "gpu-operator")
    assert release.inputs["disableOpenapiValidation"] is True
    assert release.inputs["values"]["operator"]["upgradeCRD"] is True
    assert release.inputs["version"] == "v26.7.0"
    assert release.inputs.get("skipCrds") in (None, False)  # the chart's crds/ on the first install


# --- an unpinned GPU image rolls when the pool's kubelet version changes ---------------------------------


@pytest.fixture
def ignored() -> Iterator[dict[str, list[str]]]:
    """`<type>::<name>` -> the `ignoreChanges` option the resource was registered with."""
    seen: dict[str, list[str]] = {}
    original = RecordingMonitor.RegisterResource

    def recording(self: RecordingMonitor, request: Any) -> Any:
        seen[f"{request.type}::{request.name}"] = list(request.ignoreChanges)
        return original(self, request)

    RecordingMonitor.RegisterResource = recording  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        RecordingMonitor.RegisterResource = original  # type: ignore[method-assign]


def _deployed_pool(monkeypatch: pytest.MonkeyPatch, kubelet: str, *, self_managed: bool = False) -> None:
    """The dev cluster exists and its GPU pool l4-spot was deployed with images of kubelet `kubelet`."""
    _cluster_exists(monkeypatch, "gpu-dev", with_entries={CALLER})
    tag = "gpu-platform.io/kubelet-version"
    if self_managed:
        monkeypatch.setitem(mocks.INVOKES, "aws:autoscaling/getAmiIds:getAmiIds", lambda a, c: {
            "id": c.region, "arns": [], "names": ["l4-spot-asg-1234567"]})
        monkeypatch.setitem(mocks.INVOKES, "aws:autoscaling/getGroup:getGroup", lambda a, c: {
            "id": a["name"], "name": a["name"],
            "tags": [{"key": "gpu-platform.io/pool", "value": "l4-spot", "propagateAtLaunch": True},
                     {"key": tag, "value": kubelet, "propagateAtLaunch": True}]})
    else:
        monkeypatch.setitem(mocks.INVOKES, "aws:eks/getNodeGroups:getNodeGroups", lambda a, c: {
            "id": a["clusterName"], "clusterName": a["clusterName"], "names": ["l4-spot"]})
        monkeypatch.setitem(mocks.INVOKES, "aws:eks/getNodeGroup:getNodeGroup", lambda a, c: {
            "id": f"{a['clusterName']}:{a['nodeGroupName']}", "clusterName": a["clusterName"],
            "nodeGroupName": a["nodeGroupName"], "tags": {tag: kubelet, "gpu-platform.io/pool": "l4-spot"}})


def _template_ignores(result: Run, ignored: dict[str, list[str]]) -> list[str]:
    (template,) = [r for r in result.of_type("aws:ec2/launchTemplate:LaunchTemplate") if "l4-spot" in r.name]
    return ignored[f"aws:ec2/launchTemplate:LaunchTemplate::{template.name}"]


@pytest.mark.parametrize("self_managed", [False, True])
def test_an_unpinned_pool_rolls_when_its_kubelet_version_changes(
    monkeypatch: pytest.MonkeyPatch, ignored: dict[str, list[str]], self_managed: bool
):
    _deployed_pool(monkeypatch, "1.34", self_managed=self_managed)
    values = _dev()
    values["gpuNodeGroups"][0]["selfManaged"] = self_managed
    result = run(values)
    assert _template_ignores(result, ignored) == []  # the template takes 1.35's current image now
    (template,) = [r for r in result.of_type("aws:ec2/launchTemplate:LaunchTemplate") if "l4-spot" in r.name]
    assert "/eks/24.04/1.35/" in str(result.invokes) and template.inputs["imageId"].startswith("ami-")


@pytest.mark.parametrize("self_managed", [False, True])
def test_an_unpinned_pool_on_its_version_holds_its_image(
    monkeypatch: pytest.MonkeyPatch, ignored: dict[str, list[str]], self_managed: bool
):
    _deployed_pool(monkeypatch, "1.35", self_managed=self_managed)
    values = _dev()
    values["gpuNodeGroups"][0]["selfManaged"] = self_managed
    assert _template_ignores(run(values), ignored) == ["imageId"]


def test_a_first_deploy_holds_the_image_it_takes(ignored: dict[str, list[str]]):
    assert _template_ignores(run(_dev()), ignored) == ["imageId"]


def test_a_self_managed_pool_replaces_its_instances_on_a_new_template_version():
    values = _dev()
    values["gpuNodeGroups"][0]["selfManaged"] = True
    group = run(values).one("aws:autoscaling/group:Group", "l4-spot")
    assert group.inputs["instanceRefresh"] == {"strategy": "Rolling"}


def test_a_real_up_still_refuses_a_deployer_of_the_documentation_account():
    values = _dev(deployerPrincipalArns=["arn:aws:iam::111122223333:role/ci"], endpointPublicAccessCidrs=[REAL_CIDR])
    result, error = run_rejected(values, preview=False, account="210987654321")
    assert 'cluster.deployerPrincipalArns[0] = "arn:aws:iam::111122223333:role/ci": account 111122223333' in str(error)
    assert result.registered == []


def test_a_preview_role_that_would_create_the_cluster_is_refused_at_up_and_warned_in_a_preview(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    # EKS gives the creator an admin entry: a view-only pull-request role must never be the one that creates it.
    preview_role = "arn:aws:iam::210987654321:role/gpu-platform-preview-dev"
    monkeypatch.setitem(mocks.INVOKES, "aws:index/getCallerIdentity:getCallerIdentity", _caller(preview_role))
    values = _dev(previewPrincipalArns=[preview_role], deployerPrincipalArns=[CI],
                  endpointPublicAccessCidrs=[REAL_CIDR])
    values["inferenceServices"][0]["modelVolume"]["snapshotId"] = "snap-0a1b2c3d4e5f60718"
    result, error = run_rejected(values, preview=False)
    assert isinstance(error, ConfigError)
    assert str(error) == (
        f"Pulumi.dev.yaml: cluster.previewPrincipalArns: {preview_role} is a pull-request preview role (view-only) "
        "but would create cluster 'gpu-dev', and EKS gives the identity that creates a cluster the creator's admin "
        "access entry (AmazonEKSClusterAdminPolicy): every pull request would then run as a cluster admin; fix: run "
        "the first `pulumi up` as a role listed in cluster.deployerPrincipalArns (the deploy workflow's role), "
        "never as a preview role")
    assert result.of_type(ENTRY) == []
    run(values)  # a preview goes on, and says the same
    assert any("is a pull-request preview role (view-only) but would create" in r.getMessage()
               for r in caplog.records)
    _cluster_exists(monkeypatch, "gpu-dev", with_entries={preview_role, CI})
    assert sorted(entries(run(values, preview=False)).values()) == sorted([preview_role, CI])  # after: no refusal


# --- node group sizes: the stack file's desiredSize is the node count (issue 52) ---------------------------------


@pytest.mark.parametrize("self_managed", [False, True])
def test_a_gpu_groups_desired_size_is_applied_not_ignored(ignored: dict[str, list[str]], self_managed: bool):
    # No autoscaler in the stack owns the size: ignoring it made "desiredSize: 0 to stop paying" do nothing after
    # the first deploy.
    values = _dev()
    values["gpuNodeGroups"][0]["selfManaged"] = self_managed
    values["gpuNodeGroups"][0]["desiredSize"] = 0
    result = run(values)
    if self_managed:
        group = result.one("aws:autoscaling/group:Group", "l4-spot")
        assert group.inputs["desiredCapacity"] == 0
        assert "desiredCapacity" not in ignored[f"aws:autoscaling/group:Group::{group.name}"]
    else:
        group = result.one("aws:eks/nodeGroup:NodeGroup", "l4-spot")
        assert group.inputs["scalingConfig"]["desiredSize"] == 0
        assert "scalingConfig.desiredSize" not in ignored[f"aws:eks/nodeGroup:NodeGroup::{group.name}"]


def test_the_system_groups_desired_size_is_applied_not_ignored(ignored: dict[str, list[str]]):
    result = run(_dev())
    (system,) = [r for r in result.of_type("aws:eks/nodeGroup:NodeGroup") if "l4-spot" not in r.name]
    assert ignored[f"aws:eks/nodeGroup:NodeGroup::{system.name}"] == []
