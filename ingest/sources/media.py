"""Name a source's media type from its extension and its first bytes.

Magic bytes win over the extension (a PDF named `.txt` is a PDF). Text is text in any encoding: UTF-8,
a byte-order mark (UTF-16/32), or a legacy charset `charset-normalizer` recognizes (the pipeline decodes
it and records which). A file whose extension promises text but whose first 8 KiB are none of these (NUL
bytes without a BOM, or bytes no charset fits) is `application/octet-stream` with a `binary-content`
note: it is still registered (the bytes are evidence) but never normalized as text. reStructuredText is
`text/x-rst`; a roff manual page (`ls.1`, or text that starts like one) is `text/troff`. Results are bare
lowercase `type/subtype` (§3.1). A `--media-type` override is the caller's business: it skips this
module entirely.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from brain.frozen import FrozenModel
from ingest.sources.problems import BINARY_CONTENT, SourceProblem

HEAD_SIZE = 8192
OCTET_STREAM = "application/octet-stream"

_BY_EXTENSION = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".mdown": "text/markdown",
    ".mkd": "text/markdown",
    ".txt": "text/plain",
    ".text": "text/plain",
    ".log": "text/plain",
    ".rst": "text/x-rst",
    ".rest": "text/x-rst",
    ".man": "text/troff",
    ".roff": "text/troff",
    ".html": "text/html",
    ".htm": "text/html",
    ".xhtml": "text/html",
    ".json": "application/json",
    ".csv": "text/csv",
    ".pdf": "application/pdf",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".zip": "application/zip",
    ".gz": "application/gzip",
}

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
)

_TEXTUAL = frozenset(
    {"text/markdown", "text/plain", "text/html", "text/csv", "application/json", "text/x-rst", "text/troff"}
)
_MAN_SECTION = re.compile(r"\.[1-9][a-z]{0,8}")  # ls.1, printf.3, Foo::Bar.3pm, ssh_config.5
_ROFF_START = (b'.\\"', b"'\\\"", b".TH ", b".Dd ", b".Dt ", b".so ", b'.\\" ')


class MediaGuess(FrozenModel):
    """A detected media type, plus a note code when the extension lied about the content."""

    media_type: str
    note: str | None = None
    detail: str | None = None

    def problem(self, relpath: str) -> SourceProblem | None:
        """The note as a reportable `SourceProblem` (kind `note`) for the source at `relpath`, if any."""
        if self.note is None:
            return None
        return SourceProblem(relpath=relpath, code=self.note, detail=self.detail or self.note)


def read_head(path: Path, size: int = HEAD_SIZE) -> bytes:
    """The first `size` bytes of `path` (fewer for a short file)."""
    with open(path, "rb") as handle:
        return handle.read(size)


def looks_like_utf8_text(head: bytes) -> bool:
    """No NUL byte and valid UTF-8, tolerating a multi-byte character cut off at the end of `head`."""
    if b"\x00" in head:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return True


def looks_like_text(head: bytes) -> bool:
    """Text in some encoding: a BOM, valid UTF-8 (a character cut off at the end tolerated), or a detected charset."""
    if looks_like_utf8_text(head):
        return True
    from ingest.normalize.charset import looks_like_text as in_some_charset

    return in_some_charset(head)


def _sniff_text(head: bytes) -> str:
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:64]
    if start.lower().startswith((b"<!doctype html", b"<html")):
        return "text/html"
    if start.startswith(_ROFF_START):
        return "text/troff"
    if start[:1] in (b"{", b"[") and b'"' in start:
        return "application/json"  # data, not prose (e.g. inside a gzip file)
    return "text/plain"


def sniff_content(head: bytes) -> str:
    """The media type of content known only by its first bytes (e.g. inside a gzip file)."""
    for magic, media_type in _MAGIC:
        if head.startswith(magic):
            return media_type
    return _sniff_text(head) if looks_like_text(head) else OCTET_STREAM


def sniff(path: Path, head: bytes) -> MediaGuess:
    """The media type of a file named `path` whose first bytes are `head`."""
    for magic, media_type in _MAGIC:
        if head.startswith(magic):
            return MediaGuess(media_type=media_type)
    suffix = Path(path).suffix.lower()
    claimed = _BY_EXTENSION.get(suffix)
    if claimed is None and _MAN_SECTION.fullmatch(suffix) and head.lstrip()[:1] in (b".", b"'"):
        claimed = "text/troff"
    textual = looks_like_text(head)
    if claimed is None:
        return MediaGuess(media_type=_sniff_text(head) if textual else OCTET_STREAM)
    if claimed in _TEXTUAL and not textual:
        reason = "NUL bytes" if b"\x00" in head else "bytes no text encoding fits"
        return MediaGuess(
            media_type=OCTET_STREAM,
            note=BINARY_CONTENT,
            detail=f"named like {claimed} but the first {HEAD_SIZE} bytes hold {reason}; registered as bytes",
        )
    return MediaGuess(media_type=claimed)


def detect_media_type(path: Path, head_bytes: bytes) -> str:
    """The bare lowercase `type/subtype` for `path` given its first bytes (see `sniff` for the note)."""
    return sniff(path, head_bytes).media_type
