"""The cost cap: the estimate's arithmetic from the recorded prices, the refusal above MAX_USD, the cheapest type
of each pool, and what it refuses to guess."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tools.e2e.cap import cost
from tools.e2e.runid import new_run_id
from tools.e2e.stack import Inputs, e2e_config, load_dev, shape

REPO = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 12, 5, 6, 0, tzinfo=UTC)


def dev_shape(region: str = "us-west-2") -> cost.Shape:
    inputs = Inputs(run_id=new_run_id(NOW, "cost"), region=region, snapshot_id="snap-0123456789abcdef1",
                    snapshot_gib=1, ingress_host="e2e.example.com",
                    certificate_arn="arn:aws:acm:us-west-2:123456789012:certificate/x",
                    endpoint_cidrs=("198.51.100.7/32",), deployer_arn="arn:aws:iam::123456789012:role/e2e")
    return shape(e2e_config(load_dev(REPO), inputs, NOW), own_snapshot_gib=1)


def test_the_shape_of_dev_as_the_e2e_stack_runs_it() -> None:
    s = dev_shape()
    assert s.zones == 2 and s.nat_gateways == 1  # dev: two zones, one NAT gateway
    assert s.mng_gpu == {"g6.xlarge": 1}        # the cheapest of l4-spot's [g6.xlarge, g5.xlarge]
    assert s.karpenter_gpu == {"g4dn.xlarge": 1}  # the cheapest of gpu-spot's three
    assert (s.system_type, s.system_nodes) == ("m7i.large", 3)


def test_the_estimate_adds_every_line_for_the_limit() -> None:
    est = cost.estimate(dev_shape(), limit_hours=4, expected_hours=3)
    by_item = {item.split(" (")[0]: rate for item, rate, _, _ in est.lines}
    assert by_item["EKS control plane"] == pytest.approx(0.10)
    assert by_item["5 x g6.xlarge"] == pytest.approx(5 * 0.8048)  # 1 node + 2 per zone x 2 zones of surge
    assert by_item["2 x g4dn.xlarge"] == pytest.approx(2 * 0.526)
    assert by_item["1 NAT gateway(s)"] == pytest.approx(0.045)
    hourly = sum(rate or 0.0 for _, rate, _, _ in est.lines)
    # NAT data: 5 managed-node-group nodes at the surge and 2 Karpenter nodes, 15 GB each, at USD 0.045/GB
    assert len(est.usage) == 1 and est.usage[0][1] == pytest.approx(7 * 15 * 0.045)
    assert "105 GB" in est.usage[0][0]
    usage = 7 * 15 * 0.045
    assert est.at_limit_usd == pytest.approx(round(hourly * 4 + usage, 2))
    assert est.expected_usd == pytest.approx(round(hourly * 3 + usage, 2))
    assert est.cleanup_fails_usd == pytest.approx(round(hourly * 24 + usage, 2), abs=0.011)
    assert est.peak_standard_vcpus == 3 * 2  # no snapshot-writer instance: the runner writes it
    assert est.peak_gpu_vcpus == 5 * 4 + 2 * 4
    table = est.table()
    assert "prices.yaml" in table and "https://aws.amazon.com/ec2/pricing/on-demand/ (2026-12-05)" in table
    assert cost.GPU_QUOTA_CODE in table and "Not estimated" not in table
    assert "worst" not in table and "if cleanup fails" in table


def test_a_cap_below_the_estimate_is_refused() -> None:
    est = cost.estimate(dev_shape(), limit_hours=4, expected_hours=3)
    cost.refuse_above(est, est.at_limit_usd)
    with pytest.raises(cost.CostError, match=r"estimated at USD .* above MAX_USD=5\.00"):
        cost.refuse_above(est, 5)


def test_another_region_or_an_unpriced_type_is_not_estimated_and_refused_not_guessed() -> None:
    est = cost.estimate(dev_shape("eu-west-1"), limit_hours=4, expected_hours=3)
    assert est.at_limit_usd == 0.0 and len(est.missing) == len(est.lines) + len(est.usage)
    assert "not estimated" in est.table() and "at least 0.00" in est.table()
    with pytest.raises(cost.CostError, match=r"cannot be capped: not estimated: EKS control plane \(no recorded "
                                             r"price for the EKS control plane in eu-west-1"):
        cost.refuse_above(est, 1000)
    assert cost.cheapest(["p5.48xlarge"]) == "p5.48xlarge"  # none priced in us-west-2: the first, not estimated
    assert cost.cheapest(["g5.xlarge", "g6.xlarge", "p5.48xlarge"]) == "g6.xlarge"
    assert cost.cheapest(["p5.48xlarge", "p5.4xlarge"], "us-east-1") == "p5.4xlarge"


@pytest.mark.parametrize("instance_type", __import__("policies.gpu_guard.matrix", fromlist=["load_matrix"])
                         .load_matrix().instance_types())
def test_no_matrix_type_crashes_the_cap_and_an_unpriced_one_is_refused(instance_type: str) -> None:
    for region in ("us-east-1", "us-west-2"):
        shape = dataclasses.replace(dev_shape(), region=region, mng_gpu={instance_type: 1}, karpenter_gpu={})
        est = cost.estimate(shape, limit_hours=4, expected_hours=3)
        line = next(line for line in est.lines if instance_type in line[0])
        if cost.price(instance_type, region) is None:
            assert line[1] is None and any(instance_type in m for m in est.missing)
            with pytest.raises(cost.CostError, match=f"not estimated: .*{re.escape(instance_type)}"):
                cost.refuse_above(est, 10**9)
        else:
            assert line[1] == pytest.approx(5 * cost.price(instance_type, region).usd)  # type: ignore[union-attr]


def test_the_refusal_says_the_estimate() -> None:
    est = cost.estimate(dev_shape(), limit_hours=4, expected_hours=3)
    with pytest.raises(cost.CostError, match=rf"estimated at USD {est.at_limit_usd:.2f} .* above MAX_USD=1\.00"):
        cost.refuse_above(est, 1)


def test_the_estimate_command_with_a_g6e_pool_prints_not_estimated(monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from tools.e2e import __main__ as e2e_main  # noqa: PLC0415
    from tools.e2e import stack  # noqa: PLC0415

    dev = stack.load_dev(REPO)
    dev["config"]["gpu-platform:gpuNodeGroups"][0]["instanceTypes"] = ["g6e.xlarge"]
    monkeypatch.setattr(stack, "load_dev", lambda _: dev)
    assert e2e_main.main(["estimate"]) == 1
    out = capsys.readouterr().out
    assert "g6e.xlarge (managed node group at its update surge) | not estimated" in out
    assert "no recorded price for g6e.xlarge in us-west-2" in out
