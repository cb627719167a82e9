"""One AWS call, retried while AWS refuses it for a dependency that is still going or for throttling.

botocore's own retries (standard mode) cover throttling of one request; they never retry DependencyViolation,
which is how EC2 refuses a security group, subnet or VPC while a network interface still uses it
(https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html: DependencyViolation,
RequestLimitExceeded). The sweep deletes dependants first, but their deletion is asynchronous (an instance
shutting down still holds its ENI), so the next kind waits here with an exponential backoff.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from botocore.exceptions import ClientError

T = TypeVar("T")

# Refusals that clear once something else is gone (EC2, EKS, ELB, IAM spellings).
DEPENDENCY_CODES = frozenset({
    "DependencyViolation",              # EC2: SG, subnet, VPC, IGW still in use
    "ResourceInUseException",           # EKS: cluster with node groups; add-on or node group already deleting
    "ResourceInUse",                    # ELB: target group still used by a listener
    "DeleteConflict",                   # IAM: role still in an instance profile or with policies
    "InvalidNetworkInterface.InUse",    # EC2: ENI still attached
    "InvalidIPAddress.InUse",           # EC2: address still associated
    "IncorrectState",                   # EC2: resource still changing state
    "VolumeInUse",                      # EC2: volume still attached to a terminating instance
    "InvalidSnapshot.InUse",            # EC2: snapshot still in use
})
# Throttling, by service (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html lists the
# throttling error codes the SDKs retry).
THROTTLING_CODES = frozenset({
    "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
    "TooManyRequestsException", "ProvisionedThroughputExceededException", "TransactionInProgressException",
    "RequestLimitExceeded", "BandwidthLimitExceeded", "LimitExceededException", "RequestThrottled",
    "SlowDown", "PriorRequestNotComplete", "EC2ThrottledException",
})
# The thing is already gone: deleting it again is a success.
NOT_FOUND_SUFFIXES = (".NotFound", "NotFound", "NotFoundException", "NoSuchEntity")
NOT_FOUND_CODES = frozenset({"AWS.SimpleQueueService.NonExistentQueue", "NotFoundException",
                             "ResourceNotFoundException", "NoSuchEntity"})


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def is_not_found(error: ClientError) -> bool:
    code = error_code(error)
    return code in NOT_FOUND_CODES or code.endswith(NOT_FOUND_SUFFIXES)


@dataclass
class Retry:
    """Retries `call` with exponential backoff (base doubling to `cap` seconds) until `budget` seconds passed, or
    the sweep's own `deadline` (a `clock()` value: the time the run kept for its sweep), whichever comes first."""

    budget: float = 1200.0
    deadline: float | None = None
    base: float = 2.0
    cap: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    refusals: list[str] = field(default_factory=list)

    def __call__(self, fn: Callable[..., T], /, **kwargs: Any) -> T | None:
        """The call's result; None when AWS says the thing is already gone. Raises the last refusal at the end
        of the budget, and at once any other error."""
        deadline = self.clock() + self.budget
        if self.deadline is not None:
            deadline = min(deadline, self.deadline)
        delay = self.base
        while True:
            try:
                return fn(**kwargs)
            except ClientError as error:
                code = error_code(error)
                if is_not_found(error):
                    return None
                if code not in DEPENDENCY_CODES and code not in THROTTLING_CODES:
                    raise
                self.refusals.append(code)
                if self.clock() + delay > deadline:
                    raise
                self.sleep(delay)
                delay = min(delay * 2, self.cap)
