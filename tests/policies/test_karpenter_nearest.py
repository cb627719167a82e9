"""karpenter-v1-api's "nearest valid key" hint (`_nearest`): offered from a similarity of 0.5 up, and nothing at
all when no key is near. Written from survivors of the mutation run (docs/testing.md)."""

from __future__ import annotations

import difflib

from policies.gpu_guard.rules.karpenter_v1_api import _nearest, known_keys


def test_a_key_half_similar_to_a_well_known_one_gets_it_as_the_hint() -> None:
    keys = tuple(known_keys())
    # below difflib's default cutoff (0.6), at or above the rule's 0.5
    assert 0.5 <= difflib.SequenceMatcher(None, "instance-type", "node.kubernetes.io/instance-type").ratio() < 0.6
    assert _nearest("instance-type", keys) == "; nearest valid key: node.kubernetes.io/instance-type"


def test_a_key_near_none_gets_no_hint() -> None:
    assert _nearest("registered", tuple(known_keys())) == ""
