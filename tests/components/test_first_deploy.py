"""First deploy, update, destroy and rebuild: the eight defects a real `pulumi up` hit, each under the mocks.

`run(..., preview=False)` is a `pulumi up` update (`pulumi.runtime.is_dry_run()` False); the default is
a preview. Each test names the item of issue 8 it covers.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterator
from typing import Any

import pytest

from components.config import ConfigError, load_stack_config
from components.deploy_checks import REAL_UP_REFUSED, refuse_documentation_values
from components.gpu_node_group import image_pins
from components.gpu_operator import helm_values
from tests.components.harness import TODAY, run, run_rejected, stack_values
from tools.engine.mocks import invokes
from tools.engine.mocks import monitor as mocks
from tools.engine.mocks.monitor import RecordingMonitor

# A public address outside every documentation range (AWS us-west-2 EC2 range), and an account of ours.
REAL_CIDR = "34.223.10.0/24"
REAL_ROLE = "arn:aws:iam::210987654321:role/eks-mcp-readonly"
# A real `pulumi up` runs in a real account (get_caller_identity); the mocks' default is the documentation one.
REAL_ACCOUNT = "210987654321"
REAL_SNAPSHOT = "snap-0a1b2c3d4e5f60718"


def deployable(stack: str) -> dict[str, Any]:
    """The stack with the documentation values replaced by real-looking ones."""
    values = copy.deepcopy(stack_values(stack))
    values["cluster"]["endpointPublicAccessCidrs"] = [REAL_CIDR]
    if "opsReadOnlyPrincipalArn" in values["cluster"]:
        values["cluster"]["opsReadOnlyPrincipalArn"] = REAL_ROLE
    for key in ("deployerPrincipalArns", "previewPrincipalArns"):  # the CI roles, in an account of ours
        values["cluster"][key] = [arn.replace(":111122223333:", f":{REAL_ACCOUNT}:") for arn in values["cluster"][key]]
    for service in values.get("inferenceServices", []):
        if "modelVolume" in service:
            service["modelVolume"]["snapshotId"] = REAL_SNAPSHOT
        ingress = service.get("ingress") or {}
        for key in ("certificateArn", "wafAclArn"):
            if ingress.get(key):
                ingress[key] = ingress[key].replace(":111122223333:", f":{REAL_ACCOUNT}:")
    return values


@pytest.fixture
def options() -> Iterator[dict[str, Any]]:
    """Resource name -> the RegisterResource request's options (importId, ignoreChanges, ...)."""
    seen: dict[str, Any] = {}
    original = RecordingMonitor.RegisterResource

    def recording(self: RecordingMonitor, request: Any) -> Any:
        seen[request.name] = {"importId": request.importId, "ignoreChanges": list(request.ignoreChanges),
                              "deleteBeforeReplace": request.deleteBeforeReplace}
        return original(self, request)

    RecordingMonitor.RegisterResource = recording  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        RecordingMonitor.RegisterResource = original  # type: ignore[method-assign]


# --- 1. documentation ranges and accounts ----------------------------------------------------------


def test_up_refuses_the_documentation_cidr_of_dev_and_creates_nothing():
    result, error = run_rejected(stack_values("dev"), preview=False, account=REAL_ACCOUNT)
    assert isinstance(error, ConfigError)
    message = str(error)
    assert 'Pulumi.dev.yaml: cluster.endpointPublicAccessCidrs[0] = "203.0.113.0/24": an RFC 5737 documentation' \
        in message
    assert "curl https://checkip.amazonaws.com" in message
    assert result.registered == []


def test_up_refuses_the_documentation_cidr_and_account_of_prod():
    _, error = run_rejected(stack_values("prod"), stack="prod", preview=False, account=REAL_ACCOUNT)
    message = str(error)
    assert "the stack configuration has 7 problems" in message  # with the serving section's three
    assert 'cluster.endpointPublicAccessCidrs[0] = "198.51.100.0/24"' in message
    assert ('cluster.opsReadOnlyPrincipalArn = "arn:aws:iam::111122223333:role/eks-mcp-readonly": account '
            "111122223333 is AWS's documentation account") in message
    # The CI identities the shipped workflows assume: documentation values, refused like the others.
    for key, role in (("deployerPrincipalArns", "gpu-platform-deploy-prod"),
                      ("previewPrincipalArns", "gpu-platform-preview-prod")):
        assert (f'cluster.{key}[0] = "arn:aws:iam::111122223333:role/{role}": account 111122223333 is AWS\'s '
                "documentation account, so CreateAccessEntry would fail") in message


def test_up_refuses_the_documentation_values_of_every_section_of_prod():
    # Snapshot ids, certificate and WAF ARNs: refused like the cluster's, each with its key, value and fix.
    _, error = run_rejected(stack_values("prod"), stack="prod", preview=False, account=REAL_ACCOUNT)
    message = str(error)
    assert "the stack configuration has 7 problems" in message
    assert ('inferenceServices[0].modelVolume.snapshotId = "snap-0123456789abcdef0": a placeholder snapshot id from '
            "the documentation: the VolumeSnapshot never becomes ready, so every replica stays Pending on its model "
            "volume; fix: set the id of your model snapshot") in message
    assert ('inferenceServices[0].ingress.certificateArn = "arn:aws:acm:us-west-2:111122223333:certificate/'
            "00000000-0000-0000-0000-000000000000\": account 111122223333 is AWS's documentation account, so the "
            "ALB's HTTPS listener cannot use that certificate") in message
    assert "inferenceServices[0].ingress.wafAclArn = " in message
    assert "the ALB cannot be associated with that web ACL" in message


def test_a_kms_key_of_the_documentation_account_is_refused_at_up():
    values = deployable("dev")
    values["inferenceServices"][0]["modelVolume"]["kmsKeyArn"] = (
        "arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab")
    _, error = run_rejected(values, preview=False, account=REAL_ACCOUNT)
    assert "inferenceServices[0].modelVolume.kmsKeyArn" in str(error)
    assert "no volume can be restored with that key" in str(error)


def test_preview_accepts_the_documentation_values():
    assert run(stack_values("prod"), stack="prod").one("eks:index:Cluster").inputs["name"] == "gpu-prod"


def test_up_accepts_real_values():
    result = run(deployable("prod"), stack="prod", preview=False, account=REAL_ACCOUNT)  # as the deploy role
    assert result.one("eks:index:Cluster").inputs["publicAccessCidrs"] == [REAL_CIDR]


def test_a_range_inside_a_documentation_range_is_refused_too():
    values = deployable("dev")
    values["cluster"]["endpointPublicAccessCidrs"] = [REAL_CIDR, "192.0.2.128/25"]
    _, error = run_rejected(values, preview=False, account=REAL_ACCOUNT)
    assert 'cluster.endpointPublicAccessCidrs[1] = "192.0.2.128/25"' in str(error)


def test_up_in_the_documentation_account_reports_the_refusal_and_goes_on(caplog: pytest.LogCaptureFixture):
    # No one holds credentials of AWS's documentation account: a run there (the offline gate's mocks) deploys
    # nothing, so the refusal a real account gets is logged once, with its whole message, and the run goes on.
    result = run(stack_values("dev"), preview=False, account="111122223333")
    assert result.one("eks:index:Cluster").inputs["publicAccessCidrs"] == ["203.0.113.0/24"]
    refused = [r.getMessage() for r in caplog.records if r.getMessage().startswith(REAL_UP_REFUSED)]
    assert len(refused) == 1
    assert 'Pulumi.dev.yaml: cluster.endpointPublicAccessCidrs[0] = "203.0.113.0/24"' in refused[0]
    assert "curl https://checkip.amazonaws.com" in refused[0]



# --- the Spot service-linked role an account already holds ----------------------------------------------------

GET_ROLES = "aws:iam/getRoles:getRoles"
SPOT_ROLE = (("/aws-service-role/spot.amazonaws.com/", "AWSServiceRoleForEC2Spot"),)
SPOT_ROLE_TAKEN = ('Pulumi.dev.yaml: karpenter.spotServiceLinkedRole = "create": this account already has the Spot '
                   "service-linked role AWSServiceRoleForEC2Spot (path /aws-service-role/spot.amazonaws.com/)")


@pytest.fixture
def account_with_spot_role(monkeypatch: pytest.MonkeyPatch) -> None:
    # Another stack of the account (dev and prod sharing one), or this one destroyed: the role is retained.
    monkeypatch.setitem(mocks.INVOKES, GET_ROLES, invokes.roles_answer(
        (*SPOT_ROLE, ("/aws-service-role/autoscaling.amazonaws.com/", "AWSServiceRoleForAutoScaling"))))


@pytest.mark.usefixtures("account_with_spot_role")
def test_up_with_create_where_the_spot_role_exists_is_refused_before_anything_is_created():
    result, error = run_rejected(deployable("dev"), preview=False, account=REAL_ACCOUNT)
    assert isinstance(error, ConfigError)
    message = str(error)
    assert message.startswith(SPOT_ROLE_TAKEN) and "\n" not in message
    assert "fix: set karpenter.spotServiceLinkedRole: adopt" in message
    assert result.registered == []
    assert (GET_ROLES, {"pathPrefix": "/aws-service-role/spot.amazonaws.com/"}) in [
        (token, {k: v for k, v in args.items() if v is not None}) for token, args in result.invokes]


@pytest.mark.usefixtures("account_with_spot_role")
def test_preview_with_create_where_the_spot_role_exists_warns_and_previews(caplog: pytest.LogCaptureFixture):
    result = run(deployable("dev"), account=REAL_ACCOUNT)
    assert result.of_type("aws:iam/serviceLinkedRole:ServiceLinkedRole")
    refused = [r.getMessage() for r in caplog.records if r.getMessage().startswith(REAL_UP_REFUSED)]
    assert [m.removeprefix(REAL_UP_REFUSED)[:len(SPOT_ROLE_TAKEN)] for m in refused] == [SPOT_ROLE_TAKEN]


@pytest.mark.usefixtures("account_with_spot_role", "options")
def test_adopt_where_the_spot_role_exists_imports_it(options: dict[str, Any]):
    values = deployable("dev")
    values["karpenter"]["spotServiceLinkedRole"] = "adopt"
    run(values, preview=False, account=REAL_ACCOUNT)
    assert options["karpenter-spot-service-linked-role"]["importId"] == (
        f"arn:aws:iam::{REAL_ACCOUNT}:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot")


def test_create_in_an_account_without_the_spot_role_creates_it():
    # The mocks' default account never ran Spot: ListRoles under the path answers no role.
    result = run(deployable("dev"), preview=False, account=REAL_ACCOUNT)
    (role,) = result.of_type("aws:iam/serviceLinkedRole:ServiceLinkedRole")
    assert role.inputs["awsServiceName"] == "spot.amazonaws.com"
    assert any(token == GET_ROLES for token, _ in result.invokes)


@pytest.mark.usefixtures("account_with_spot_role")
def test_the_spot_role_is_looked_up_only_for_create_with_a_spot_pool():
    on_demand = deployable("dev")
    on_demand["karpenter"]["pools"][0]["capacityTypes"] = ["on-demand"]
    none = deployable("dev")
    none["karpenter"]["spotServiceLinkedRole"] = "none"
    for values in (on_demand, none):
        result = run(values, preview=False, account=REAL_ACCOUNT)
        assert not any(token == GET_ROLES for token, _ in result.invokes)


def test_the_account_decides_only_when_there_is_something_to_refuse():
    def cluster(values: dict[str, Any]) -> Any:
        return load_stack_config(values, stack_file="Pulumi.dev.yaml", today=TODAY).cluster

    # Nothing to refuse: the account is never asked (no runtime here, so an invoke would fail).
    refuse_documentation_values(cluster(deployable("dev")), dry_run=False)
    documented = cluster(stack_values("dev"))
    refuse_documentation_values(documented, dry_run=True)  # a preview never refuses
    with pytest.raises(ConfigError, match=r"203\.0\.113\.0/24"):
        refuse_documentation_values(documented, dry_run=False, caller_account=REAL_ACCOUNT)
    refuse_documentation_values(documented, dry_run=False, caller_account="111122223333")  # a warning


# --- 2. the system node group is replaceable --------------------------------------------------------


def test_system_node_group_is_deleted_before_its_replacement_so_the_name_does_not_collide(
    options: dict[str, Any]
):
    system = run(stack_values("prod"), stack="prod").one("aws:eks/nodeGroup:NodeGroup", "system")
    assert system.inputs["nodeGroupName"] == "system"
    assert options[system.name]["deleteBeforeReplace"] is True


# --- 3. the cluster creator's admin access: tests/components/test_day_two.py (deployers, keyed entries) ----


# --- 4. the control-plane log group after destroy and rebuild ---------------------------------------


def test_fresh_account_creates_the_log_group(options: dict[str, Any]):
    group = run(stack_values("dev")).one("aws:cloudwatch/logGroup:LogGroup")
    assert group.inputs["name"] == "/aws/eks/gpu-dev/cluster"
    assert group.inputs["retentionInDays"] == 365
    assert options[group.name]["importId"] == ""


def test_rebuild_adopts_the_log_group_eks_recreated_after_destroy(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, Any]
):
    left_behind = "/aws/eks/gpu-dev/cluster"
    monkeypatch.setitem(mocks.INVOKES, "aws:cloudwatch/getLogGroups:getLogGroups", lambda args, ctx: {
        "id": ctx.region, "logGroupNamePrefix": args["logGroupNamePrefix"], "logGroupNames": [left_behind],
        "arns": [f"arn:aws:logs:{ctx.region}:{ctx.account}:log-group:{left_behind}"]})
    result = run(deployable("dev"), preview=False, account=REAL_ACCOUNT)  # as the deploy role, which creates it
    group = result.one("aws:cloudwatch/logGroup:LogGroup")
    assert options[group.name]["importId"] == left_behind
    assert group.urn in result.one("eks:index:Cluster").dependencies


# --- 5. the GPU image is pinned ---------------------------------------------------------------------


def _gpu_template(result: Any) -> Any:
    return next(r for r in result.of_type("aws:ec2/launchTemplate:LaunchTemplate") if "l4-spot" in r.name)


def test_pinned_image_is_used_as_is_and_never_read_from_ssm(options: dict[str, Any]):
    values = copy.deepcopy(stack_values("dev"))
    values["gpuNodeGroups"][0]["imageId"] = "ami-0123456789abcdef0"
    result = run(values)
    template = _gpu_template(result)
    assert template.inputs["imageId"] == "ami-0123456789abcdef0"
    assert "aws:ssm/getParameter:getParameter" not in [token for token, _ in result.invokes]
    assert options[template.name]["ignoreChanges"] == []


def test_unpinned_image_is_held_and_kept_out_of_the_user_data(options: dict[str, Any]):
    result = run(stack_values("dev"))
    template = _gpu_template(result)
    assert options[template.name]["ignoreChanges"] == ["imageId"]
    script = base64.b64decode(template.inputs["userData"]).decode()
    assert template.inputs["imageId"] not in script
    assert "eks.amazonaws.com/nodegroup-image" not in script


def test_image_pins_show_each_pool_its_parameter_and_its_pin():
    from components.config import load_stack_config  # noqa: PLC0415

    values = copy.deepcopy(stack_values("prod"))
    values["gpuNodeGroups"][0]["imageId"] = "ami-0123456789abcdef0"
    pins = image_pins(load_stack_config(values, stack_file="Pulumi.prod.yaml", today=TODAY))
    assert [(p.pool, p.image_id) for p in pins] == [("a10g-baseline", "ami-0123456789abcdef0"),
                                                    ("l4-spot-burst", None)]
    assert pins[1].ssm_parameter.endswith("/24.04/1.35/stable/current/amd64/hvm/ebs-gp3/ami-id")
    assert "pinned to ami-0123456789abcdef0" in pins[0].describe()
    assert "not pinned" in pins[1].describe()


def test_rejects_an_image_id_that_is_not_an_ami():
    _, error = run_rejected({**stack_values("dev"), "gpuNodeGroups": [
        {**stack_values("dev")["gpuNodeGroups"][0], "imageId": "AMI-0123456789ABCDEF0"}]})
    assert 'gpuNodeGroups[0].imageId = "AMI-0123456789ABCDEF0"' in str(error)
    assert "nearest valid choice: ami-0123456789abcdef0" in str(error)


def _karpenter_pool(**extra: Any) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("dev"))
    values["karpenter"] = {"version": "1.14.1", "pools": [
        {"name": "gpu-spot", "os": "bottlerocket", "driverVersion": "580", "instanceTypes": ["g6.xlarge"], **extra}]}
    return values


def test_karpenter_pool_on_a_baked_image_must_pin_its_alias_version():
    _, error = run_rejected(_karpenter_pool())
    assert "karpenter.pools[0].imageVersion = null: pin the bottlerocket image release" in str(error)
    assert "nearest valid choice: v1.26.0" in str(error)


def test_karpenter_pool_refuses_latest_as_a_pin():
    _, error = run_rejected(_karpenter_pool(imageVersion="latest"))
    assert 'karpenter.pools[0].imageVersion = "latest": an image release is v followed by its version' in str(error)


def test_karpenter_pool_alias_is_family_at_the_pinned_version():
    from components.config import KarpenterPoolConfig  # noqa: PLC0415

    pool = KarpenterPoolConfig.model_validate(_karpenter_pool(imageVersion="v1.26.0")["karpenter"]["pools"][0])
    assert pool.ami_alias == "bottlerocket@v1.26.0"


# --- 6. Local Zones ---------------------------------------------------------------------------------


def test_local_zones_are_never_chosen(monkeypatch: pytest.MonkeyPatch):
    original = mocks.INVOKES["aws:index/getAvailabilityZones:getAvailabilityZones"]

    def with_local_zone(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
        answer = dict(original(args, ctx))
        region_only = any(f.get("name") == "opt-in-status" and f.get("values") == ["opt-in-not-required"]
                          for f in args.get("filters") or [])
        if not region_only:  # an account opted into Los Angeles: its name sorts before us-west-2a
            answer["names"] = ["us-west-2-lax-1a", *answer["names"]]
            answer["zoneIds"] = ["usw2-lax1-az1", *answer["zoneIds"]]
        return answer

    monkeypatch.setitem(mocks.INVOKES, "aws:index/getAvailabilityZones:getAvailabilityZones", with_local_zone)
    subnets = run(stack_values("dev")).of_type("aws:ec2/subnet:Subnet")
    assert sorted({s.inputs["availabilityZoneId"] for s in subnets}) == ["usw2-az1", "usw2-az2"]


# --- 7. cluster DNS from the service range ----------------------------------------------------------


def test_gpu_bootstrap_passes_the_cluster_dns_ip_of_the_service_range():
    result = run(stack_values("dev"))
    assert result.one("eks:index:Cluster").inputs["kubernetesServiceIpAddressRange"] == "172.20.0.0/16"
    script = base64.b64decode(_gpu_template(result).inputs["userData"]).decode()
    assert "--dns-cluster-ip 172.20.0.10" in script


def test_adopted_cluster_bootstrap_uses_its_own_service_range(monkeypatch: pytest.MonkeyPatch):
    original = mocks.INVOKES["aws:eks/getCluster:getCluster"]

    def service_range_10_100(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
        answer = dict(original(args, ctx))
        answer["kubernetesNetworkConfigs"] = [{"ipFamily": "ipv4", "serviceIpv4Cidr": "10.100.0.0/16",
                                               "serviceIpv6Cidr": ""}]
        return answer

    monkeypatch.setitem(mocks.INVOKES, "aws:eks/getCluster:getCluster", service_range_10_100)
    values = copy.deepcopy(stack_values("dev"))
    values["cluster"] = {"name": "shared-gpu", "kubernetesVersion": "1.35", "existing": True}
    script = base64.b64decode(_gpu_template(run(values)).inputs["userData"]).decode()
    assert "--dns-cluster-ip 10.100.0.10" in script


# --- 8. the DCGM ServiceMonitor ---------------------------------------------------------------------


def test_service_monitor_is_off_unless_the_stack_says_prometheus_operator_is_there():
    values = stack_values("dev")
    values["gpuOperator"]["serviceMonitor"] = False
    release = run(values).one("kubernetes:helm.sh/v3:Release", "gpu-operator").inputs
    assert release["values"]["dcgmExporter"]["serviceMonitor"] == {"enabled": False}


def test_service_monitor_is_on_when_the_stack_says_so():
    from components.config import GpuOperatorConfig  # noqa: PLC0415

    config = GpuOperatorConfig.model_validate(
        {"version": "v26.7.0", "driverVersion": "580.173.02", "serviceMonitor": True})
    assert helm_values(config, [])["dcgmExporter"]["serviceMonitor"] == {"enabled": True}


def test_matrix_command_line_shows_each_pool_image_pin(tmp_path: Any):
    import yaml  # noqa: PLC0415
    from typer.testing import CliRunner  # noqa: PLC0415

    from tests.components.harness import REPO  # noqa: PLC0415
    from tools.matrix.cli import app  # noqa: PLC0415

    stack = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())
    stack["config"]["gpu-platform:gpuNodeGroups"][0]["imageId"] = "ami-0123456789abcdef0"
    pinned = tmp_path / "Pulumi.pinned.yaml"
    pinned.write_text(yaml.safe_dump(stack))
    result = CliRunner().invoke(app, ["images", "--config-file", str(pinned)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(
        "l4-spot: ubuntu-24.04, kubelet 1.35, pinned to ami-0123456789abcdef0; current image: "
        "/aws/service/canonical/ubuntu/eks/24.04/1.35/stable/current/")
    shipped = CliRunner().invoke(app, ["images", "--stack", "dev"])
    assert "l4-spot: ubuntu-24.04, kubelet 1.35, not pinned (holds the image of its first deploy)" in shipped.output
