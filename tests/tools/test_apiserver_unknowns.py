"""Issue 45: an absent key is a known fact beside unknown siblings (schema `required`, CEL `has()`).

In a first preview an output of another resource is unknown (the EC2NodeClass's `role` from an IAM role), but the
keys the program wrote, and those it left out, are known: an unknown value cannot add a key beside it. The API
server refuses these objects at `pulumi up`, so the offline check refuses them in every phase.
"""

from __future__ import annotations

import copy

import pytest

from tests.shared import upstream
from tests.tools.test_apiserver import NODE_CLASS, _resource
from tools.apiserver.check import check_resources
from tools.apiserver.unknown_reads import reads_unknown
from tools.engine.records import UNKNOWN


def _rejected(obj: dict[str, object]) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in check_resources([_resource(obj)], upstream()).rejected]


def test_an_absent_required_key_beside_an_unknown_role_is_refused() -> None:
    obj = copy.deepcopy(NODE_CLASS)
    obj["spec"]["role"] = UNKNOWN
    del obj["spec"]["amiSelectorTerms"]
    assert _rejected(obj) == [("spec", "'amiSelectorTerms' is a required property")]


def test_a_has_rule_on_keys_beside_an_unknown_value_is_judged() -> None:
    """`role` (unknown) and `instanceProfile` are both present: the CRD's rule on which keys are present fails
    whatever the role's value (Karpenter v1 EC2NodeClass: "must specify exactly one of ['role', 'instanceProfile']",
    a rule of `has()` only)."""
    obj = copy.deepcopy(NODE_CLASS)
    obj["spec"]["role"] = UNKNOWN
    obj["spec"]["instanceProfile"] = "gpu-profile"
    assert _rejected(obj) == [("spec", "must specify exactly one of ['role', 'instanceProfile']")]


def test_a_rule_that_reads_the_unknown_value_still_waits() -> None:
    obj = copy.deepcopy(NODE_CLASS)
    obj["spec"]["role"] = UNKNOWN
    obj["spec"]["blockDeviceMappings"][0]["ebs"]["volumeSize"] = UNKNOWN
    assert _rejected(obj) == []


@pytest.mark.parametrize(("rule", "value", "reads"), [
    ("has(self.amiFamily)", {"role": UNKNOWN}, False),
    ("has(self.role) && !has(self.instanceProfile)", {"role": UNKNOWN}, False),
    ("self.role != ''", {"role": UNKNOWN}, True),
    ("size(self.role) > 0", {"role": UNKNOWN}, True),
    ("has(self.spec.role)", {"spec": UNKNOWN}, True),  # whether spec has the key is not known
    ("self.terms.all(x, has(x.alias))", {"terms": [{"id": UNKNOWN}]}, True),  # read whole: any doubt waits
    ("self.terms[0].alias == 'al2023'", {"terms": [{"alias": UNKNOWN}]}, True),
    ("self.missing.alias == 'x'", {"missing2": 1, "other": UNKNOWN}, False),  # an absent key: no such key, a fact
    ("self == oldSelf", {"role": UNKNOWN}, True),
    ("has(self.role)", {"role": "KarpenterNodeRole"}, False),
])
def test_what_a_rule_reads(rule: str, value: object, reads: bool) -> None:
    assert reads_unknown(rule, value) is reads
