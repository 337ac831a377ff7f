"""Which character encoding a text source is in, and its decoded text — never a guess passed off as UTF-8.

Order (the first that applies wins):
1. a byte-order mark (UTF-8, UTF-16 LE/BE, UTF-32 LE/BE);
2. valid UTF-8 (strict): UTF-8 — also when a declaration says otherwise, reported as `charset-mismatch`
   (bytes that form valid multi-byte UTF-8 are practically never Latin-1 or Windows text);
3. a declaration in the document (HTML `<meta charset>` / `http-equiv`, an XML declaration) whose codec
   decodes the bytes strictly; HTML's `iso-8859-1`/`ascii` labels mean windows-1252 (WHATWG Encoding);
4. `charset-normalizer`'s best guess for undeclared legacy text (`charset-mismatch` when a declaration
   failed to decode); nothing plausible is a `decode-error`.

The codec used is returned so the pipeline can record it (`;charset=<codec>` on the pipeline name) and a
re-run decodes with exactly that codec, without detecting again: views stay deterministic.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from ingest.normalize.base import DECODE_ERROR, NormalizationError

UTF8 = "utf-8"
CHARSET_MISMATCH = "charset-mismatch"
DECLARATION_WINDOW = 1024  # as the HTML prescan: a declaration must come early
DETECTION_SAMPLE = 256 * 1024

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_META = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{1,40})""", re.IGNORECASE)
_XML = re.compile(rb"""<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.:-]{1,40})["']""", re.IGNORECASE)
_TIE = 1.0
_PREFERRED = ("cp1252", "iso8859-1")
_WINDOWS_1252_LABELS = frozenset({"iso8859-1", "ascii"})  # codec names of iso-8859-1, us-ascii, ...


@dataclass
class Decoded:
    """Decoded text, the codec that decoded it, and a `charset-mismatch` note when a declaration lied."""

    text: str
    charset: str
    note: str | None = None

    def take(self) -> str:
        """The text, handed on once: this object lets go of it, so a 50 MB page is not held twice over
        while it is parsed into its view."""
        text, self.text = self.text, ""
        return text


def codec_name(label: str) -> str | None:
    """Python's canonical codec name for an encoding label (`ISO-8859-1` → `latin-1`), or None."""
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def bom(data: bytes) -> tuple[str, int] | None:
    """`(codec, BOM length)` when `data` starts with a byte-order mark."""
    for mark, codec in _BOMS:
        if data.startswith(mark):
            return codec, len(mark)
    return None


def declared(data: bytes) -> str | None:
    """The codec an HTML `<meta>` or XML declaration in the first KiB names (None if absent or unknown)."""
    head = data[:DECLARATION_WINDOW]
    found = _XML.search(head) or _META.search(head)
    return codec_name(found[1].decode("ascii")) if found else None


def decode_as(data: bytes, charset: str) -> str:
    """`data` decoded strictly with `charset` (a BOM of that encoding dropped); `decode-error` otherwise."""
    marked = bom(data)
    skip = marked[1] if marked is not None and codec_name(marked[0]) == codec_name(charset) else 0
    try:
        # Decoded from a view past the mark: slicing `data` would copy it whole first.
        return str(memoryview(data)[skip:], charset)
    except (UnicodeDecodeError, LookupError) as e:
        where = f" at byte {e.start}" if isinstance(e, UnicodeDecodeError) else ""
        raise NormalizationError(DECODE_ERROR, f"not valid {charset}{where}") from None


def decode(data: bytes, *, html: bool = False) -> Decoded:
    """The text of `data` under the rules in this module's docstring."""
    marked = bom(data)
    if marked is not None:
        return Decoded(decode_as(data, marked[0]), marked[0])
    claimed = declared(data) if html or data[:5] == b"<?xml" else None
    try:
        text = data.decode(UTF8)
    except UnicodeDecodeError as e:
        # Only the offset is kept: the error holds a copy of all of `data`, and its traceback this frame
        # (a cycle that kept both, 100 MB for a 50 MB legacy file, until the next garbage collection).
        bad_byte = e.start
    else:
        if claimed not in (None, UTF8) and not data.isascii():
            return Decoded(
                text, UTF8, f"{CHARSET_MISMATCH}: declared {claimed}, but the bytes are valid UTF-8; read as UTF-8"
            )
        return Decoded(text, UTF8)
    if claimed is not None and claimed != UTF8:
        for codec in ("cp1252", claimed) if html and claimed in _WINDOWS_1252_LABELS else (claimed,):
            try:
                return Decoded(data.decode(codec), codec)
            except UnicodeDecodeError:
                continue
    guess = detect(data)
    if guess is None:
        raise NormalizationError(
            DECODE_ERROR, f"invalid UTF-8 at byte {bad_byte} and no other encoding fits"
        ) from None
    try:
        text = data.decode(guess)
    except UnicodeDecodeError:
        raise NormalizationError(DECODE_ERROR, f"invalid UTF-8 at byte {bad_byte}; not {guess} either") from None
    note = None
    if claimed is not None:
        note = f"{CHARSET_MISMATCH}: declared {claimed}, but the bytes are not; detected {guess}"
    return Decoded(text, guess, note)


def detect(data: bytes) -> str | None:
    """`charset-normalizer`'s codec for legacy text (a sample of the start), or None when nothing fits.

    The detector often cannot tell the single-byte Windows/ISO code pages apart (same "chaos" for cp1250,
    cp1252, cp1257 on French or German prose); on such a tie windows-1252 wins, the commonest of them.
    """
    # Imported on first use: most sources are UTF-8 and never need it.
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data[:DETECTION_SAMPLE]))
    if not matches:
        return None
    least = min(match.percent_chaos for match in matches)
    tied = {codec_name(match.encoding) for match in matches if match.percent_chaos <= least + _TIE}
    for preferred in _PREFERRED:
        if preferred in tied:
            return preferred
    best = min(matches, key=lambda match: match.percent_chaos)
    return codec_name(best.encoding)


def looks_like_text(head: bytes) -> bool:
    """Whether the first bytes of a file are text in some encoding (a BOM, UTF-8, or a detected charset).

    The decoded head must read as text: no control characters but tab, newline, carriage return and form
    feed (bytes that happen to start with a BOM, or that a detector maps to *some* code page, are not).
    """
    marked = bom(head)
    if marked is None and b"\x00" in head:
        return False
    codec = marked[0] if marked is not None else UTF8
    try:
        text = codecs.getincrementaldecoder(codec)("strict").decode(head[marked[1] if marked else 0 :], final=False)
    except UnicodeDecodeError:
        if marked is not None or not any(space in head for space in (b" ", b"\n", b"\t")):
            return False  # prose has spaces; three odd bytes fit some code page but are not text
        guess = detect(head)
        if guess is None:
            return False
        try:
            text = codecs.getincrementaldecoder(guess)("strict").decode(head, final=False)
        except UnicodeDecodeError:
            return False
    if not text:
        return False
    return not any(ord(c) < 32 and c not in "\t\n\r\f" or 0x7F <= ord(c) < 0xA0 for c in text)


def parameterized(name: str, charset: str) -> str | None:
    """The record name of a view decoded with `charset`: the bare name for UTF-8, else `name;charset=<codec>`."""
    return None if charset == UTF8 else f"{name};charset={charset}"


def read_text(data: bytes, charset: str | None, *, html: bool = False) -> Decoded:
    """`data` decoded with a recorded `charset` (a re-run), else detected as in `decode`."""
    if charset is not None:
        return Decoded(decode_as(data, charset), charset)
    return decode(data, html=html)
