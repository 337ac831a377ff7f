"""What a normalization pipeline is, what it returns, and how it fails.

A pipeline turns a source file into a deterministic UTF-8 text view: the same input bytes and the same
`version` give byte-identical output in any process. `version` therefore names every library whose
behaviour shapes the output (`unicodedata`'s Unicode version decides NFC; pypdf decides PDF text), so a
`normalization` record says exactly what produced a view, and `brain verify --deep` can re-run it.

Shared text rules (all pipelines): strict UTF-8 input; a leading UTF-8 BOM is dropped (an encoding
marker, not content; the original blob keeps it); CRLF and lone CR become LF; the result is NFC. A text
file over `MAX_TEXT_BYTES` is not read at all (`too-large`): normalization holds the whole text in
memory, and NFC cannot be applied chunk by chunk without care at every boundary.
"""

from __future__ import annotations

import os
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from brain.errors import BrainError

MAX_TEXT_BYTES = 64 << 20
UNICODE_TAG = f"unicode-{unicodedata.unidata_version}"
PYTHON_TAG = f"py{sys.version_info.major}.{sys.version_info.minor}"
VIEW_MEDIA_TYPE = "text/plain"

# Failure codes (stable; reported per source, never fatal to a whole ingest run).
DECODE_ERROR = "decode-error"
TOO_LARGE = "too-large"
UNREADABLE = "unreadable"
VANISHED = "vanished"
NO_TEXT = "no-text"
PDF_ENCRYPTED = "pdf-encrypted"
PDF_BROKEN = "pdf-broken"
TIMEOUT = "timeout"
MEMORY = "memory"


class NormalizationError(BrainError):
    """A pipeline could not produce a view of one source; the source is registered without one."""

    def __init__(self, code: str, detail: str, *, note: bool = False) -> None:
        self.code = code
        self.detail = detail
        self.note = note  # True: no view by design (e.g. a gzip of binary data), reported as a note
        super().__init__(f"normalization failed ({code}): {detail}")


@dataclass(frozen=True)
class NormalizedOutput:
    """The view bytes (UTF-8) and their media type.

    `pipeline` is the name the `normalization` record gives when it is not the pipeline's own: a composed
    or parameterized one (`gzip+man-text`, `text-nfc;charset=cp1252`) that `get_pipeline` resolves back to
    a pipeline producing the same bytes. `notes` are `code: detail` lines to report (never failures).
    """

    data: bytes
    media_type: str = VIEW_MEDIA_TYPE
    pipeline: str | None = None
    notes: tuple[str, ...] = ()


@runtime_checkable
class Pipeline(Protocol):
    """A deterministic source-to-text transform, named and versioned for the `normalization` record."""

    name: str
    version: str

    def accepts(self, media_type: str) -> bool:
        """True if this pipeline can normalize sources of `media_type`."""
        ...

    def normalize(self, source_path: Path) -> NormalizedOutput:
        """The view of the file at `source_path`; raises `NormalizationError` with a code."""
        ...

    def normalize_bytes(self, data: bytes) -> NormalizedOutput | None:
        """The same view from source bytes already in memory, or None when this pipeline reads files only.

        The default is None: registration then stores the bytes first and calls `normalize` on the stored
        blob. A pipeline that parses in-process should override it: a small source is then read once and
        its blob stored in the background.
        """
        return None


class TextPipeline(Pipeline):
    """A pipeline that parses text in-process: `accepted` media types, a size limit, an optional codec.

    `charset` is the codec a re-run was recorded with (`text-nfc;charset=cp1252`); None detects it.
    Subclasses implement `normalize_bytes`, calling `check_size` first.
    """

    accepted: frozenset[str] = frozenset()

    def __init__(self, max_bytes: int = MAX_TEXT_BYTES, charset: str | None = None) -> None:
        self.max_bytes = max_bytes
        self.charset = charset

    def accepts(self, media_type: str) -> bool:
        """One of the media types this pipeline reads."""
        return media_type in self.accepted

    def normalize(self, source_path: Path) -> NormalizedOutput:
        """The view of the file at `source_path`, read whole up to the limit."""
        output = self.normalize_bytes(read_limited(source_path, self.max_bytes))
        if output is None:  # a subclass that does not parse bytes in memory cannot be a text pipeline
            raise NormalizationError(UNREADABLE, f"the {self.name} pipeline defines no in-memory view")
        return output

    def check_size(self, data: bytes) -> None:
        """Refuse bytes over the limit (`normalize_bytes` calls it first, then parses `data` in its own frame,
        so a large source can be released as soon as its text is decoded)."""
        if len(data) > self.max_bytes:
            raise NormalizationError(TOO_LARGE, f"{len(data)} bytes exceeds the {self.max_bytes}-byte text limit")


def read_limited(path: Path, limit: int = MAX_TEXT_BYTES) -> bytes:
    """All bytes of `path`, refusing (before reading) a file larger than `limit`."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                raise NormalizationError(TOO_LARGE, f"{size} bytes exceeds the {limit}-byte text limit")
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise NormalizationError(VANISHED, f"{path} was deleted before it could be normalized") from None
    except OSError as e:
        raise NormalizationError(UNREADABLE, f"{path}: {e.strerror or e}") from None
    if len(data) > limit:  # it grew while we read it
        raise NormalizationError(TOO_LARGE, f"more than {limit} bytes exceeds the text limit")
    return data


def decode_utf8(data: bytes) -> str:
    """Strict UTF-8 without a leading BOM; a decode failure names the byte offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise NormalizationError(DECODE_ERROR, f"invalid UTF-8 at byte {e.start}: {e.reason}") from None


def text_view(text: str) -> bytes:
    """The shared final step: LF line endings, NFC, UTF-8."""
    # Rebound at each step, so a large text is held at most twice (the last form and the next one).
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = unicodedata.normalize("NFC", text)
    return text.encode("utf-8")
