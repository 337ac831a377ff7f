"""Child process of the `pdf-text` pipeline: extract one PDF's text under an address-space limit.

Run as a script (not imported), so a hostile PDF can exhaust only this process:
    python -P -s _pdf_worker.py <pdf path> <max output bytes> <address-space bytes> <cpu seconds>
Exit 0: stdout holds the view (UTF-8, pages joined by a form feed). Exit 3: stdout holds
`{"code": ..., "detail": ...}`. Anything else is a crash the parent reports itself.
Standard library and pypdf only: this file must not import the `brain` or `ingest` packages.
"""

from __future__ import annotations

import json
import resource
import sys
import unicodedata

EXIT_FAILED = 3


def _fail(code: str, detail: str) -> None:
    sys.stdout.buffer.write(json.dumps({"code": code, "detail": detail[:500]}).encode())
    sys.stdout.flush()
    sys.exit(EXIT_FAILED)


def _page_text(text: str) -> str:
    # The form feed is the page separator, so a page may not contain one; line endings as in text-nfc.
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")
    return unicodedata.normalize("NFC", text)


def _extract(path: str) -> list[str]:
    import pypdf
    from pypdf.errors import DependencyError, FileNotDecryptedError

    reader = pypdf.PdfReader(path, strict=False)
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")
        except (DependencyError, NotImplementedError) as e:
            _fail("pdf-encrypted", f"encrypted with an unsupported scheme: {e}")
        if not opened:
            _fail("pdf-encrypted", "encrypted, and the empty password does not open it")
    try:
        return [_page_text(page.extract_text() or "") for page in reader.pages]
    except FileNotDecryptedError as e:
        _fail("pdf-encrypted", str(e))
        raise  # unreachable: _fail exits


def main() -> None:
    path, max_output, address_space, cpu_seconds = sys.argv[1], *map(int, sys.argv[2:5])
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    try:
        pages = _extract(path)
    except MemoryError:
        _fail("memory", f"exceeded the {address_space}-byte address-space limit")
    except RecursionError:
        _fail("pdf-broken", "object nesting too deep")
    except Exception as e:  # noqa: BLE001 - pypdf raises many unrelated types on malformed input
        _fail("pdf-broken", f"{type(e).__name__}: {e}")
    if not any(page.strip() for page in pages):
        _fail("no-text", f"none of the {len(pages)} pages has extractable text")
    data = "\f".join(pages).encode("utf-8", "replace")  # lone surrogates from odd fonts become "?"
    if len(data) > max_output:
        _fail("too-large", f"extracted text exceeds {max_output} bytes")
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
