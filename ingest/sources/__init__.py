"""Sources: find files under a root (with ignore rules) and name their media types."""

from __future__ import annotations

from ingest.sources.discover import discover
from ingest.sources.media import HEAD_SIZE, OCTET_STREAM, MediaGuess, detect_media_type, read_head, sniff
from ingest.sources.problems import FAILURE_CODES, SourceFile, SourceProblem

__all__ = [
    "FAILURE_CODES",
    "HEAD_SIZE",
    "OCTET_STREAM",
    "MediaGuess",
    "SourceFile",
    "SourceProblem",
    "detect_media_type",
    "discover",
    "read_head",
    "sniff",
]
