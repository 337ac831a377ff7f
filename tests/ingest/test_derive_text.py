"""The text a proposer reads from a view: a huge one-line view is read without its trailing whitespace."""

from __future__ import annotations

from brain.identity import BlockId
from ingest.derive import ONE_LINE_AT, _text_of
from ingest.proposers.base import SourceText
from ingest.proposers.extraction import extract_counted

ALL = frozenset({"semantic", "episodic", "procedural"})


def test_only_a_huge_one_line_view_loses_its_trailing_whitespace() -> None:
    line = "The cache — a café — is a store that keeps data close. " * (ONE_LINE_AT // 50)
    huge = (line + " \n").encode()
    assert len(huge) >= ONE_LINE_AT and _text_of(huge) == line.rstrip()
    assert _text_of(b"small \n") == "small \n"  # small views are decoded as they are
    two_lines = (line + "\nsecond line \n").encode()
    assert _text_of(two_lines) == two_lines.decode()


def test_the_heuristic_finds_the_same_in_the_trimmed_text() -> None:
    text = "".join(f"The widget{i} is a small part that renders a chart. " for i in range(ONE_LINE_AT // 40)) + "\n"
    data = text.encode()
    source = BlockId.of(data)
    as_is = extract_counted(SourceText.of(source, "text/markdown", text), ALL)
    trimmed = extract_counted(SourceText.of(source, "text/markdown", _text_of(data)), ALL)
    assert as_is[1] == trimmed[1] > 0
    assert [c.model_dump() for c in as_is[0]] == [c.model_dump() for c in trimmed[0]]
