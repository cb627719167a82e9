"""The sweeper against moto (a mock of the AWS APIs): two runs' leftovers in one account; sweeping run A removes
every kind of A's, leaves B's untouched and ends with an empty resource-groups tagging API query for A; the
scheduled sweep takes only runs older than its TTL; the user's model snapshot is never touched."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tests.e2e.aws_fixtures import REGION, build_run
from tools.e2e.runid import RUN_TAG, Selector, new_run_id
from tools.e2e.sweep.kinds import KINDS, Context, find_vpcs
from tools.e2e.sweep.order import SWEEP_ORDER
from tools.e2e.sweep.retry import Retry
from tools.e2e.sweep.sweeper import Sweeper

NOW = datetime(2026, 12, 5, 6, 0, tzinfo=UTC)
RUN_A = new_run_id(NOW - timedelta(hours=20), "aaaa1111")
RUN_B = new_run_id(NOW - timedelta(hours=1), "bbbb2222")
# moto 5.2.5 has no EKS add-on API (moto/eks/responses.py: clusters, node groups, Fargate profiles only): the
# add-on kind is tested with botocore's Stubber in test_retries_stubber.py.
MOTO_LACKS = frozenset({"eks-addon"})


@pytest.fixture
def clients(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws():
        session = boto3.Session(region_name=REGION)
        cache: dict[str, Any] = {}

        def client(service: str) -> Any:
            if service not in cache:
                cache[service] = session.client(service)
            return cache[service]
        yield client


MOTO_ORDER = tuple(k for k in SWEEP_ORDER if k not in MOTO_LACKS)


def sweeper(clients: Any, selector: Selector) -> Sweeper:
    return Sweeper(clients, selector, retry=Retry(budget=5, sleep=lambda _: None), poll=0.0, wait_budget=1,
                   sleep=lambda _: None, log=lambda _: None, checked=MOTO_ORDER)


def present(clients: Any, run_id: str) -> dict[str, set[str]]:
    ctx = Context(clients, Selector(run_id=run_id), Retry(budget=0))
    ctx.vpcs = {f.id for f in find_vpcs(ctx)}
    return {kind: {f.id for f in KINDS[kind].find(ctx)} for kind in SWEEP_ORDER if kind not in MOTO_LACKS}


def test_the_fixture_builds_every_kind_and_the_finders_see_each(clients: Any) -> None:
    built = build_run(clients, RUN_A)
    assert set(built.ids) == set(SWEEP_ORDER) - MOTO_LACKS
    seen = present(clients, RUN_A)
    for kind, ids in built.ids.items():
        assert set(ids) <= seen[kind], kind


def test_sweeping_one_run_removes_all_of_it_and_nothing_of_another(clients: Any) -> None:
    a = build_run(clients, RUN_A, index=0)
    b = build_run(clients, RUN_B, index=1)
    result = sweeper(clients, Selector(run_id=RUN_A)).sweep(MOTO_ORDER)

    assert result.failed == []
    assert result.left == []
    assert result.ok
    left_a = present(clients, RUN_A)
    assert {k: v for k, v in left_a.items() if v} == {}
    left_b = present(clients, RUN_B)
    for kind, ids in b.ids.items():
        assert set(ids) <= left_b[kind], f"{kind} of the other run was touched"
    for kind, ids in a.ids.items():
        for ident in ids:
            assert f"{kind} {ident}" in result.removed
    # KMS keys cannot be deleted at once: scheduled (7 days), and the tagging query leaves them out.
    assert len(result.scheduled) == 1 and ":kms:" in result.scheduled[0]
    remaining = clients("resourcegroupstaggingapi").get_resources(
        TagFilters=[{"Key": RUN_TAG, "Values": [RUN_B]}])["ResourceTagMappingList"]
    assert remaining, "run B's resources are still visible to the tagging API"


def test_a_second_sweep_finds_nothing_to_do(clients: Any) -> None:
    build_run(clients, RUN_A)
    assert sweeper(clients, Selector(run_id=RUN_A)).sweep(MOTO_ORDER).ok
    again = sweeper(clients, Selector(run_id=RUN_A)).sweep(MOTO_ORDER)
    assert again.removed == [] and again.ok


def test_the_scheduled_sweep_takes_only_runs_older_than_the_ttl(clients: Any) -> None:
    build_run(clients, RUN_A, index=0)  # started 20 h ago
    b = build_run(clients, RUN_B, index=1)  # started 1 h ago
    result = sweeper(clients, Selector.older_than(timedelta(hours=12), NOW)).sweep(MOTO_ORDER)
    assert result.ok, result.as_dict()
    assert not any(present(clients, RUN_A).values())
    left_b = present(clients, RUN_B)
    for kind, ids in b.ids.items():
        assert set(ids) <= left_b[kind], kind


def test_the_model_snapshot_is_never_swept(clients: Any) -> None:
    built = build_run(clients, RUN_A)
    protected = built.ids["ec2-snapshot"][0]  # even if it carried the run tag
    result = sweeper(clients, Selector(run_id=RUN_A, protect=frozenset({protected}))).sweep(MOTO_ORDER)
    assert f"ec2-snapshot {protected}" not in result.removed
    snapshots = clients("ec2").describe_snapshots(SnapshotIds=[protected])["Snapshots"]
    assert [s["SnapshotId"] for s in snapshots] == [protected]
    assert result.left == []


def test_what_the_sweeper_could_not_delete_is_reported_as_left(clients: Any) -> None:
    build_run(clients, RUN_A)
    # A sweep that skips the VPC kinds leaves them: the tagging API still finds them and the result is not ok.
    partial = tuple(k for k in MOTO_ORDER if k not in ("ec2-vpc", "ec2-subnet"))
    result = sweeper(clients, Selector(run_id=RUN_A)).sweep(partial)
    assert not result.ok
    assert any(":vpc/" in arn for arn in result.left)
    assert any(":subnet/" in arn for arn in result.left)


def test_the_final_check_sees_what_the_tagging_api_cannot(clients: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """GetResources returns no IAM roles and no Auto Scaling groups (AWS's supported-services page): with the
    tagging API answering nothing, a role, a policy and a group the sweep skipped are still reported as left."""
    build_run(clients, RUN_A)
    skipped = ("iam-role", "iam-policy", "autoscaling-group")
    sweep = sweeper(clients, Selector(run_id=RUN_A))
    monkeypatch.setattr(sweep, "_tagging_query", lambda: ([], []))
    result = sweep.sweep(tuple(k for k in MOTO_ORDER if k not in skipped))
    assert not result.ok
    assert f"iam-role {RUN_A}-node" in result.left and f"iam-role {RUN_A}-cluster" in result.left
    assert f"autoscaling-group {RUN_A}-gpu-self" in result.left
    assert any(x.startswith("iam-policy arn:aws:iam::") for x in result.left)
    assert {x.split()[0] for x in result.left} == set(skipped)
