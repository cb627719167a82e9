"""What moto does not do, injected with botocore's Stubber on real boto3 clients: EC2's DependencyViolation on a
security group that an ENI still uses, IAM's DeleteConflict, throttling, EKS add-ons (moto has no add-on API)
and Service Quotas for ec2 (moto has only vpc's). Retries back off and give up at their budget."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from tools.e2e.cap import cost
from tools.e2e.runid import RUN_TAG, Selector, new_run_id
from tools.e2e.sweep.kinds import Context, Found, delete_eks_addon, delete_security_group, find_eks_addons
from tools.e2e.sweep.retry import Retry
from tools.e2e.sweep.sweeper import Sweeper

RUN = "e2e-202612050600-stub1"
REGION = "us-west-2"


def client(service: str) -> Any:
    return boto3.client(service, region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_a_security_group_refused_for_a_dependency_is_retried_until_the_eni_is_gone() -> None:
    ec2 = client("ec2")
    time = FakeTime()
    with Stubber(ec2) as stub:
        for _ in range(3):
            stub.add_client_error("delete_security_group", "DependencyViolation",
                                  "resource sg-1 has a dependent object", expected_params={"GroupId": "sg-1"})
        stub.add_response("delete_security_group", {}, {"GroupId": "sg-1"})
        retry = Retry(budget=600, base=2, cap=60, sleep=time.sleep, clock=time.clock)
        ctx = Context(lambda _: ec2, Selector(run_id=RUN), retry)
        delete_security_group(ctx, Found("ec2-security-group", "sg-1"))
        stub.assert_no_pending_responses()
    assert retry.refusals == ["DependencyViolation"] * 3
    assert time.slept == [2, 4, 8]


@pytest.mark.parametrize("code", ["RequestLimitExceeded", "Throttling", "ThrottlingException"])
def test_throttling_is_retried(code: str) -> None:
    iam = client("iam")
    time = FakeTime()
    with Stubber(iam) as stub:
        stub.add_client_error("delete_role", code, "Rate exceeded", http_status_code=400)
        stub.add_response("delete_role", {}, {"RoleName": "r"})
        retry = Retry(budget=60, sleep=time.sleep, clock=time.clock)
        retry(iam.delete_role, RoleName="r")
        stub.assert_no_pending_responses()
    assert retry.refusals == [code]


def test_a_refusal_that_outlasts_the_budget_is_raised_with_its_code() -> None:
    iam = client("iam")
    time = FakeTime()
    with Stubber(iam) as stub:
        for _ in range(10):
            stub.add_client_error("delete_role", "DeleteConflict", "Cannot delete entity, must remove roles from "
                                  "instance profile first.", http_status_code=409)
        retry = Retry(budget=30, base=2, cap=60, sleep=time.sleep, clock=time.clock)
        with pytest.raises(ClientError) as raised:
            retry(iam.delete_role, RoleName="r")
    assert raised.value.response["Error"]["Code"] == "DeleteConflict"
    assert time.slept == [2, 4, 8, 16]  # the next wait (32 s) would pass the 30 s budget
    assert sum(time.slept) <= 30


def test_another_error_is_raised_at_once_and_not_found_is_done() -> None:
    ec2 = client("ec2")
    with Stubber(ec2) as stub:
        stub.add_client_error("delete_vpc", "UnauthorizedOperation", "not allowed")
        stub.add_client_error("delete_vpc", "InvalidVpcID.NotFound", "gone")
        retry = Retry(budget=60, sleep=lambda _: pytest.fail("no retry expected"))
        with pytest.raises(ClientError):
            retry(ec2.delete_vpc, VpcId="vpc-1")
        assert retry(ec2.delete_vpc, VpcId="vpc-1") is None


def test_a_failing_kind_is_reported_and_the_sweep_goes_on() -> None:
    """Karpenter's sweeper logs and continues (test/hack/resource/clean/main.go:91-101); so does this one."""
    ec2 = client("ec2")
    with Stubber(ec2) as stub:
        stub.add_response("describe_vpcs", {"Vpcs": []})
        stub.add_client_error("describe_instances", "UnauthorizedOperation", "not allowed")
        stub.add_response("describe_launch_templates", {"LaunchTemplates": []})
        sweeper = Sweeper(lambda _: ec2, Selector(run_id=RUN), retry=Retry(budget=0), log=lambda _: None)
        sweeper.leftovers = lambda: ([], [])  # type: ignore[method-assign]
        result = sweeper.sweep(("ec2-instance", "ec2-launch-template"))
        stub.assert_no_pending_responses()
    assert len(result.failed) == 1 and result.failed[0].startswith("ec2-instance (listing)")
    assert not result.ok


def test_eks_add_ons_of_a_run_cluster_are_found_and_deleted() -> None:
    eks = client("eks")
    with Stubber(eks) as stub:
        stub.add_response("list_clusters", {"clusters": [RUN, "prod"]})
        stub.add_response("describe_cluster", {"cluster": {"name": RUN, "tags": {RUN_TAG: RUN}}}, {"name": RUN})
        stub.add_response("list_addons", {"addons": ["aws-ebs-csi-driver"]}, {"clusterName": RUN})
        stub.add_response("describe_addon", {"addon": {"addonName": "aws-ebs-csi-driver", "status": "ACTIVE"}},
                          {"clusterName": RUN, "addonName": "aws-ebs-csi-driver"})
        stub.add_response("describe_cluster", {"cluster": {"name": "prod", "tags": {}}}, {"name": "prod"})
        stub.add_response("list_addons", {"addons": ["vpc-cni"]}, {"clusterName": "prod"})
        stub.add_response("describe_addon", {"addon": {"addonName": "vpc-cni", "status": "ACTIVE"}},
                          {"clusterName": "prod", "addonName": "vpc-cni"})
        stub.add_client_error("delete_addon", "ResourceInUseException", "busy",
                              expected_params={"clusterName": RUN, "addonName": "aws-ebs-csi-driver"})
        stub.add_response("delete_addon", {}, {"clusterName": RUN, "addonName": "aws-ebs-csi-driver"})
        ctx = Context(lambda _: eks, Selector(run_id=RUN), Retry(budget=60, sleep=lambda _: None))
        found = find_eks_addons(ctx)
        assert found == [Found("eks-addon", f"{RUN}/aws-ebs-csi-driver")]
        delete_eks_addon(ctx, found[0])
        stub.assert_no_pending_responses()


# ---- the quota check (moto 5.2.5 has Service Quotas for vpc only) ---------------------------------------------

def test_the_gpu_quota_below_the_peak_is_refused_with_the_quota_code() -> None:
    quotas = client("service-quotas")
    with Stubber(quotas) as stub:
        stub.add_response("get_service_quota", {"Quota": {"QuotaCode": cost.GPU_QUOTA_CODE, "Value": 8.0}},
                          {"ServiceCode": "ec2", "QuotaCode": cost.GPU_QUOTA_CODE})
        with pytest.raises(cost.CostError, match=r"L-DB2E81BA is 8 vCPUs .* needs 28 .*--desired-value 28"):
            cost.check_quota(quotas, cost.GPU_QUOTA_CODE, 28)


def test_the_quota_check_subtracts_the_on_demand_vcpus_already_running() -> None:
    """L-DB2E81BA limits running vCPUs: a dev stack's g5.2xlarge (8 vCPUs) and a previous run's g4dn.xlarge (4)
    leave 20 of 32; a spot instance does not count against the on-demand quota."""
    ec2, quotas = client("ec2"), client("service-quotas")
    running = {"Name": "instance-state-name", "Values": ["pending", "running"]}
    with Stubber(ec2) as stub_ec2, Stubber(quotas) as stub_quotas:
        stub_ec2.add_response("describe_instances", {"Reservations": [{"Instances": [
            {"InstanceId": "i-1", "InstanceType": "g5.2xlarge", "CpuOptions": {"CoreCount": 4, "ThreadsPerCore": 2}},
            {"InstanceId": "i-2", "InstanceType": "g4dn.xlarge", "CpuOptions": {"CoreCount": 2, "ThreadsPerCore": 2}},
            {"InstanceId": "i-3", "InstanceType": "g6.xlarge", "InstanceLifecycle": "spot",
             "CpuOptions": {"CoreCount": 2, "ThreadsPerCore": 2}}]}]},
            {"Filters": [running, {"Name": "instance-type", "Values": ["g*", "vt*"]}]})
        in_use = cost.running_vcpus(ec2, cost.GPU_QUOTA_CODE)
        assert in_use == 12
        for _ in range(2):
            stub_quotas.add_response("get_service_quota", {"Quota": {"QuotaCode": cost.GPU_QUOTA_CODE, "Value": 32.0}},
                                     {"ServiceCode": "ec2", "QuotaCode": cost.GPU_QUOTA_CODE})
        assert cost.check_quota(quotas, cost.GPU_QUOTA_CODE, 20, in_use) == (
            "quota L-DB2E81BA: 32 vCPUs, 12 running, run needs 20")
        with pytest.raises(cost.CostError, match=r"32 vCPUs in this region, 12 of them already running; the run "
                                                 r"needs 28 .*--desired-value 40"):
            cost.check_quota(quotas, cost.GPU_QUOTA_CODE, 28, in_use)


def test_an_unset_quota_falls_back_to_the_aws_default() -> None:
    quotas = client("service-quotas")
    with Stubber(quotas) as stub:
        stub.add_client_error("get_service_quota", "NoSuchResourceException", "no applied value")
        stub.add_response("get_aws_default_service_quota", {"Quota": {"QuotaCode": cost.GPU_QUOTA_CODE, "Value": 64.0}},
                          {"ServiceCode": "ec2", "QuotaCode": cost.GPU_QUOTA_CODE})
        assert cost.check_quota(quotas, cost.GPU_QUOTA_CODE, 28) == (
            "quota L-DB2E81BA: 64 vCPUs, 0 running, run needs 28")


def test_run_ids_are_names_labels_and_ages() -> None:
    from datetime import UTC, datetime  # noqa: PLC0415

    run = new_run_id(datetime(2026, 12, 5, 6, 0, tzinfo=UTC), "1234567890")
    assert run == "e2e-202612050600-1234567890"
    assert len(run) <= 63
    with pytest.raises(ValueError, match="lowercase letters or digits"):
        new_run_id(datetime(2026, 12, 5, tzinfo=UTC), "Bad_Suffix")


# ---- NAT gateways and requester-managed ENIs (moto deletes a NAT gateway at once) ----------------------------

def test_the_sweep_waits_for_a_deleting_nat_gateway_and_leaves_requester_managed_enis_to_aws() -> None:
    """DeleteNatGateway returns while the gateway is `deleting`; its Elastic IP is disassociated only once it is
    `deleted` (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DeleteNatGateway.html), and AWS refuses
    to detach a requester-managed ENI or disassociate its address
    (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/requester-managed-eni.html). No DisassociateAddress or
    DetachNetworkInterface is stubbed for them: the Stubber fails the test if the sweeper makes either call."""
    ec2 = client("ec2")
    time = FakeTime()
    tags = [{"Key": RUN_TAG, "Value": RUN}]
    live = {"Filter": [{"Name": "state", "Values": ["pending", "available", "failed", "deleting"]}]}
    nat = {"NatGatewayId": "nat-1", "VpcId": "vpc-1", "Tags": tags}
    nat_eni = {"NetworkInterfaceId": "eni-nat", "VpcId": "vpc-1", "RequesterManaged": True,
               "InterfaceType": "natGateway", "Attachment": {"AttachmentId": "ela-attach-1", "DeviceIndex": 1}}
    alb_eni = {"NetworkInterfaceId": "eni-alb", "VpcId": "vpc-1", "RequesterManaged": True,
               "InterfaceType": "interface", "Description": "ELB app/k8s-e2e/0123",
               "Attachment": {"AttachmentId": "ela-attach-2", "DeviceIndex": 1}}
    cni_eni = {"NetworkInterfaceId": "eni-cni", "VpcId": "vpc-1", "RequesterManaged": False,
               "InterfaceType": "interface", "Attachment": {"AttachmentId": "eni-attach-3", "DeviceIndex": 1}}
    with Stubber(ec2) as stub:
        stub.add_response("describe_vpcs", {"Vpcs": [{"VpcId": "vpc-1", "Tags": tags}]})
        # find, delete, then the wait: still `deleting` twice, then gone from the state filter's answer
        stub.add_response("describe_nat_gateways", {"NatGateways": [{**nat, "State": "available"}]}, live)
        stub.add_response("delete_nat_gateway", {"NatGatewayId": "nat-1"}, {"NatGatewayId": "nat-1"})
        stub.add_response("describe_nat_gateways", {"NatGateways": [{**nat, "State": "deleting"}]}, live)
        stub.add_response("describe_nat_gateways", {"NatGateways": [{**nat, "State": "deleting"}]}, live)
        stub.add_response("describe_nat_gateways", {"NatGateways": []}, live)
        # the address still shows the NAT's association (the API lags): released without disassociating
        stub.add_response("describe_addresses", {"Addresses": [
            {"AllocationId": "eipalloc-1", "AssociationId": "eipassoc-1", "NetworkInterfaceId": "eni-nat",
             "Tags": tags}]})
        stub.add_response("describe_network_interfaces", {"NetworkInterfaces": [nat_eni]},
                          {"NetworkInterfaceIds": ["eni-nat"]})
        stub.add_client_error("release_address", "InvalidIPAddress.InUse", "Address is in use",
                              expected_params={"AllocationId": "eipalloc-1"})
        stub.add_response("release_address", {}, {"AllocationId": "eipalloc-1"})
        # ENIs: the CNI's is detached and deleted, the NAT's and ALB's are waited for
        stub.add_response("describe_network_interfaces", {"NetworkInterfaces": [nat_eni, alb_eni, cni_eni]})
        stub.add_response("detach_network_interface", {}, {"AttachmentId": "eni-attach-3", "Force": True})
        stub.add_response("delete_network_interface", {}, {"NetworkInterfaceId": "eni-cni"})
        stub.add_response("describe_network_interfaces", {"NetworkInterfaces": [alb_eni]})
        stub.add_response("describe_network_interfaces", {"NetworkInterfaces": []})
        logged: list[str] = []
        sweeper = Sweeper(lambda _: ec2, Selector(run_id=RUN),
                          retry=Retry(budget=600, sleep=time.sleep, clock=time.clock),
                          poll=15, sleep=time.sleep, clock=time.clock, log=logged.append)
        sweeper.leftovers = lambda: ([], [])  # type: ignore[method-assign]
        result = sweeper.sweep(("ec2-nat-gateway", "ec2-elastic-ip", "ec2-network-interface"))
        stub.assert_no_pending_responses()
    assert result.ok, result.as_dict()
    assert result.removed == ["ec2-nat-gateway nat-1", "ec2-elastic-ip eipalloc-1", "ec2-network-interface eni-cni"]
    assert time.slept == [15, 15, 2, 15]  # two NAT polls, one InUse backoff, one ENI poll
    assert any("eni-alb is requester-managed" in line for line in logged)


def test_a_nat_gateway_still_deleting_at_the_end_of_the_wait_is_reported() -> None:
    ec2 = client("ec2")
    time = FakeTime()
    nat = {"NatGatewayId": "nat-1", "VpcId": "vpc-1", "State": "deleting", "Tags": [{"Key": RUN_TAG, "Value": RUN}]}
    with Stubber(ec2) as stub:
        stub.add_response("describe_vpcs", {"Vpcs": []})
        for _ in range(4):
            stub.add_response("describe_nat_gateways", {"NatGateways": [nat]})
        sweeper = Sweeper(lambda _: ec2, Selector(run_id=RUN), retry=Retry(budget=0), wait_budget=30, poll=15,
                          sleep=time.sleep, clock=time.clock, log=lambda _: None)
        sweeper.leftovers = lambda: ([], [])  # type: ignore[method-assign]
        result = sweeper.sweep(("ec2-nat-gateway",))
    assert result.failed == ["ec2-nat-gateway nat-1: still there after 30 s"]
    assert result.removed == ["ec2-nat-gateway nat-1"]  # already deleting: no second DeleteNatGateway call


def test_the_sweeps_deadline_bounds_every_wait_and_retry() -> None:
    """The sweeper's budgets (a kind's wait 1,800 s, a call's retries 1,200 s) dwarfed the 30 minutes the run keeps
    for its sweep (driver.SWEEP_RESERVE), so one slow kind could outlast the run's limit (issue 54). With the sweep's
    deadline, a wait ends there."""
    ec2 = client("ec2")
    time = FakeTime()
    nat = {"NatGatewayId": "nat-1", "VpcId": "vpc-1", "State": "deleting", "Tags": [{"Key": RUN_TAG, "Value": RUN}]}
    with Stubber(ec2) as stub:
        stub.add_response("describe_vpcs", {"Vpcs": []})
        for _ in range(6):
            stub.add_response("describe_nat_gateways", {"NatGateways": [nat]})
        sweeper = Sweeper(lambda _: ec2, Selector(run_id=RUN), retry=Retry(sleep=time.sleep, clock=time.clock),
                          wait_budget=1800, poll=15, sleep=time.sleep, clock=time.clock, log=lambda _: None,
                          deadline=time.clock() + 60)
        sweeper.leftovers = lambda: ([], [])  # type: ignore[method-assign]
        result = sweeper.sweep(("ec2-nat-gateway",))
    assert result.failed == ["ec2-nat-gateway nat-1: still there after 60 s"]
    assert sum(time.slept) <= 60
    assert sweeper.retry.deadline == 60 + 0  # the call retries end at the same deadline


def test_a_call_retried_past_the_sweeps_deadline_gives_up_there() -> None:
    time = FakeTime()
    error = ClientError({"Error": {"Code": "DependencyViolation", "Message": "in use"}}, "DeleteVpc")

    def refuse(**_: Any) -> None:
        raise error
    retry = Retry(budget=1200, sleep=time.sleep, clock=time.clock, deadline=time.clock() + 100)
    with pytest.raises(ClientError):
        retry(refuse)
    assert 0 < sum(time.slept) <= 100
