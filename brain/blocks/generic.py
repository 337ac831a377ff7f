"""Blocks of later registered schema versions (§3.8), held as validated JSON rather than typed fields."""

from __future__ import annotations

import copy
from typing import Any, Self

from pydantic import Field, StrictInt, model_validator

from brain.blocks.base import Block
from brain.blocks.memory_type import MemoryType
from brain.blocks.schemas import REGISTERED_VERSIONS, payload_problems


def drop_nulls(value: Any) -> Any:
    """`value` with every null object member removed, recursively (§1.3: a null optional is an absent one)."""
    # Only containers are walked into: the gate cleans every candidate's payload, mostly strings and lists of them.
    if isinstance(value, dict):
        return {
            key: drop_nulls(item) if isinstance(item, (dict, list)) else item
            for key, item in value.items()
            if item is not None
        }
    if isinstance(value, list):
        return [drop_nulls(item) if isinstance(item, (dict, list)) else item for item in value]
    return value


class GenericBlock(Block):
    """A block of a registered later schema version (episodic 2, semantic 2/3, procedural 2, provenance 2).

    Validated against the registry; treat `body` as read-only (`payload()` returns a copy).
    """

    memory_type: MemoryType
    schema_version: StrictInt
    body: dict[str, Any] = Field(alias="payload")

    model_config = {"populate_by_name": True}

    @model_validator(mode="after")
    def _fits_registered_schema(self) -> Self:
        if self.schema_version == 1:
            raise ValueError(f"{self.memory_type} v1 has a typed model; build it with Block.from_payload")
        if self.schema_version not in REGISTERED_VERSIONS[self.memory_type]:
            raise ValueError(f"{self.memory_type} has no registered schema_version {self.schema_version}")
        # Nulls are dropped as for typed models, so a stored explicit null fails the canonical comparison.
        object.__setattr__(self, "body", drop_nulls(copy.deepcopy(self.body)))
        problems = payload_problems(self.memory_type, self.schema_version, self.body)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise ValueError(f"{problems[0]}{more}")
        return self

    def payload(self) -> dict[str, Any]:
        """A copy of the validated payload object."""
        return copy.deepcopy(self.body)
