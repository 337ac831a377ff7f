"""The scan behind the `heuristic` proposer (see `ingest.proposers.heuristic` for what it finds): the
candidates of one source, and the notes that explain a capped or empty answer. Pure functions of the text.
"""

from __future__ import annotations

from collections.abc import Iterator

from ingest.proposers import rules
from ingest.proposers.base import PAGE_BREAK, SourceText
from ingest.proposers.candidates import Candidate
from ingest.proposers.changelogs import reader_for
from ingest.proposers.emit import MAX_CANDIDATES_PER_SOURCE, MAX_COUNTED, CountingDone, Seen
from ingest.proposers.emit import lines as _lines
from ingest.proposers.formats import classifier_for
from ingest.proposers.notes import CAPPED, NO_CANDIDATES
from ingest.proposers.scan import Document
from ingest.proposers.titles import core_metadata, document_title

__all__ = ["cap_notes", "empty_notes", "extract", "extract_counted", "proposal_notes"]


def proposal_notes(source: SourceText, kept: int, total: int) -> tuple[str, ...]:
    """What to report about one answer: `proposals-capped` and `no-candidates` (with the reason)."""
    return cap_notes(kept, total) + empty_notes(source, total)


def cap_notes(kept: int, total: int) -> tuple[str, ...]:
    """The `proposals-capped` note when the cap left candidates out, else nothing."""
    if total <= kept:
        return ()
    found = f"more than {MAX_COUNTED}" if total > MAX_COUNTED else str(total)
    return (f"{CAPPED}: kept the first {kept} of {found} candidates (at most {MAX_CANDIDATES_PER_SOURCE} per source)",)


def empty_notes(source: SourceText, total: int) -> tuple[str, ...]:
    """The `no-candidates` note (with the reason) when the source gave nothing."""
    if total:
        return ()
    if not source.text.strip():
        return (f"{NO_CANDIDATES}: the normalized view is empty",)
    lines = source.text.count("\n") + 1
    return (f"{NO_CANDIDATES}: nothing recognized in {lines} lines ({source.media_type})",)


def _pages(text: str) -> Iterator[str]:
    """The pages of paged text (split on `\\f`), one at a time: a split would copy the whole text at once."""
    start = 0
    while True:
        end = text.find(PAGE_BREAK, start)
        if end == -1:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def extract(source: SourceText, allowed: frozenset[str]) -> list[Candidate]:
    """The candidates the heuristic finds in `source`, in text order (`allowed` holds memory type names)."""
    return extract_counted(source, allowed)[0]


def extract_counted(source: SourceText, allowed: frozenset[str]) -> tuple[list[Candidate], int]:
    """The first `MAX_CANDIDATES_PER_SOURCE` candidates of `extract`, and how many distinct ones it found in all."""
    out: list[Candidate] = []
    seen: Seen = set()
    read = reader_for(source.text) or _extract_into
    try:
        read(source, allowed, out, seen)
    except CountingDone:
        pass
    return out, len(seen)


def _extract_into(source: SourceText, allowed: frozenset[str], out: list[Candidate], seen: Seen) -> None:
    lines_of = classifier_for(source.media_type)
    # A package's core metadata names the package: that is the title its description's blocks sit under.
    metadata = core_metadata(source.text) if source.text.startswith("Metadata-Version:") else {}
    title = metadata["Name"][1] if "Name" in metadata else document_title(source.text, lines_of.MARKDOWN_TITLES)
    if title is not None and rules.is_licence_title(title):
        return  # a licence's text is terms and conditions, not knowledge about the project
    document = Document.titled(title)
    fences = lines_of.FENCES  # reST has none (`~~~~` underlines titles); plain text may quote Markdown's ```
    pages = _pages(source.text) if source.page_starts is not None else iter((source.text,))
    for index, page_text in enumerate(pages):
        page = index + 1 if source.page_starts is not None else None
        scan = lines_of(source, allowed, page, out, seen, doc=document)
        if index == 0 and metadata:
            scan.package_summary(metadata)
        in_fence = False
        for number, raw in enumerate(_lines(page_text, trailing_space=False), start=1):
            if fences and ("`" in raw or "~" in raw) and raw.lstrip().startswith(fences):
                in_fence = not in_fence
                scan.finish()
                continue
            if not in_fence:
                scan.line(number, raw)
        scan.finish()
