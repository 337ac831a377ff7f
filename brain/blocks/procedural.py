"""`procedural` v1 (§3.4): an ordered procedure."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from brain.blocks.base import TypedBlock
from brain.blocks.fields import BlockIds, NonEmptyText, Text, Texts, WireModel
from brain.blocks.memory_type import MemoryType


class Step(WireModel):
    """One step of a procedure (`$defs/Step`); `uses` names the blocks it relies on."""

    action: NonEmptyText
    condition: Text | None = None
    alternatives: Texts | None = None
    uses: BlockIds | None = None


class ProceduralBlock(TypedBlock):
    """How to reach a goal: a label, the goal and at least one step, in order."""

    memory_type: ClassVar[MemoryType] = MemoryType.PROCEDURAL

    label: NonEmptyText
    goal: NonEmptyText
    steps: Annotated[tuple[Step, ...], Field(min_length=1)]
    preconditions: Texts | None = None
    success_criteria: Texts | None = None
    subject: Text | None = None
    evidence: BlockIds | None = None
