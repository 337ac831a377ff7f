"""Field types shared by the payload models: exact JSON types, no coercion (§3, "types are exact").

Strings and integers are strict (no `"62"` for 62, no `true` for 1) and integers stay within ±(2^53−1),
so every model value serializes under `jcs/1`. Enums stay lax so decoded JSON strings validate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Self

from pydantic import Field, StringConstraints

from brain.frozen import FrozenModel
from brain.identity import MAX_SAFE_INTEGER, BlockId, OciDigest
from brain.identity.clock import TIMESTAMP_PATTERN

# Any string, including "" (optional free-text members carry no min length).
Text = Annotated[str, StringConstraints(strict=True)]
# A string of at least one character ("min 1").
NonEmptyText = Annotated[str, StringConstraints(strict=True, min_length=1)]
# `YYYY-MM-DDTHH:MM:SSZ`; calendar validity is checked only where the spec checks it (episodic ranges).
Timestamp = Annotated[str, StringConstraints(strict=True, pattern=f"^{TIMESTAMP_PATTERN.pattern}$")]
# A byte length or count: integer ≥ 0 inside the JCS-safe range.
Size = Annotated[int, Field(strict=True, ge=0, le=MAX_SAFE_INTEGER)]

Texts = tuple[Text, ...]
BlockIds = tuple[BlockId, ...]
NonEmptyBlockIds = Annotated[tuple[BlockId, ...], Field(min_length=1)]
NonEmptyTexts = Annotated[tuple[Text, ...], Field(min_length=1)]

__all__ = [
    "BlockIds",
    "NonEmptyBlockIds",
    "NonEmptyText",
    "NonEmptyTexts",
    "OciDigest",
    "Size",
    "Text",
    "Texts",
    "Timestamp",
    "WireModel",
]


class WireModel(FrozenModel):
    """A frozen wire object whose field names are the spec's JSON keys; unknown members are refused."""

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy (as in pydantic, `update` is not validated) whose cached bytes and digests start empty."""
        copied = super().model_copy(update=update, deep=deep)
        # Private attributes here are only caches of derived identity; a copy with updates must not inherit them.
        if copied.__pydantic_private__:
            for name, attribute in self.__private_attributes__.items():
                copied.__pydantic_private__[name] = attribute.get_default()
        return copied

    def to_json(self) -> dict:
        """The JSON object this model stands for, with absent optional members omitted (§1.3)."""
        return self.model_dump(mode="json", exclude_none=True)
