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

from policies.gpu_guard.eks_support import STANDARD_SUPPORT_PRICE_PER_HOUR

PRICES_READ = "2026-12-05"
PRICES_REGION = "us-west-2"
EC2_SOURCE = "https://aws.amazon.com/ec2/pricing/on-demand/"
EKS_SOURCE = "https://aws.amazon.com/eks/pricing/"
VPC_SOURCE = "https://aws.amazon.com/vpc/pricing/"
ELB_SOURCE = "https://aws.amazon.com/elasticloadbalancing/pricing/"
EBS_SOURCE = "https://aws.amazon.com/ebs/pricing/"
VCPU_SOURCE = ("https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/website/content/en/docs/reference/"
               "instance-types.md")
HOURS_PER_MONTH = 730  # AWS's own conversion of monthly prices to hours (EBS pricing page, "Pricing examples")

# Linux on-demand, USD per hour, us-west-2, as this project recorded them on PRICES_READ from EC2_SOURCE (g5.xlarge
# agrees with Pulumi.dev.yaml's cost note); vCPUs from Karpenter's instance-type reference. Prices move: re-read the
# pages and update this table (and docs/e2e.md's) before trusting a cap close to the estimate.
INSTANCES: dict[str, tuple[float, int]] = {
    "g4dn.xlarge": (0.526, 4),
    "g6.xlarge": (0.8048, 4),
    "g5.xlarge": (1.006, 4),
    "m7i.large": (0.1008, 2),
    "m7i.xlarge": (0.2016, 4),
}
EKS_CONTROL_PLANE = float(STANDARD_SUPPORT_PRICE_PER_HOUR.split()[-1])  # USD per cluster per hour
NAT_GATEWAY = 0.045           # USD per NAT gateway per hour
PUBLIC_IPV4 = 0.005           # USD per public IPv4 address per hour (NAT's EIP, the ALB's addresses)
ALB = 0.0225                  # USD per ALB per hour
ALB_LCU = 0.008               # USD per LCU-hour; one LCU is far above one request a minute
GP3_GB_MONTH = 0.08           # USD per GB-month, gp3
SNAPSHOT_GB_MONTH = 0.05      # USD per GB-month, standard snapshot storage
NAT_DATA_GB = 0.045           # USD per GB processed by a NAT gateway (VPC_SOURCE, "NAT Gateway Pricing")
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


def price(instance_type: str) -> float:
    if instance_type not in INSTANCES:
        raise CostError(f"no published on-demand price recorded for {instance_type} (tools/e2e/cap/cost.py INSTANCES, "
                        f"{EC2_SOURCE}); the e2e run uses only the types it can price: {', '.join(INSTANCES)}")
    return INSTANCES[instance_type][0]


def cheapest(instance_types: list[str]) -> str:
    """The cheapest type of a pool's list that has a recorded price."""
    priced = [t for t in instance_types if t in INSTANCES]
    if not priced:
        raise CostError(f"none of {instance_types} has a recorded price; the e2e run refuses to guess")
    return min(priced, key=lambda t: (INSTANCES[t][0], t))


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
    lines: list[tuple[str, float, float]] = field(default_factory=list)  # (item, USD per hour, hours)
    usage: list[tuple[str, float]] = field(default_factory=list)         # (item, USD), not time-billed
    limit_hours: float = 0.0
    expected_hours: float = 0.0
    peak_gpu_vcpus: int = 0
    peak_standard_vcpus: int = 0

    @property
    def hourly_usd(self) -> float:
        return sum(rate for _, rate, _ in self.lines)

    @property
    def at_limit_usd(self) -> float:
        """The estimate of a run that ends within the wall-clock limit (not a bound: see the module)."""
        return round(sum(rate * hours for _, rate, hours in self.lines) + sum(usd for _, usd in self.usage), 2)

    @property
    def expected_usd(self) -> float:
        scale = self.expected_hours / self.limit_hours if self.limit_hours else 0.0
        return round(sum(rate * hours for _, rate, hours in self.lines) * scale + sum(usd for _, usd in self.usage), 2)

    @property
    def cleanup_fails_usd(self) -> float:
        """The same hourly rate until the TTL sweep, had cleanup failed at the end of the limit."""
        return round(self.at_limit_usd + self.hourly_usd * max(0.0, UNTIL_TTL_SWEEP_HOURS - self.limit_hours), 2)

    def table(self) -> str:
        rows = [f"| {item} | {rate:.4f} | {hours:.2f} | {rate * hours:.2f} |" for item, rate, hours in self.lines]
        rows += [f"| {item} | | | {usd:.2f} |" for item, usd in self.usage]
        return "\n".join([
            f"Estimate before `up` (on-demand prices, {PRICES_REGION}, recorded {PRICES_READ}: {EC2_SOURCE}, "
            f"{EKS_SOURCE}, {VPC_SOURCE}, {ELB_SOURCE}, {EBS_SOURCE})",
            "",
            "| item | USD per hour | hours | USD |",
            "|---|---|---|---|",
            *rows,
            f"| **estimate, a run that ends within the limit** (everything for {self.limit_hours:.2f} h) | | | "
            f"**{self.at_limit_usd:.2f}** |",
            f"| expected (each phase within its budget, {self.expected_hours:.2f} h) | | | {self.expected_usd:.2f} |",
            f"| if cleanup fails: the same rate until the TTL sweep (up to {UNTIL_TTL_SWEEP_HOURS} h) | | | "
            f"{self.cleanup_fails_usd:.2f} |",
            "",
            f"Peak vCPUs: {self.peak_gpu_vcpus} of G and VT ({GPU_QUOTA_CODE}), {self.peak_standard_vcpus} standard "
            f"({STANDARD_QUOTA_CODE}).",
        ])

    def as_dict(self) -> dict[str, Any]:
        return {"at_limit_usd": self.at_limit_usd, "expected_usd": self.expected_usd,
                "cleanup_fails_usd": self.cleanup_fails_usd, "limit_hours": self.limit_hours,
                "expected_hours": self.expected_hours, "region": PRICES_REGION, "prices_read": PRICES_READ,
                "lines": [{"item": i, "usd_per_hour": r, "hours": h} for i, r, h in self.lines],
                "usage": [{"item": i, "usd": u} for i, u in self.usage],
                "peak_gpu_vcpus": self.peak_gpu_vcpus, "peak_standard_vcpus": self.peak_standard_vcpus}


def estimate(shape: Shape, *, limit_hours: float, expected_hours: float) -> Estimate:
    if shape.region != PRICES_REGION:
        raise CostError(f"aws:region {shape.region}: the recorded prices are {PRICES_REGION}'s; run the e2e stack "
                        f"in {PRICES_REGION} (E2E_REGION) or add that region's prices to tools/e2e/cap/cost.py")
    est = Estimate(limit_hours=limit_hours, expected_hours=expected_hours)
    h = limit_hours
    est.lines.append(("EKS control plane", EKS_CONTROL_PLANE, h))
    est.lines.append((f"{shape.system_nodes} x {shape.system_type} (system nodes)",
                      shape.system_nodes * price(shape.system_type), h))
    surge = MNG_SURGE_PER_ZONE * shape.zones
    gpu_vcpus = 0
    for instance_type, nodes in sorted(shape.mng_gpu.items()):
        peak = nodes + surge
        est.lines.append((f"{peak} x {instance_type} (managed node group at its update surge)",
                          peak * price(instance_type), h))
        gpu_vcpus += peak * INSTANCES[instance_type][1]
    for instance_type, nodes in sorted(shape.karpenter_gpu.items()):
        peak = nodes + 1  # drift: the replacement runs beside the drifted node until it drains
        est.lines.append((f"{peak} x {instance_type} (Karpenter, drift replacement included)",
                          peak * price(instance_type), h))
        gpu_vcpus += peak * INSTANCES[instance_type][1]
    est.lines.append((f"{shape.nat_gateways} NAT gateway(s)", shape.nat_gateways * NAT_GATEWAY, h))
    est.lines.append((f"{shape.albs} ALB (1 LCU)", shape.albs * (ALB + ALB_LCU), h))
    addresses = shape.nat_gateways + shape.albs * shape.zones
    est.lines.append((f"{addresses} public IPv4 addresses", addresses * PUBLIC_IPV4, h))
    est.lines.append((f"{shape.ebs_gib} GiB gp3", shape.ebs_gib * GP3_GB_MONTH / HOURS_PER_MONTH, h))
    if shape.snapshot_gib:
        snapshot_rate = shape.snapshot_gib * SNAPSHOT_GB_MONTH / HOURS_PER_MONTH
        est.lines.append((f"{shape.snapshot_gib} GiB snapshot", snapshot_rate, h))
    gpu_nodes = sum(shape.mng_gpu.values()) + MNG_SURGE_PER_ZONE * shape.zones * len(shape.mng_gpu) + sum(
        n + 1 for n in shape.karpenter_gpu.values())
    nat_gb = gpu_nodes * NAT_GB_PER_GPU_NODE
    est.usage.append((f"NAT data processing, about {nat_gb} GB ({gpu_nodes} GPU nodes x {NAT_GB_PER_GPU_NODE} GB "
                      "of images, assumed)", nat_gb * NAT_DATA_GB))
    est.peak_gpu_vcpus = gpu_vcpus
    # The model snapshot is written from the runner through the EBS direct APIs: no instance of its own.
    est.peak_standard_vcpus = shape.system_nodes * INSTANCES[shape.system_type][1]
    return est


def refuse_above(est: Estimate, max_usd: float) -> None:
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
