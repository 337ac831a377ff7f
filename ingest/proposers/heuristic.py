"""`heuristic`: the default proposer — offline, deterministic, fast, narrow (precision over recall).

One pass over the lines of each page (PDF text is split into pages on `\\f`), skipping fenced code (and,
in reStructuredText, literal blocks and code directives):

* Headings set the subject: Markdown `#` and setext headings; in reStructuredText and plain text also
  underlined (and overlined) titles in any adornment style, and short ALL-CAPS lines. Every derived block
  names its subject: the document's title and the nearest headings (`Title > Section > Subsection`), so
  blocks from different documents never share a label and a subject by accident.
* Definition sentences anywhere in running text ("X is a/an/the ...", "X means ...", "X refers to ...",
  "X is defined as ...", "The X is <value>", "A X is <number> ...", "X occurs when ...") and
  "Term: definition" items of bulleted lists become `semantic` blocks; a definition that ends in `:` takes
  the short list it introduces as its content. Fragments, links, badges, licence text, parameter lists and
  change-log entries are not definitions.
* A list of at least two items under a heading, a lead-in line ending in `:` or a title-like line
  becomes a `procedural` block; bulleted lists also need a procedural cue ("how to", "steps", ...). Tables
  of contents, licence conditions, flag and parameter lists are not procedures.
* A line that starts with a valid date or timestamp becomes an `episodic` block (time normalized to UTC);
  so does each dated release of a change log (Keep a Changelog, NEWS, Debian `changelog`), with its changes.

Locators are `L5-L6` (`L5` for one line), or `p.3 L2-L4` for paged text. Evidence is the source block id.
Within one source a repeated label+kind+subject (or procedure label, or time+summary) keeps the first.
A source that gives nothing says why in a `no-candidates` note.

Where things are: `titles` (the document's title), `formats` (one line classifier per format), `scan` (what
is done with each kind of line: paragraphs, lists, headings, releases), `table` (the ordered rules, each with
its examples), `rules` (the pure functions behind them, and their prefilters), `lists` (items, procedures),
`changelogs` (change-log formats of their own), `emit` (the cap and the candidates).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from brain.blocks.provenance import Producer, ProducerKind
from ingest.proposers import rules
from ingest.proposers.base import PAGE_BREAK, ProposalResult, Proposer, SourceText
from ingest.proposers.candidates import Candidate, CandidateSet, Task
from ingest.proposers.changelogs import reader_for
from ingest.proposers.emit import MAX_CANDIDATES_PER_SOURCE, MAX_COUNTED, SPLIT_BELOW, CountingDone, Seen
from ingest.proposers.emit import lines as _lines
from ingest.proposers.formats import classifier_for
from ingest.proposers.lists import MAX_ITEM_CHARS, SUBJECT_SEPARATOR
from ingest.proposers.scan import Document
from ingest.proposers.titles import MAX_TITLE_CHARS, atx_heading, core_metadata, document_title

PRODUCER = Producer(kind=ProducerKind.PIPELINE, id="brain/heuristic", version="3")
CAPPED = "proposals-capped"
NO_CANDIDATES = "no-candidates"

__all__ = [
    "CAPPED", "MAX_CANDIDATES_PER_SOURCE", "MAX_COUNTED", "MAX_ITEM_CHARS", "NO_CANDIDATES", "MAX_TITLE_CHARS",
    "PRODUCER", "SPLIT_BELOW", "SUBJECT_SEPARATOR", "HeuristicProposer", "atx_heading", "cap_notes", "document_title",
    "empty_notes", "extract", "extract_counted", "proposal_notes",
]


class HeuristicProposer(Proposer):
    """The built-in offline proposer (`brain/heuristic`)."""

    id = "brain/heuristic"
    version = PRODUCER.version or "3"
    model: str | None = None

    def __init__(self) -> None:
        self.parameters: dict[str, Any] = {}

    def propose(self, task: Task, source: SourceText) -> ProposalResult:
        """Scan the source text; never fails on any text."""
        found, total = extract_counted(source, frozenset(task.allowed_memory_types))
        answer = CandidateSet(task_id=task.task_id, producer=PRODUCER, candidates=tuple(found))
        return ProposalResult(answer, notes=proposal_notes(source, len(found), total))


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
