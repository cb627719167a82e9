"""The cost cap: an estimate of one run, printed before `up` and refused above MAX_USD; the smallest GPU instance
type each pool allows; and the account's GPU vCPU quota, checked before `up`.

The estimate is what a run that ends within its wall-clock limit bills: every resource alive for the whole limit,
at the peak node count (a managed node group's update surges extra nodes; Karpenter's drift launches the
replacement before it drains), plus the NAT gateway's data processing for the images the GPU nodes pull. It is an
estimate, not a bound: a run whose cleanup fails bills the same hourly rate until the TTL sweep takes it (the
table gives that figure too), and other usage-billed items (ALB and inter-zone data, CloudWatch Logs ingestion,
requests) are left out. The expected cost (each phase's budget) is printed beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from policies.gpu_guard.matrix import load_matrix
from policies.gpu_guard.pricing.table import PRICES_PATH, Price, load

# Every price comes from the pack's price table (policies/gpu_guard/pricing/prices.yaml: each price with its source
# and date), the one the preview, `gpu-platform cost` and the `cost-budget` policy read. A type or service with no
# recorded price in the run's region is "not estimated": the estimate says so and the run is refused, never guessed.
PRICES_REGION = "us-west-2"  # the e2e stack's default region (E2E_REGION), the one its workflow runs in
VCPU_SOURCE = ("https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/website/content/en/docs/reference/"
               "instance-types.md")
# vCPUs of the standard types the system node group may use (GPU types: matrix.yaml instance_capacity).
STANDARD_VCPUS = {"m7i.large": 2, "m7i.xlarge": 4, "m6i.large": 2, "m6i.xlarge": 4}
# An assumption, not a measurement: what each GPU node pulls through the NAT gateway (the Triton serving image,
# several GB compressed, the GPU Operator's images and driver packages).
NAT_GB_PER_GPU_NODE = 15
# If cleanup fails, resources live until the TTL sweep: E2E_TTL_HOURS (12) on a 12-hourly schedule (e2e.yml).
UNTIL_TTL_SWEEP_HOURS = 24

# The service quota of on-demand G and VT instances, in vCPUs ("Running On-Demand G and VT instances"), and of
# the standard families the system nodes use. Source: https://docs.aws.amazon.com/ec2/latest/instancetypes/ec2-instance-quotas.html
# (quota codes listed in the Service Quotas console, service code ec2).
GPU_QUOTA_CODE = "L-DB2E81BA"
STANDARD_QUOTA_CODE = "L-1216C47A"
# A managed node group's update raises desired size by up to twice the number of Availability Zones
# (https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html, "Scale up phase").
MNG_SURGE_PER_ZONE = 2


class CostError(Exception):
    """A refusal before anything is created: the message says what and how to fix it."""


def price(instance_type: str, region: str = PRICES_REGION) -> Price | None:
    """The recorded on-demand price of `instance_type` in `region`, or None (not estimated)."""
    return load().instance(region, instance_type)


def cheapest(instance_types: list[str], region: str = PRICES_REGION) -> str:
    """The cheapest type of a pool's list that has a recorded price in `region`; the first listed when none has
    (the estimate then says it is not estimated, and the run is refused: `refuse_above`)."""
    priced = [(p.usd, t) for t in instance_types if (p := price(t, region)) is not None]
    return min(priced)[1] if priced else instance_types[0]


def vcpus(instance_type: str) -> int | None:
    capacity = load_matrix().instance_capacity(instance_type)
    return capacity[0] if capacity else STANDARD_VCPUS.get(instance_type)


@dataclass(frozen=True)
class Shape:
    """What the e2e stack runs, as the estimate needs it."""

    region: str
    zones: int
    nat_gateways: int
    system_type: str
    system_nodes: int
    mng_gpu: dict[str, int]        # instance type -> nodes, operator-managed node groups
    karpenter_gpu: dict[str, int]  # instance type -> nodes at a time (one serving replica's node)
    ebs_gib: int                   # node root volumes and the model volume
    snapshot_gib: int              # the run's own model snapshot (0 with E2E_SNAPSHOT_ID)
    albs: int = 1


@dataclass
class Estimate:
    region: str = PRICES_REGION
    # (item, USD per hour or None when not estimated, hours, why not estimated)
    lines: list[tuple[str, float | None, float, str]] = field(default_factory=list)
    usage: list[tuple[str, float | None]] = field(default_factory=list)  # (item, USD), not time-billed
    prices: list[Price] = field(default_factory=list)
    limit_hours: float = 0.0
    expected_hours: float = 0.0
    peak_gpu_vcpus: int = 0
    peak_standard_vcpus: int = 0

    @property
    def missing(self) -> list[str]:
        """The lines with no recorded price: the figures below are then lower bounds, and the run is refused."""
        return [f"{item} ({why})" for item, rate, _, why in self.lines if rate is None] + [
            item for item, usd in self.usage if usd is None]

    @property
    def hourly_usd(self) -> float:
        return sum(rate or 0.0 for _, rate, _, _ in self.lines)

    def _usage(self) -> float:
        return sum(usd or 0.0 for _, usd in self.usage)

    @property
    def at_limit_usd(self) -> float:
        """The estimate of a run that ends within the wall-clock limit (not a bound: see the module)."""
        return round(sum((rate or 0.0) * hours for _, rate, hours, _ in self.lines) + self._usage(), 2)

    @property
    def expected_usd(self) -> float:
        scale = self.expected_hours / self.limit_hours if self.limit_hours else 0.0
        return round(sum((rate or 0.0) * hours for _, rate, hours, _ in self.lines) * scale + self._usage(), 2)

    @property
    def cleanup_fails_usd(self) -> float:
        """The same hourly rate until the TTL sweep, had cleanup failed at the end of the limit."""
        return round(self.at_limit_usd + self.hourly_usd * max(0.0, UNTIL_TTL_SWEEP_HOURS - self.limit_hours), 2)

    def table(self) -> str:
        def cells(rate: float | None, hours: float) -> str:
            if rate is None:
                return f"not estimated | {hours:.2f} | not estimated"
            return f"{rate:.4f} | {hours:.2f} | {rate * hours:.2f}"

        rows = [f"| {item} | {cells(rate, hours)} |" for item, rate, hours, _ in self.lines]
        rows += [f"| {item} | | | {'not estimated' if usd is None else f'{usd:.2f}'} |" for item, usd in self.usage]
        bound = "at least " if self.missing else ""
        sources = sorted({f"{p.source} ({p.date.isoformat()})" for p in self.prices})
        return "\n".join([
            f"Estimate before `up` (Linux on-demand prices, {self.region}, from {PRICES_PATH.name}: "
            f"{'; '.join(sources)})",
            "",
            "| item | USD per hour | hours | USD |",
            "|---|---|---|---|",
            *rows,
            f"| **estimate, a run that ends within the limit** (everything for {self.limit_hours:.2f} h) | | | "
            f"**{bound}{self.at_limit_usd:.2f}** |",
            f"| expected (each phase within its budget, {self.expected_hours:.2f} h) | | | "
            f"{bound}{self.expected_usd:.2f} |",
            f"| if cleanup fails: the same rate until the TTL sweep (up to {UNTIL_TTL_SWEEP_HOURS} h) | | | "
            f"{bound}{self.cleanup_fails_usd:.2f} |",
            *([""] + [f"Not estimated: {m}" for m in self.missing] if self.missing else []),
            "",
            f"Peak vCPUs: {self.peak_gpu_vcpus} of G and VT ({GPU_QUOTA_CODE}), {self.peak_standard_vcpus} standard "
            f"({STANDARD_QUOTA_CODE}).",
        ])

    def as_dict(self) -> dict[str, Any]:
        return {"at_limit_usd": self.at_limit_usd, "expected_usd": self.expected_usd,
                "cleanup_fails_usd": self.cleanup_fails_usd, "limit_hours": self.limit_hours,
                "expected_hours": self.expected_hours, "region": self.region, "complete": not self.missing,
                "not_estimated": self.missing,
                "prices": sorted({(p.source, p.date.isoformat()) for p in self.prices}),
                "lines": [{"item": i, "usd_per_hour": r, "hours": h} for i, r, h, _ in self.lines],
                "usage": [{"item": i, "usd": u} for i, u in self.usage],
                "peak_gpu_vcpus": self.peak_gpu_vcpus, "peak_standard_vcpus": self.peak_standard_vcpus}


class _Rates:
    """Prices of one region from the table, remembered for the estimate's citation."""

    def __init__(self, est: Estimate) -> None:
        self.est, self.table = est, load()

    def _used(self, found: Price | None) -> float | None:
        if found is not None and found not in self.est.prices:
            self.est.prices.append(found)
        return found.usd if found else None

    def instance(self, name: str) -> float | None:
        return self._used(self.table.instance(self.est.region, name))

    def service(self, key: str) -> float | None:
        return self._used(self.table.service(self.est.region, key))

    def why(self, what: str) -> str:
        return f"no recorded price for {what} in {self.est.region} ({PRICES_PATH.name})"


def _times(count: float, rate: float | None) -> float | None:
    return None if rate is None else count * rate


def estimate(shape: Shape, *, limit_hours: float, expected_hours: float) -> Estimate:
    est = Estimate(region=shape.region, limit_hours=limit_hours, expected_hours=expected_hours)
    r = _Rates(est)
    h = limit_hours
    est.lines.append(("EKS control plane", r.service("eks_standard_hour"), h, r.why("the EKS control plane")))
    est.lines.append((f"{shape.system_nodes} x {shape.system_type} (system nodes)",
                      _times(shape.system_nodes, r.instance(shape.system_type)), h, r.why(shape.system_type)))
    surge = MNG_SURGE_PER_ZONE * shape.zones
    gpu_vcpus = 0
    for instance_type, nodes in sorted(shape.mng_gpu.items()):
        peak = nodes + surge
        est.lines.append((f"{peak} x {instance_type} (managed node group at its update surge)",
                          _times(peak, r.instance(instance_type)), h, r.why(instance_type)))
        gpu_vcpus += peak * (vcpus(instance_type) or 0)
    for instance_type, nodes in sorted(shape.karpenter_gpu.items()):
        peak = nodes + 1  # drift: the replacement runs beside the drifted node until it drains
        est.lines.append((f"{peak} x {instance_type} (Karpenter, drift replacement included)",
                          _times(peak, r.instance(instance_type)), h, r.why(instance_type)))
        gpu_vcpus += peak * (vcpus(instance_type) or 0)
    est.lines.append((f"{shape.nat_gateways} NAT gateway(s)", _times(shape.nat_gateways, r.service("nat_gateway_hour")),
                      h, r.why("a NAT gateway")))
    alb, lcu = r.service("alb_hour"), r.service("alb_lcu_hour")
    est.lines.append((f"{shape.albs} ALB (1 LCU)", None if alb is None or lcu is None else shape.albs * (alb + lcu),
                      h, r.why("an ALB hour or LCU")))
    addresses = shape.nat_gateways + shape.albs * shape.zones
    est.lines.append((f"{addresses} public IPv4 addresses", _times(addresses, r.service("public_ipv4_hour")), h,
                      r.why("a public IPv4 address")))
    hours_per_month = r.table.hours_per_month
    gp3 = r.service("gp3_gb_month")
    est.lines.append((f"{shape.ebs_gib} GiB gp3", _times(shape.ebs_gib / hours_per_month, gp3), h, r.why("gp3")))
    if shape.snapshot_gib:
        snapshot = r.service("snapshot_gb_month")
        est.lines.append((f"{shape.snapshot_gib} GiB snapshot", _times(shape.snapshot_gib / hours_per_month, snapshot),
                          h, r.why("snapshot storage")))
    gpu_nodes = sum(shape.mng_gpu.values()) + MNG_SURGE_PER_ZONE * shape.zones * len(shape.mng_gpu) + sum(
        n + 1 for n in shape.karpenter_gpu.values())
    nat_gb = gpu_nodes * NAT_GB_PER_GPU_NODE
    est.usage.append((f"NAT data processing, about {nat_gb} GB ({gpu_nodes} GPU nodes x {NAT_GB_PER_GPU_NODE} GB "
                      "of images, assumed)", _times(nat_gb, r.service("nat_gateway_gb"))))
    est.peak_gpu_vcpus = gpu_vcpus
    # The model snapshot is written from the runner through the EBS direct APIs: no instance of its own.
    est.peak_standard_vcpus = shape.system_nodes * (vcpus(shape.system_type) or 0)
    return est


def refuse_above(est: Estimate, max_usd: float) -> None:
    if est.missing:
        raise CostError(f"the run cannot be capped: not estimated: {'; '.join(est.missing)}. The estimate of what "
                        f"is priced is at least USD {est.at_limit_usd:.2f}. Record the price with its source in "
                        f"{PRICES_PATH} (docs/cost.md, 'Updating prices'), or give the pool a priced type")
    if est.at_limit_usd > max_usd:
        raise CostError(f"the run is estimated at USD {est.at_limit_usd:.2f} (everything alive for the wall-clock "
                        f"limit), above MAX_USD={max_usd:.2f}: raise MAX_USD, or shorten E2E_LIMIT_MINUTES")


# The instance families each quota counts ("Running On-Demand G and VT instances", "Running On-Demand Standard
# (A, C, D, H, I, M, R, T, Z) instances"), as DescribeInstances `instance-type` filter patterns.
QUOTA_FAMILIES = {GPU_QUOTA_CODE: ("g*", "vt*"), STANDARD_QUOTA_CODE: tuple(f"{f}*" for f in "acdhimrtz")}


def running_vcpus(ec2: Any, code: str) -> int:
    """vCPUs of the running and pending on-demand instances the quota `code` counts, already in the region (a dev
    stack, a previous run still being cleaned up). Spot instances have quotas of their own and are not counted.
    vCPUs = CoreCount x ThreadsPerCore (DescribeInstances CpuOptions)."""
    total = 0
    filters = [{"Name": "instance-state-name", "Values": ["pending", "running"]},
               {"Name": "instance-type", "Values": list(QUOTA_FAMILIES[code])}]
    for page in ec2.get_paginator("describe_instances").paginate(Filters=filters):
        for reservation in page.get("Reservations", []):
            for instance in reservation.get("Instances", []):
                if instance.get("InstanceLifecycle") == "spot":
                    continue
                cpu = instance.get("CpuOptions") or {}
                total += int(cpu.get("CoreCount", 0)) * int(cpu.get("ThreadsPerCore", 1))
    return total


def check_quota(quotas: Any, code: str, needed: int, in_use: int = 0) -> str:
    """Service Quotas' applied value of `code` (ec2), else its AWS default, less the vCPUs already running in
    its families (`running_vcpus`); a refusal when what is left is below `needed`."""
    try:
        value = quotas.get_service_quota(ServiceCode="ec2", QuotaCode=code)["Quota"]["Value"]
    except quotas.exceptions.NoSuchResourceException:
        value = quotas.get_aws_default_service_quota(ServiceCode="ec2", QuotaCode=code)["Quota"]["Value"]
    if value - in_use < needed:
        raise CostError(f"the account's ec2 quota {code} is {value:.0f} vCPUs in this region, {in_use} of them "
                        f"already running; the run needs {needed} at its peak. Stop what runs there, or request an "
                        f"increase: aws service-quotas request-service-quota-increase --service-code ec2 "
                        f"--quota-code {code} --desired-value {int(in_use + needed)}")
    return f"quota {code}: {value:.0f} vCPUs, {in_use} running, run needs {needed}"
