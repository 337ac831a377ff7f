"""The base of every immutable pydantic model here: frozen (hashable, never changed after validation) and
refusing unknown fields, so a typo or a field from a newer writer is an error instead of being dropped."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class FrozenModel(BaseModel):
    """A frozen pydantic model that refuses unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


__all__ = ["FrozenModel"]
