"""An operator release the matrix does not hold, and the toolkit mode without an operator. Written from survivors
of the mutation run (docs/testing.md)."""

from __future__ import annotations

from policies.gpu_guard.matrix import load_matrix
from policies.gpu_guard.matrix.findings import Finding

MATRIX = load_matrix()
CHOICES = tuple(reversed(MATRIX.operators()))


def test_a_release_named_second_hand_says_why_it_is_not_in_the_matrix() -> None:
    row = next(r for r in MATRIX.data.operators_unconfirmed if r.version == "v26.7.1")
    assert MATRIX.operator_branch_support("v26.7.1", "ubuntu-24.04", "580.105.08") == [Finding(
        "mandatory", "operator-known",
        f"GPU Operator v26.7.1 is not in the compatibility matrix (v26.7.1 is unconfirmed: {row.note}; source "
        f"{row.source}); the newest release it records is {CHOICES[0]}.",
        MATRIX.data.operators[-1].source, (CHOICES[0],),
    )]


def test_an_unknown_release_gets_the_two_known_ones_around_it() -> None:
    # issue 55: a short answer, never the list of every release
    assert MATRIX.operator_branch_support("v26.4.9", "ubuntu-24.04", "580.105.08") == [Finding(
        "mandatory", "operator-known",
        "GPU Operator v26.4.9 is not a release the matrix records; the nearest are v26.3.3 and v26.7.0.",
        MATRIX.data.operators[-1].source, ("v26.7.0", "v26.3.3"),
    )]
    assert CHOICES[0] == "v26.7.0"


def test_without_an_operator_the_toolkit_mode_is_cdi_only_when_cdi_is_on() -> None:
    assert MATRIX.toolkit_mode_for_operator(None, True) == "cdi"
    assert MATRIX.toolkit_mode_for_operator(None, False) is None
    assert MATRIX.toolkit_mode_for_operator(None) is None
