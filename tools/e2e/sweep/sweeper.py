"""The sweeper: after `destroy`, whatever still carries a run's tags goes, kind by kind in `order.SWEEP_ORDER`,
and the resource-groups tagging API must then find nothing with the run tag.

Errors do not stop the sweep: a kind that fails is recorded and the next kind runs (Karpenter's sweeper does the
same, aws/karpenter-provider-aws test/hack/resource/clean/main.go); the result says what was removed, what
failed and what is left, and `ok` is true only when nothing is left.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from tools.e2e.runid import RUN_TAG, Selector, runs_named, tag_dict
from tools.e2e.sweep.kinds import KINDS, Context, Found, find_vpcs, revoke_group_references
from tools.e2e.sweep.order import SWEEP_ORDER
from tools.e2e.sweep.retry import Retry


@dataclass
class SweepResult:
    removed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    scheduled: list[str] = field(default_factory=list)  # KMS keys pending deletion: as gone as AWS allows

    @property
    def ok(self) -> bool:
        return not self.left and not self.failed

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "removed": self.removed, "failed": self.failed, "left": self.left,
                "scheduled": self.scheduled}


@dataclass
class Sweeper:
    clients: Callable[[str], Any]
    selector: Selector
    retry: Retry = field(default_factory=Retry)
    wait_budget: float = 1800.0   # how long an asynchronous deletion (cluster, NAT gateway) may take
    poll: float = 15.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    log: Callable[[str], None] = print
    checked: tuple[str, ...] = SWEEP_ORDER  # the kinds the final check asks directly
    # The end of the time the run kept for its sweep (a `clock()` value; driver.SWEEP_RESERVE): every retry and every
    # wait ends there at the latest, so the per-call and per-kind budgets above cannot outlast the run's limit.
    deadline: float | None = None

    def __post_init__(self) -> None:
        if self.deadline is not None:
            self.retry.deadline = self.deadline if self.retry.deadline is None else min(self.retry.deadline,
                                                                                          self.deadline)

    def _until(self, seconds: float) -> float:
        """`clock() + seconds`, or the sweep's deadline if that comes first."""
        end = self.clock() + seconds
        return end if self.deadline is None else min(end, self.deadline)

    def sweep(self, order: tuple[str, ...] = SWEEP_ORDER) -> SweepResult:
        result = SweepResult()
        ctx = Context(self.clients, self.selector, self.retry)
        try:
            ctx.vpcs = {f.id for f in find_vpcs(ctx)}
        except (ClientError, BotoCoreError) as error:
            result.failed.append(f"ec2-vpc (listing the run's VPCs): {error}")
        for kind_name in order:
            kind = KINDS[kind_name]
            try:
                items = kind.find(ctx)
            except (ClientError, BotoCoreError) as error:
                result.failed.append(f"{kind_name} (listing): {error}")
                continue
            if kind_name == "ec2-security-group" and items:
                try:
                    revoke_group_references(ctx, items)
                except (ClientError, BotoCoreError) as error:
                    result.failed.append(f"{kind_name} (revoking cross references): {error}")
            for item in items:
                try:
                    kind.delete(ctx, item)
                except (ClientError, BotoCoreError) as error:
                    result.failed.append(f"{item.describe()}: {error}")
                    continue
                if item.extra.get("aws_managed"):
                    self.log(f"sweep: {item.describe()} is requester-managed: waiting for AWS to remove it")
                    continue
                self.log(f"sweep: deleted {item.describe()}")
                result.removed.append(item.describe())
            if items and not kind.gone_when_deleted:
                self._wait_gone(ctx, kind_name, items, result)
        result.left, result.scheduled = self.leftovers()
        return result

    def _wait_gone(self, ctx: Context, kind_name: str, items: list[Found], result: SweepResult) -> None:
        start = self.clock()
        deadline = self._until(self.wait_budget)
        wanted = {i.id for i in items}
        while True:
            try:
                still = {f.id for f in KINDS[kind_name].find(ctx)} & wanted
            except (ClientError, BotoCoreError) as error:
                result.failed.append(f"{kind_name} (waiting): {error}")
                return
            if not still:
                return
            if self.clock() + self.poll > deadline:
                result.failed.extend(f"{kind_name} {i}: still there after {self.clock() - start:.0f} s"
                                     for i in sorted(still))
                return
            self.sleep(self.poll)

    def leftovers(self) -> tuple[list[str], list[str]]:
        """What the resource-groups tagging API still finds with the run tag, less the KMS keys pending deletion;
        and those keys. The API lags behind deletions, so it is asked again until it agrees or the wait is over.

        The tagging API cannot see everything: "The GetResources operation does not currently support IAM users
        and roles", and Auto Scaling groups "aren't supported at this time and return an empty response"
        (https://docs.aws.amazon.com/resourcegroupstagging/latest/APIReference/supported-services.html); IAM is
        global, and the VPC CNI's ENIs and EKS's cluster security group carry no run tag. So every kind's own
        finder is asked too (IAM roles, instance profiles, policies and OIDC providers by their tags, Auto Scaling
        groups by theirs, the VPC-scoped kinds by VPC), and what it still sees is left."""
        deadline = self._until(min(self.wait_budget, 600.0))
        while True:
            left, scheduled = self._tagging_query()
            if not left or self.clock() + self.poll > deadline:
                break
            self.sleep(self.poll)
        seen = set(left)
        left += [f for f in self._found_directly() if f not in seen]
        return left, scheduled

    def _found_directly(self) -> list[str]:
        ctx = Context(self.clients, self.selector, self.retry)
        found: list[str] = []
        try:
            ctx.vpcs = {f.id for f in find_vpcs(ctx)}
        except (ClientError, BotoCoreError) as error:
            found.append(f"ec2-vpc (could not list: {error})")
        for kind_name in self.checked:
            try:
                found.extend(f.describe() for f in KINDS[kind_name].find(ctx))
            except (ClientError, BotoCoreError) as error:  # cannot see, cannot pass
                found.append(f"{kind_name} (could not list: {error})")
        return found

    def _tagging_query(self) -> tuple[list[str], list[str]]:
        tagging = self.clients("resourcegroupstaggingapi")
        if self.selector.run_id is not None:
            filters = [{"Key": RUN_TAG, "Values": [self.selector.run_id]}]
        else:
            filters = [{"Key": RUN_TAG}]
        left: list[str] = []
        scheduled: list[str] = []
        for page in tagging.get_paginator("get_resources").paginate(TagFilters=filters):
            for mapping in page.get("ResourceTagMappingList", []):
                arn = mapping["ResourceARN"]
                tags = tag_dict(mapping.get("Tags", []))
                if not any(self.selector.takes_run(r) for r in runs_named(tags)):
                    continue
                if arn.rsplit("/", 1)[-1] in self.selector.protect:
                    continue
                if ":kms:" in arn and self._kms_pending(arn):
                    scheduled.append(arn)
                    continue
                if self._gone_but_listed(arn):
                    continue
                left.append(arn)
        return sorted(left), sorted(scheduled)

    def _gone_but_listed(self, arn: str) -> bool:
        """EC2 keeps a terminated instance and a deleted NAT gateway visible for about an hour; neither costs
        anything (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/terminating-instances.html,
        https://docs.aws.amazon.com/vpc/latest/userguide/nat-gateway-working-with.html#nat-gateway-deleting)."""
        ident = arn.rsplit("/", 1)[-1]
        ec2 = self.clients("ec2")
        if ":instance/" in arn:
            reservations = ec2.describe_instances(InstanceIds=[ident]).get("Reservations", [])
            return {i["State"]["Name"] for r in reservations for i in r["Instances"]} == {"terminated"}
        if ":natgateway/" in arn:
            gateways = ec2.describe_nat_gateways(NatGatewayIds=[ident]).get("NatGateways", [])
            return {g["State"] for g in gateways} <= {"deleted"}
        return False

    def _kms_pending(self, arn: str) -> bool:
        meta = self.clients("kms").describe_key(KeyId=arn)["KeyMetadata"]
        return meta.get("KeyState") in ("PendingDeletion", "PendingReplicaDeletion")
