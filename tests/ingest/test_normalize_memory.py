"""Huge one-line sources: the pipelines and the heuristic's line reader hold a long line a bounded number of
times (tracemalloc's exact count of what the code allocates, not a timing), and their piecewise forms are
the same functions as the plain ones they replace. Whole-process figures: `bench/memory.py`."""

from __future__ import annotations

import gzip
import re
import tracemalloc
from collections.abc import Callable

import pytest

from brain.identity import BlockId
from ingest.normalize import NormalizationError
from ingest.normalize import gzip_text, html_text, man_text
from ingest.normalize.html_text import HtmlText, html_to_text
from ingest.normalize.man_text import ManText, man_to_text, unescape
from ingest.proposers import emit, extraction, titles
from ingest.proposers.base import SourceText

HTML_SENTENCE = (
    "The <b>cache{0}</b> is a <a href='https://example.org/{0}'>node</a> that keeps <code>data</code> close. "
)
ROFF_SENTENCE = "The \\fBcache{0}\\fR is a \\fInode\\fP (\\fChttps://example.org/{0}\\fP) keeps \\f(CWdata\\fP  close. "
MD_SENTENCE = "The **cache{0}** is a [node](https://example.org/{0}) that keeps `data` close. "


def _peak_per_byte(run: Callable[[bytes], object], data: bytes) -> float:
    """What `run(data)` allocates at its peak, per byte of `data` (which the caller already holds)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run(data)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    return peak / len(data)


def test_a_one_line_html_page_is_not_held_as_millions_of_pieces() -> None:
    page = (
        "<html><body><p>" + "".join(HTML_SENTENCE.format(i) for i in range(12_000)) + "</p></body></html>\n"
    ).encode()
    # The page's text, the view's lines and the view: ~1.6x here. A str per parsed piece would be ~6x.
    assert _peak_per_byte(lambda data: HtmlText(max_bytes=len(data)).normalize_bytes(data), page) < 2.5


def test_a_one_line_man_page_is_not_split_into_a_list_of_words() -> None:
    page = (".TH DEMO 1\n.SH DESCRIPTION\n" + "".join(ROFF_SENTENCE.format(i) for i in range(12_000)) + "\n").encode()
    # ~2x here; splitting the line into words (and `re.sub` listing every escape) took 9.4x.
    assert _peak_per_byte(lambda data: ManText(max_bytes=len(data)).normalize_bytes(data), page) < 3.0


def test_line_pieces_joined_in_groups_give_the_same_view(monkeypatch: pytest.MonkeyPatch) -> None:
    pages = [
        "<p>a  b <b>c</b>\n d</p><ul><li>one<li>two</ul><pre>\n x \n\n y </pre><table><tr><td>1<td>2</table>",
        "<h2>T</h2><p>" + "".join(HTML_SENTENCE.format(i) for i in range(50)) + "</p>  <p> </p>",
    ]
    expected = [html_to_text(page) for page in pages]
    monkeypatch.setattr(html_text, "_PIECES", 2)
    assert [html_to_text(page) for page in pages] == expected


def _escapes_and_continuations() -> list[str]:
    return [
        ".TH A 1\n.SH NAME\na \\- b\n.SH DESCRIPTION\nsome \\fBbold\\fR text\\\ncontinued \\\\\nnext\n\n",
        "one\\\ntwo\\\n",  # ends inside a continuation
        "x\\\n\\\n",  # continuations of nothing
        "text \\(em dash \\[u00E9] \\*(Tm \\e \\\" a comment\n\n\nmore",
        "",
        "\n",
    ]


def test_grouped_unescaping_and_the_line_reader_give_the_same_view(monkeypatch: pytest.MonkeyPatch) -> None:
    line = "".join(ROFF_SENTENCE.format(i) for i in range(300))
    pages = _escapes_and_continuations()
    expected_line = man_text._ESCAPE.sub(man_text._resolve, line)
    expected = [man_to_text(page) for page in pages]
    monkeypatch.setattr(man_text, "_LONG_LINE", 0)  # every line is unescaped in groups ...
    monkeypatch.setattr(man_text, "_GROUP", 3)  # ... of three pieces
    monkeypatch.setattr(man_text, "_SPLIT_BELOW", 0)  # and every page is cut line by line
    assert unescape(line) == expected_line
    assert [man_to_text(page) for page in pages] == expected


@pytest.mark.parametrize("split_below", [man_text._SPLIT_BELOW, 0])  # split at once, or cut one by one
@pytest.mark.parametrize("source", _escapes_and_continuations())
def test_the_line_reader_is_split_then_joined(source: str, split_below: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(man_text, "_SPLIT_BELOW", split_below)
    expected: list[str] = []
    pending = ""
    for line in source.split("\n"):  # the plain form: split, then join continued lines
        if (len(line) - len(line.rstrip("\\"))) % 2 == 1:
            pending += line[:-1]
            continue
        expected.append(pending + line)
        pending = ""
    if pending:
        expected.append(pending)
    assert list(man_text._SourceLines(source)) == expected


def test_inflate_in_pieces_keeps_its_limits_at_every_piece_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gzip_text, "_CHUNK", 7)
    content = b"".join(b"line %d of the content\n" % i for i in range(200))
    stream = gzip.compress(content, mtime=0)
    assert gzip_text.inflate(stream + gzip.compress(b"more", mtime=0) + b"\0\0", 10_000) == content + b"more"
    assert gzip_text.inflate(stream, len(content)) == content  # exactly at the limit
    with pytest.raises(NormalizationError) as caught:
        gzip_text.inflate(stream, len(content) - 1)
    assert caught.value.code == "too-large"
    for cut in (10, len(stream) // 2, len(stream) - 8, len(stream) - 1):  # header, body, trailer
        with pytest.raises(NormalizationError) as caught:
            gzip_text.inflate(stream[:cut], 10_000)
        assert caught.value.code == "gzip-broken", cut


def test_a_long_text_is_read_in_lines_without_their_trailing_whitespace() -> None:
    text = "".join(MD_SENTENCE.format(i) for i in range(20_000))  # > SPLIT_BELOW, one line, ends in a space
    assert len(text) >= emit.SPLIT_BELOW
    lines = list(emit.lines(text + "\n", trailing_space=False))
    assert lines == [text.rstrip(), ""]
    assert list(emit.lines(text + "\n")) == [text, ""]
    unspaced = text.rstrip()
    assert next(emit.lines(unspaced, trailing_space=False)) is unspaced  # the whole text: no copy
    many = "a \n\tb\t\n\x0c\n" + text
    assert list(emit.lines(many, trailing_space=False)) == [line.rstrip() for line in many.split("\n")]


def test_the_long_text_path_finds_what_the_split_path_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    # Trailing whitespace, a list, fences and headings, across the >1 MiB line-by-line reader ...
    block = "# Guide  \n\nA widget is a small tool.   \n\n## Steps\n\n1. Open it \n2. Close it\t\n\n```\ncode \n```\n"
    text = "\n".join(block.replace("widget", f"widget{i}") for i in range(12_000))
    source = SourceText.of(BlockId("0" * 64), "text/markdown", text)
    allowed = frozenset({"semantic", "procedural", "episodic"})
    assert len(text) >= emit.SPLIT_BELOW
    streamed = extraction.extract_counted(source, allowed)
    # ... and through `str.split`: both readers of the threshold take the short path (patching a name that
    # only re-exports the constant would compare the streamed path with itself)
    monkeypatch.setattr(emit, "SPLIT_BELOW", len(text) + 1)
    monkeypatch.setattr(titles, "SPLIT_BELOW", len(text) + 1)
    assert extraction.extract_counted(source, allowed) == streamed
    assert streamed[1] > 0 and all(re.fullmatch(r"L\d+(-L\d+)?", c.locator or "") for c in streamed[0])
