"""The base every stack-config model shares: unknown keys rejected, frozen, strict types, camelCase aliases."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, validate_by_alias=True,
                              validate_by_name=False, serialize_by_alias=True)
