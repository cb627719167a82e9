"""`python -m tools.preview`: the command line of CONFIG.md section 3, the recording mocks, the artefacts."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from tests.conftest import TINY_PROGRAM, real_stack_file, run_preview_process, shipped_args
from tests.result_view import validate
from tools.engine.mocks import monitor as mocks
from tools.engine.records import UNKNOWN

TINY = ("--program", str(TINY_PROGRAM))


def _by_type(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in doc["resources"]:
        out.setdefault(r["type"], []).append(r)
    return out


# --------------------------------------------------------------------------------------------------
# A foreign program (--program)
# --------------------------------------------------------------------------------------------------


def test_previews_a_foreign_program_with_a_component_and_its_child(run_preview):
    run = run_preview(*TINY, "--json")
    assert run.returncode == 0, run.explain()
    doc = run.json()
    by_type = _by_type(doc)
    assert set(by_type) == {"pulumi:pulumi:Stack", "tiny:index:Web", "aws:iam/role:Role",
                            "kubernetes:core/v1:ConfigMap"}
    stack = by_type["pulumi:pulumi:Stack"][0]
    web = by_type["tiny:index:Web"][0]
    role = by_type["aws:iam/role:Role"][0]
    assert doc["stack"] == "dev"
    assert web["parent"] == stack["urn"]
    assert role["parent"] == web["urn"]
    # The engine's URN: the parent's type chain, the root stack left out.
    assert role["urn"] == "urn:pulumi:dev::tiny::tiny:index:Web$aws:iam/role:Role::web-role"
    assert web["urn"] == "urn:pulumi:dev::tiny::tiny:index:Web::web"


def test_mocks_answer_invokes_and_outputs_so_every_apply_runs(run_preview):
    doc = run_preview(*TINY, "--phase", "update", "--json").json()
    config_map = _by_type(doc)["kubernetes:core/v1:ConfigMap"][0]["inputs"]
    role = _by_type(doc)["aws:iam/role:Role"][0]["inputs"]
    # getAvailabilityZones answers for the stack's region (aws:region: eu-west-1).
    assert json.loads(config_map["data"]["zones"]) == ["eu-west-1a", "eu-west-1b", "eu-west-1c", "eu-west-1d"]
    # The role's ARN comes from the mocks (auto-named role, documentation account) through an apply.
    assert re.fullmatch(r"arn:aws:iam::111122223333:role/web-role-[0-9a-f]{7}", config_map["data"]["role"])
    # Object config arrives as JSON, as the CLI passes it.
    assert config_map["data"]["owners"] == "alice,bob"
    policy = json.loads(role["assumeRolePolicy"])
    assert policy == {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"Service": "ec2.amazonaws.com"}}]}


def test_json_mode_prints_exactly_one_document_and_program_output_goes_to_stderr(run_preview):
    run = run_preview(*TINY, "--json")
    assert json.loads(run.stdout)["stack"] == "dev"
    assert run.stdout.strip().startswith("{") and run.stdout.strip().endswith("}")
    assert "tiny program: done" not in run.stdout
    assert "tiny program: done" in run.stderr


def test_same_input_prints_byte_identical_json(run_preview):
    first = run_preview(*TINY, "--json")
    second = run_preview(*TINY, "--json", fresh=True)
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout


def test_first_preview_leaves_computed_outputs_unknown_and_inputs_known(run_preview):
    # A first `pulumi preview`: nothing exists, so the role's ARN (a provider output) is unknown, and so is
    # every input derived from it through an apply; the program's own literals stay known.
    # Source: pulumi/pulumi sdk/go/common/resource/plugin/rpc.go line 73 (UnknownStringValue)
    doc = run_preview(*TINY, "--json").json()
    assert doc["phase"] == "preview"
    config_map = _by_type(doc)["kubernetes:core/v1:ConfigMap"][0]["inputs"]
    role = _by_type(doc)["aws:iam/role:Role"][0]["inputs"]
    assert config_map["data"]["role"] == UNKNOWN
    assert config_map["data"]["owners"] == "alice,bob"
    assert json.loads(config_map["data"]["zones"])[0] == "eu-west-1a"  # invokes answer during preview
    assert json.loads(role["assumeRolePolicy"])["Version"] == "2012-10-17"


def test_out_writes_resources_json_manifests_and_summary(run_preview):
    run = run_preview(*TINY, "--phase", "update", "--json", out=True)
    assert run.returncode == 0, run.explain()
    out = run.out_dir
    assert json.loads((out / "resources.json").read_text()) == run.json()
    manifests = sorted((out / "manifests").glob("*.yaml"))
    assert [m.name for m in manifests] == [m.name for m in manifests if m.name.startswith("configmap-tiny-settings-")]
    assert len(manifests) == 1
    obj = yaml.safe_load(manifests[0].read_text())
    assert obj["apiVersion"] == "v1" and obj["kind"] == "ConfigMap"
    assert re.fullmatch(r"settings-[0-9a-f]{8}", obj["metadata"]["name"])  # auto-named as the provider does
    summary = (out / "summary.md").read_text()
    assert "| `aws:iam/role:Role` | 1 |" in summary
    assert "## GPU pools" in summary and "## Services and the pools they can reach" in summary


def test_human_summary_lists_counts_and_the_policy_pack(run_preview):
    run = run_preview(*TINY)
    assert run.returncode == 0, run.explain()
    assert "Offline preview of stack dev" in run.stdout
    assert "Resources by provider: " in run.stdout and "aws:iam/role:Role" not in run.stdout
    assert "Policy pack:" in run.stdout
    assert "aws:iam/role:Role" in run_preview(*TINY, "--verbose").stdout


def test_config_file_option_replaces_the_stack_file(run_preview):
    run = run_preview(*TINY, "--config-file", str(TINY_PROGRAM / "Pulumi.untainted.yaml"), "--json")
    doc = json.loads(run.stdout)
    assert doc["stack"] == "dev"
    assert "aws:eks/nodeGroup:NodeGroup" in _by_type(doc)


def test_mandatory_violation_exits_1_and_is_reported(run_preview):
    run = run_preview(*TINY, "--stack", "untainted", "--json")
    if "no policy pack ran" in run.stdout:
        pytest.skip("tools/engine/gate.py or policies/PulumiPolicy.yaml is absent: no policy pack ran")
    assert run.returncode == 1, run.explain()
    violations = run.violations()
    assert {(v["policy"], v["enforcement"], v["urn"]) for v in violations} >= {
        ("gpu-nodes-tainted", "mandatory", "urn:pulumi:untainted::tiny::aws:eks/nodeGroup:NodeGroup::gpu")}
    assert run.json()["policyPack"]["ran"] is True


def test_missing_required_config_exits_2_without_traceback(run_preview):
    run = run_preview(*TINY, "--stack", "broken", "--json")
    assert run.returncode == 2
    assert run.json()["verdict"] == "REFUSED"  # stdout: the refused run's document (issue 56)
    assert "tiny:greeting" in run.stderr
    assert "Traceback" not in run.stderr


def test_unknown_stack_exits_2_listing_the_stacks_there_are(run_preview):
    run = run_preview(*TINY, "--stack", "nope")
    assert run.returncode == 2
    assert "Pulumi.nope.yaml" in run.stderr and "Pulumi.dev.yaml" in run.stderr


def test_unknown_invoke_exits_2_naming_the_token_and_the_table(run_preview):
    run = run_preview(*TINY, "--stack", "unknowninvoke", "--json")
    assert run.returncode == 2
    assert "aws:ec2/getInstanceType:getInstanceType" in run.stderr
    assert "INVOKES table in tools/engine/mocks/invokes.py" in run.stderr
    assert "Traceback" not in run.stderr


def test_program_crash_exits_2_naming_the_program_and_line(run_preview):
    run = run_preview(*TINY, "--stack", "crash")
    assert run.returncode == 2
    assert "tiny_program/__main__.py failed: ValueError: tiny program crashed on purpose (at __main__.py:" in run.stderr
    assert "Traceback" not in run.stderr


# --------------------------------------------------------------------------------------------------
# The mocks, in-process
# --------------------------------------------------------------------------------------------------


def _ctx(region: str = "us-west-2") -> mocks.MockContext:
    return mocks.MockContext(region=region, account=mocks.ACCOUNT_ID, partition="aws", config={})


def test_ami_ids_from_ssm_are_well_formed_and_deterministic():
    name = "/aws/service/eks/optimized-ami/1.35/amazon-linux-2023/x86_64/nvidia/recommended/image_id"
    first = mocks.INVOKES["aws:ssm/getParameter:getParameter"]({"name": name}, _ctx())["value"]
    second = mocks.INVOKES["aws:ssm/getParameter:getParameter"]({"name": name}, _ctx())["value"]
    other = mocks.INVOKES["aws:ssm/getParameter:getParameter"]({"name": name.replace("1.35", "1.34")}, _ctx())
    assert re.fullmatch(r"ami-[0-9a-f]{17}", first)
    assert first == second != other["value"]


def test_ssm_parameter_without_a_rule_is_an_error_naming_it():
    with pytest.raises(mocks.MockValueError, match="/my/app/setting"):
        mocks.INVOKES["aws:ssm/getParameter:getParameter"]({"name": "/my/app/setting"}, _ctx())


def test_availability_zones_carry_region_names_and_zone_ids():
    zones = mocks.INVOKES["aws:index/getAvailabilityZones:getAvailabilityZones"]({}, _ctx("ap-southeast-1"))
    assert zones["names"] == ["ap-southeast-1a", "ap-southeast-1b", "ap-southeast-1c", "ap-southeast-1d"]
    assert zones["zoneIds"] == ["apse1-az1", "apse1-az2", "apse1-az3", "apse1-az4"]


def test_policy_document_renders_iam_json_with_conditions():
    doc = mocks.INVOKES["aws:iam/getPolicyDocument:getPolicyDocument"]({"statements": [{
        "sid": "Irsa", "actions": ["sts:AssumeRoleWithWebIdentity"],
        "principals": [{"type": "Federated", "identifiers": ["arn:aws:iam::111122223333:oidc-provider/x"]}],
        "conditions": [{"test": "StringEquals", "variable": "x:sub", "values": ["system:serviceaccount:a:b"]}],
    }]}, _ctx())
    assert json.loads(doc["json"]) == {"Version": "2012-10-17", "Statement": [{
        "Sid": "Irsa", "Effect": "Allow", "Action": "sts:AssumeRoleWithWebIdentity",
        "Principal": {"Federated": "arn:aws:iam::111122223333:oidc-provider/x"},
        "Condition": {"StringEquals": {"x:sub": "system:serviceaccount:a:b"}}}]}
    assert json.loads(doc["minifiedJson"]) == json.loads(doc["json"])


def test_existing_eks_cluster_lookup_answers_endpoint_ca_oidc_and_vpc():
    cluster = mocks.INVOKES["aws:eks/getCluster:getCluster"]({"name": "gpu-prod"}, _ctx())
    assert re.fullmatch(r"https://[0-9A-F]{32}\.gr7\.us-west-2\.eks\.amazonaws\.com", cluster["endpoint"])
    assert cluster["certificateAuthorities"][0]["data"]
    assert cluster["identities"][0]["oidcs"][0]["issuer"].startswith("https://oidc.eks.us-west-2.amazonaws.com/id/")
    assert cluster["vpcConfig"]["vpcId"].startswith("vpc-")
    assert cluster["arn"] == "arn:aws:eks:us-west-2:111122223333:cluster/gpu-prod"


def test_unknown_invoke_token_is_an_error_naming_where_to_add_it():
    expected = r"aws:foo/getBar:getBar.*INVOKES table in tools/engine/mocks/invokes"
    with pytest.raises(mocks.UnknownInvokeError, match=expected):
        mocks.RecordingMocks().answer_invoke("aws:foo/getBar:getBar", {})


# --------------------------------------------------------------------------------------------------
# The real program (both stacks)
# --------------------------------------------------------------------------------------------------


def test_stack_previews_with_exit_0(stack_preview):
    assert stack_preview.returncode == 0, stack_preview.explain()


def test_stack_previews_deterministically(stack_preview, run_preview):
    again = run_preview(*stack_preview.args, fresh=True)
    assert again.returncode == stack_preview.returncode
    assert again.stdout == stack_preview.stdout


def test_stack_json_is_one_document_with_the_contract_keys(stack_preview):
    doc = json.loads(stack_preview.stdout)
    validate(doc)  # tools/preview/result.schema.json
    assert {"schemaVersion", "verdict", "exitCode", "counts", "stack", "phase", "policyConfig", "findings",
            "pending", "unjudged", "resources"} <= set(doc)
    assert doc["exitCode"] == stack_preview.returncode
    assert all(set(r) == {"urn", "type", "name", "parent", "inputs", "options"} for r in doc["resources"])
    # Each resource's options, as the engine will apply them (issue 25).
    assert all(set(r["options"]) == {"protect", "retainOnDelete", "customTimeouts", "dependsOn", "ignoreChanges"}
               for r in doc["resources"])
    assert doc["resources"] == sorted(doc["resources"], key=lambda r: r["urn"])
    # Nothing twice: the unjudged components and the offline-only verdicts are not repeated in the pack's section.
    assert set(doc["policyPack"]) == {"ran", "name", "policies", "detail", "notApplicable", "cancelledAt",
                                      "stoppedByPreview"}


def test_stack_out_artefacts_exist_and_parse(stack_preview):
    out = stack_preview.out_dir
    assert json.loads((out / "resources.json").read_text()) == json.loads(stack_preview.stdout)
    manifests = sorted((out / "manifests").glob("*.yaml"))
    assert manifests, f"the {stack_preview.args} preview wrote no manifest under {out / 'manifests'}"
    for manifest in manifests:
        obj = yaml.safe_load(manifest.read_text())
        assert {"apiVersion", "kind", "metadata"} <= set(obj), manifest.name
        assert manifest.name.startswith(obj["kind"].lower() + "-")
    summary = (out / "summary.md").read_text()
    assert summary.startswith("# ✅ PASS: stack ")  # the verdict first (issue 56)
    assert "## GPU pools" in summary


def test_prod_json_prints_one_valid_document(run_preview):
    real_stack_file("prod")
    run = run_preview(*shipped_args("prod"))
    assert json.loads(run.stdout)["stack"] == "prod"


def test_config_file_with_an_unknown_key_exits_2_naming_file_key_and_value(tmp_path):
    stack_file = real_stack_file("dev")
    data = yaml.safe_load(stack_file.read_text())
    data["config"]["gpu-platform:cluster"]["colour"] = "ultraviolet"
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    run = run_preview_process("--config-file", str(bad), "--json")
    assert run.returncode == 2, run.explain()
    [problem] = run.json()["problems"]
    assert problem["key"] == "cluster.colour" and "ultraviolet" in problem["message"]
    assert str(bad) in run.stderr
    assert "colour" in run.stderr and "ultraviolet" in run.stderr
    assert "Traceback" not in run.stderr


def _request(type_: str, inputs: dict[str, Any], mocks_: mocks.RecordingMocks) -> mocks.ResourceRequest:
    return mocks.ResourceRequest(type=type_, name="web", urn=f"urn:pulumi:dev::tiny::{type_}::web", inputs=inputs,
                                 custom=True, remote=False, ctx=mocks_.context())


def test_a_load_balancer_service_has_its_ingress_once_created_and_an_unknown_status_in_a_first_preview() -> None:
    """pulumi-kubernetes returns a LoadBalancer Service from Create once it has an ingress, and drops the status
    in a preview (tools/engine/mocks/outputs.py `_k8s_status`): a program reading `status.load_balancer.ingress[0]`
    (pulumi/examples kubernetes-py-guestbook) runs in every phase."""
    created = mocks.RecordingMocks()
    lb = {"metadata": {"name": "frontend"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}
    _, service = created.answer_resource(_request("kubernetes:core/v1:Service", lb, created))
    uid = service["metadata"]["uid"]
    [ingress] = service["status"]["loadBalancer"]["ingress"]
    name = ("a" + uid.replace("-", ""))[:32]
    assert re.fullmatch(rf"{name}-[0-9]{{1,10}}\.us-west-2\.elb\.amazonaws\.com", ingress["hostname"])
    _, cluster_ip = created.answer_resource(_request("kubernetes:core/v1:Service", {"spec": {"ports": []}}, created))
    assert cluster_ip["status"] == {"loadBalancer": {}}
    _, config_map = created.answer_resource(_request("kubernetes:core/v1:ConfigMap", {}, created))
    assert config_map["status"] == {}
    first = mocks.RecordingMocks(unknown_outputs=True)
    _, previewed = first.answer_resource(_request("kubernetes:core/v1:Service", lb, first))
    assert previewed["status"] == UNKNOWN


def test_first_preview_knows_names_assigned_in_check_and_nothing_the_cloud_computes() -> None:
    first = mocks.RecordingMocks(unknown_outputs=True)
    id_, role = first.answer_resource(_request("aws:iam/role:Role", {}, first))
    _, prefixed = first.answer_resource(_request("aws:iam/role:Role", {"namePrefix": "web-"}, first))
    _, config_map = first.answer_resource(_request("kubernetes:core/v1:ConfigMap", {"metadata": {}}, first))

    assert id_ == ""  # the SDK reads "" as an unknown id during a dry run
    assert re.fullmatch(r"web-[0-9a-f]{7}", role["name"]) and role["arn"] == UNKNOWN
    assert prefixed["name"] == UNKNOWN  # a prefix means the cloud picks the name at create
    assert re.fullmatch(r"web-[0-9a-f]{8}", config_map["metadata"]["name"])
