"""KarpenterController and KarpenterGpuPool under the recording mocks: charts, IAM, queue, rules and pools.

The exact event names, weights, limits, taints, labels and budgets are asserted on what the program
registers; the IAM documents against the upstream getting-started template in ../shared/upstream.
"""

from __future__ import annotations

import base64
import copy
import json
from functools import cache
from typing import Any

import yaml

from components import labels
from components.config import KarpenterPoolConfig
from components.karpenter import controller, iam, interruption, pool
from policies.gpu_guard.rules import karpenter_interruption_handling
from tests import conformance
from tests.components.harness import Run, resolved_exports, run, stack_values
from tests.shared import upstream

RELEASE = "kubernetes:helm.sh/v3:Release"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
QUEUE = "aws:sqs/queue:Queue"
RULE = "aws:cloudwatch/eventRule:EventRule"
TARGET = "aws:cloudwatch/eventTarget:EventTarget"
POLICY = "aws:iam/policy:Policy"
K8S = "1.35"


@cache
def dev() -> Run:
    return run(stack_values("dev"))


@cache
def prod() -> Run:
    return run(stack_values("prod"), stack="prod")


def _with_pool(**changes: Any) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("dev"))
    values["karpenter"]["pools"][0].update(changes)
    for service in values.get("inferenceServices", []):  # dev's service follows its pool's new name
        service["nodePools"] = [changes.get("name", name) if name == "gpu-spot" else name
                                for name in service.get("nodePools", [])]
    return values


@cache
def al2023() -> Run:
    return run(_with_pool(name="gpu-al2023", os="al2023", imageVersion="v20251120", onDemandFallback=True))


@cache
def ubuntu_pinned() -> Run:
    return run(_with_pool(name="gpu-ubuntu", os="ubuntu-24.04", driverVersion="580.173.02", imageVersion=None,
                          imageId="ami-0123456789abcdef0"))


def node_pools(result: Run) -> dict[str, dict[str, Any]]:
    return {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in result.of_type(NODE_POOL)}


def node_class(result: Run) -> dict[str, Any]:
    (only,) = result.of_type(NODE_CLASS)
    return dict(only.inputs["spec"])


class _CfnLoader(yaml.SafeLoader):
    """CloudFormation short-form tags (`!Sub`, `!GetAtt`) read as plain values."""


def _any_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_mapping(node)  # type: ignore[arg-type]


_CfnLoader.add_multi_constructor("!", _any_tag)


@cache
def template() -> dict[str, Any]:
    return dict(yaml.load(upstream("iam", "karpenter-cloudformation.yaml").read_text(), Loader=_CfnLoader))


def _actions(statement: dict[str, Any]) -> set[str]:
    action = statement["Action"]
    return {action} if isinstance(action, str) else set(action)


def upstream_controller_statements() -> dict[str, set[str]]:
    """Sid -> actions of every controller policy statement of the upstream template."""
    out: dict[str, set[str]] = {}
    for resource in template()["Resources"].values():
        document = resource.get("Properties", {}).get("PolicyDocument")
        if resource["Type"] == "AWS::IAM::ManagedPolicy" and isinstance(document, str):
            out.update({s["Sid"]: _actions(s) for s in json.loads(document)["Statement"]})
    return out


def our_controller_statements(result: Run) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for policy in result.of_type(POLICY):
        if policy.name.startswith("karpenter-controller-"):
            out.update({s["Sid"]: s for s in json.loads(policy.inputs["policy"])["Statement"]})
    return out


# --- the controller ---------------------------------------------------------------------------------


def test_crds_come_from_their_own_chart_and_the_controller_skips_them():
    crd = dev().one(RELEASE, "karpenter-crd").inputs
    controller = dev().one(RELEASE, "karpenter-controller").inputs
    assert (crd["chart"], crd["version"], crd["namespace"]) == (
        "oci://public.ecr.aws/karpenter/karpenter-crd", "1.14.1", "kube-system")
    assert (controller["chart"], controller["version"], controller["skipCrds"]) == (
        "oci://public.ecr.aws/karpenter/karpenter", "1.14.1", True)


def test_controller_runs_on_the_system_nodes_one_replica_in_dev_two_in_prod():
    for result, replicas in ((dev(), 1), (prod(), 2)):
        values = result.one(RELEASE, "karpenter-controller").inputs["values"]
        assert values["replicas"] == replicas
        assert values["nodeSelector"] == {"kubernetes.io/os": "linux", **labels.system_node_selector()}
        assert values["controller"]["resources"]["requests"] == values["controller"]["resources"]["limits"]


def test_controller_gets_its_region_from_the_chart_not_from_imds():
    for result in (dev(), prod()):
        values = result.one(RELEASE, "karpenter-controller").inputs["values"]
        assert values["controller"]["env"] == [{"name": "AWS_REGION", "value": "us-west-2"}]


SLR = "aws:iam/serviceLinkedRole:ServiceLinkedRole"


def _with_karpenter(**changes: Any) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("dev"))
    values["karpenter"].update(changes)
    return values


def test_a_spot_pool_brings_the_spot_service_linked_role_which_the_stack_never_deletes():
    (role,) = dev().of_type(SLR)
    assert role.inputs["awsServiceName"] == "spot.amazonaws.com" and role.retain_on_delete
    controller = dev().one(RELEASE, "karpenter-controller")
    assert role.urn in controller.dependencies


def test_spot_service_linked_role_modes():
    arn = "arn:aws:iam::111122223333:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot"
    assert controller.spot_service_linked_role_arn("aws", "111122223333") == arn
    assert controller.spot_role_options("none", arn, None) is None  # type: ignore[arg-type]
    created = controller.spot_role_options("create", arn, None)  # type: ignore[arg-type]
    adopted = controller.spot_role_options("adopt", arn, None)  # type: ignore[arg-type]
    assert created is not None and adopted is not None
    assert (created.retain_on_delete, created.import_) == (True, None)
    assert (adopted.retain_on_delete, adopted.import_) == (True, arn)
    assert adopted.ignore_changes == ["description", "tags", "tagsAll"]


def test_no_spot_service_linked_role_without_a_spot_pool_or_with_mode_none():
    on_demand = _with_karpenter(pools=[{**stack_values("dev")["karpenter"]["pools"][0],
                                        "capacityTypes": ["on-demand"]}])
    assert run(on_demand).of_type(SLR) == []
    assert run(_with_karpenter(spotServiceLinkedRole="none")).of_type(SLR) == []
    (adopted,) = run(_with_karpenter(spotServiceLinkedRole="adopt")).of_type(SLR)
    assert adopted.inputs["awsServiceName"] == "spot.amazonaws.com"



def test_node_pools_and_node_classes_wait_30_minutes_for_their_drain_on_delete():
    # pulumi-kubernetes' own delete await is 10 minutes (components/karpenter/pool.py, DELETE_TIMEOUTS).
    for result in (dev(), prod()):
        recorded = [*result.of_type(NODE_POOL), *result.of_type(NODE_CLASS)]
        assert recorded and {r.custom_timeouts for r in recorded} == {("", "", "30m")}


def test_controller_reads_this_clusters_interruption_queue():
    values = dev().one(RELEASE, "karpenter-controller").inputs["values"]
    queue = dev().one(QUEUE).inputs
    assert values["settings"] == {"clusterName": "gpu-dev", "interruptionQueue": queue["name"]}


def test_every_karpenter_chart_values_key_exists_upstream():
    for result in (dev(), prod()):
        for name in ("karpenter-crd", "karpenter-controller"):
            release = result.one(RELEASE, name)
            assert conformance.release_findings({"name": release.name, "inputs": release.inputs}, upstream()) == []


def test_interruption_queue_is_encrypted_and_keeps_messages_five_minutes():
    queue = dev().one(QUEUE).inputs
    assert queue["sqsManagedSseEnabled"] is True
    assert queue["messageRetentionSeconds"] == 300


def test_one_rule_per_interruption_event_with_the_exact_names_each_targeting_the_queue():
    rules = {r.inputs["name"]: json.loads(r.inputs["eventPattern"]) for r in dev().of_type(RULE)}
    assert rules == {
        "gpu-dev-karpenter-spot": {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
        "gpu-dev-karpenter-rebalance": {"source": ["aws.ec2"],
                                        "detail-type": ["EC2 Instance Rebalance Recommendation"]},
        "gpu-dev-karpenter-state-change": {"source": ["aws.ec2"],
                                           "detail-type": ["EC2 Instance State-change Notification"]},
        "gpu-dev-karpenter-health": {"source": ["aws.health"], "detail-type": ["AWS Health Event"]},
        "gpu-dev-karpenter-capacity-reservation": {
            "source": ["aws.ec2"], "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"]},
    }
    queue_name = dev().one(QUEUE).inputs["name"]
    targets = {t.inputs["rule"]: t.inputs["arn"] for t in dev().of_type(TARGET)}
    assert sorted(targets) == sorted(rules)
    assert all(arn.endswith(f":{queue_name}") for arn in targets.values())


def test_interruption_events_are_the_upstream_templates_and_the_policys():
    upstream_events = set()
    for resource in template()["Resources"].values():
        if resource["Type"] == "AWS::Events::Rule":
            pattern = resource["Properties"]["EventPattern"]
            upstream_events |= {(s, d) for s in pattern["source"] for d in pattern["detail-type"]}
    ours = {(e.source, e.detail_type) for e in interruption.INTERRUPTION_EVENTS}
    assert ours == upstream_events == set(karpenter_interruption_handling.REQUIRED_EVENTS)


def test_queue_policy_lets_eventbridge_send_and_refuses_plain_http():
    document = json.loads(interruption.queue_policy("arn:aws:sqs:us-west-2:111122223333:q"))
    allow, deny = document["Statement"]
    assert allow["Principal"]["Service"] == ["events.amazonaws.com", "sqs.amazonaws.com"]
    assert allow["Action"] == "sqs:SendMessage"
    assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_controller_role_is_for_pod_identity_bound_to_the_chart_service_account():
    role = dev().one("aws:iam/role:Role", "karpenter-controller-role").inputs
    trust = json.loads(role["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert sorted(trust["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    association = dev().one("aws:eks/podIdentityAssociation:PodIdentityAssociation", "karpenter").inputs
    assert (association["namespace"], association["serviceAccount"]) == ("kube-system", "karpenter")
    assert association["roleArn"].split("/")[-1].startswith("karpenter-controller-role")


def test_controller_iam_is_the_upstream_template_less_what_this_platform_never_needs():
    ours = our_controller_statements(dev())
    theirs = upstream_controller_statements()
    dropped = {sid: actions for sid, actions in theirs.items() if sid not in ours}
    assert dropped == {
        "AllowScopedInstanceProfileCreationActions": {"iam:CreateInstanceProfile"},
        "AllowScopedInstanceProfileTagActions": {"iam:TagInstanceProfile"},
        "AllowScopedInstanceProfileActions": {"iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile",
                                              "iam:DeleteInstanceProfile"},
        "AllowZonalShiftStatusReadOnly": {"arc-zonal-shift:GetManagedResource"},
    }
    assert set(ours) <= set(theirs)
    assert {sid: _actions(s) for sid, s in ours.items()} == {sid: theirs[sid] for sid in ours}


def test_every_upstream_controller_action_is_granted_or_withheld_with_a_written_reason():
    granted = {action for statement in our_controller_statements(dev()).values() for action in _actions(statement)}
    upstream_actions = set().union(*upstream_controller_statements().values())
    assert upstream_actions - granted == set(iam.WITHHELD_ACTIONS)
    assert not granted & set(iam.WITHHELD_ACTIONS)
    assert all(len(reason) > 40 for reason in iam.WITHHELD_ACTIONS.values())
    # The reads the NodeClass finalizer and the instance-profile garbage collector make are granted as upstream does.
    assert {"iam:ListInstanceProfiles", "iam:GetInstanceProfile"} <= granted


def test_controller_iam_is_scoped_to_this_cluster_its_node_role_its_profile_and_its_queue():
    ours = our_controller_statements(dev())
    assert ours["AllowPassingInstanceRole"]["Resource"].split("/")[-1].startswith("karpenter-node-role")
    assert ours["AllowInstanceProfileReadActions"]["Resource"] == "arn:aws:iam::111122223333:instance-profile/*"
    assert ours["AllowUnscopedInstanceProfileListAction"]["Resource"] == "*"
    assert ours["AllowInterruptionQueueActions"]["Resource"].endswith(":gpu-dev-karpenter")
    assert ours["AllowAPIServerEndpointDiscovery"]["Resource"].endswith(":cluster/gpu-dev")
    deletion = ours["AllowScopedDeletion"]["Condition"]
    assert deletion["StringEquals"] == {"aws:ResourceTag/kubernetes.io/cluster/gpu-dev": "owned"}
    assert all(s["Resource"] != "*" or sid in ("AllowRegionalReadActions", "AllowPricingReadActions",
                                               "AllowUnscopedInstanceProfileListAction")
               for sid, s in ours.items())
    assert ours["AllowRegionalReadActions"]["Condition"] == {"StringEquals": {"aws:RequestedRegion": "us-west-2"}}


def test_pod_identity_trust_policy_is_the_documented_one():
    assert json.loads(iam.pod_identity_trust_policy())["Statement"][0]["Principal"] == {
        "Service": "pods.eks.amazonaws.com"}


def test_karpenter_nodes_have_their_own_role_profile_and_ec2_linux_entry_keyed_by_that_role():
    entry = dev().one("aws:eks/accessEntry:AccessEntry", "karpenter").inputs
    profile = dev().one("aws:iam/instanceProfile:InstanceProfile", "karpenter").inputs
    assert entry["type"] == "EC2_LINUX" and entry["clusterName"] == "gpu-dev"
    role_name = entry["principalArn"].rsplit("/", 1)[-1]
    assert role_name.startswith("karpenter-node-role") and profile["role"] == role_name
    assert dev().one("aws:eks/accessEntry:AccessEntry", "karpenter").name == "karpenter-node-role-access-entry"
    attached = sorted(a.inputs["policyArn"].rsplit("/", 1)[-1]
                      for a in dev().of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
                      if a.name.startswith("karpenter-node-"))
    upstream_node_role = template()["Resources"]["KarpenterNodeRole"]["Properties"]["ManagedPolicyArns"]
    assert attached == sorted(arn.rsplit("/", 1)[-1] for arn in upstream_node_role) == [
        "AmazonEC2ContainerRegistryPullOnly", "AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy",
        "AmazonSSMManagedInstanceCore"]


def test_cluster_security_group_gets_the_discovery_tag():
    tag = dev().one("aws:ec2/tag:Tag", "discovery").inputs
    assert (tag["key"], tag["value"]) == ("karpenter.sh/discovery", "gpu-dev")
    assert tag["resourceId"].startswith("sg-")


# --- the pools --------------------------------------------------------------------------------------


def test_dev_pool_is_bottlerocket_spot_from_zero_pinned_to_its_release():
    spec = node_class(dev())
    assert spec["amiSelectorTerms"] == [{"alias": "bottlerocket@v1.68.0"}]
    assert "amiFamily" not in spec and "userData" not in spec
    (only,) = node_pools(dev()).values()
    assert only["template"]["spec"]["requirements"][1] == {
        "key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}
    assert list(node_pools(dev())) == ["gpu-spot"]
    assert not any("latest" in json.dumps(r.inputs) for r in dev().of_type(NODE_CLASS))


def test_bottlerocket_sizes_its_encrypted_gp3_data_volume_from_config():
    assert node_class(dev())["blockDeviceMappings"] == [
        {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "4Gi", "volumeType": "gp3", "encrypted": True,
                                             "deleteOnTermination": True}},
        {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "100Gi", "volumeType": "gp3", "encrypted": True,
                                             "deleteOnTermination": True}},
    ]


def test_node_class_discovers_subnets_and_groups_by_tag_with_imdsv2_hop_limit_one():
    spec = node_class(dev())
    assert spec["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "gpu-dev"}}]
    assert spec["securityGroupSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "gpu-dev"}}]
    assert spec["metadataOptions"] == {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled",
                                       "httpPutResponseHopLimit": 1, "httpTokens": "required"}
    assert spec["instanceProfile"] == "gpu-dev-us-west-2-karpenter-node"
    assert "role" not in spec


def test_adopted_cluster_selects_subnets_and_the_cluster_security_group_by_id():
    values = copy.deepcopy(stack_values("dev"))
    values["cluster"] = {"name": "shared-gpu", "kubernetesVersion": "1.35", "existing": True}
    result = run(values)
    spec = node_class(result)
    assert all(set(term) == {"id"} for term in spec["subnetSelectorTerms"])
    assert [set(t) for t in spec["securityGroupSelectorTerms"]] == [{"id"}]
    assert spec["securityGroupSelectorTerms"][0]["id"].startswith("sg-")
    assert "karpenter.sh/discovery" not in json.dumps(spec)
    assert result.of_type("aws:ec2/tag:Tag") == []


def test_dev_nodepool_taint_labels_limits_disruption_and_expiry():
    spec = node_pools(dev())["gpu-spot"]
    assert spec["weight"] == 100
    assert spec["limits"] == {"nvidia.com/gpu": "4"}
    assert spec["disruption"] == {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "5m",
                                  "budgets": [{"nodes": "1"}]}
    template_spec = spec["template"]["spec"]
    assert template_spec["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    assert template_spec["expireAfter"] == "720h"
    assert template_spec["terminationGracePeriod"] == "24h"
    assert template_spec["requirements"][1]["values"] == ["spot"]  # dev waits for Spot (no fallback)
    assert template_spec["nodeClassRef"] == {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                             "name": "gpu-spot"}
    assert template_spec["requirements"][0] == {"key": "node.kubernetes.io/instance-type", "operator": "In",
                                                "values": ["g6.xlarge", "g5.xlarge", "g4dn.xlarge"]}
    assert template_spec["requirements"][2:] == [
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]
    assert spec["template"]["metadata"]["labels"] == {
        "gpu-platform.io/pool": "gpu-spot", "gpu-platform.io/os": "bottlerocket", "gpu-platform.io/driver": "580",
        "gpu-platform.io/driver-source": "image", "nvidia.com/gpu.deploy.driver": "false",
        "nvidia.com/gpu.deploy.container-toolkit": "false", "nvidia.com/gpu.deploy.device-plugin": "false"}


def test_al2023_pool_keeps_the_operator_device_plugin_and_falls_back_within_its_one_nodepool():
    pools = node_pools(al2023())
    assert list(pools) == ["gpu-al2023"]
    spec = pools["gpu-al2023"]
    assert spec["weight"] == pool.POOL_WEIGHT == 100
    assert spec["template"]["spec"]["requirements"][1] == {
        "key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}
    assert spec["limits"] == {"nvidia.com/gpu": "4"}
    node_labels = spec["template"]["metadata"]["labels"]
    assert node_labels["nvidia.com/gpu.deploy.driver"] == "false"
    assert node_labels["nvidia.com/gpu.deploy.container-toolkit"] == "false"
    assert "nvidia.com/gpu.deploy.device-plugin" not in node_labels
    spec = node_class(al2023())
    assert spec["amiSelectorTerms"] == [{"alias": "al2023@v20251120"}]
    assert spec["blockDeviceMappings"] == [{"deviceName": "/dev/xvda", "ebs": {
        "volumeSize": "100Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True}}]


def test_prod_pool_is_one_nodepool_spot_first_then_on_demand_under_one_gpu_budget():
    pools = node_pools(prod())
    assert list(pools) == ["l4-spot-burst"]
    spec = pools["l4-spot-burst"]
    assert spec["template"]["spec"]["requirements"][1]["values"] == ["spot", "on-demand"]
    assert spec["limits"] == {"nvidia.com/gpu": "8"}  # maxGpus: 8 GPUs in all, Spot and on-demand together
    assert spec["template"]["spec"]["terminationGracePeriod"] == "24h"
    assert spec["template"]["metadata"]["labels"] == {
        "gpu-platform.io/pool": "l4-spot-burst", "gpu-platform.io/os": "ubuntu-24.04",
        "gpu-platform.io/driver": "580.173.02", "gpu-platform.io/driver-source": "operator"}


def test_every_pool_is_exactly_one_nodepool_so_its_gpu_limit_is_the_whole_budget():
    for result in (dev(), prod(), al2023(), ubuntu_pinned()):
        by_pool: dict[str, list[str]] = {}
        for resource in result.of_type(NODE_POOL):
            spec = resource.inputs["spec"]
            by_pool.setdefault(spec["template"]["metadata"]["labels"]["gpu-platform.io/pool"], []).append(
                resource.inputs["metadata"]["name"])
        assert all(names == [name] for name, names in by_pool.items()), by_pool


def test_capacity_types_are_karpenters_preference_order_with_the_fallback_added_once():
    def base(**changes: Any) -> Any:
        entry = {"name": "p", "os": "bottlerocket", "driverVersion": "580", "imageVersion": "v1.68.0",
                 "instanceTypes": ["g6.xlarge"], **changes}
        return KarpenterPoolConfig.model_validate(entry)
    assert pool.capacity_types(base(capacityTypes=["spot"], onDemandFallback=True)) == ["spot", "on-demand"]
    assert pool.capacity_types(base(capacityTypes=["on-demand", "spot"])) == ["spot", "on-demand"]
    assert pool.capacity_types(base(capacityTypes=["spot"])) == ["spot"]
    assert pool.capacity_types(base(capacityTypes=["on-demand"])) == ["on-demand"]
    assert pool.capacity_types(base()) == ["on-demand"]


def test_ubuntu_pool_selects_canonicals_image_by_id_with_bootstrap_user_data():
    spec = node_class(ubuntu_pinned())
    assert spec["amiFamily"] == "Custom"
    assert spec["amiSelectorTerms"] == [{"id": "ami-0123456789abcdef0"}]
    assert spec["blockDeviceMappings"][0]["deviceName"] == "/dev/sda1"
    script = spec["userData"]
    if not script.startswith("#!"):
        script = base64.b64decode(script).decode()
    assert "/etc/eks/bootstrap.sh gpu-dev" in script
    assert "gpu-platform.io/pool=gpu-ubuntu" in script and "gpu-platform.io/driver=580.173.02" in script
    assert "nvidia.com/gpu=true:NoSchedule" in script and "karpenter.sh/unregistered:NoExecute" in script


def test_unpinned_ubuntu_pool_holds_its_first_image():
    (node_class_resource,) = prod().of_type(NODE_CLASS)
    assert node_class_resource.inputs["spec"]["amiSelectorTerms"][0]["id"].startswith("ami-")


def test_every_nodepool_and_ec2nodeclass_validates_strictly_against_the_upstream_crds():
    for result in (dev(), prod(), al2023(), ubuntu_pinned()):
        for resource in [*result.of_type(NODE_POOL), *result.of_type(NODE_CLASS)]:
            obj = {**resource.inputs, "spec": dict(resource.inputs["spec"])}
            findings = conformance.validate_object(obj, K8S, upstream())
            assert [str(f) for f in findings] == [], resource.name


def test_stack_outputs_name_the_queue_and_node_pools():
    outputs = resolved_exports(stack_values("prod"), stack="prod")
    assert outputs["karpenter"]["interruptionQueue"] == "gpu-prod-karpenter"
    assert outputs["karpenter"]["nodePools"] == {"l4-spot-burst": ["l4-spot-burst"]}
    assert outputs["gpuNodeLabels"]["l4-spot-burst"]["gpu-platform.io/driver-source"] == "operator"


def test_controller_iam_keeps_every_upstream_resource_and_condition_or_narrows_it():
    scope = iam.Scope(partition="aws", region="us-west-2", account="111122223333", cluster="gpu-dev")
    names = {"node": "arn:aws:iam::111122223333:role/node", "queue": "arn:aws:sqs:us-west-2:111122223333:q"}
    documents = (iam.node_lifecycle_policy(scope),
                 iam.integration_policy(scope, names["node"], names["queue"]),
                 iam.resource_discovery_policy(scope))
    ours = {s["Sid"]: s for document in documents for s in document["Statement"]}
    for sid, theirs in upstream_statements(scope, names["node"], names["queue"]).items():
        if sid not in ours:
            continue
        mine = ours[sid]
        assert mine.get("Condition") == theirs.get("Condition"), sid
        assert mine["Resource"] == theirs["Resource"], sid


def test_a_bottlerocket_pool_pins_its_nvidia_driver_tree_through_user_data():
    spec = node_class(run(_with_pool(nvidiaDriverBranch="pb")))
    assert spec["userData"] == '[settings.kernel.drivers.nvidia]\nbranch = "pb"\n'
    assert "userData" not in node_class(dev())  # unset: Bottlerocket picks by GPU, Karpenter's own user data only


def upstream_statements(scope: iam.Scope, node_role: str, queue: str) -> dict[str, dict[str, Any]]:
    """Upstream's controller policy statements by Sid, its CloudFormation substitutions filled in."""
    substitutions = {"${AWS::Partition}": scope.partition, "${AWS::Region}": scope.region,
                     "${AWS::AccountId}": scope.account, "${ClusterName}": scope.cluster,
                     "${KarpenterNodeRole.Arn}": node_role, "${KarpenterInterruptionQueue.Arn}": queue}
    out: dict[str, dict[str, Any]] = {}
    for resource in template()["Resources"].values():
        document = resource.get("Properties", {}).get("PolicyDocument")
        if resource["Type"] != "AWS::IAM::ManagedPolicy" or not isinstance(document, str):
            continue
        for key, value in substitutions.items():
            document = document.replace(key, value)
        out.update({s["Sid"]: s for s in json.loads(document)["Statement"]})
    return out
