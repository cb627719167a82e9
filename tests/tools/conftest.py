"""Fixtures for the policy gate tests: the sample pack and resources shaped as the recorder keeps them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2

from tools.engine.records import RecordedResource

SAMPLE_PACK = Path(__file__).resolve().parent / "fixtures" / "sample_pack"

# What the engine sends for a value that is unknown during preview.
# Source: https://github.com/pulumi/pulumi/blob/master/sdk/go/common/resource/plugin/rpc.go (UnknownStringValue)
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

MakeResource = Callable[..., RecordedResource]


@pytest.fixture
def sample_pack() -> Path:
    return SAMPLE_PACK


@pytest.fixture
def make_resource() -> MakeResource:
    def make(
        name: str,
        type_: str,
        props: dict[str, Any] | None = None,
        *,
        parent: RecordedResource | None = None,
        dependencies: tuple[str, ...] = (),
        provider: str = "",
    ) -> RecordedResource:
        props = props or {}
        # A child's URN carries its parent's type, as the engine builds it.
        qualified = f"{parent.type}${type_}" if parent is not None else type_
        return RecordedResource(
            urn=f"urn:pulumi:dev::sample::{qualified}::{name}",
            type=type_,
            name=name,
            parent=parent.urn if parent is not None else None,
            custom=True,
            inputs=props,
            properties=json_format.ParseDict(props, struct_pb2.Struct()),
            provider=provider,
            dependencies=dependencies,
        )

    return make
