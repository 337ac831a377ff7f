"""`episodic` v1 (§3.2): a concrete event in time."""

from __future__ import annotations

from typing import ClassVar, Self

from pydantic import model_validator

from brain.blocks.base import TypedBlock
from brain.blocks.fields import BlockIds, NonEmptyText, Text, Texts, Timestamp
from brain.blocks.memory_type import MemoryType
from brain.errors import InvalidInputError
from brain.identity import parse_timestamp


class EpisodicBlock(TypedBlock):
    """An event: what happened (`summary`), when, and optionally who, where and with what evidence."""

    memory_type: ClassVar[MemoryType] = MemoryType.EPISODIC

    summary: NonEmptyText
    occurred_at: Timestamp
    ended_at: Timestamp | None = None
    context: Text | None = None
    participants: Texts | None = None
    outcome: Text | None = None
    evidence: BlockIds | None = None
    tags: Texts | None = None

    @model_validator(mode="after")
    def _ends_after_it_starts(self) -> Self:
        # The spec parses both timestamps only when a range is given, so calendar validity is checked only here.
        if self.ended_at is not None:
            try:
                start, end = parse_timestamp(self.occurred_at), parse_timestamp(self.ended_at)
            except InvalidInputError as e:
                raise ValueError(e.message) from None
            if end < start:
                raise ValueError(f"ended_at {self.ended_at} is before occurred_at {self.occurred_at}")
        return self
