"""The codes of the notes the heuristic's answers carry (a note explains an answer; it is not an error)."""

from __future__ import annotations

CAPPED = "proposals-capped"
"""The cap left candidates out (`ingest.proposers.emit.MAX_CANDIDATES_PER_SOURCE`)."""
NO_CANDIDATES = "no-candidates"
"""The source gave nothing: its view is empty, or nothing in it was recognized."""

__all__ = ["CAPPED", "NO_CANDIDATES"]
