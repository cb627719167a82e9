"""EventBridge pattern matching on the EventBridge user guide's own examples, and on events known in part.

Examples (patterns and events) as the guide gives them:
- https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html (missing fields match anything;
  values in arrays; an event array matches when any element does)
- https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html (prefix, suffix,
  anything-but, numeric, IP address, exists, equals-ignore-case, wildcard, $or)
"""

from __future__ import annotations

from typing import Any

import pytest

from policies.gpu_guard.rules._event_pattern import ALL, NONE, SOME, match

EC2_EVENT = {
    "version": "0", "id": "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
    "detail-type": "EC2 Instance State-change Notification", "source": "aws.ec2", "account": "111122223333",
    "time": "2017-12-22T18:43:48Z", "region": "us-west-1",
    "resources": ["arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0"],
    "detail": {"instance-id": "i-1234567890abcdef0", "state": "terminated"},
}
NUMBERS = {"detail": {"c-count": 5, "d-count": 3, "x-limit": 301.8, "source-ip": "10.0.0.123",
                      "FileName": "image.png", "Filepath": "/lib/lib2/fileName.jar", "state": "running"}}


def _full(pattern: dict[str, Any], event: dict[str, Any]) -> str:
    return match(pattern, event, frozenset(event))


@pytest.mark.parametrize(("pattern", "verdict"), [
    ({"source": ["aws.ec2"]}, ALL),  # a field left out matches anything
    ({"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]}, ALL),
    ({"source": ["aws.ec2", "aws.fictional"]}, ALL),  # any value of the array
    ({"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]}, NONE),
    ({"source": ["AWS.EC2"]}, NONE),  # exact, no case folding
    ({"detail": {"state": ["terminated"]}}, ALL),
    ({"detail": {"state": ["running"]}}, NONE),
    ({"detail": {"missing": ["x"]}}, NONE),  # a field the event lacks does not match
    ({"resources": ["arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0", "arn:other"]}, ALL),
    ({"resources": ["arn:other"]}, NONE),
    ({"time": [{"prefix": "2017-12-22"}]}, ALL),
    ({"time": [{"prefix": "2018"}]}, NONE),
    ({"detail-type": [{"prefix": {"equals-ignore-case": "ec2 INSTANCE"}}]}, ALL),
    ({"detail-type": [{"suffix": "Notification"}]}, ALL),
    ({"detail-type": [{"suffix": {"equals-ignore-case": "NOTIFICATION"}}]}, ALL),
    ({"detail-type": [{"suffix": "notification"}]}, NONE),
    ({"detail-type": [{"equals-ignore-case": "ec2 instance state-change notification"}]}, ALL),
    ({"detail-type": [{"equals-ignore-case": "ec2 instance state-change"}]}, NONE),
    ({"detail": {"state": [{"anything-but": "initializing"}]}}, ALL),
    ({"detail": {"state": [{"anything-but": ["stopped", "terminated"]}]}}, NONE),
    ({"detail": {"state": [{"anything-but": {"prefix": "term"}}]}}, NONE),
    ({"detail": {"state": [{"anything-but": {"prefix": "init"}}]}}, ALL),
    ({"detail": {"state": [{"anything-but": {"suffix": "ated"}}]}}, NONE),
    ({"detail": {"state": [{"anything-but": {"equals-ignore-case": ["Stopped", "TERMINATED"]}}]}}, NONE),
    ({"detail": {"state": [{"anything-but": {"wildcard": "term*"}}]}}, NONE),
    ({"detail": {"state": [{"anything-but": {"wildcard": ["run*", "stop*"]}}]}}, ALL),
    ({"detail": {"missing": [{"anything-but": "x"}]}}, NONE),  # anything-but needs the field
    ({"detail": {"state": [{"exists": True}]}}, ALL),
    ({"detail": {"state": [{"exists": False}]}}, NONE),
    ({"detail": {"missing": [{"exists": False}]}}, ALL),
    ({"detail": {"missing": [{"exists": True}]}}, NONE),
    ({"account": [{"wildcard": "1111*"}]}, ALL),
    ({"resources": [{"wildcard": "arn:aws:ec2:*:instance/i-*"}]}, ALL),
    ({"resources": [{"wildcard": "arn:aws:s3:*"}]}, NONE),
    ({"detail-type": [{"wildcard": "EC2 Instance\\*"}]}, NONE),  # an escaped star is a star
    ({"source": ["aws.ec2"], "$or": [{"detail-type": ["x"]}, {"detail": {"state": ["terminated"]}}]}, ALL),
    ({"$or": [{"detail-type": ["x"]}, {"region": ["eu-west-1"]}]}, NONE),
    ({"source": "aws.ec2"}, NONE),  # a leaf must be an array: EventBridge rejects the pattern
    ({"source": [{"prefix": "aws.", "suffix": "ec2"}]}, NONE),  # one operator per matcher
    ({"source": [{"unknown-operator": "x"}]}, NONE),
    ({"source": [{"prefix": {"not-a-case-rule": "aws"}}]}, NONE),
    ({"source": [{"prefix": 5}]}, NONE),
    ({"detail": {"state": [{"anything-but": {"suffix": ".txt"}}]}}, ALL),
    ({"detail": {"state": [{"anything-but": {"equals-ignore-case": ["Stopped"]}}]}}, ALL),
    ({"detail": {"state": [{"anything-but": {"unknown": "x"}}]}}, NONE),
    ({"detail": {"state": [{"anything-but": {"prefix": "a", "suffix": "b"}}]}}, NONE),
])
def test_the_guide_s_patterns_on_an_ec2_event(pattern: dict[str, Any], verdict: str) -> None:
    assert _full(pattern, EC2_EVENT) == verdict


@pytest.mark.parametrize(("wildcard", "value", "verdict"), [
    ("a\\*b", "a*b", ALL),  # an escaped star is a star
    ("a\\*b", "axxb", NONE),
    ("a\\*", "a*", ALL),
    ("a\\*", "ab", NONE),
    ("a*b", "a\nb", ALL),  # a star spans any character, a line break too
    ("a.b", "axb", NONE),  # other characters are literal
    ("a\\", "a\\", ALL),  # a trailing backslash is itself
    ("*", "", ALL),
])
def test_wildcards_as_the_guide_defines_them(wildcard: str, value: str, verdict: str) -> None:
    assert _full({"name": [{"wildcard": wildcard}]}, {"name": value}) == verdict


@pytest.mark.parametrize(("pattern", "verdict"), [
    ({"detail": {"c-count": [{"numeric": [">", 0, "<=", 5]}]}}, ALL),
    ({"detail": {"c-count": [{"numeric": [">", 0, "<", 5]}]}}, NONE),
    ({"detail": {"c-count": [{"numeric": [">=", 5]}]}}, ALL),
    ({"detail": {"c-count": [{"numeric": [">", 5]}]}}, NONE),
    ({"detail": {"d-count": [{"numeric": ["<", 10]}]}}, ALL),
    ({"detail": {"d-count": [{"numeric": ["<", 3]}]}}, NONE),
    ({"detail": {"d-count": [{"numeric": ["<=", 3]}]}}, ALL),
    ({"detail": {"x-limit": [{"numeric": ["=", 3.018e2]}]}}, ALL),
    ({"detail": {"x-limit": [{"numeric": ["=", 301]}]}}, NONE),
    ({"detail": {"state": [{"numeric": [">", 0]}]}}, NONE),  # numeric needs a number
    ({"detail": {"c-count": [5]}}, ALL),
    ({"detail": {"c-count": [5.0]}}, ALL),
    ({"detail": {"c-count": ["5"]}}, NONE),  # a string is not the number
    ({"detail": {"c-count": [{"anything-but": [5, 6]}]}}, NONE),
    ({"detail": {"c-count": [{"anything-but": 4}]}}, ALL),
    ({"detail": {"c-count": [{"anything-but": {"prefix": "5"}}]}}, NONE),  # a string operator on a number
    ({"detail": {"source-ip": [{"cidr": "10.0.0.0/24"}]}}, ALL),
    ({"detail": {"source-ip": [{"cidr": "10.0.1.0/24"}]}}, NONE),
    ({"detail": {"source-ip": [{"cidr": "not-a-network"}]}}, NONE),
    ({"detail": {"FileName": [{"suffix": ".png"}]}}, ALL),
    ({"detail": {"Filepath": [{"anything-but": {"wildcard": "*/lib/*"}}]}}, NONE),
    ({"detail": {"Filepath": [{"wildcard": "/lib/*/*.jar"}]}}, ALL),
    ({"detail": {"$or": [{"c-count": [{"numeric": [">", 0, "<=", 5]}]}, {"d-count": [{"numeric": ["<", 1]}]}]}}, ALL),
    ({"detail": {"$or": [{"c-count": [{"numeric": [">", 9]}]}, {"d-count": [{"numeric": ["<", 1]}]}]}}, NONE),
    ({"detail": {"c-count": [{"numeric": ">5"}]}}, NONE),  # numeric takes a list, not a string
    ({"detail": {"c-count": [{"numeric": [">", 4, "<"]}]}}, ALL),  # a trailing operator without a bound
    ({"detail": {"c-count": [{"numeric": [">", 4, "<", 5]}]}}, NONE),
    ({"detail": {"c-count": [{"numeric": ["~", 9, ">", 4]}]}}, ALL),  # an unknown operator is no condition
    ({"detail": {"c-count": [{"numeric": [">", "4"]}]}}, ALL),  # a bound that is no number is no condition
])
def test_the_guide_s_operators_on_numbers_addresses_and_paths(pattern: dict[str, Any], verdict: str) -> None:
    assert _full(pattern, NUMBERS) == verdict


KARPENTER_EVENT = {"version": "0", "source": "aws.ec2", "detail-type": "EC2 Spot Instance Interruption Warning"}
KNOWN = frozenset(KARPENTER_EVENT)


@pytest.mark.parametrize(("pattern", "verdict"), [
    ({"source": ["aws.ec2"]}, ALL),
    ({"source": [{"prefix": "aws."}], "detail-type": [{"suffix": "Warning"}]}, ALL),
    ({"source": ["aws.ec2"], "detail-type": [{"anything-but": "EC2 Instance State-change Notification"}]}, ALL),
    ({"source": ["aws.ec2"], "detail-type": [{"anything-but": {"prefix": "EC2 Spot"}}]}, NONE),
    ({"source": ["aws.health"]}, NONE),
    # Fields the pack does not know for such an event: it may or may not match.
    ({"source": ["aws.ec2"], "detail": {"instance-action": ["terminate"]}}, SOME),
    ({"source": ["aws.ec2"], "account": ["111122223333"]}, SOME),
    ({"source": ["aws.ec2"], "region": ["us-west-2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]}, NONE),
    ({"$or": [{"detail-type": ["x"]}, {"account": ["1"]}]}, SOME),
    ({"$or": [{"account": ["1"]}, {"source": ["aws.ec2"]}]}, ALL),
    ({"$or": "not-a-list"}, NONE),
])
def test_a_karpenter_event_known_only_by_source_and_detail_type(pattern: dict[str, Any], verdict: str) -> None:
    assert match(pattern, KARPENTER_EVENT, KNOWN) == verdict
