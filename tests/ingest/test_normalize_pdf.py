"""`pdf-text`: the fixture PDFs, page locators, hostile and encrypted input, the child's limits."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import pypdf
import pytest

from ingest.normalize import NormalizationError, PdfText

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DESIGN = FIXTURES / "corpus" / "papers" / "cache-design.pdf"
CHECKLIST = FIXTURES / "corpus" / "papers" / "release-checklist.pdf"


def _make_fixtures():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES / "make_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _code(path: Path, **kwargs: float) -> str:
    with pytest.raises(NormalizationError) as caught:
        PdfText(**kwargs).normalize(path)  # type: ignore[arg-type]
    return caught.value.code


def test_committed_fixtures_match_the_generator() -> None:
    assert _make_fixtures().main(["--check"]) == 0


def test_fixture_pdfs_are_valid_for_strict_pypdf() -> None:
    reader = pypdf.PdfReader(DESIGN, strict=True)
    assert len(reader.pages) == 3
    assert "Consistent hashing is a scheme" in reader.pages[1].extract_text()
    assert len(pypdf.PdfReader(CHECKLIST, strict=True).pages) == 1


def test_pages_are_joined_by_form_feeds_so_page_locators_work() -> None:
    pipeline = PdfText()
    assert pipeline.name == "pdf-text"
    assert pipeline.version.startswith(f"1+pypdf-{pypdf.__version__}+unicode-")
    view = pipeline.normalize(DESIGN)
    assert view.media_type == "text/plain"
    pages = view.data.decode("utf-8").split("\f")
    assert len(pages) == 3
    assert pages[0].startswith("Lumen cache design\n")
    assert pages[1].startswith("2. Sharding\n")
    assert "1. Read the list of the 10000 most requested keys" in pages[2]  # "p.3"
    assert b"\r" not in view.data


def test_single_page_has_no_form_feed() -> None:
    data = PdfText().normalize(CHECKLIST).data
    assert b"\f" not in data and b"4. Tag the image and start the rolling deploy" in data


@pytest.mark.parametrize("name", ["truncated.pdf", "broken.pdf"])
def test_broken_pdfs(name: str) -> None:
    assert _code(FIXTURES / "bad" / name) == "pdf-broken"


def test_pdf_without_text(tmp_path: Path) -> None:
    path = tmp_path / "blank.pdf"
    path.write_bytes(_make_fixtures().build_pdf([[], []], "blank"))
    assert _code(path) == "no-text"


def _encrypted(tmp_path: Path, user_password: str) -> Path:
    writer = pypdf.PdfWriter(clone_from=CHECKLIST)
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    path = tmp_path / "encrypted.pdf"
    path.write_bytes(buffer.getvalue())
    return path


def test_encrypted_pdf_needing_a_password(tmp_path: Path) -> None:
    assert _code(_encrypted(tmp_path, "user-secret")) == "pdf-encrypted"


def test_encrypted_pdf_with_empty_user_password_is_extracted(tmp_path: Path) -> None:
    data = PdfText().normalize(_encrypted(tmp_path, "")).data
    assert data == PdfText().normalize(CHECKLIST).data


def test_wall_clock_timeout() -> None:
    assert _code(DESIGN, timeout=0.001) == "timeout"


def test_memory_limit_is_enforced_in_the_child() -> None:
    # 16 MiB of address space is too little even to import pypdf: the child fails, the parent survives.
    assert _code(DESIGN, memory_limit=16 << 20) == "memory"


def test_output_limit() -> None:
    assert _code(DESIGN, max_bytes=100) == "too-large"


def test_missing_file_is_vanished(tmp_path: Path) -> None:
    assert _code(tmp_path / "gone.pdf") == "vanished"
