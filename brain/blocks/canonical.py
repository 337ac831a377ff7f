"""`canonical` v1 (§3.1): a descriptor of observed source bytes, with an optional normalized view."""

from __future__ import annotations

from typing import ClassVar

from brain.blocks.base import TypedBlock
from brain.blocks.fields import NonEmptyText, Size, WireModel
from brain.blocks.memory_type import MemoryType
from brain.identity import OciDigest


class NormalizedView(WireModel):
    """The output of a deterministic transform of the source (`$defs/NormalizedView`)."""

    blob: OciDigest
    media_type: NonEmptyText
    size: Size


class CanonicalBlock(TypedBlock):
    """A source's bytes as observed: blob digest, declared media type, size, optional normalized view."""

    memory_type: ClassVar[MemoryType] = MemoryType.CANONICAL

    blob: OciDigest
    media_type: NonEmptyText
    size: Size
    normalized_view: NormalizedView | None = None
