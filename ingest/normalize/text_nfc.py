"""`text-nfc`: Markdown, reStructuredText and plain text, decoded, LF line endings, NFC.

UTF-8 (with or without a BOM) is read as such; other encodings are found as `charset` describes (a BOM,
then the detector) and named on the record: `text-nfc;charset=cp1252`. `get_pipeline` turns that name back
into a pipeline that decodes with exactly that codec. An ASCII file with LF endings is its own view
(identical bytes, so the blob is shared, as in the protocol's sample brain). Version
`1+unicode-<unidata_version>`: NFC tables change between Unicode versions, so a Python with another
Unicode database is another pipeline version.
"""

from __future__ import annotations

import unicodedata
from codecs import BOM_UTF8

from ingest.normalize.base import (
    UNICODE_TAG,
    NormalizedOutput,
    TextPipeline,
    text_view,
)
from ingest.normalize.charset import UTF8, parameterized, read_text

ACCEPTED = frozenset({"text/plain", "text/markdown", "text/x-rst"})


class TextNfc(TextPipeline):
    """The `text-nfc` pipeline (`charset`: the recorded codec of a re-run; None detects it)."""

    name = "text-nfc"
    version = f"1+{UNICODE_TAG}"
    accepted = ACCEPTED

    def normalize_bytes(self, data: bytes) -> NormalizedOutput:
        """The same view from bytes already in memory (a small source read once by registration)."""
        self.check_size(data)
        if self.charset in (None, UTF8) and b"\r" not in data and not data.startswith(BOM_UTF8):
            # LF-only UTF-8 already in NFC is its own view: return the bytes, not a re-encoded copy of them
            # (a 50 MB source would otherwise be held three times over: bytes, text and view).
            if data.isascii():
                return NormalizedOutput(data)
            try:
                text = data.decode(UTF8)
            except UnicodeDecodeError:
                pass
            else:
                if unicodedata.is_normalized("NFC", text):
                    return NormalizedOutput(data)
                del text
        decoded = read_text(data, self.charset)
        del data  # a large source: only its text is needed from here on (the caller passed it, not kept it)
        notes = (decoded.note,) if decoded.note else ()
        return NormalizedOutput(
            text_view(decoded.take()), pipeline=parameterized(self.name, decoded.charset), notes=notes
        )
