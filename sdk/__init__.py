"""sdk: the Python API of brain, one method per `brain` command (`from sdk import Brain`); see docs/library.md.

The package sits above `ingest`, `oci` and `retrieval` (it composes them) and below `cli`, which calls the
same use cases. `brain` is the protocol core beneath them all: `brain.Brain` is a brain directory's reads
and its one write path, `sdk.Brain` is the same directory with every operation.
"""

from brain.errors import BrainError
from sdk.brain import Brain

__all__ = ["Brain", "BrainError"]
