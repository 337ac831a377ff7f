"""The five memory types and the rules the protocol attaches to each (§2)."""

from __future__ import annotations

from enum import StrEnum


class MemoryType(StrEnum):
    """A module of a brain; the value is the protocol name."""

    CANONICAL = "canonical"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"
    PROVENANCE = "provenance"

    @property
    def is_append_only(self) -> bool:
        """Episodic memory is never dropped, only superseded or demoted."""
        return self is MemoryType.EPISODIC

    @property
    def is_droppable(self) -> bool:
        """Whether any retention policy may drop members of this module."""
        return self is not MemoryType.EPISODIC

    @property
    def is_derived(self) -> bool:
        """Derived modules cite canonical evidence and cannot be published without `canonical` (§2, §6.7)."""
        return self in DERIVED_MEMORY_TYPES

    @property
    def is_proposable(self) -> bool:
        """Whether a model may propose blocks of this type (§2)."""
        return self in PROPOSABLE_MEMORY_TYPES

    @classmethod
    def parse(cls, name: str) -> MemoryType:
        """The memory type called `name`; raises `InvalidInputError` naming the valid choices."""
        try:
            return cls(name)
        except ValueError:
            from brain.errors import InvalidInputError

            choices = ", ".join(m.value for m in cls)
            raise InvalidInputError(f"unknown memory type {name!r}: choose one of {choices}") from None


# §2's table, the one definition of each column: "derived (cites canonical evidence)" decides publishing
# (§6.7); "proposable by a model" decides what a task may allow, and which members carry `derivation`
# records (episodic blocks cite evidence too, so a canonical drop's cascade reaches them, §7.4).
DERIVED_MEMORY_TYPES: frozenset[MemoryType] = frozenset({MemoryType.SEMANTIC, MemoryType.PROCEDURAL})
PROPOSABLE_MEMORY_TYPES: frozenset[MemoryType] = frozenset(
    {MemoryType.EPISODIC, MemoryType.SEMANTIC, MemoryType.PROCEDURAL}
)

# The fixed order of module layers in a packed artifact and of modules in reports (§6.2).
MODULE_ORDER: tuple[MemoryType, ...] = (
    MemoryType.CANONICAL,
    MemoryType.EPISODIC,
    MemoryType.SEMANTIC,
    MemoryType.PROCEDURAL,
    MemoryType.PROVENANCE,
)
