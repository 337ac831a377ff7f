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
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from brain.blocks.provenance import Producer, ProducerKind
from ingest.proposers import rules
from ingest.proposers.changelogs import HEAD_LINE_CHARS, reader_for
from ingest.proposers.emit import MAX_CANDIDATES_PER_SOURCE, MAX_COUNTED, SPLIT_BELOW, CountingDone, Emitter, Seen
from ingest.proposers.emit import lines as _lines
from ingest.proposers.emit import summary as _summary
from ingest.proposers.base import PAGE_BREAK, ProposalResult, Proposer, SourceText
from ingest.proposers.candidates import Candidate, CandidateSet, Task

PRODUCER = Producer(kind=ProducerKind.PIPELINE, id="brain/heuristic", version="3")
CAPPED = "proposals-capped"
NO_CANDIDATES = "no-candidates"
SUBJECT_SEPARATOR = " > "
MAX_SUBJECT_HEADINGS = 3
MAX_LEAD_IN_ITEMS = 8
OPENING_WORDS = 16  # an untitled document is named by its opening words, at most this many
OPENING_PARAGRAPHS = 2  # a document says what it is in its first paragraphs (a tagline, then a description)
MAX_ITEM_CHARS = 1 << 16  # a list item continued past this many characters is no step, term or change

_HEADING_MARK = re.compile(r"(#{1,6})\s+")
_ITEM = re.compile(r"\s{0,12}(?:([-*+•])|([0-9]{1,3}|#)[.)])\s+(\S.*)")  # `#.`: reST auto-numbering
_SETEXT = re.compile(r"(=+|-+)\s*")
_ADORNMENT = re.compile(r"([=\-~^\"'*+#:._`])\1{2,}\s*")
_DIRECTIVE = re.compile(r"\.\.\s+([A-Za-z][\w:-]*)::(?:\s+(.*))?")
_FIELD = re.compile(r":([A-Za-z][\w -]{0,30}):\s+(\S.*)")
_ADMONITIONS = frozenset(
    ["note", "warning", "tip", "important", "caution", "attention", "hint", "danger", "error", "seealso", "admonition", "versionadded", "versionchanged", "deprecated"]
)
_NOT_FACT_FIELDS = frozenset(
    ["param", "parameter", "arg", "argument", "key", "keyword", "type", "returns", "return", "rtype", "raises", "raise", "except", "exception", "var", "ivar", "cvar", "vartype", "meta"]
)
PLAIN_HEADING_LEVEL = 7
TITLE_WINDOW = 16_384  # the title is looked for in the first characters only
METADATA_HEADER_LINES = 400  # a package's core metadata headers (many `Classifier:` lines) come first
_FIRST_HEADING = re.compile(r"^#{1,6}[ \t]+\S", re.MULTILINE)
_FIRST_H1 = re.compile(r"^#[ \t]+\S", re.MULTILINE)
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


@dataclass
class _Item:
    first: int
    last: int
    text: str
    ordered: bool
    more: list[str] = field(default_factory=list)
    """Continuation lines, joined onto `text` once the list is read (joining each as it came was quadratic:
    20 MB of continuation lines took two minutes)."""
    size: int = 0
    """Characters in `more`; past `MAX_ITEM_CHARS` the item is `overlong` and its lines are let go."""
    overlong: bool = False

    def continued(self, line: str, number: int) -> None:
        self.last = number
        if self.overlong:
            return
        self.size += len(line) + 1
        if self.size > MAX_ITEM_CHARS:  # no step, term or change: a careful reader would not quote it
            self.overlong, self.more = True, []
        else:
            self.more.append(line)

    def joined(self) -> _Item:
        if self.more:
            self.text, self.more = " ".join([self.text, *self.more]), []
        return self


@dataclass
class _Release:
    """A dated release heading of a change log, collecting its changes until the next release or section."""

    line: int
    level: int
    version: str
    occurred_at: str
    groups: list[tuple[str, list[str]]] = field(default_factory=list)


@dataclass
class _Scan(Emitter):
    """State of one pass over one page."""

    title: str | None = None
    markdown: bool = True
    rst: bool = False
    headings: list[tuple[int, str]] = field(default_factory=list)
    paragraph: list[tuple[int, str]] = field(default_factory=list)
    items: list[_Item] = field(default_factory=list)
    lead_in: str | None = None
    lead_in_refused: bool = False
    pending_definition: tuple[str, str, str, int, int] | None = None
    release: _Release | None = None
    styles: list[tuple[str, bool]] = field(default_factory=list)
    overline: str | None = None
    literal: bool = False
    literal_next: bool = False
    changelog_doc: bool = False  # the document's title names a change log: plain lines may be releases
    changelog_section: bool = False  # a heading on the current path names one
    changelog_levels: list[int] = field(default_factory=list)
    names: frozenset[str] = frozenset()  # lowercased title words: "tmux is ..." may define tmux
    paragraphs: int = 0  # prose paragraphs read so far (`opening`)
    sections: int = 0  # headings read so far, but for one that repeats the title (`opening`)
    self_names: re.Pattern[str] | None = None  # `_self_names`: the prefilter of `rules.self_description`
    # `subject`, kept until the heading path changes (every block asks for it). Only `heading` changes
    # the path; the title is set before the scan starts.
    _subject: str | None = None
    _subject_known: bool = False

    @property
    def opening(self) -> bool:
        """In the first `OPENING_PARAGRAPHS` paragraphs, under the document's first heading at most: where a
        document says what it is ("This is a ...", "This library ...")."""
        return self.paragraphs <= OPENING_PARAGRAPHS and self.sections <= 1

    def path(self, without: str | None = None) -> list[str]:
        names = [title for _, title in self.headings if title != without]
        if self.title is not None and self.title != without and (not names or names[0] != self.title):
            names.insert(0, self.title)
        if len(names) > MAX_SUBJECT_HEADINGS:
            names = [names[0], *names[-(MAX_SUBJECT_HEADINGS - 1) :]]
        return names

    @property
    def subject(self) -> str | None:
        if not self._subject_known:
            names = self.path()
            self._subject = SUBJECT_SEPARATOR.join(names) if names else None
            self._subject_known = True
        return self._subject

    @property
    def changelog(self) -> bool:
        """Inside a change log: its items are changes, not definitions or steps."""
        return self.release is not None or self.changelog_doc or self.changelog_section

    def _heading_path_changed(self, added: str) -> None:
        # Headings only pop off the end: below a change-log heading until a heading of its level or higher.
        if self.changelog_levels:
            self.changelog_levels = [level for level in self.changelog_levels if level < self.headings[-1][0]]
        if rules.is_changelog_title(added):
            self.changelog_levels.append(self.headings[-1][0])
        self.changelog_section = bool(self.changelog_levels)

    def semantic(self, kind: str, label: str, statement: str, lines: tuple[int, int]) -> None:
        payload = {"kind": kind, "label": label, "statement": statement}
        subject = self.subject
        if subject is not None and subject != label:
            payload["subject"] = subject
        self.emit(_SEMANTIC, ("semantic", kind, label, subject or ""), payload, lines)

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
        words = summary.split()
        if not any(word[:1].isalpha() for word in words) or "@" in words[0]:
            return False  # no word, or an address ("2026-03-02 <jo@example.org>")
        payload = {"summary": summary, "occurred_at": occurred_at}
        context = self.subject
        if context is not None:
            payload["context"] = context
        self.emit(_EPISODIC, ("episodic", occurred_at, summary), payload, (line, line))
        return True

    # --- change logs -------------------------------------------------------------------------------------

    def open_release(self, level: int, title: str, line: int) -> bool:
        found = rules.release(title)
        if found is None:
            return False
        self.close_release()
        version, day = found
        self.release = _Release(line=line, level=level, version=version, occurred_at=f"{day}T00:00:00Z")
        return True

    def close_release(self) -> None:
        release, self.release = self.release, None
        if release is None:
            return
        parts = []
        for group, changes in release.groups:
            if changes:
                parts.append(f"{group}: {', '.join(changes)}" if group else "; ".join(changes))
        summary = _summary(f"Released {release.version}", parts)
        payload = {"summary": summary, "occurred_at": release.occurred_at}
        if self.title is not None:
            payload["context"] = self.title
        self.emit(_EPISODIC, ("episodic", release.occurred_at, summary), payload, (release.line, release.line))

    def change(self, text: str) -> None:
        assert self.release is not None
        if not self.release.groups:
            self.release.groups.append(("", []))
        change = rules.change_text(text)
        if change and any(c.isalpha() for c in change):
            self.release.groups[-1][1].append(change)

    # --- paragraphs and lists ----------------------------------------------------------------------------

    def flush_paragraph(self) -> None:
        if not self.paragraph:
            return  # called for every blank line and heading
        lines, self.paragraph = self.paragraph, []
        if self.release is not None:
            return  # prose inside a release: its changes are the list items
        if not lines[0][1].startswith("Metadata-Version:") and not rules.is_link_line(lines[0][1]):
            self.paragraphs += 1  # prose: not a package's headers, not badges
        if len(lines) == 1 and not self.markdown and self.plain_heading(lines[0]):
            return
        text = lines[-1][1]
        if text.endswith(":") and not text.endswith("::"):
            self.lead_in_from(lines)
        # A short unpunctuated line before a capitalized one is a title (common in PDF text): its own run.
        run: list[tuple[int, str]] = []
        for number, line_text in lines:
            if run and line_text[0].isupper() and run[-1][1][-1] not in ".!?,;:" and len(run[-1][1].split()) < 8:
                self.definitions(run)
                run = []
            run.append((number, line_text))
        self.definitions(run)

    def plain_heading(self, line: tuple[int, str]) -> bool:
        """A lone short ALL-CAPS line in plain text ("INSTALLATION") is a section heading."""
        number, text = line
        if not (text.isupper() and len(text.split()) <= 6 and rules.is_title_line(text)):
            return False
        self.heading(PLAIN_HEADING_LEVEL, rules.clean(text).title() if len(text) > 3 else text, number)
        return True

    def lead_in_from(self, lines: list[tuple[int, str]]) -> None:
        """The lead-in a list follows: a whole short line or sentence ending in `:`, else the list is its content."""
        text = " ".join(t for _, t in lines)
        spans = deque(rules.whole_sentences(text), maxlen=1)  # the last sentence is the lead-in
        start, end = spans[0] if spans else (0, len(text))
        sentence = text[start:end]
        found = rules.definition(sentence[:-1].rstrip() + ".", self.names) if len(sentence.split()) > 2 else None
        if found is not None:
            kind, label = found
            self.pending_definition = (kind, label, rules.clean(sentence), lines[0][0], lines[-1][0])
        label = rules.clean(sentence[:-1])
        if (
            label and len(label.split()) <= 12 and (label[0].isupper() or label[0].isdigit())
            and label.split()[0].lower() not in rules.NOT_A_SUBJECT and not rules.is_link_line(label)
            and (named := rules.lead_in_label(label)) is not None
        ):  # "To deploy the app:", "Checklist:"; not "This boils down to several options:", "However, ...:"
            self.lead_in = named
        else:
            self.lead_in_refused = True

    def definitions(self, lines: list[tuple[int, str]]) -> None:
        text = " ".join([t for _, t in lines])
        if self.paragraphs == 1 and self.title is not None and self.opening and self.tagline(text, lines):
            return
        if not _may_define(text) and (self.self_names is None or self.self_names.search(text) is None):
            return
        starts, at = [], 0
        for _, line_text in lines:
            starts.append(at)
            at += len(line_text) + 1
        for start, end in rules.whole_sentences(text):
            sentence = text[start:end]
            if sentence[-1] not in ".!" and not sentence.endswith((".)", '."', ".'")):
                continue  # not a whole sentence: cut by a line that looked like a title, or by a link
            found = rules.definition(sentence, self.names)
            if found is None and self.self_names is not None:
                found = rules.self_description(sentence, self.title, self.names, opening=self.opening)
            if found is None or rules.is_link_line(sentence) or rules.is_licence_text(sentence):
                continue
            kind, label = found
            first = lines[bisect.bisect_right(starts, start) - 1][0]
            last = lines[bisect.bisect_right(starts, end - 1) - 1][0]
            self.semantic(kind, label, rules.clean(sentence), (first, last))

    def tagline(self, text: str, lines: list[tuple[int, str]]) -> bool:
        """A first paragraph that is one phrase saying what the document's subject is (`rules.tagline`)."""
        spans = list(itertools.islice(rules.whole_sentences(text), 2))
        said = rules.tagline(text[spans[0][0] : spans[0][1]], self.title) if len(spans) == 1 else None
        if said is None or self.title is None or rules.is_link_line(text) or rules.is_licence_text(text):
            return False
        self.semantic("concept", rules.without_article(self.title), said, (lines[0][0], lines[-1][0]))
        return True

    def flush_list(self) -> None:
        if not self.items and self.lead_in is None and self.pending_definition is None and not self.lead_in_refused:
            return  # the common case: a paragraph line with no list before it
        pending, self.pending_definition = self.pending_definition, None
        refused, self.lead_in_refused = self.lead_in_refused, False
        if not self.items:
            self.lead_in = None
            return
        items, self.items = [item.joined() for item in self.items if not item.overlong], []
        if not items:
            self.lead_in = None
            return
        lead_in, self.lead_in = self.lead_in, None
        if self.release is not None:
            for item in items:
                self.change(item.text)
            return
        changelog = self.changelog
        # Under "Parameters"/"Arguments" the items are a function's parameters, not terms.
        parameters = bool(self.headings) and rules.is_parameter_heading(self.headings[-1][1])
        claimed = self.claim_items(items, terms=not (changelog or parameters))
        if pending is not None and not claimed and self.definition_with_list(pending, items):
            return
        ordered = any(item.ordered for item in items)
        announced = lead_in or self.subject_heading()
        if claimed or refused or changelog or len(items) < 2 or announced is None:
            return
        # A long lead-in is a sentence about the list ("Many distributions do this for these reasons:"):
        # even a numbered list after it is steps only when it announces them.
        if lead_in is not None and len(lead_in.split()) > 6:
            if not rules.announces_steps(lead_in):
                return
        elif not (ordered or rules.looks_procedural(announced)):
            return
        if not self.steps_like(items, announced):
            return
        if lead_in is None and not rules.looks_procedural(announced) and rules.mostly_statements([i.text for i in items]):
            return  # numbered, but statements ("### Benefits", "1. The component will ..."): nothing to do
        # "## Steps" under "# Deploying Lumen" is the procedure "Deploying Lumen".
        titles = [title for title in self.path() if not rules.is_generic_title(title)]
        label = lead_in if lead_in is not None else titles[-1] if titles else announced
        payload: dict[str, Any] = {
            "label": label,
            "goal": rules.procedure_goal(label),
            "steps": [{"action": rules.clean(item.text)} for item in items],
        }
        # The subject is the heading path the procedure sits under (without the label itself).
        subjects = [title for title in self.path(without=label) if not rules.is_generic_title(title)]
        if subjects:
            payload["subject"] = SUBJECT_SEPARATOR.join(subjects)
        self.emit(_PROCEDURAL, ("procedural", label, payload.get("subject", "")), payload, (items[0].first, items[-1].last))

    def claim_items(self, items: list[_Item], *, terms: bool) -> bool:
        """Dated items become episodes and (when `terms`) "Term: definition" items concepts; True if any did."""
        claimed = False
        for item in items:
            if self.episode(item.text, item.first):
                claimed = True
            elif terms and not item.ordered and (term := self.term(item.text)) is not None:
                claimed = True
                self.semantic("concept", term[0], term[1], (item.first, item.last))
        return claimed

    def definition_with_list(self, pending: tuple[str, str, str, int, int], items: list[_Item]) -> bool:
        """"The API is minimal:" and its short list are one statement: "The API is minimal: a; b; c."."""
        kind, label, sentence, first, _ = pending
        statement = f"{sentence} {'; '.join(rules.clean(item.text).rstrip('.;,') for item in items)}."
        if len(items) > MAX_LEAD_IN_ITEMS or len(statement) > rules.MAX_STATEMENT_CHARS:
            return False
        self.semantic(kind, label, statement, (first, items[-1].last))
        return True

    def subject_heading(self) -> str | None:
        return self.headings[-1][1] if self.headings else None

    def term(self, text: str) -> tuple[str, str] | None:
        if text.lstrip("`*")[:1] == "-":
            return None  # flags (`-v, --verbose: ...`)
        found = rules.term_item(text)
        if found is None or rules.is_link_line(text) or rules.is_licence_text(text):
            return None  # badges, licence conditions
        return found

    def steps_like(self, items: list[_Item], announced: str) -> bool:
        """Not a table of contents, licence conditions, a flag or parameter list, or a list of links."""
        texts = [item.text for item in items]
        if len(texts) > 25 or rules.any_toc_title([announced, *texts, *(title for _, title in self.headings[-1:])]):
            return False
        if rules.is_licence_text(" ".join([announced, *texts])):
            return False
        # One pass over the items counts each kind of non-step; kinds that no item can be are not counted.
        joined = "\n".join(texts)
        links_possible, parameters_possible = rules.may_hold_links(joined), rules.may_hold_parameters(joined)
        links = menus = worded = parameters = 0
        for text in texts:
            links += text.lstrip("`*")[:1] in "-[<" or (links_possible and rules.is_link_line(text))
            menus += rules.is_menu_item(text)
            worded += rules.has_words(text)
            parameters += parameters_possible and rules.is_parameter_item(text)
        half = len(texts) / 2
        if links >= half or menus >= 0.75 * len(texts):
            return False  # flags, links; "Home", "Introduction", "Documentation": navigation, not steps
        return worded >= half and parameters < half  # symbols or code, not actions; a parameter list

    def package_summary(self, fields: dict[str, tuple[int, str]]) -> None:
        """A Python package's core metadata (`METADATA`, `PKG-INFO`): its `Summary:` says what `Name:` is."""
        if "Name" not in fields or "Summary" not in fields:
            return
        name, (number, summary) = fields["Name"][1], fields["Summary"]
        if not rules.has_word_count(summary, 3) or rules.is_link_line(summary) or len(summary) > rules.MAX_STATEMENT_CHARS:
            return  # "UNKNOWN", a URL, or a word or two: nothing said
        said = summary.lower().startswith(name.lower()) and summary[len(name) : len(name) + 1] in (":", " ", ",")
        statement = summary if said else f"{name}: {summary}"
        # The subject names this document, not the package alone: a README titled "pip" that says what pip
        # is would otherwise be the same label and subject with another statement (a contradiction).
        version = f" {fields['Version'][1]}" if "Version" in fields else ""
        payload = {"kind": "concept", "label": name, "statement": statement, "subject": f"{name}{version} package metadata"}
        self.emit(_SEMANTIC, ("semantic", "concept", name, payload["subject"]), payload, (number, number))

    # --- headings and lines ------------------------------------------------------------------------------

    def heading(self, level: int, title: str, number: int) -> None:
        self.flush_paragraph()
        self.flush_list()
        self.lead_in = None
        if self.release is not None and level <= self.release.level:
            self.close_release()
        if not title:
            return
        if self.release is not None:
            self.release.groups.append((title, []))  # "### Added" inside "## [1.2.0] - 2026-03-14"
            return
        if self.open_release(level, title, number) or self.episode(title, number):
            return
        self.sections += title != self.title
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, title))
        self._subject_known = False
        self._heading_path_changed(title)

    def adorned(self, char: str, overlined: bool) -> int:
        """The level of a reStructuredText title style: styles rank in order of first use."""
        style = (char, overlined)
        if style not in self.styles:
            self.styles.append(style)
        return self.styles.index(style) + 1

    def rst_line(self, stripped: str, raw: str) -> bool:
        """reStructuredText-only syntax; True when the line was consumed."""
        if self.literal:
            if raw[:1].isspace():
                return True
            self.literal = False
        if stripped.startswith(".."):
            self.flush_paragraph()
            self.flush_list()
            directive = _DIRECTIVE.match(stripped)
            if directive is not None and directive[1].lower() in _ADMONITIONS:
                if directive[2]:
                    self.paragraph.append((self.lineno, directive[2]))  # its indented body joins the paragraph
                return True
            self.literal = True  # code, images, tables of contents, comments, link targets: no prose
            return True
        field_match = _FIELD.fullmatch(stripped)
        if field_match is not None and not raw[:1].isspace():
            self.flush_paragraph()
            self.flush_list()
            name, value = field_match[1].strip(), rules.clean(field_match[2])
            if name.split()[0].lower() not in _NOT_FACT_FIELDS and len(name.split()) <= 3 and any(c.isalnum() for c in value):
                self.semantic("fact", name, f"{name}: {value}", (self.lineno, self.lineno))
            return True
        return False

    lineno: int = 0

    def line(self, number: int, raw: str) -> None:  # noqa: C901 - one classifier per line kind, tried in priority order
        self.lineno = number
        stripped = raw.strip()
        # Most lines of real text are prose: one that starts with a letter is no heading, adornment, list item
        # or dated line. With no list open, outside a reST literal block, not a reST `Example::` line and not
        # a possible release line of a change log, all the general path below does for it is this.
        if (
            stripped[:1].isalpha() and not self.items and not self.literal
            and (self.paragraph or not self.changelog) and not (self.rst and stripped.endswith("::"))
        ):
            self.lead_in = self.pending_definition = None  # what `flush_list` does when no list is open
            self.lead_in_refused = False
            self.paragraph.append((number, stripped))
            return
        if not stripped:
            self.flush_paragraph()
            if self.literal_next:  # "Example::" introduced the literal block, not what follows it
                self.literal, self.literal_next = True, False
                self.lead_in, self.pending_definition = None, None
            return
        if self.rst and self.rst_line(stripped, raw):
            return
        # In plain text only a `#` line at the margin is a heading: indented, it is code or a continuation.
        heading = atx_heading(stripped) if stripped[0] == "#" and not self.rst and (self.markdown or raw[0] == "#") else None
        if heading is not None:
            self.heading(heading[0], rules.clean(heading[1]), number)
            return
        if self.markdown:
            if stripped[0] in "=-" and len(self.paragraph) == 1 and _SETEXT.fullmatch(stripped) is not None:
                number, title = self.paragraph.pop()
                self.heading(1 if stripped[0] == "=" else 2, rules.clean(title), number)
                return
        elif stripped[0] in "=-~^\"'*+#:._`" and _ADORNMENT.fullmatch(stripped) is not None:
            if len(self.paragraph) == 1 and len(stripped) + 2 >= len(self.paragraph[0][1]):
                title_number, title = self.paragraph.pop()
                overlined, self.overline = self.overline == stripped[0], None
                self.heading(self.adorned(stripped[0], overlined), rules.clean(title), title_number)
            elif not self.paragraph:
                self.flush_list()
                self.overline = stripped[0]
            else:
                self.flush_paragraph()
            return
        item = _ITEM.fullmatch(raw) if stripped[0] in "-*+•0123456789#" else None
        if item is not None and self.changelog and not raw[:1].isspace() and rules.release(item[3]) is not None:
            self.heading(PLAIN_HEADING_LEVEL, rules.clean(item[3]), number)  # GNU NEWS: "* Noteworthy changes in ..."
            return
        if item is not None:
            if self.paragraph:
                self.lead_in = None
                if rules.is_title_line(self.paragraph[-1][1]) and (
                    len(self.paragraph) == 1 or self.paragraph[-2][1][-1:] in ".!?:"
                ):  # "Installing the agent" then steps (PDF text has no blank line before it)
                    self.lead_in = rules.clean(self.paragraph.pop()[1])
                self.flush_paragraph()
            text = item[3].strip()
            if text[:1] == "[" and text[2:4] == "] " and text[1] in " xX":
                text = text[4:]  # a task-list checkbox, `- [ ] step`
            self.items.append(_Item(number, number, text, item[1] is None))
            return
        if self.items and raw[0].isspace() and not self.paragraph:
            self.items[-1].continued(stripped, number)
            return
        if (
            not self.paragraph and not raw[0].isspace() and len(stripped) < 100 and self.changelog
            and rules.release(stripped) is not None
        ):
            self.heading(PLAIN_HEADING_LEVEL, rules.clean(stripped), number)  # "Version 1.2 (2026-03-14)"
            return
        self.flush_list()
        self.lead_in = None
        if self.episode(stripped, number):
            self.flush_paragraph()
            return
        if self.rst and stripped.endswith("::"):
            self.literal_next = True
            stripped = stripped[:-1] if len(stripped) > 2 and stripped[-3] != " " else stripped[:-2].rstrip()
            if not stripped:
                return
        self.paragraph.append((number, stripped))

    def finish(self) -> None:
        self.flush_paragraph()
        self.flush_list()
        self.close_release()


# The verbs `rules.definition` needs; one search instead of a substring test per verb (a pass over the
# paragraph each: they took ~8% of the proposer on ordinary text).
_DEFINING_VERB = re.compile(r" (?:is |are |mean|refers to |occur|happens |was |were )")


def _may_define(text: str) -> bool:
    """A cheap test before looking for definitions: the text holds one of the verbs `rules.definition` needs."""
    return _DEFINING_VERB.search(text) is not None


def _self_names(title: str | None, names: frozenset[str]) -> re.Pattern[str] | None:
    """A sentence saying what the document's subject does names it (`rules.self_description`): one search for
    its names ("This", "The", the title's words) before the sentences are parsed."""
    if title is None:
        return None
    words = sorted({title, *(name for name in names if len(name) > 1)}, key=len, reverse=True)
    return re.compile(r"\b(?:This|The|(?i:" + "|".join(re.escape(word) for word in words) + r"))\b")


def document_title(text: str, markdown: bool) -> str | None:
    """The document's title: its first heading or underlined title, or a first line that reads as one.

    In Markdown and HTML views the first `#` heading wins even after navigation text ("Skip to content").
    """
    if markdown or text.startswith("#"):
        # A page's `# ` title, else its first heading (navigation bars carry small headings first).
        found = _FIRST_H1.search(text, 0, TITLE_WINDOW) or _FIRST_HEADING.search(text, 0, TITLE_WINDOW)
        if found is not None:
            end = text.find("\n", found.start())
            heading = atx_heading(text[found.start() : end if end != -1 else len(text)].strip())
            title = rules.clean(heading[1]) if heading is not None else ""
            if title:
                return title
    lines = _first_lines(text, 41)
    if lines[0].strip() == "---":  # YAML front matter: its `title:`, and the rest is not prose
        end = next((i for i, line in enumerate(lines[1:40], start=1) if line.strip() == "---"), 0)
        for line in lines[1:end]:
            if line.startswith("title:") and line[6:].strip(" '\""):
                return rules.clean(line[6:].strip(" '\""))
        lines = lines[end + 1 :]
    in_licence_terms = False
    for index, raw in enumerate(lines[:40]):
        stripped = raw.strip()
        if not _words_in(stripped):  # blank, or only a comment's frame (`/**`, ` *`, `*/`): a paragraph break
            in_licence_terms = False
            continue
        if index == 0 or not _words_in(lines[index - 1]):  # a paragraph starts here
            in_licence_terms = _licence_paragraph(lines, index)
        if in_licence_terms or _never_title(stripped):
            continue
        if _ADORNMENT.fullmatch(stripped) is not None or (stripped == "---" and index == 0):
            continue
        heading = atx_heading(stripped) if stripped[0] == "#" else None
        if heading is not None:
            return rules.clean(heading[1]) or None
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        underlined = following and following[0] in "=-~^\"'*+#:._`" and _ADORNMENT.fullmatch(following) is not None
        if (underlined or (markdown and following and _SETEXT.fullmatch(following))) and len(stripped) <= 100:
            return rules.clean(stripped)
        if rules.is_title_line(stripped) and not rules.dated(stripped):
            return rules.clean(stripped)
        # No title: the opening words name the document (subjects must still tell documents apart: eight
        # words were the same in 13 of libxmlsec1's examples, "XML Security Library example: Decrypting ...").
        words = rules.clean(stripped).rstrip(":").split()
        return " ".join(words[:OPENING_WORDS]) + (" …" if len(words) > OPENING_WORDS else "")
    return None


def _words_in(line: str) -> bool:
    """Whether a line holds more than a comment's frame or a rule (`/**`, `*`, `*/`, `//`, `#`, `---`)."""
    return bool(line.strip().strip("/*#-=~ \t"))


def _licence_paragraph(lines: list[str], start: int) -> bool:
    """A copyright notice or the terms under it ("Copying and distribution of this file ..."): no title."""
    if lines[start].strip().lower().startswith(("copyright", "(c)", "©")):
        return True
    return rules.is_licence_text(" ".join(line.strip() for line in itertools.takewhile(_words_in, lines[start:40])))


def _never_title(line: str) -> bool:
    """Comments, processing instructions, badges and links, rules and separators ("_ _ _", "* * *")."""
    if line.startswith(("<!--", "<?", "<!", "[![", "![", ".. ")) or rules.is_link_line(line):
        return True
    return not any(c.isalpha() for c in line)


def _core_metadata(text: str) -> dict[str, tuple[int, str]]:
    """`Name`, `Version` and `Summary` of a package's core metadata headers (RFC 822 style), with their lines."""
    fields: dict[str, tuple[int, str]] = {}
    for number, line in enumerate(_first_lines(text, METADATA_HEADER_LINES), start=1):
        if not line.strip():
            break  # the headers end at the first blank line; the long description follows
        key, colon, value = line.partition(": ")
        if colon and key in ("Name", "Version", "Summary") and rules.clean(value):
            fields[key] = (number, rules.clean(value))
    return fields


def _first_lines(text: str, count: int) -> list[str]:
    """The first `count` lines of `text`, each cut at `HEAD_LINE_CHARS`, without copying the rest of the text."""
    if len(text) < SPLIT_BELOW:
        return [line[:HEAD_LINE_CHARS] for line in text.split("\n", count)[:count]]
    lines: list[str] = []
    start = 0
    while len(lines) < count and start <= len(text):
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        lines.append(text[start : min(end, start + HEAD_LINE_CHARS)])
        start = end + 1
    return lines


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
    markdown = source.media_type in ("text/markdown", "text/html") or source.media_type.endswith("+markdown")
    rst = source.media_type == "text/x-rst"
    # A package's core metadata names the package: that is the title its description's blocks sit under.
    metadata = _core_metadata(source.text) if source.text.startswith("Metadata-Version:") else {}
    title = metadata["Name"][1] if "Name" in metadata else document_title(source.text, markdown)
    if title is not None and rules.is_licence_title(title):
        return  # a licence's text is terms and conditions, not knowledge about the project
    names = frozenset(word.strip("!?.,:;()'\"").lower() for word in title.split()) if title else frozenset()
    self_names = _self_names(title, names)
    pages = _pages(source.text) if source.page_starts is not None else iter((source.text,))
    for index, page_text in enumerate(pages):
        page = index + 1 if source.page_starts is not None else None
        scan = _Scan(source, allowed, page, out, seen, title=title, markdown=markdown, rst=rst)
        scan.changelog_doc = title is not None and rules.is_changelog_title(title)
        scan.names, scan.self_names = names, self_names
        if index == 0 and metadata:
            scan.package_summary(metadata)
        in_fence = False
        # reST has no fences (and `~~~~` underlines titles); plain text may quote Markdown's backtick fences.
        fences = ("```", "~~~") if markdown else () if rst else ("```",)
        for number, raw in enumerate(_lines(page_text, trailing_space=False), start=1):
            if fences and ("`" in raw or "~" in raw) and raw.lstrip().startswith(fences):
                in_fence = not in_fence
                scan.finish()
                continue
            if not in_fence:
                scan.line(number, raw)
        scan.finish()
