"""sdk: the Python API of brain, one method per `brain` command (`from sdk import Brain`); see docs/library.md.

The package sits above `ingest`, `oci` and `retrieval` (it composes them) and below `cli`, which calls the
same use cases. `brain` is the protocol core beneath them all: `brain.Brain` is a brain directory's reads
and its one write path, `sdk.Brain` is the same directory with every operation. `sdk.Brain` loads on first
use, so the CLI's start-up (which needs only `sdk.actor`) does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from brain.errors import BrainError

if TYPE_CHECKING:
    from sdk.brain import Brain


def __getattr__(name: str) -> Any:
    if name == "Brain":
        from sdk.brain import Brain

        return Brain
    raise AttributeError(f"module 'sdk' has no attribute {name!r}")


__all__ = ["Brain", "BrainError"]
