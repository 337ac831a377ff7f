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

Where things are: `extraction` (the scan of one source, and its notes), `titles` (the document's title),
`formats` (one line classifier per format), `scan` (what is done with each kind of line: paragraphs, lists,
headings, releases), `table` (the ordered rules, each with its examples), `rules` (the pure functions behind
them, and their prefilters), `lists` (items, procedures), `changelogs` (change-log formats of their own),
`emit` (the cap and the candidates).
"""

from __future__ import annotations

from typing import Any

from brain.blocks.provenance import Producer, ProducerKind
from ingest.proposers.base import ProposalResult, Proposer, SourceText
from ingest.proposers.candidates import CandidateSet, Task

# Constructed, not validated: validating would build Producer's validator at import (~16 ms of every command),
# and these literals are checked against it by the test suite (tests/ingest/test_heuristic_proposer.py).
PRODUCER = Producer.model_construct(kind=ProducerKind.PIPELINE, id="brain/heuristic", version="3")

__all__ = ["PRODUCER", "HeuristicProposer"]


class HeuristicProposer(Proposer):
    """The built-in offline proposer (`brain/heuristic`)."""

    id = "brain/heuristic"
    version = PRODUCER.version or "3"
    model: str | None = None

    def __init__(self) -> None:
        self.parameters: dict[str, Any] = {}

    def propose(self, task: Task, source: SourceText) -> ProposalResult:
        """Scan the source text; never fails on any text."""
        # Imported on the first source asked about: every ingest loads the proposer, and one that finds
        # every source unchanged never asks (the scan's rules and classifiers are ~30 ms of imports).
        from ingest.proposers.extraction import extract_counted, proposal_notes

        found, total = extract_counted(source, frozenset(task.allowed_memory_types))
        answer = CandidateSet(task_id=task.task_id, producer=PRODUCER, candidates=tuple(found))
        return ProposalResult(answer, notes=proposal_notes(source, len(found), total))
