"""`text-nfc` and the shared text rules."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from ingest.normalize import NormalizationError, TextNfc

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "corpus"


def _view(tmp_path: Path, data: bytes, **kwargs: int) -> bytes:
    path = tmp_path / "in.txt"
    path.write_bytes(data)
    out = TextNfc(**kwargs).normalize(path)
    assert out.media_type == "text/plain"
    return out.data


def test_name_version_and_accepted_types() -> None:
    pipeline = TextNfc()
    assert pipeline.name == "text-nfc"
    assert pipeline.version == f"1+unicode-{unicodedata.unidata_version}"
    assert pipeline.accepts("text/plain") and pipeline.accepts("text/markdown")
    assert not pipeline.accepts("text/html") and not pipeline.accepts("application/pdf")


def test_ascii_lf_markdown_is_its_own_view() -> None:
    source = CORPUS / "notes" / "architecture.md"
    assert TextNfc().normalize(source).data == source.read_bytes()


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"a\r\nb\rc\n", b"a\nb\nc\n"),
        (b"\r\r\n", b"\n\n"),
        ("cafe\u0301".encode(), "caf\u00e9".encode()),  # NFD -> NFC
        ("\ufeffhello".encode(), b"hello"),  # leading BOM dropped
        ("a\ufeffb".encode(), "a\ufeffb".encode()),  # a BOM inside the text is content
        ("\u212b".encode(), "\u00c5".encode()),  # singleton: ANGSTROM SIGN -> A WITH RING
        (b"no newline at end", b"no newline at end"),
    ],
)
def test_line_endings_nfc_and_bom(tmp_path: Path, data: bytes, expected: bytes) -> None:
    assert _view(tmp_path, data) == expected


def test_bytes_no_encoding_fits_are_a_decode_error_naming_the_offset(tmp_path: Path) -> None:
    with pytest.raises(NormalizationError) as caught:
        _view(tmp_path, b"good text then \xe9\x81\x8d\x8f\x90\x9d" * 3 + bytes(range(1, 32)) * 4)
    assert caught.value.code == "decode-error"
    assert "invalid UTF-8 at byte 18" in caught.value.detail


def test_too_large_is_refused_before_reading(tmp_path: Path) -> None:
    with pytest.raises(NormalizationError) as caught:
        _view(tmp_path, b"x" * 101, max_bytes=100)
    assert caught.value.code == "too-large"
    assert _view(tmp_path, b"x" * 100, max_bytes=100) == b"x" * 100


def test_missing_file_is_vanished(tmp_path: Path) -> None:
    with pytest.raises(NormalizationError) as caught:
        TextNfc().normalize(tmp_path / "gone.md")
    assert caught.value.code == "vanished"
