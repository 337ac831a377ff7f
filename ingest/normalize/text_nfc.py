"""`text-nfc`: Markdown and plain text, decoded as strict UTF-8, LF line endings, NFC.

An ASCII file with LF endings is its own view (identical bytes, so the blob is shared, as in the
protocol's sample brain). Version `1+unicode-<unidata_version>`: NFC tables change between Unicode
versions, so a Python with another Unicode database is another pipeline version.
"""

from __future__ import annotations

from pathlib import Path

from ingest.normalize.base import (
    MAX_TEXT_BYTES,
    TOO_LARGE,
    UNICODE_TAG,
    NormalizationError,
    NormalizedOutput,
    Pipeline,
    decode_utf8,
    read_limited,
    text_view,
)

ACCEPTED = frozenset({"text/plain", "text/markdown"})


class TextNfc(Pipeline):
    """The `text-nfc` pipeline."""

    name = "text-nfc"
    version = f"1+{UNICODE_TAG}"

    def __init__(self, max_bytes: int = MAX_TEXT_BYTES) -> None:
        self.max_bytes = max_bytes

    def accepts(self, media_type: str) -> bool:
        """Plain text and Markdown."""
        return media_type in ACCEPTED

    def normalize(self, source_path: Path) -> NormalizedOutput:
        """The NFC, LF-terminated UTF-8 text of `source_path`."""
        return NormalizedOutput(text_view(decode_utf8(read_limited(source_path, self.max_bytes))))

    def normalize_bytes(self, data: bytes) -> NormalizedOutput:
        """The same view from bytes already in memory (a small source read once by registration)."""
        if len(data) > self.max_bytes:
            raise NormalizationError(TOO_LARGE, f"{len(data)} bytes exceeds the {self.max_bytes}-byte text limit")
        return NormalizedOutput(text_view(decode_utf8(data)))
