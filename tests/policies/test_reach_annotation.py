"""The reachable-pools annotation, entry by entry: what the program writes on a Deployment is read back into the
pools the resource twins judge it against, and anything else is refused with the entry named.
"""

from __future__ import annotations

from typing import Any

import pytest

from policies.gpu_guard.rules._reach_annotation import DeclaredPool, _pool


def test_a_full_entry_is_read_back_whole() -> None:
    assert _pool({"pool": "gpu-spot", "os": "bottlerocket", "driver": "580", "driverSource": "node image",
                  "instanceTypes": ["g6.xlarge", "g5.xlarge"], "imageVersion": "v1.68.0", "kubernetes": "1.35"}) == \
        DeclaredPool("gpu-spot", "bottlerocket", "580", "node image", ("g6.xlarge", "g5.xlarge"), "v1.68.0", "1.35")


def test_a_minimal_entry_takes_empty_and_absent_defaults() -> None:
    assert _pool({"pool": "a10g", "driver": "580.173.02"}) == DeclaredPool("a10g", "", "580.173.02", "", (), None, None)
    assert _pool({"pool": "a10g", "driver": "580.173.02", "instanceTypes": None, "imageVersion": "",
                  "kubernetes": ""}) == DeclaredPool("a10g", "", "580.173.02", "", (), None, None)


@pytest.mark.parametrize(("item", "message"), [
    ("a10g", "entry 'a10g' lacks a string pool and driver"),
    ({"driver": "580"}, "entry {'driver': '580'} lacks a string pool and driver"),
    ({"pool": "a10g"}, "entry {'pool': 'a10g'} lacks a string pool and driver"),
    ({"pool": "a10g", "driver": 580}, "entry {'pool': 'a10g', 'driver': 580} lacks a string pool and driver"),
    ({"pool": 1, "driver": "580"}, "entry {'pool': 1, 'driver': '580'} lacks a string pool and driver"),
    ({"pool": "a10g", "driver": "580", "instanceTypes": "g5.xlarge"}, "entry 'a10g': instanceTypes is not a list"),
    ({"pool": "a10g", "driver": "580", "imageVersion": 1.68}, "entry 'a10g': imageVersion is not a string"),
    ({"pool": "a10g", "driver": "580", "kubernetes": 1.35}, "entry 'a10g': kubernetes is not a string"),
])
def test_a_malformed_entry_is_refused_naming_it(item: Any, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        _pool(item)
    assert str(caught.value) == message
