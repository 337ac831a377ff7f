"""Media-type detection: extensions, magic bytes, and text-named binary junk."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.sources import detect_media_type, read_head, sniff


@pytest.mark.parametrize(
    ("name", "head", "expected"),
    [
        ("notes.md", b"# Title\n", "text/markdown"),
        ("NOTES.MARKDOWN", b"# Title\n", "text/markdown"),
        ("log.txt", b"2026-03-14 09:12 deploy\n", "text/plain"),
        ("app.log", b"plain\n", "text/plain"),
        ("page.html", b"<p>hi</p>", "text/html"),
        ("page.HTM", b"<p>hi</p>", "text/html"),
        ("data.json", b'{"a": 1}', "application/json"),
        ("paper.pdf", b"%PDF-1.4\n", "application/pdf"),
        ("paper.txt", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3", "application/pdf"),  # magic wins
        ("pic.png", b"\x89PNG\r\n\x1a\n\x00\x00", "image/png"),
        ("pic.bin", b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
        ("a.zip", b"PK\x03\x04\x14\x00", "application/zip"),
        ("README", b"just words\n", "text/plain"),
        ("index", b"\xef\xbb\xbf<!DOCTYPE html><html>", "text/html"),
        ("blob", b"\x00\x01\x02\x03", "application/octet-stream"),
        ("unknown.xyz", b"\xff\xfe\xfd", "application/octet-stream"),
    ],
)
def test_detect_media_type(name: str, head: bytes, expected: str) -> None:
    assert detect_media_type(Path(name), head) == expected
    assert sniff(Path(name), head).note is None


@pytest.mark.parametrize("head", [b"hello\x00world", b"\x80\x81\x82", b"\xff\xfe\x00\xd8 lone surrogate"])
def test_text_named_binary_is_octet_stream_with_a_note(head: bytes) -> None:
    guess = sniff(Path("junk.txt"), head)
    assert guess.media_type == "application/octet-stream"
    assert guess.note == "binary-content"
    assert guess.detail is not None and "text/plain" in guess.detail
    problem = guess.problem("junk.txt")
    assert problem is not None and (problem.code, problem.kind) == ("binary-content", "note")
    assert sniff(Path("ok.txt"), b"fine").problem("ok.txt") is None


def test_multibyte_character_cut_at_the_head_boundary_is_still_text() -> None:
    head = ("é" * 4096).encode("utf-8")[:8191]  # ends mid-character
    assert sniff(Path("a.txt"), head).media_type == "text/plain"


def test_read_head_reads_at_most_8_kib(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"a" * 10_000)
    assert len(read_head(path)) == 8192
    path.write_bytes(b"abc")
    assert read_head(path) == b"abc"


def test_bad_fixtures_are_registered_as_bytes() -> None:
    path = Path(__file__).resolve().parents[2] / "fixtures" / "bad" / "junk.txt"
    guess = sniff(path, read_head(path))
    assert (guess.media_type, guess.note) == ("application/octet-stream", "binary-content")


@pytest.mark.parametrize(
    ("name", "head", "expected"),
    [
        ("latin1.txt", "Café crème, naïve résumé.\n".encode("latin-1"), "text/plain"),
        ("utf16.txt", "A note in UTF-16.\n".encode("utf-16"), "text/plain"),
        ("guide.rst", b"Guide\n=====\n", "text/x-rst"),
        ("ls.1", b'.\\" comment\n.TH LS 1\n', "text/troff"),
        ("ssh_config.5", b".Dd $Mdocdate$\n.Dt SSH_CONFIG 5\n", "text/troff"),
        ("version.1", b"1.2.3\n", "text/plain"),  # a numbered suffix alone is not a manual page
        ("page", b'.TH FOO 8 "2026-03-14"\n', "text/troff"),
    ],
)
def test_text_in_other_encodings_and_formats(name: str, head: bytes, expected: str) -> None:
    assert sniff(Path(name), head) == sniff(Path(name), head).model_copy(update={"media_type": expected, "note": None})
