"""`heuristic`: the default proposer — offline, deterministic, fast, narrow.

One pass over the lines of each page (PDF text is split into pages on `\\f`), skipping fenced code:

* Markdown headings set the subject; definition sentences in paragraphs ("X is a/an/the ...",
  "X means ...", "The X is ...") and "Term: definition" items of bulleted lists become `semantic`
  blocks (kind `concept`, or `fact` for "The X is <value>").
* A list of at least two plain items under a heading (or a lead-in line ending in `:`) becomes a
  `procedural` block; bulleted lists also need a procedural cue in the heading ("how to", "steps", ...).
* A line that starts with a valid date or timestamp becomes an `episodic` block (time normalized to UTC).

Locators are `L5-L6` (`L5` for one line), or `p.3 L2-L4` for paged text. Evidence is the source block id.
Within one source a repeated label+kind (or procedure label, or time+summary) keeps the first.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

from brain.blocks.provenance import Producer, ProducerKind
from ingest.proposers import rules
from ingest.proposers.base import PAGE_BREAK, ProposalResult, Proposer, SourceText
from ingest.proposers.candidates import Candidate, CandidateSet, Task

PRODUCER = Producer(kind=ProducerKind.PIPELINE, id="brain/heuristic", version="1")
MAX_CANDIDATES_PER_SOURCE = 2_000
CAPPED = "proposals-capped"

_HEADING_MARK = re.compile(r"(#{1,6})\s+")
_ITEM = re.compile(r"\s{0,12}(?:([-*+•])|([0-9]{1,3})[.)])\s+(\S.*)")
_SETEXT = re.compile(r"(=+|-+)\s*")
# Plain-string aliases: enum attribute lookups are measurable at a few hundred thousand lines per second.
_SEMANTIC, _EPISODIC, _PROCEDURAL = "semantic", "episodic", "procedural"


def atx_heading(line: str) -> tuple[int, str] | None:
    """`(level, title)` of a Markdown `#` heading (closing `#`s dropped), or None.

    Same result as fullmatching `(#{1,6})\\s+(.*?)\\s*#*\\s*`, in linear time: that pattern backtracks
    cubically (a heading line with 4,000 inner spaces took a minute).
    """
    mark = _HEADING_MARK.match(line)
    if mark is None:
        return None
    title = line[mark.end() :].rstrip().rstrip("#").rstrip()
    return None if "\n" in title else (len(mark[1]), title)


class HeuristicProposer(Proposer):
    """The built-in offline proposer (`brain/heuristic`)."""

    id = "brain/heuristic"
    version = "1"
    model: str | None = None

    def __init__(self) -> None:
        self.parameters: dict[str, Any] = {}

    def propose(self, task: Task, source: SourceText) -> ProposalResult:
        """Scan the source text; never fails on any text."""
        found, total = extract_counted(source, frozenset(task.allowed_memory_types))
        answer = CandidateSet(task_id=task.task_id, producer=PRODUCER, candidates=tuple(found))
        return ProposalResult(answer, notes=cap_notes(len(found), total))


def cap_notes(kept: int, total: int) -> tuple[str, ...]:
    """The `proposals-capped` note when the cap left candidates out, else nothing."""
    if total <= kept:
        return ()
    return (f"{CAPPED}: kept the first {kept} of {total} candidates (at most {MAX_CANDIDATES_PER_SOURCE} per source)",)


@dataclass
class _Item:
    first: int
    last: int
    text: str
    ordered: bool


@dataclass
class _Scan:
    """State of one pass over one page."""

    source: SourceText
    allowed: frozenset[str]
    page: int | None
    out: list[Candidate]
    seen: set[tuple[str, ...]]
    headings: list[tuple[int, str]] = field(default_factory=list)
    paragraph: list[tuple[int, str]] = field(default_factory=list)
    items: list[_Item] = field(default_factory=list)
    lead_in: str | None = None

    @property
    def subject(self) -> str | None:
        return self.headings[-1][1] if self.headings else None

    def emit(self, memory_type: str, key: tuple[str, ...], payload: dict[str, Any], lines: tuple[int, int]) -> None:
        if memory_type not in self.allowed or key in self.seen:
            return
        self.seen.add(key)
        if len(self.out) >= MAX_CANDIDATES_PER_SOURCE:
            return  # still counted in `seen`: the cap note says how many were found
        first, last = lines
        locator = f"L{first}" if first == last else f"L{first}-L{last}"
        if self.page is not None:
            locator = f"p.{self.page} {locator}"
        self.out.append(
            Candidate(
                memory_type=memory_type, payload=payload, evidence=(str(self.source.block_id),), locator=locator
            )
        )

    def semantic(self, kind: str, label: str, statement: str, lines: tuple[int, int]) -> None:
        payload = {"kind": kind, "label": label, "statement": statement}
        if self.subject is not None and self.subject != label:
            payload["subject"] = self.subject
        self.emit(_SEMANTIC, ("semantic", kind, label), payload, lines)

    def episode(self, text: str, line: int) -> bool:
        if not text or not (text[0].isdigit() or text[0] in "[("):
            return False
        found = rules.dated(text)
        if found is None and text[:1].isdigit():
            day = next((d for _, t in reversed(self.headings) if (d := rules.date_in(t)) is not None), None)
            found = rules.clock_line(text, day) if day is not None else None
        if found is None:
            return False
        occurred_at, summary = found
        payload = {"summary": summary, "occurred_at": occurred_at}
        if self.subject is not None:
            payload["context"] = self.subject
        self.emit(_EPISODIC, ("episodic", occurred_at, summary), payload, (line, line))
        return True

    def flush_paragraph(self) -> None:
        lines, self.paragraph = self.paragraph, []
        if not lines:
            return
        last = lines[-1][1]
        if last.endswith(":") and len(last) <= rules.MAX_LABEL_CHARS:
            self.lead_in = rules.clean(last[:-1])
        # A short unpunctuated line before a capitalized one is a title (common in PDF text): its own run.
        run: list[tuple[int, str]] = []
        for number, text in lines:
            if run and text[0].isupper() and run[-1][1][-1] not in ".!?,;:" and len(run[-1][1].split()) < 8:
                self.definitions(run)
                run = []
            run.append((number, text))
        self.definitions(run)

    def definitions(self, lines: list[tuple[int, str]]) -> None:
        text = " ".join(t for _, t in lines)
        if " is " not in text and " are " not in text and " mean" not in text and " refers to " not in text:
            return
        starts, at = [], 0
        for _, line_text in lines:
            starts.append(at)
            at += len(line_text) + 1
        for start, end in rules.sentences(text):
            sentence = text[start:end]
            found = rules.definition(sentence)
            if found is not None:
                kind, label = found
                first = lines[bisect.bisect_right(starts, start) - 1][0]
                last = lines[bisect.bisect_right(starts, end - 1) - 1][0]
                self.semantic(kind, label, rules.clean(sentence), (first, last))

    def flush_list(self) -> None:
        if not self.items:
            self.lead_in = None
            return
        items, self.items = self.items, []
        lead_in, self.lead_in = self.lead_in, None
        claimed = False
        ordered = any(item.ordered for item in items)
        for item in items:
            if self.episode(item.text, item.first):
                claimed = True
            elif not item.ordered and (term := rules.term_item(item.text)) is not None:
                claimed = True
                self.semantic("concept", term[0], term[1], (item.first, item.last))
        announced = lead_in or self.subject
        if claimed or len(items) < 2 or announced is None or not (ordered or rules.looks_procedural(announced)):
            return
        # "## Steps" under "# Deploying Lumen" is the procedure "Deploying Lumen".
        titles = [title for _, title in self.headings if not rules.is_generic_title(title)]
        label = lead_in if lead_in is not None else titles[-1] if titles else announced
        payload: dict[str, Any] = {
            "label": label,
            "goal": rules.procedure_goal(label),
            "steps": [{"action": rules.clean(item.text)} for item in items],
        }
        # The subject is the heading the procedure sits under (its parent heading when it is the label).
        subjects = [title for title in titles if title != label]
        if subjects:
            payload["subject"] = subjects[-1]
        self.emit(_PROCEDURAL, ("procedural", label), payload, (items[0].first, items[-1].last))

    def line(self, number: int, raw: str) -> None:
        stripped = raw.strip()
        if not stripped:
            self.flush_paragraph()
            return
        heading = atx_heading(stripped) if stripped[0] == "#" else None
        if heading is not None:
            self.flush_paragraph()
            self.flush_list()
            self.lead_in = None
            level, title = heading[0], rules.clean(heading[1])
            if self.episode(title, number) or not title:
                return
            while self.headings and self.headings[-1][0] >= level:
                self.headings.pop()
            self.headings.append((level, title))
            return
        if stripped[0] in "=-" and len(self.paragraph) == 1 and _SETEXT.fullmatch(stripped) is not None:
            _, title = self.paragraph.pop()
            level = 1 if stripped[0] == "=" else 2
            while self.headings and self.headings[-1][0] >= level:
                self.headings.pop()
            self.headings.append((level, rules.clean(title)))
            return
        item = _ITEM.fullmatch(raw) if stripped[0] in "-*+•0123456789" else None
        if item is not None:
            if self.paragraph:
                self.lead_in = None
                self.flush_paragraph()
            self.items.append(_Item(number, number, item[3].strip(), item[1] is None))
            return
        if self.items and raw[0].isspace() and not self.paragraph:
            last_item = self.items[-1]
            last_item.text = f"{last_item.text} {stripped}"
            last_item.last = number
            return
        self.flush_list()
        self.lead_in = None
        if self.episode(stripped, number):
            self.flush_paragraph()
            return
        self.paragraph.append((number, stripped))

    def finish(self) -> None:
        self.flush_paragraph()
        self.flush_list()


def extract(source: SourceText, allowed: frozenset[str]) -> list[Candidate]:
    """The candidates the heuristic finds in `source`, in text order (`allowed` holds memory type names)."""
    return extract_counted(source, allowed)[0]


def extract_counted(source: SourceText, allowed: frozenset[str]) -> tuple[list[Candidate], int]:
    """The first `MAX_CANDIDATES_PER_SOURCE` candidates of `extract`, and how many distinct ones it found in all."""
    out: list[Candidate] = []
    seen: set[tuple[str, ...]] = set()
    pages = source.text.split(PAGE_BREAK) if source.page_starts is not None else [source.text]
    for index, page_text in enumerate(pages):
        scan = _Scan(source, allowed, index + 1 if source.page_starts is not None else None, out, seen)
        in_fence = False
        for number, raw in enumerate(page_text.split("\n"), start=1):
            if ("`" in raw or "~" in raw) and raw.lstrip().startswith(("```", "~~~")):
                in_fence = not in_fence
                scan.finish()
                continue
            if not in_fence:
                scan.line(number, raw)
        scan.finish()
    return out, len(seen)
