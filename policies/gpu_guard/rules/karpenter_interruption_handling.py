"""karpenter-interruption-handling: Karpenter gets an SQS interruption queue fed by the EventBridge rules it reads.

Without it, a Spot reclaim (two minutes' notice), a scheduled maintenance event or an instance
stopping takes GPU nodes away with no cordon/drain and no replacement launched ahead of time.
Advisory by default, mandatory in prod.

A resource is linked to another through Pulumi's property dependencies when the engine reports them
(the queue ARN is an output, unknown during preview), and otherwise by value: the target ARN ends in
the queue name, the target's `rule` is the rule's name, `settings.interruptionQueue` is the queue name.

EventBridge patterns are matched as EventBridge matches them (`_event_pattern`): a field a pattern leaves out
matches anything, so a rule naming only `source: ["aws.ec2"]` delivers every EC2 event Karpenter wants; prefixes,
suffixes, `anything-but`, `equals-ignore-case`, `wildcard`, `exists`, numeric and `$or` are evaluated. The pack
knows an event's source and detail type only: a pattern that also filters on other fields (account, region,
detail) may pass some events of a type and not others, and a pattern not known in a preview cannot be matched.
Cannot see, cannot block: neither counts as missing; the advisory twin `karpenter-interruption-handling-caveats`
names the rule and what would let the pack judge.

EKS Auto Mode handles Spot interruptions itself: a stack that installs no Karpenter release and whose
NodePools all use Auto Mode's NodeClass (or, while they are not known yet, whose cluster runs Auto Mode)
needs no queue of its own.

Sources:
- EKS Auto Mode "automatically handles EC2 Spot Instance interruption" (AWS runs Karpenter and its
  interruption handling): https://docs.aws.amazon.com/eks/latest/userguide/automode.html and
  https://docs.aws.amazon.com/eks/latest/userguide/ml-node-pools.html (EKS Auto Mode vs Karpenter)
- Interruption handling: https://karpenter.sh/docs/concepts/disruption/#interruption
- EKS Best Practices, Karpenter ("Enable interruption handling"):
  https://docs.aws.amazon.com/eks/latest/best-practices/karpenter.html
- EventBridge event patterns: https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html
- The queue and rules Karpenter's getting-started CloudFormation creates (v1.14.1):
  https://github.com/aws/karpenter-provider-aws/blob/release-v1.14.1/website/content/en/v1.14/getting-started/getting-started-with-karpenter/cloudformation.yaml
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..base import CAVEAT_MARK, EnforcementLevel, ReportViolation, stack_policy_with_caveats
from ..homes import auto_mode_cluster
from ..inventory import HELM_RELEASE_TYPES, as_list, get
from ..node_labels import is_auto_mode_ref
from ..props import Deferred, deferred_get, properties_pending
from ._event_pattern import ALL, SOME, match

QUEUE = "aws:sqs/queue:Queue"
EVENT_RULE = "aws:cloudwatch/eventRule:EventRule"
EVENT_TARGET = "aws:cloudwatch/eventTarget:EventTarget"
KARPENTER_CHART = "karpenter"

# (source, detail-type) of every event Karpenter's interruption controller handles, spelled exactly as the
# EventBridge rules of the getting-started template (tests/policies/test_karpenter_interruption.py checks them
# against .upstream-cache/iam/karpenter-cloudformation.yaml, pinned in upstream.lock.json).
# Source: https://github.com/aws/karpenter-provider-aws/blob/release-v1.14.1/website/content/en/v1.14/getting-started/getting-started-with-karpenter/cloudformation.yaml
REQUIRED_EVENTS = (
    ("aws.health", "AWS Health Event"),
    ("aws.ec2", "EC2 Spot Instance Interruption Warning"),
    ("aws.ec2", "EC2 Instance Rebalance Recommendation"),
    ("aws.ec2", "EC2 Instance State-change Notification"),
    ("aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
)


# What the pack knows of each event Karpenter wants: these fields; every other one may hold anything.
KNOWN_FIELDS = frozenset({"version", "source", "detail-type"})


@dataclass(frozen=True)
class _Rule:
    resource: Any
    name: str | None
    pattern: Mapping[str, Any] | None  # None: not known in this preview
    detail_types: tuple[str, ...]

    def verdict(self, source: str, detail_type: str) -> str:
        """ALL, SOME or NONE of the events of this type the rule passes (SOME also: its pattern is not known)."""
        if self.pattern is None:
            return SOME
        return match(self.pattern, {"version": "0", "source": source, "detail-type": detail_type}, KNOWN_FIELDS)


def _is_nodepool(resource_type: str) -> bool:
    return resource_type.startswith("kubernetes:karpenter.sh/") and resource_type.endswith(":NodePool")


def _chart(resource: Any) -> str:
    return str(get(resource.props, "chart", default="")).rsplit("/", 1)[-1]


def _dependencies(resource: Any, prop: str) -> list[Any] | None:
    """The resources `prop` was computed from, when the engine recorded any (None otherwise)."""
    deps = getattr(resource, "property_dependencies", None) or {}
    found = deps.get(prop)
    return list(found) if found else None


def _links(resource: Any, prop: str, other: Any) -> bool | None:
    """True/False when property dependencies decide whether `prop` comes from `other`; None to compare values."""
    deps = _dependencies(resource, prop)
    if deps is None:
        return None
    return any(d is other or getattr(d, "urn", None) == other.urn for d in deps)


def _queue_name(queue: Any) -> str | None:
    name = get(queue.props, "name")
    return str(name) if name is not None else None


def _rule(resource: Any, report: ReportViolation) -> _Rule | None:
    raw = deferred_get(resource.props, "eventPattern")
    name = deferred_get(resource.props, "name")
    name = None if isinstance(name, Deferred) else name
    if isinstance(raw, Deferred):
        return _Rule(resource, str(name) if name is not None else None, None, ())
    try:
        pattern = json.loads(str(raw)) if raw is not None else {}
    except ValueError:
        report(f"EventRule '{resource.name}' has an eventPattern that is not valid JSON ({raw!r}); EventBridge "
               "rejects it. Fix: json.dumps({\"source\": [\"aws.ec2\"], \"detail-type\": [...]}).", resource.urn)
        return None
    if not isinstance(pattern, Mapping):
        return None
    detail_types = tuple(d for d in as_list(pattern.get("detail-type")) if isinstance(d, str))
    return _Rule(resource, str(name) if name is not None else None, pattern, detail_types)


def _targets_queue(target: Any, queue: Any) -> bool:
    linked = _links(target, "arn", queue)
    if linked is not None:
        return linked
    arn = get(target.props, "arn")
    name = _queue_name(queue)
    return arn is not None and name is not None and str(arn).rsplit(":", 1)[-1] == name


def _target_of_rule(target: Any, rule: _Rule) -> bool:
    linked = _links(target, "rule", rule.resource)
    if linked is not None:
        return linked
    value = get(target.props, "rule")
    return value is not None and rule.name is not None and str(value) == rule.name


def _release_names_queue(release: Any, queue: Any) -> bool:
    linked = _links(release, "values", queue)
    if linked is not None:
        return linked
    configured = get(release.props, "values", "settings", "interruptionQueue")
    return configured is not None and _queue_name(queue) is not None and str(configured) == _queue_name(queue)


def _configured_queue(release: Any) -> str | Deferred | None:
    """The release's settings.interruptionQueue: a name, a Deferred (not known in this preview), None (unset)."""
    value = deferred_get(release.props, "values", "settings", "interruptionQueue")
    if isinstance(value, Deferred):
        return value
    return str(value) if value not in (None, "") else None


def _queue_outside(resources: list[Any], releases: list[Any], nodepools: list[Any], queues: list[Any],
                   report: ReportViolation) -> bool:
    """Cannot see, cannot block: Karpenter reads a queue this stack does not hold (a name no queue here has: another
    stack, or a queue made outside Pulumi, as Karpenter's getting-started CloudFormation makes it), or Karpenter is
    installed outside this stack and no queue is here. Says so as a caveat; True when it did."""
    fix = ("To let the pack judge it: create the queue and its EventBridge rules in this stack, or judge the stack "
           "that holds them")
    if not releases:
        if queues:
            return False
        if any(r.resource_type in HELM_RELEASE_TYPES and properties_pending(r.resource_type, r.props)
               for r in resources):
            return True  # a release with no properties yet may be Karpenter's: the verdict waits (the -pending twin)
        report(f"{CAVEAT_MARK}Karpenter's NodePools are in this stack (" + ", ".join(f"'{r.name}'" for r in nodepools)
               + ") but its controller is not, nor an SQS interruption queue: the queue Karpenter is configured with "
               f"and the rules that feed it live where the pack cannot see them. {fix}.", nodepools[0].urn)
        return True
    outside = []
    for release in releases:
        configured = _configured_queue(release)
        if configured is None or any(_release_names_queue(release, q) for q in queues):
            continue
        if isinstance(configured, Deferred) and queues:
            continue  # a value computed from another resource: linked through property dependencies when known
        outside.append(release)
        shown = "a value not known in this preview" if isinstance(configured, Deferred) else repr(configured)
        report(f"{CAVEAT_MARK}Karpenter release '{release.name}' reads the interruption queue {shown}, which is not a "
               "queue of this stack: the pack cannot see that queue or the EventBridge rules that feed it (another "
               f"stack, or made outside Pulumi, as Karpenter's getting-started CloudFormation does). {fix}.",
               release.urn)
    return bool(outside)


def _auto_mode_only(resources: list[Any], nodepools: list[Any]) -> bool:
    """Every NodePool is EKS Auto Mode's: its nodeClassRef names Auto Mode's NodeClass, or, not known yet, the
    stack's cluster runs Auto Mode."""
    cluster = auto_mode_cluster(resources)
    for pool in nodepools:
        if properties_pending(pool.resource_type, pool.props):
            if not cluster:
                return False
        elif not is_auto_mode_ref(get(pool.props, "spec", "template", "spec", "nodeClassRef")):
            return False
    return True


def validate(args: Any, report_violation: ReportViolation) -> None:
    resources = list(args.resources)
    nodepools = [r for r in resources if _is_nodepool(r.resource_type)]
    releases = [r for r in resources if r.resource_type in HELM_RELEASE_TYPES and _chart(r) == KARPENTER_CHART]
    if not nodepools and not releases:
        return
    if not releases and _auto_mode_only(resources, nodepools):
        return  # EKS Auto Mode runs Karpenter and its interruption handling itself
    anchor = (releases or nodepools)[0]
    queues = [r for r in resources if r.resource_type == QUEUE]
    outside = _queue_outside(resources, releases, nodepools, queues, report_violation)
    if outside:
        return  # the queue and its rules live where the pack cannot see them: said as a caveat
    if not queues:
        report_violation(
            "Karpenter runs in this stack (" + ", ".join(f"'{r.name}'" for r in (releases or nodepools)) + ") but no "
            "SQS interruption queue (aws:sqs/queue:Queue) exists and settings.interruptionQueue is unset, so Spot "
            "interruptions, scheduled health events and instance state changes reach no one: nodes vanish without "
            "cordon and drain. Fix: create the queue (messageRetentionSeconds: 300, sqsManagedSseEnabled: true), set "
            "the Karpenter chart value settings.interruptionQueue to its name, and route the EventBridge rules for "
            + ", ".join(f'"{d}"' for _, d in REQUIRED_EVENTS) + " to it.",
            anchor.urn,
        )
        return
    configured_queues = list(queues)
    for release in releases:
        named = [q for q in queues if _release_names_queue(release, q)]
        if named:
            configured_queues = named
            continue
        names = [_queue_name(q) or q.name for q in queues]
        report_violation(
            f"Karpenter release '{release.name}' has settings.interruptionQueue unset, and the stack's SQS queues "
            f"{names} are not named by it; Karpenter ignores interruption events. Fix: "
            f"settings.interruptionQueue: {names[0]}.",
            release.urn,
        )
    rules = [rule for r in resources if r.resource_type == EVENT_RULE if (rule := _rule(r, report_violation))]
    targets = [r for r in resources if r.resource_type == EVENT_TARGET]
    feeding = [rule for rule in rules
               if any(_target_of_rule(t, rule) and any(_targets_queue(t, q) for q in configured_queues)
                      for t in targets)]
    missing = []
    for source, detail_type in REQUIRED_EVENTS:
        verdicts = [(rule, rule.verdict(source, detail_type)) for rule in feeding]
        if any(verdict == ALL for _, verdict in verdicts):
            continue
        partial = [rule for rule, verdict in verdicts if verdict == SOME]
        if not partial:
            missing.append((source, detail_type))
            continue
        why = ("its eventPattern is not known in this preview; the next preview or `pulumi up` judges it"
               if any(rule.pattern is None for rule in partial)
               else "it also filters on fields of the event the pack does not know (account, region, resources, "
                    "detail), so it may pass some of these events and not others")
        report_violation(
            f"{CAVEAT_MARK}EventBridge rule(s) {', '.join(repr(r.resource.name) for r in partial)} with a target on "
            f"the Karpenter interruption queue may or may not match source {source!r} detail-type {detail_type!r}: "
            f"{why}. To let the pack judge it: a rule whose pattern names only source and detail-type "
            f"(json.dumps({{\"source\": [\"{source}\"], \"detail-type\": [\"{detail_type}\"]}})).",
            partial[0].resource.urn,
        )
    if not missing:
        return
    spelled = {d for rule in rules for d in rule.detail_types}
    wanted = tuple(d for _, d in REQUIRED_EVENTS)
    for source, detail_type in missing:
        near = [s for s in spelled if s not in wanted and difflib.get_close_matches(s, [detail_type], n=1, cutoff=0.8)]
        hint = f" (a rule spells it {near[0]!r})" if near else ""
        report_violation(
            f"No EventBridge rule with a target on the Karpenter interruption queue matches source {source!r} "
            f"detail-type {detail_type!r}{hint}; Karpenter never hears of it. Fix: an aws.cloudwatch.EventRule with "
            f"event_pattern json.dumps({{\"source\": [\"{source}\"], \"detail-type\": [\"{detail_type}\"]}}) and an "
            "EventTarget with arn = the queue's ARN.",
            configured_queues[0].urn,  # an AWS resource: the same in every phase (a pending release is not)
        )


POLICY = stack_policy_with_caveats(
    "karpenter-interruption-handling",
    "When Karpenter runs, an SQS interruption queue exists, Karpenter is configured with it, and EventBridge rules "
    "send it Spot interruption, rebalance, instance state-change, capacity-reservation and scheduled health events "
    "(patterns matched as EventBridge matches them).",
    validate,
    caveats_description="Caveats of karpenter-interruption-handling: EventBridge rules whose pattern the pack cannot "
                        "match against an event Karpenter wants (not known in a preview, or filtering on fields of "
                        "the event the pack does not know).",
    enforcement=EnforcementLevel.ADVISORY,
    prod=EnforcementLevel.MANDATORY,
    reads=("kubernetes:karpenter.sh/v1:NodePool", *HELM_RELEASE_TYPES),
)
