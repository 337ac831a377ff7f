"""The `origin` object of §5.5: where the current snapshot was pulled from (head.json, refs.json entries)."""

from __future__ import annotations

from brain.frozen import FrozenModel
from brain.identity import OciDigest


class Origin(FrozenModel):
    """Where the current snapshot was pulled from (only after a pull)."""

    partial: bool
    reference: str
    snapshot: OciDigest
    tag: str | None = None


__all__ = ["Origin"]
