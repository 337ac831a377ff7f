"""`gzip+<inner>`: a gzip-compressed source normalized through its content (`gzip+man-text`, `gzip+text-nfc`).

The content is inflated in memory up to the inner pipeline's text limit: a gzip bomb stops there
(`too-large`), a truncated or corrupt stream is `gzip-broken`. The inner pipeline is chosen from the
content (a roff page, HTML, text — by the name without `.gz` and the first bytes) and named on the record,
with its parameters: `gzip+man-text`, `gzip+text-nfc;charset=cp1252`. Content that no text pipeline
reads (a tarball) is registered without a view (`gzip-not-text`, a note). gzip (RFC 1952) decodes to the
same bytes with any zlib, so the version is the inner pipeline's plus `gzip-1`.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ingest.normalize.base import (
    MAX_TEXT_BYTES,
    TOO_LARGE,
    NormalizationError,
    NormalizedOutput,
    read_limited,
)

PREFIX = "gzip+"
VERSION_TAG = "gzip-1"
GZIP_BROKEN = "gzip-broken"
GZIP_NOT_TEXT = "gzip-not-text"
ACCEPTED = frozenset({"application/gzip"})
_CHUNK = 1 << 20


class BytesPipeline(Protocol):
    """An inner pipeline: it normalizes bytes already in memory."""

    name: str
    version: str

    def normalize_bytes(self, data: bytes) -> NormalizedOutput | None:
        """The view of `data` (None: this pipeline reads files only)."""
        ...


def inflate(data: bytes, limit: int) -> bytes:
    """The content of a (possibly multi-member) gzip stream, refusing more than `limit` bytes of it.

    Inflated in pieces of `_CHUNK` bytes joined once: a growing `bytearray` and its final copy left ~35 MB
    of a 50 MB content behind in the allocator's heap for the rest of the run.
    """
    pieces: list[bytes] = []
    total = 0
    rest = data
    while rest:
        inflater = zlib.decompressobj(wbits=31)
        pending = rest
        while not inflater.eof:
            try:
                piece = inflater.decompress(pending, min(_CHUNK, limit + 1 - total))
            except zlib.error as e:
                raise NormalizationError(GZIP_BROKEN, f"corrupt gzip data: {e}") from None
            total += len(piece)
            if total > limit:
                raise NormalizationError(TOO_LARGE, f"inflates to more than the {limit}-byte text limit") from None
            pieces.append(piece)
            pending = inflater.unconsumed_tail
            if not piece and not pending:  # no output and no input left, before the end of the stream
                raise NormalizationError(GZIP_BROKEN, "truncated gzip data: the stream ends before its last block")
        rest = inflater.unused_data.lstrip(b"\x00")  # members may be followed by zero padding
    return b"".join(pieces)


class GzipText:
    """A gzip-compressed source: inflate, then the inner pipeline (`inner` fixed on a re-run, else sniffed)."""

    def __init__(
        self,
        inner: BytesPipeline | None = None,
        max_bytes: int = MAX_TEXT_BYTES,
        *,
        sniff: Callable[[str], BytesPipeline | None] | None = None,
    ) -> None:
        self.inner = inner
        self.sniff = sniff  # the text pipeline for a sniffed media type (the registry's), when `inner` is None
        self.max_bytes = max_bytes
        self.name = PREFIX + (inner.name if inner is not None else "text")
        self.version = f"{inner.version}+{VERSION_TAG}" if inner is not None else VERSION_TAG

    def accepts(self, media_type: str) -> bool:
        """gzip files."""
        return media_type in ACCEPTED

    def normalize(self, source_path: Path) -> NormalizedOutput:
        """The view of the content of the gzip file at `source_path`."""
        return self.normalize_bytes(read_limited(source_path, self.max_bytes))

    def normalize_bytes(self, data: bytes) -> NormalizedOutput:
        """The same view from the compressed bytes in memory.

        The inner type is sniffed from the content alone, never from a file name: registration may read
        the stored blob (named by its digest), and the same bytes must give the same view either way.
        """
        content = [inflate(data, self.max_bytes)]
        del data
        inner = self.inner if self.inner is not None else _sniffed_inner(content[0], self.sniff)
        # Handed on, not kept: the inner pipeline lets go of the bytes once it has decoded them.
        output = inner.normalize_bytes(content.pop())
        if output is None:  # a pipeline that reads files only (a gzipped PDF): no view of the content
            raise NormalizationError(
                GZIP_NOT_TEXT, f"the gzip content is for {inner.name}, which reads files only", note=True
            )
        recorded = output.pipeline or inner.name
        return NormalizedOutput(output.data, output.media_type, pipeline=PREFIX + recorded, notes=output.notes)


def _sniffed_inner(content: bytes, sniff: Callable[[str], BytesPipeline | None] | None) -> BytesPipeline:
    from ingest.sources.media import sniff_content

    media_type = sniff_content(content[:8192])
    inner = None if sniff is None else sniff(media_type)
    if inner is None:  # neither text nor a gzip inside a gzip, nor a PDF (read from files only)
        raise NormalizationError(GZIP_NOT_TEXT, f"the gzip content is {media_type}: no text view", note=True)
    return inner
