"""What discovery yields: a source file to register, or a problem with one path.

Problem codes are stable strings (they appear in `--json` reports). A *failure* means a source the user
asked for could not be read (`--strict` turns it into exit 1); a *skip* is a deliberate, documented
decision (an empty file, a link leaving the root) that never fails a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from brain.frozen import FrozenModel

# Failures: the path exists (or existed) but could not be read.
UNREADABLE = "unreadable"  # permission denied or an I/O error while opening or listing
VANISHED = "vanished"  # listed, then gone before it could be opened
SYMLINK_LOOP = "symlink-loop"  # a link that points at itself or at one of its own ancestors
BROKEN_SYMLINK = "broken-symlink"  # a link whose target does not exist
BAD_NAME = "bad-name"  # a file name that is not valid UTF-8 (cannot be recorded as a relpath)

# Skips: never registered, by design.
EMPTY = "empty"  # zero bytes: nothing to know, and all empty files would share one canonical block
SYMLINK_OUTSIDE_ROOT = "symlink-outside-root"  # following it would read files the user did not name
NOT_REGULAR = "not-regular"  # a FIFO, socket or device: reading it could block or never end

# Notes from media-type detection (the source is still registered).
BINARY_CONTENT = "binary-content"  # a text extension over NUL bytes or invalid UTF-8

FAILURE_CODES = frozenset({UNREADABLE, VANISHED, SYMLINK_LOOP, BROKEN_SYMLINK, BAD_NAME})


class SourceFile(FrozenModel):
    """A regular, non-empty, readable file found under the ingest root."""

    path: Path
    relpath: str
    size: int
    mtime_ns: int
    origin: str | None = None
    """The default origin (`ingest.sources.origins`); None only where a caller built the file itself."""


class SourceProblem(FrozenModel):
    """A path discovery could not (or chose not to) turn into a `SourceFile`."""

    relpath: str
    code: str
    detail: str

    @property
    def kind(self) -> Literal["failure", "skipped", "note"]:
        """`failure` counts against `--strict`; `skipped` and `note` never do."""
        if self.code in FAILURE_CODES:
            return "failure"
        return "note" if self.code == BINARY_CONTENT else "skipped"
