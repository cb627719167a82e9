"""The dev stack as the program builds it, which the package's Construct is compared with."""

from __future__ import annotations

from typing import Any

import pytest

from tests.components.harness import Run, run, stack_values


@pytest.fixture(scope="session")
def program() -> Run:
    return run(stack_values("dev"))


@pytest.fixture(scope="session")
def values() -> dict[str, Any]:
    return stack_values("dev")
