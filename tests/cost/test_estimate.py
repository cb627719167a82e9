"""The estimate, one test per line kind, at the round prices of tests/cost/helpers.py (figures checked by hand)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pytest

from policies.gpu_guard.pricing.estimate import FIGURES, Estimate, Line, estimate
from policies.gpu_guard.pricing.shape import NodeGroup, fixed_group_nodes
from policies.gpu_guard.pricing.window import WindowError, monthly_hours, weekly_open_minutes
from tests.cost.helpers import JUDGED, karpenter, service, stack, system, table, volume

WEEKDAYS: dict[str, Any] = {"wake_start": "0 7 * * 1-5", "wake_end": "0 19 * * 1-5", "wake_replicas": 1}
WAKE_HOURS = 60 * 730 / 168  # 12 h x 5 days a week, a 730-hour month


def lines(est: Estimate, kind: str) -> list[Line]:
    return [line for line in est.lines if line.kind == kind]


def one(est: Estimate, kind: str) -> Line:
    (line,) = lines(est, kind)
    return line


def usd(line: Line) -> tuple[float | None, ...]:
    return tuple(line.figure(f).usd for f in FIGURES)


def test_control_plane_standard_support() -> None:
    line = one(estimate(stack(), table(), JUDGED), "control_plane")
    assert usd(line) == (73.0, 73.0, 73.0)
    assert "1 x 730 h x USD 0.1" in line.expected.how


def test_control_plane_extended_fee_past_standard_support_on_the_judged_day() -> None:
    # 1.31's standard support ended 2025-11-26 (matrix eks_versions); EXTENDED keeps it there at the extended fee.
    extended = one(estimate(stack(kubernetes_version="1.31", support_type="EXTENDED"), table(), JUDGED),
                   "control_plane")
    assert usd(extended) == (438.0, 438.0, 438.0)
    assert "past standard support (2025-11-26)" in extended.item
    # STANDARD: EKS upgrades it at the end of standard support, the standard fee stays.
    assert usd(one(estimate(stack(kubernetes_version="1.31"), table(), JUDGED), "control_plane")) == (73.0,) * 3
    # Before the end of standard support the fee is the standard one, whatever the policy.
    early = estimate(stack(kubernetes_version="1.31", support_type="EXTENDED"), table(), JUDGED.replace(year=2025,
                     month=11, day=26))
    assert usd(one(early, "control_plane")) == (73.0,) * 3


def test_system_nodes_and_their_root_volumes() -> None:
    est = estimate(stack(), table(), JUDGED)
    assert usd(one(est, "system_nodes")) == (146.0, 146.0, 219.0)
    assert usd(lines(est, "root_volumes")[0]) == (10.0, 10.0, 15.0)  # 2 (3) nodes x 50 GiB x 0.1


def test_managed_node_group_runs_its_desired_size() -> None:
    assert fixed_group_nodes(desired=1, minimum=0, maximum=3) == (1, 3)
    assert fixed_group_nodes(desired=0, minimum=2, maximum=3) == (2, 3)  # EKS keeps desired within [min, max]
    group = NodeGroup("a10g", "gpu-platform:gpuNodeGroups[0]", ("g5.xlarge", "g6.xlarge"), "on-demand", 1, 3, 100)
    est = estimate(stack(node_groups=(system(), group)), table(), JUDGED)
    line = one(est, "gpu_node_group")
    assert usd(line) == (730.0, 730.0, 2190.0)  # the first listed type: EKS's prioritized on-demand strategy
    assert line.basis == "price" and line.subject == "a10g"


def test_spot_is_an_assumption_with_or_without_a_discount() -> None:
    group = NodeGroup("spot", "gpu-platform:gpuNodeGroups[0]", ("g5.xlarge", "g6.xlarge"), "spot", 1, 2, 100)
    est = estimate(stack(node_groups=(system(), group)), table(), JUDGED, spot_discount=0.6)
    line = one(est, "gpu_node_group")
    assert line.basis == "assumption"
    assert line.expected.usd == pytest.approx(292.0)  # the dearest type, 1.0 x (1 - 0.6) x 730
    assert "an assumption" in line.expected.how
    upper = one(estimate(stack(node_groups=(system(), group)), table(), JUDGED), "gpu_node_group")
    assert upper.expected.usd == 730.0 and "no Spot discount set" in upper.expected.how
    with pytest.raises(ValueError, match="spotDiscount"):
        estimate(stack(), table(), JUDGED, spot_discount=1.0)


def test_karpenter_pool_wake_window_hours_and_ceiling() -> None:
    est = estimate(stack(karpenter_pools=(karpenter(),), services=(service(**WEEKDAYS),)), table(), JUDGED)
    line = one(est, "karpenter_pool")
    assert line.at_rest.usd == 0.0
    assert line.expected.usd == round(WAKE_HOURS * 0.8, 2) == 208.57  # the cheapest type with 1 GPU: g6.xlarge
    assert line.ceiling.usd == 2920.0  # 4 GPUs x 730 h x the dearest GPU-hour (g5.xlarge 1.0)
    assert "60 h a week" in line.expected.how


def test_karpenter_ceiling_is_the_dearest_gpu_hour_on_demand_where_it_falls_back() -> None:
    per_gpu = karpenter(types=("g5.xlarge", "g5.12xlarge"))
    assert one(estimate(stack(karpenter_pools=(per_gpu,)), table(), JUDGED), "karpenter_pool").ceiling.usd == 4380.0
    spot = karpenter(capacity=("spot",))
    assert one(estimate(stack(karpenter_pools=(spot,)), table(), JUDGED, spot_discount=0.5),
               "karpenter_pool").ceiling.usd == 1460.0
    fallback = karpenter(capacity=("spot",), fallback=True)
    assert one(estimate(stack(karpenter_pools=(fallback,)), table(), JUDGED, spot_discount=0.5),
               "karpenter_pool").ceiling.usd == 2920.0
    unbounded = one(estimate(stack(karpenter_pools=(karpenter(max_gpus=None),)), table(), JUDGED), "karpenter_pool")
    assert unbounded.ceiling.usd is None and "no nvidia.com/gpu limit" in unbounded.ceiling.how


def test_replicas_fill_the_managed_group_first() -> None:
    group = NodeGroup("a10g", "gpu-platform:gpuNodeGroups[0]", ("g5.xlarge",), "on-demand", 1, 2, 100)
    svc = service(pools=("a10g", "burst"), min_replicas=2, max_replicas=4)
    est = estimate(stack(node_groups=(system(), group), karpenter_pools=(karpenter(),), services=(svc,)), table(),
                   JUDGED)
    assert one(est, "karpenter_pool").at_rest.usd == 584.0  # 1 replica beyond the group's 1 node: 730 h x 0.8


def test_nat_gateways_and_public_addresses() -> None:
    alb = service(alb=True, internet_facing=True)
    est = estimate(stack(nat_gateways=2, services=(alb,)), table(), JUDGED)
    assert usd(one(est, "nat_gateway")) == (73.0,) * 3
    assert usd(one(est, "public_ipv4")) == (14.6,) * 3  # 2 NAT + 2 zones of the internet-facing ALB
    internal = estimate(stack(services=(service(alb=True),)), table(), JUDGED)
    assert usd(one(internal, "public_ipv4")) == (3.65,) * 3  # an internal ALB has no public address


def test_alb_per_service_and_its_capacity_units_billed_by_usage() -> None:
    est = estimate(stack(services=(service(alb=True), service("other", alb=True))), table(), JUDGED)
    assert [usd(line) for line in lines(est, "alb")] == [(14.6,) * 3] * 2
    lcu = lines(est, "alb_lcu")[0]
    assert lcu.basis == "usage" and usd(lcu) == (None,) * 3 and "USD 0.008" in lcu.expected.how


def test_model_volumes_per_replica_iops_throughput_and_snapshot_apart() -> None:
    svc = service(min_replicas=1, max_replicas=2, volume=volume(iops=4000, throughput_mibps=250))
    est = estimate(stack(karpenter_pools=(karpenter(),), services=(svc,)), table(), JUDGED)
    assert usd(one(est, "model_volume")) == (10.0, 10.0, 20.0)
    assert usd(one(est, "model_volume_iops")) == (5.0, 5.0, 10.0)  # 1,000 IOPS above 3,000 x 0.005
    assert usd(one(est, "model_volume_throughput")) == (5.0, 5.0, 10.0)  # 125 MiB/s above 125 x 0.04
    snapshot = one(est, "model_snapshot")
    assert usd(snapshot) == (4.0,) * 3 and not snapshot.in_total
    without = estimate(stack(karpenter_pools=(karpenter(),), services=(replace(svc, volume=None),)), table(), JUDGED)
    assert est.total("at_rest") - without.total("at_rest") == pytest.approx(20.0)  # volume + IOPS + throughput only


def test_fast_snapshot_restore_per_zone_unless_an_initialization_rate_wins() -> None:
    fsr = service(volume=volume(fast_snapshot_restore=True))
    assert usd(one(estimate(stack(zones=3, services=(fsr,)), table(), JUDGED), "fast_snapshot_restore")) == \
        (1642.5,) * 3  # 3 zones x 730 h x 0.75, enabled whether or not anything restores
    rate = service(volume=volume(fast_snapshot_restore=True, initialization_rate=200))
    est = estimate(stack(zones=3, services=(rate,)), table(), JUDGED)
    assert not lines(est, "fast_snapshot_restore")
    assert one(est, "volume_initialization").basis == "usage"


def test_kms_key_and_usage_lines_outside_the_totals() -> None:
    est = estimate(stack(kms_keys=1, control_plane_logs=("api", "audit")), table(), JUDGED)
    assert usd(one(est, "kms")) == (1.0,) * 3
    for kind in ("nat_data", "control_plane_logs"):
        assert one(est, kind).basis == "usage" and usd(one(est, kind)) == (None,) * 3
    assert est.total("expected") == 73.0 + 146.0 + 10.0 + 36.5 + 3.65 + 1.0


def test_a_missing_price_is_not_estimated_never_zero() -> None:
    big = karpenter(types=("g6e.12xlarge",))
    svc = service(min_replicas=1, gpus_per_replica=4)
    priced = estimate(stack(karpenter_pools=(big,), services=(svc,)), table(), JUDGED)
    assert one(priced, "karpenter_pool").at_rest.usd == 7300.0
    unpriced_table = table(instances={"m7i.large": 0.1})
    est = estimate(stack(karpenter_pools=(big,), services=(svc,)), unpriced_table, JUDGED)
    line = one(est, "karpenter_pool")
    assert usd(line) == (None,) * 3
    assert "g6e.12xlarge has no recorded price in us-test-1" in line.at_rest.how
    assert [m.kind for m in est.missing("at_rest")] == ["karpenter_pool"]
    # A lower bound: the line adds nothing to the total, and `missing` names it.
    assert est.total("at_rest") == pytest.approx(priced.total("at_rest") - 7300.0)


def test_no_zero_stands_for_an_unknown_price() -> None:
    # With no price at all, every line of a non-zero quantity is None; a 0 only ever means a quantity of 0.
    svc = service(min_replicas=1, alb=True, internet_facing=True, volume=volume(fast_snapshot_restore=True), **WEEKDAYS)
    group = NodeGroup("a10g", "k", ("g5.xlarge",), "on-demand", 1, 2, 100)
    full = stack(node_groups=(system(), group), karpenter_pools=(karpenter(),), services=(svc,), kms_keys=1,
                 control_plane_logs=("api",))
    est = estimate(full, table(instances={"x.large": 1.0}, services={"kms_key_month": 1.0}), JUDGED)
    for line in est.lines:
        for figure in FIGURES:
            value = line.figure(figure)
            if value.usd == 0.0:
                assert value.how in ("none", "0 nodes") or "0 replica-hours" in value.how or "0 node" in value.how
            if line.kind != "kms":
                assert value.usd in (None, 0.0), (line.item, figure, value)
    assert est.total("expected") == 1.0 and len(est.missing("expected")) > 5


def test_wake_window_hours() -> None:
    assert weekly_open_minutes("0 7 * * 1-5", "0 19 * * 1-5") == 60 * 60
    assert weekly_open_minutes("0 22 * * *", "0 6 * * *") == 56 * 60  # open across midnight, every day
    assert weekly_open_minutes("*/30 8 * * mon", "0 9 * * mon") == 60  # opened twice, closed once
    assert monthly_hours("0 7 * * 1-5", "0 19 * * 1-5", 730) == pytest.approx(WAKE_HOURS)
    with pytest.raises(WindowError, match="depend on the calendar"):
        monthly_hours("0 7 1 * *", "0 19 1 * *", 730)
    calendar = service(wake_start="0 7 1 * *", wake_end="0 19 1 * *", wake_replicas=1)
    line = one(estimate(stack(karpenter_pools=(karpenter(),), services=(calendar,)), table(), JUDGED),
               "karpenter_pool")
    assert line.expected.usd is None and "depend on the calendar" in line.expected.how
    assert not math.isnan(line.ceiling.usd or 0.0)


def test_a_spot_pool_is_bounded_by_its_dearest_fitting_type() -> None:
    # EC2 Fleet's price-capacity-optimized may launch any type of a Spot pool: the bound is the dearest (g5.xlarge).
    spot = karpenter(capacity=("spot",))
    line = one(estimate(stack(karpenter_pools=(spot,), services=(service(**WEEKDAYS),)), table(), JUDGED),
               "karpenter_pool")
    assert line.expected.usd == round(WAKE_HOURS * 1.0, 2) and "Spot may launch any" in line.expected.how
    assert line.basis == "assumption"


def test_an_unbounded_pool_leaves_its_root_volumes_ceiling_not_estimated() -> None:
    est = estimate(stack(karpenter_pools=(karpenter(max_gpus=None),)), table(), JUDGED)
    volumes = next(line for line in lines(est, "root_volumes") if line.subject == "burst")
    assert volumes.at_rest.usd == 0.0 and volumes.ceiling.usd is None
    assert "not bounded" in volumes.ceiling.how
    empty = NodeGroup("x", "k", (), "on-demand", 1, 1, 100)
    assert one(estimate(stack(node_groups=(system(), empty)), table(), JUDGED), "gpu_node_group").at_rest.usd is None
