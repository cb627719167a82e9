"""The monthly estimate of a `Stack`: one line per thing billed, three figures each, the arithmetic shown.

- at rest: every service at minReplicas, every node group at the size it runs (`shape.fixed_group_nodes`);
- expected: at rest plus each wake window's hours at its replicas (`window.monthly_hours`);
- ceiling: every service at maxReplicas all month, every node group at maxSize, every Karpenter pool at its GPU
  limit at the dearest GPU-hour it allows (on-demand where it may fall back to on-demand).

A figure is USD or None ("not estimated": `how` says why); None never counts as 0, and a total over a None is
a lower bound that names what it lacks. `basis` says what a line's USD rests on: "price" (a recorded price times a
quantity the stack fixes), "assumption" (Spot: on-demand x (1 - a discount the user set), or the on-demand price as
an upper bound when none is set), "usage" (billed by traffic nobody knows before it happens: NAT data, ALB LCUs,
log ingestion, initialization per restore; the rate is shown, the figures are None and no total counts them).
The model snapshot is the user's (`snapshotId`): its line has `in_total` False.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date

from ..matrix import load_matrix
from .shape import KarpenterPool, ModelVolume, NodeGroup, Service, Stack
from .table import Price, PriceTable, stale
from .window import WindowError, monthly_hours

FIGURES = ("at_rest", "expected", "ceiling")
GP3_BASE_IOPS, GP3_BASE_MIBPS = 3000, 125  # included in gp3's GB-month price (https://aws.amazon.com/ebs/pricing/)


@dataclass(frozen=True)
class Figure:
    usd: float | None
    how: str

    @property
    def known(self) -> bool:
        return self.usd is not None


def _no(why: str) -> Figure:
    return Figure(None, f"not estimated: {why}")


@dataclass(frozen=True)
class Line:
    kind: str
    item: str
    at_rest: Figure
    expected: Figure
    ceiling: Figure
    basis: str  # price | assumption | usage
    key: str
    prices: tuple[Price, ...] = ()
    in_total: bool = True
    subject: str = ""  # the pool or service the line bills for ("" for the cluster's own lines)

    @property
    def ident(self) -> str:
        """What matches this line across two estimates (the pull-request diff)."""
        return f"{self.kind}:{self.subject}"

    def figure(self, name: str) -> Figure:
        return getattr(self, name)  # type: ignore[no-any-return]


@dataclass
class Estimate:
    stack: str
    region: str
    judged: date
    hours_per_month: int
    lines: list[Line] = field(default_factory=list)
    spot_discount: float | None = None

    def total(self, figure: str, *, facts_only: bool = False) -> float:
        """USD of the lines in the total with a known figure (a lower bound when `missing(figure)` is not empty)."""
        return round(sum(line.figure(figure).usd or 0.0 for line in self.counted()
                         if not facts_only or line.basis == "price"), 2)

    def counted(self) -> list[Line]:
        return [line for line in self.lines if line.in_total and line.basis != "usage"]

    def missing(self, figure: str) -> list[Line]:
        """Lines in the total whose figure is not estimated."""
        return [line for line in self.counted() if not line.figure(figure).known]

    def stale_prices(self) -> list[Price]:
        return stale((p for line in self.lines for p in line.prices), self.judged)


class _Pricer:
    def __init__(self, table: PriceTable, region: str, spot_discount: float | None) -> None:
        self.table, self.region, self.discount = table, region, spot_discount
        self.hours = table.hours_per_month

    def service(self, key: str) -> Price | None:
        return self.table.service(self.region, key)

    def instance(self, name: str) -> Price | None:
        return self.table.instance(self.region, name)

    def node_hour(self, name: str, capacity: str) -> tuple[float | None, str, tuple[Price, ...], bool]:
        """(USD per node-hour, how, prices, is an assumption) of one instance type at a capacity type."""
        price = self.instance(name)
        if price is None:
            return None, f"no recorded on-demand price for {name} in {self.region}", (), False
        if capacity != "spot":
            return price.usd, f"{name} USD {price.usd:g}/h", (price,), False
        if self.discount is None:
            return price.usd, (f"{name} Spot at most its on-demand USD {price.usd:g}/h (an assumption: no Spot "
                               "discount set)"), (price,), True
        usd = price.usd * (1 - self.discount)
        return usd, (f"{name} Spot USD {price.usd:g}/h x (1 - {self.discount:g}) = {usd:.4f}/h (an assumption: "
                     "the discount is the user's)"), (price,), True


def _gpus(name: str) -> int | None:
    inst = load_matrix().instance_type(name)
    return inst.gpus if inst is not None and inst.gpus > 0 else None


def _fixed(p: _Pricer, nodes: int, rate: tuple[float | None, str, tuple[Price, ...], bool]) -> Figure:
    usd, how, _, _ = rate
    if usd is None:
        return _no(how) if nodes else Figure(0.0, "0 nodes")
    return Figure(round(nodes * p.hours * usd, 2), f"{nodes} x {p.hours} h x {how}")


def _group_lines(p: _Pricer, group: NodeGroup) -> list[Line]:
    # An on-demand group launches its first listed type (EKS: the ASG's "prioritized" strategy); a Spot group may
    # run any of them: each figure is priced at the dearest (a bound), named so.
    types = group.instance_types
    rates = [p.node_hour(t, group.capacity) for t in types]
    if group.capacity == "spot" and len(types) > 1:
        known = [r for r in rates if r[0] is not None]
        rate = (max(known, key=lambda r: r[0] or 0.0) if len(known) == len(rates)
                else (None, "no recorded price for " + ", ".join(t for t, r in zip(types, rates, strict=True)
                                                              if r[0] is None) + f" in {p.region}", (), True))
        rate = (rate[0], f"the dearest of {list(types)}: {rate[1]}", rate[2], rate[3])
    else:
        rate = rates[0] if rates else (None, "no instance type was read", (), False)
    what = "system nodes" if group.system else f"GPU node group, {group.capacity}, {'/'.join(types)}"
    lines = [Line("system_nodes" if group.system else "gpu_node_group", f"{group.name} ({what})",
                  _fixed(p, group.running, rate), _fixed(p, group.running, rate), _fixed(p, group.maximum, rate),
                  "assumption" if rate[3] else "price", f"{group.key}.desiredSize / maxSize", rate[2])]
    lines.append(_root_volumes(p, f"{group.name} root volumes", group.key, group.disk_gib,
                               (group.running, group.running, group.maximum)))
    return lines


def _root_volumes(p: _Pricer, item: str, key: str, disk_gib: int | None,
                  nodes: tuple[float | None, float | None, float | None]) -> Line:
    gp3 = p.service("gp3_gb_month")
    figures = []
    for count in nodes:
        if count is None:
            figures.append(_no("the node count is not bounded"))
        elif disk_gib is None:
            figures.append(_no("the nodes' volume sizes were not read") if count else Figure(0.0, "0 nodes"))
        elif gp3 is None:
            figures.append(_no(f"no recorded gp3 price in {p.region}") if count else Figure(0.0, "0 nodes"))
        else:
            figures.append(Figure(round(count * disk_gib * gp3.usd, 2),
                                  f"{_n(count)} node-months x {disk_gib} GiB x USD {gp3.usd:g}/GB-month"))
    return Line("root_volumes", item, figures[0], figures[1], figures[2], "price", f"{key}.diskSizeGiB",
                (gp3,) if gp3 else ())


def _n(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.4f}"


def _replica_hours(p: _Pricer, service: Service, slots: int = 0) -> tuple[tuple[float, float, float], str]:
    """Replica-hours a month (at rest, expected, ceiling) beyond the `slots` replicas its managed node groups hold,
    and how the expected figure got its wake hours."""
    base = max(0, service.min_replicas - slots)
    rest = float(base * p.hours)
    held = f" (beyond the {slots} its node groups hold)" if slots else ""
    expected, how = rest, f"{base} x {p.hours} h{held}"
    extra = max(0, service.wake_replicas - slots) - base
    if service.wake_start and service.wake_end and extra > 0:
        try:
            hours = monthly_hours(service.wake_start, service.wake_end, p.hours)
        except WindowError as error:
            return (rest, math.nan, service.max_replicas * p.hours), f"the wake window: {error}"
        expected = rest + extra * hours
        how = (f"{base} x {p.hours} h + {extra} x {hours:.2f} h of wake window{held} "
               f"('{service.wake_start}' to '{service.wake_end}': {hours * 168 / p.hours:g} h a week x {p.hours}/168)")
    return (rest, expected, max(0, service.max_replicas - slots) * p.hours), how


def _karpenter_lines(p: _Pricer, pool: KarpenterPool, services: list[tuple[Service, int]]) -> list[Line]:
    capacity = "on-demand" if "on-demand" in pool.capacity_types else "spot"
    typed = [(t, _gpus(t)) for t in pool.instance_types]
    figures: list[list[float | None]] = [[0.0], [0.0]]
    hows: list[list[str]] = [[], []]
    prices: set[Price] = set()
    assumption = capacity == "spot"
    node_hours = [0.0, 0.0, 0.0]
    for service, slots in services:
        fitting = [t for t, g in typed if g is not None and g >= service.gpus_per_replica]
        rates = {t: p.node_hour(t, capacity) for t in fitting}
        unknown = [t for t in fitting if rates[t][0] is None]
        hours, wake_how = _replica_hours(p, service, slots)
        for i in range(2):
            node_hours[i] += 0 if math.isnan(hours[i]) else hours[i]
        node_hours[2] += hours[2]
        for i in range(2):
            if math.isnan(hours[i]):
                figures[i].append(None)
                hows[i].append(f"{service.name}: {wake_how}")
            elif hours[i] == 0:
                hows[i].append(f"{service.name}: 0 replica-hours")
            elif not fitting:
                figures[i].append(None)
                hows[i].append(f"{service.name}: no type of {list(pool.instance_types)} has {service.gpus_per_replica} "
                               "GPU(s) in the matrix")
            elif unknown:
                figures[i].append(None)
                hows[i].append(f"{service.name}: Karpenter launches the cheapest fitting type, and "
                               f"{', '.join(unknown)} has no recorded price in {p.region}")
            else:
                # On-demand: Karpenter launches the cheapest type that fits (lowest-price); Spot: EC2 Fleet's
                # price-capacity-optimized may launch any of them, so the bound is the dearest.
                pick = max if capacity == "spot" else min
                chosen = pick(fitting, key=lambda t: (rates[t][0] or 0.0, t))
                usd, rate_how, used, _ = rates[chosen]
                prices.update(used)
                figures[i].append(round(hours[i] * (usd or 0.0), 2))
                which = ("the dearest type with {} GPU(s): Spot may launch any" if capacity == "spot"
                         else "the cheapest type with {} GPU(s), as Karpenter launches on-demand")
                hows[i].append(f"{service.name}: {wake_how if i else wake_how.split(' + ')[0]} "
                               f"= {_n(hours[i])} node-hours x {rate_how} ({which.format(service.gpus_per_replica)})")
    ceiling, ceiling_prices, ceiling_assumption = _pool_ceiling(p, pool, typed)
    prices.update(ceiling_prices)
    out = []
    for i in range(2):
        values = figures[i]
        known = None if any(v is None for v in values) else round(sum(v or 0.0 for v in values), 2)
        how = "; ".join(hows[i]) or "no service runs on it: 0 nodes"
        out.append(Figure(known, how) if known is not None else _no(how))
    line = Line("karpenter_pool", f"{pool.name} (Karpenter, {'/'.join(pool.capacity_types)}, "
                f"{'/'.join(pool.instance_types)}"
                f"{', on-demand fallback' if pool.on_demand_fallback else ''})", out[0], out[1], ceiling,
                "assumption" if assumption or ceiling_assumption else "price", f"{pool.key}.maxGpus / instanceTypes",
                tuple(sorted(prices, key=lambda x: x.source)))
    smallest = min((g for _, g in typed if g), default=None)
    ceiling_nodes = pool.max_gpus / smallest if pool.max_gpus is not None and smallest else None
    return [line, _root_volumes(p, f"{pool.name} root volumes", pool.key, pool.disk_gib,
                                (node_hours[0] / p.hours, node_hours[1] / p.hours, ceiling_nodes))]


def _pool_ceiling(p: _Pricer, pool: KarpenterPool, typed: list[tuple[str, int | None]]
                  ) -> tuple[Figure, tuple[Price, ...], bool]:
    if pool.max_gpus is None:
        return _no("the NodePool sets no nvidia.com/gpu limit: nothing bounds it"), (), False
    on_demand = "on-demand" in pool.capacity_types or pool.on_demand_fallback
    capacity = "on-demand" if on_demand else "spot"
    per_gpu = []
    for name, gpus in typed:
        if gpus is None:
            continue
        usd, how, used, assumed = p.node_hour(name, capacity)
        if usd is None:
            return _no(f"{how}: the dearest GPU-hour the pool allows is not known"), (), False
        per_gpu.append((usd / gpus, name, gpus, how, used, assumed))
    if not per_gpu:
        return _no(f"no type of {list(pool.instance_types)} is a GPU type in the matrix"), (), False
    rate, name, gpus, how, used, assumed = max(per_gpu)
    usd = round(pool.max_gpus * p.hours * rate, 2)
    return (Figure(usd, f"{pool.max_gpus} GPUs x {p.hours} h x the dearest GPU-hour: {how} / {gpus} GPU(s)"
                   + (" (on-demand: the pool may fall back to it)" if on_demand and pool.on_demand_fallback else "")),
            used, assumed)


def _flat(p: _Pricer, *, kind: str, item: str, key: str, price_key: str, quantity: Sequence[float],
          unit_hours: bool, basis: str = "price", in_total: bool = True,
          shown: tuple[str, str, str] | None = None, subject: str = "") -> Line:
    """A line of `quantity` units at one service price, per hour (x hours a month) or per month; `shown` writes
    each quantity as its factors."""
    price = p.service(price_key)
    figures = []
    for i, q in enumerate(quantity):
        if q == 0:
            figures.append(Figure(0.0, "none"))
        elif price is None:
            figures.append(_no(f"no recorded {price_key} price in {p.region}"))
        else:
            usd = q * price.usd * (p.hours if unit_hours else 1)
            figures.append(Figure(round(usd, 2), f"{shown[i] if shown else _n(q)} x "
                                                 f"{f'{p.hours} h x ' if unit_hours else ''}"
                                                 f"USD {price.usd:g} ({price_key})"))
    return Line(kind, item, figures[0], figures[1], figures[2], basis, key, (price,) if price else (), in_total,
                subject)


def _usage(p: _Pricer, *, kind: str, item: str, key: str, price_key: str, why: str, subject: str = "") -> Line:
    price = p.service(price_key)
    rate = f"at USD {price.usd:g} ({price.unit})" if price else f"no recorded {price_key} price in {p.region}"
    figure = _no(f"{why}; {rate}")
    return Line(kind, item, figure, figure, figure, "usage", key, (price,) if price else (), subject=subject)


def _control_plane(p: _Pricer, stack: Stack, judged: date) -> Line:
    row = next((r for r in load_matrix().data.eks_versions if r.version == stack.kubernetes_version), None)
    past = row is not None and row.end_standard is not None and judged > row.end_standard
    extended = past and stack.support_type.upper() == "EXTENDED"
    key = "eks_extended_hour" if extended else "eks_standard_hour"
    why = (f"Kubernetes {stack.kubernetes_version} is past standard support ({row.end_standard}) on "
           f"{judged.isoformat()} and the upgrade policy is EXTENDED" if extended and row else "standard support")
    line = _flat(p, kind="control_plane", item=f"EKS control plane ({why})",
                 key="gpu-platform:cluster.kubernetesVersion / supportType", price_key=key, quantity=(1, 1, 1),
                 unit_hours=True)
    if row is None:
        what = (f"Kubernetes {stack.kubernetes_version} has no support dates in the matrix" if stack.kubernetes_version
                else "the Kubernetes version is not known here")
        return Line(line.kind, f"{line.item} ({what}: priced at standard support, the lower fee)", line.at_rest,
                    line.expected, line.ceiling, line.basis, line.key, line.prices)
    return line


def _volume_lines(p: _Pricer, service: Service, zones: int) -> list[Line]:
    volume: ModelVolume | None = service.volume
    if volume is None:
        return []
    hours, _ = _replica_hours(p, service)
    months = tuple(h / p.hours for h in hours)
    if any(math.isnan(m) for m in months):
        months = (months[0], months[0], months[2])
    key = f"{service.key}.modelVolume"

    def shown(per: int, unit: str) -> tuple[str, str, str]:
        a, b, c = (f"{_n(m)} replica-months x {per} {unit}" for m in months)
        return a, b, c

    name = service.name
    lines = [_flat(p, kind="model_volume", item=f"{name} model volumes ({volume.size_gib} GiB gp3 per replica)",
                   key=key, price_key="gp3_gb_month", quantity=tuple(m * volume.size_gib for m in months),
                   unit_hours=False, shown=shown(volume.size_gib, "GiB"))]
    if volume.iops > GP3_BASE_IOPS:
        extra = volume.iops - GP3_BASE_IOPS
        lines.append(_flat(p, kind="model_volume_iops", item=f"{name} model volumes, {extra} IOPS above 3,000",
                           key=key, price_key="gp3_iops_month", quantity=tuple(m * extra for m in months),
                           unit_hours=False, shown=shown(extra, "IOPS")))
    if volume.throughput_mibps > GP3_BASE_MIBPS:
        extra = volume.throughput_mibps - GP3_BASE_MIBPS
        lines.append(_flat(p, kind="model_volume_throughput", item=f"{name} model volumes, {extra} MiB/s above 125",
                           key=key, price_key="gp3_mibps_month", quantity=tuple(m * extra for m in months),
                           unit_hours=False, shown=shown(extra, "MiB/s")))
    if volume.fast_snapshot_restore and volume.initialization_rate is None:
        lines.append(_flat(p, kind="fast_snapshot_restore",
                           item=f"{name} fast snapshot restore ({zones} zones, billed per minute enabled, one-hour "
                                "minimum)",
                           key=f"{key}.fastSnapshotRestore", price_key="fsr_dsu_hour", quantity=(zones, zones, zones),
                           unit_hours=True))
    if volume.initialization_rate is not None:
        lines.append(_usage(p, kind="volume_initialization",
                            item=f"{name} volume initialization at {volume.initialization_rate} MiB/s",
                            key=f"{key}.volumeInitializationRate", price_key="volume_init_gib",
                            why=f"billed per GiB per restore ({volume.snapshot_gib} GiB each); how often replicas "
                                "restart is not known"))
    lines.append(_flat(p, kind="model_snapshot",
                       item=f"{name} model snapshot ({volume.snapshot_gib} GiB, yours: not in the total)",
                       key=f"{key}.snapshotId", price_key="snapshot_gb_month", quantity=(volume.snapshot_gib,) * 3,
                       unit_hours=False, in_total=False))
    return lines


def _group_slots(stack: Stack) -> dict[str, int]:
    """Replicas of each service its managed node groups hold (their running nodes' GPUs, taken in service order);
    the rest go to the first Karpenter pool it lists."""
    free = {g.name: g.running * ((_gpus(g.instance_types[0]) if g.instance_types else None) or 0)
            for g in stack.node_groups if not g.system}
    slots: dict[str, int] = {}
    for service in stack.services:
        held = 0
        for name in service.pools:
            if name in free:
                take = min(free[name] // service.gpus_per_replica, service.max_replicas - held)
                free[name] -= take * service.gpus_per_replica
                held += take
        slots[service.name] = held
    return slots


def estimate(stack: Stack, table: PriceTable, judged: date, *, spot_discount: float | None = None) -> Estimate:
    """The monthly estimate of `stack` in its region, at `table`'s prices, judged on `judged` (never the clock)."""
    if spot_discount is not None and not 0 <= spot_discount < 1:
        raise ValueError(f"spotDiscount={spot_discount!r}: a fraction of the on-demand price, 0 <= d < 1 (0.6 = 60% "
                         "off)")
    p = _Pricer(table, stack.region, spot_discount)
    est = Estimate(stack.name, stack.region, judged, table.hours_per_month, spot_discount=spot_discount)
    if stack.has_cluster:
        est.lines.append(_control_plane(p, stack, judged))
    for group in stack.node_groups:
        est.lines += [replace(line, subject=group.name) for line in _group_lines(p, group)]
    slots = _group_slots(stack)
    for pool in stack.karpenter_pools:
        on_pool = [(s, slots[s.name]) for s in stack.services
                   if next((q for q in s.pools if q in {k.name for k in stack.karpenter_pools}), None) == pool.name]
        est.lines += [replace(line, subject=pool.name) for line in _karpenter_lines(p, pool, on_pool)]
    nat = stack.nat_gateways
    cluster = "gpu-platform:cluster"
    est.lines.append(_flat(p, kind="nat_gateway", item=f"{nat} NAT gateway(s)", key=f"{cluster}.singleNatGateway",
                           price_key="nat_gateway_hour", quantity=(nat,) * 3, unit_hours=True))
    albs = [s for s in stack.services if s.alb]
    public = nat + sum(stack.zones for s in albs if s.internet_facing)
    est.lines.append(_flat(p, kind="public_ipv4",
                           item=f"{public} public IPv4 address(es) (one per NAT gateway, one per zone of each "
                                "internet-facing ALB)",
                           key=f"{cluster}.singleNatGateway / ingress.scheme", price_key="public_ipv4_hour",
                           quantity=(public,) * 3, unit_hours=True))
    for service in albs:
        est.lines.append(_flat(p, kind="alb", item=f"{service.name} Application Load Balancer",
                               key=f"{service.key}.ingress", price_key="alb_hour", quantity=(1, 1, 1),
                               unit_hours=True, subject=service.name))
        est.lines.append(_usage(p, kind="alb_lcu", item=f"{service.name} ALB capacity units",
                                key=f"{service.key}.ingress", price_key="alb_lcu_hour",
                                why="billed per LCU-hour of traffic", subject=service.name))
    for service in stack.services:
        est.lines += [replace(line, subject=service.name) for line in _volume_lines(p, service, stack.zones)]
    if stack.kms_keys:
        est.lines.append(_flat(p, kind="kms", item=f"{stack.kms_keys} KMS key(s) (Secrets encryption)", key=cluster,
                               price_key="kms_key_month", quantity=(stack.kms_keys,) * 3, unit_hours=False))
    est.lines.append(_usage(p, kind="nat_data", item="NAT gateway data processing", key=cluster,
                            price_key="nat_gateway_gb",
                            why="billed per GB through the NAT gateways (image pulls, model downloads)"))
    if stack.control_plane_logs:
        est.lines.append(_usage(p, kind="control_plane_logs",
                                item=f"control-plane logs ({', '.join(stack.control_plane_logs)})", key=cluster,
                                price_key="logs_ingest_gb", why="billed per GB the API server writes"))
    return est
