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


def test_an_unset_quota_falls_back_to_the_aws_default() -> None:
    quotas = client("service-quotas")
    with Stubber(quotas) as stub:
        stub.add_client_error("get_service_quota", "NoSuchResourceException", "no applied value")
        stub.add_response("get_aws_default_service_quota", {"Quota": {"QuotaCode": cost.GPU_QUOTA_CODE, "Value": 64.0}},
                          {"ServiceCode": "ec2", "QuotaCode": cost.GPU_QUOTA_CODE})
        assert cost.check_quota(quotas, cost.GPU_QUOTA_CODE, 28) == "quota L-DB2E81BA: 64 vCPUs, run needs 28"


def test_run_ids_are_names_labels_and_ages() -> None:
    from datetime import UTC, datetime  # noqa: PLC0415

    run = new_run_id(datetime(2026, 12, 5, 6, 0, tzinfo=UTC), "1234567890")
    assert run == "e2e-202612050600-1234567890"
    assert len(run) <= 63
    with pytest.raises(ValueError, match="lowercase letters or digits"):
        new_run_id(datetime(2026, 12, 5, tzinfo=UTC), "Bad_Suffix")
