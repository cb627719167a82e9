"""A run's identity: its id (also the stack's and the EKS cluster's name), its tags, and which tags are its.

The run id is `e2e-<YYYYmmddHHMM>-<suffix>`: valid as a Pulumi stack name, an EKS cluster name and a Kubernetes
label value (63 characters), and it carries its start time, so the scheduled sweeper can age a run even from a
resource that kept only the controllers' own cluster tags.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

RUN_TAG = "gpu-platform.io/e2e-run"
STARTED_TAG = "gpu-platform.io/e2e-started"
_STAMP = "%Y%m%d%H%M"
RUN_ID_RE = re.compile(r"^e2e-(?P<stamp>\d{12})-(?P<suffix>[a-z0-9]{1,40})$")

# Tags the controllers put on what they create, whose value is the cluster name (= the run id): a resource that
# lost or never had the run tag is still the run's when one of these names the run's cluster.
# Sources: Karpenter https://karpenter.sh/docs/concepts/nodeclasses/#spectags (eks:eks-cluster-name,
# kubernetes.io/cluster/<name>, karpenter.k8s.aws/cluster on launch templates and instance profiles);
# AWS Load Balancer Controller https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/deploy/configurations/
# (elbv2.k8s.aws/cluster); EBS CSI https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/master/docs/tagging.md
# (kubernetes.io/cluster/<name> with --k8s-tag-cluster-id); EKS https://docs.aws.amazon.com/eks/latest/userguide/eks-using-tags.html
CLUSTER_VALUE_TAGS = ("eks:eks-cluster-name", "elbv2.k8s.aws/cluster", "karpenter.k8s.aws/cluster",
                      "aws:eks:cluster-name", "alpha.eksctl.io/cluster-name")
CLUSTER_KEY_PREFIX = "kubernetes.io/cluster/"


def new_run_id(now: datetime, suffix: str | None = None) -> str:
    """`e2e-<UTC minute>-<suffix>`; the suffix defaults to 8 random hex digits (a GitHub run gives its run id)."""
    suffix = (suffix or secrets.token_hex(4)).lower()
    run_id = f"e2e-{now.astimezone(UTC).strftime(_STAMP)}-{suffix}"
    if not RUN_ID_RE.match(run_id):
        raise ValueError(f"run id suffix {suffix!r}: use 1-40 lowercase letters or digits")
    return run_id


def started(run_id: str) -> datetime | None:
    match = RUN_ID_RE.match(run_id)
    if match is None:
        return None
    return datetime.strptime(match["stamp"], _STAMP).replace(tzinfo=UTC)


def run_tags(run_id: str) -> dict[str, str]:
    start = started(run_id)
    if start is None:
        raise ValueError(f"not a run id: {run_id!r}")
    return {RUN_TAG: run_id, STARTED_TAG: start.strftime(_STAMP)}


def runs_named(tags: Mapping[str, str]) -> set[str]:
    """The run ids a resource's tags name: the run tag, or a controller's cluster tag whose cluster is a run."""
    names = {tags[RUN_TAG]} if RUN_TAG in tags else set()
    names |= {tags[k] for k in CLUSTER_VALUE_TAGS if k in tags}
    names |= {k[len(CLUSTER_KEY_PREFIX):] for k in tags if k.startswith(CLUSTER_KEY_PREFIX)}
    return {n for n in names if RUN_ID_RE.match(n)}


@dataclass(frozen=True)
class Selector:
    """Which resources a sweep takes: those of one run (`run_id`), or of every run started before `before`
    (the scheduled sweep). `protect` holds ids no sweep deletes (the user's model snapshot)."""

    run_id: str | None = None
    before: datetime | None = None
    protect: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if (self.run_id is None) == (self.before is None):
            raise ValueError("a sweep takes one run (run_id) or the runs older than a TTL (before), not both")

    @classmethod
    def older_than(cls, ttl: timedelta, now: datetime, protect: frozenset[str] = frozenset()) -> Selector:
        return cls(before=now - ttl, protect=protect)

    def takes_run(self, run_id: str) -> bool:
        if self.run_id is not None:
            return run_id == self.run_id
        start = started(run_id)
        return start is not None and self.before is not None and start < self.before

    def matches(self, tags: Mapping[str, str], resource_id: str = "") -> bool:
        if resource_id in self.protect:
            return False
        return any(self.takes_run(r) for r in runs_named(tags))

    def describe(self) -> str:
        if self.run_id is not None:
            return f"{RUN_TAG}={self.run_id}"
        assert self.before is not None
        return f"runs started before {self.before:%Y-%m-%d %H:%M} UTC"


def tag_dict(tags: object) -> dict[str, str]:
    """AWS's tag shapes, as a dict: [{Key, Value}] (EC2, ELB, IAM), [{key, value}], or a plain mapping."""
    if isinstance(tags, Mapping):
        return {str(k): str(v) for k, v in tags.items()}
    out: dict[str, str] = {}
    for item in tags or []:  # type: ignore[attr-defined]
        key = item.get("Key", item.get("key", item.get("TagKey")))
        value = item.get("Value", item.get("value", item.get("TagValue", "")))
        if key is not None:
            out[str(key)] = str(value)
    return out
