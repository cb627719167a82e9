"""Shared fixtures for the compatibility matrix tests: the packaged matrix and the review date."""

from __future__ import annotations

from datetime import date

import pytest

from policies.gpu_guard.matrix import Matrix, load_matrix

# The date the facts were reviewed at (common brief: "Today is 2026-11-29"); lifecycle tests pin it.
REVIEW_DAY = date(2026, 11, 29)


@pytest.fixture(scope="session")
def matrix() -> Matrix:
    return load_matrix()
