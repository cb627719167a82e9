"""`is_raise_or_equal`: a stack may raise a policy's enforcement, never lower it (the whole table).

Order as the engine treats the levels: disabled < advisory < mandatory = remediate (a violation left
after remediation is reported as mandatory: pulumi/pulumi pkg/resource/deploy/step_generator.go).
"""

from __future__ import annotations

import pytest

from policies.gpu_guard.base import EnforcementLevel, is_raise_or_equal

D, A, M, R = (EnforcementLevel.DISABLED, EnforcementLevel.ADVISORY, EnforcementLevel.MANDATORY,
              EnforcementLevel.REMEDIATE)

ALLOWED = {(D, D), (D, A), (D, M), (D, R), (A, A), (A, M), (A, R), (M, M), (M, R), (R, M), (R, R)}
TABLE = [(default, configured) for default in (D, A, M, R) for configured in (D, A, M, R)]


@pytest.mark.parametrize(("default", "configured"), TABLE, ids=[f"{d.value}->{c.value}" for d, c in TABLE])
def test_a_stack_may_raise_or_keep_a_level_but_never_lower_it(default, configured):
    assert is_raise_or_equal(default, configured) is ((default, configured) in ALLOWED)


def test_the_table_covers_every_level():
    assert {level for pair in TABLE for level in pair} == set(EnforcementLevel)
