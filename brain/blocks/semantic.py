"""`semantic` v1 (§3.3): consolidated knowledge citing canonical evidence."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from brain.blocks.base import TypedBlock
from brain.blocks.fields import BlockIds, NonEmptyText, Text, Texts, WireModel
from brain.blocks.memory_type import MemoryType
from brain.identity import BlockId


class SemanticKind(StrEnum):
    """The v1 kinds of semantic block (case-sensitive; `scheme`/`class` exist only in v3)."""

    CONCEPT = "concept"
    FACT = "fact"
    FORMULA = "formula"
    RELATION = "relation"
    CONSTRAINT = "constraint"


class Relation(WireModel):
    """A typed edge to another block (`$defs/Relation`); the predicate vocabulary is free."""

    predicate: NonEmptyText
    target: BlockId


class SemanticBlock(TypedBlock):
    """A concept, fact, formula, relation or constraint: label + statement, optional subject and links."""

    memory_type: ClassVar[MemoryType] = MemoryType.SEMANTIC

    kind: SemanticKind
    label: NonEmptyText
    statement: NonEmptyText
    subject: Text | None = None
    evidence: BlockIds | None = None
    relations: tuple[Relation, ...] | None = None
    aliases: Texts | None = None
