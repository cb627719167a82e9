"""The Karpenter interruption queue: an encrypted SQS queue and the EventBridge rules that feed it.

Karpenter's interruption controller reads the queue named by the chart value `settings.interruptionQueue`
and cordons, drains and replaces a node on each event below, using the two minutes of a Spot notice.

Sources:
- Interruption handling: https://karpenter.sh/docs/concepts/disruption/#interruption
- The queue (messageRetentionPeriod 300, SqsManagedSseEnabled), its policy and the five rules of the
  getting-started template (v1.14.1): https://github.com/aws/karpenter-provider-aws/blob/release-v1.14.1/website/content/en/v1.14/getting-started/getting-started-with-karpenter/cloudformation.yaml
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws


@dataclass(frozen=True)
class InterruptionEvent:
    """One EventBridge event Karpenter's interruption controller parses: a rule per event."""

    key: str  # suffix of the rule name
    source: str
    detail_type: str


# The (source, detail-type) pairs exactly as Karpenter's message parsers spell them (Parser.Source() and
# Parser.DetailType() of each package); tests/components/test_karpenter.py checks them against the
# getting-started template (.upstream-cache/iam/karpenter-cloudformation.yaml, pinned in upstream.lock.json) and
# the pack's karpenter-interruption-handling policy.
# Source: https://github.com/aws/karpenter-provider-aws/blob/main/pkg/controllers/interruption/messages/spotinterruption/parser.go
# Source: https://github.com/aws/karpenter-provider-aws/blob/main/pkg/controllers/interruption/messages/rebalancerecommendation/parser.go
# Source: https://github.com/aws/karpenter-provider-aws/blob/main/pkg/controllers/interruption/messages/statechange/parser.go
# Source: https://github.com/aws/karpenter-provider-aws/blob/main/pkg/controllers/interruption/messages/scheduledchange/parser.go
# Source: https://github.com/aws/karpenter-provider-aws/blob/main/pkg/controllers/interruption/messages/capacityreservationinterruption/parser.go
INTERRUPTION_EVENTS: tuple[InterruptionEvent, ...] = (
    InterruptionEvent("spot", "aws.ec2", "EC2 Spot Instance Interruption Warning"),
    InterruptionEvent("rebalance", "aws.ec2", "EC2 Instance Rebalance Recommendation"),
    InterruptionEvent("state-change", "aws.ec2", "EC2 Instance State-change Notification"),
    InterruptionEvent("health", "aws.health", "AWS Health Event"),
    InterruptionEvent("capacity-reservation", "aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
)

# Messages older than five minutes are stale for a two-minute Spot notice (the template's value).
MESSAGE_RETENTION_SECONDS = 300
TARGET_ID = "KarpenterInterruptionQueueTarget"


def event_pattern(event: InterruptionEvent) -> str:
    """The rule's event pattern: one source, one detail-type."""
    return json.dumps({"source": [event.source], "detail-type": [event.detail_type]}, sort_keys=True)


def queue_policy(queue_arn: str) -> str:
    """EventBridge (and SQS) may send to the queue; nothing may reach it over plain HTTP."""
    return json.dumps({
        "Version": "2012-10-17",
        "Id": "EC2InterruptionPolicy",
        "Statement": [
            {
                "Sid": "AllowEventBridge",
                "Effect": "Allow",
                "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
            },
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "sqs:*",
                "Resource": queue_arn,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            },
        ],
    }, sort_keys=True)


def queue_name(cluster_name: str) -> str:
    """`<cluster>-karpenter`: SQS names allow 80 characters, EKS cluster names 100, so the name is cut."""
    return f"{cluster_name[:70]}-karpenter"


@dataclass
class InterruptionQueue:
    """The queue and its rules, as children of the controller component."""

    queue: aws.sqs.Queue
    name: str
    rules: dict[str, aws.cloudwatch.EventRule]
    targets: dict[str, aws.cloudwatch.EventTarget]


def interruption_queue(name: str, cluster_name: str, parent: pulumi.Resource) -> InterruptionQueue:
    """Create the encrypted queue, its policy and one EventBridge rule + target per interruption event."""
    child = pulumi.ResourceOptions(parent=parent)
    wanted = queue_name(cluster_name)
    queue = aws.sqs.Queue(
        f"{name}-interruption-queue",
        name=wanted,
        message_retention_seconds=MESSAGE_RETENTION_SECONDS,
        # Server-side encryption with SQS-owned keys (SSE-SQS): EventBridge can send to it without a KMS grant.
        # Source: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-server-side-encryption.html
        sqs_managed_sse_enabled=True,
        opts=child,
    )
    aws.sqs.QueuePolicy(f"{name}-interruption-queue-policy", queue_url=queue.id,
                        policy=queue.arn.apply(queue_policy), opts=child)
    rules: dict[str, aws.cloudwatch.EventRule] = {}
    targets: dict[str, aws.cloudwatch.EventTarget] = {}
    for event in INTERRUPTION_EVENTS:
        rule = aws.cloudwatch.EventRule(
            f"{name}-{event.key}",
            # EventBridge rule names allow 64 characters: 30 + "-karpenter-" + the longest key (20).
            # Source: https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutRule.html
            name=f"{cluster_name[:30]}-karpenter-{event.key}",
            description=f"{event.detail_type} events for Karpenter's interruption queue",
            event_pattern=event_pattern(event),
            opts=child,
        )
        rules[event.key] = rule
        targets[event.key] = aws.cloudwatch.EventTarget(
            f"{name}-{event.key}", rule=rule.name, arn=queue.arn, target_id=TARGET_ID, opts=child)
    return InterruptionQueue(queue=queue, name=wanted, rules=rules, targets=targets)
