"""One pass over one page: what the heuristic does with the kinds of line a format's classifier finds.

The pieces, one job each:

* `Document` — what is known of the whole document before its first line: title, its names, the
  self-description prefilter, whether it is a change log.
* `Outline` — the heading path and the subject every block names (`Title > Section > Subsection`), and
  whether a change-log section is open.
* `PendingList` (`lists`) — the list being read and its lead-in; `lists.procedure` judges it.
* `Release` — a dated release of a change log, collecting its changes.
* `Scan` — the paragraphs, lists and headings of one page, offered to the rules of `table` in order.
  The line classifiers of `formats` (one per format) subclass it and call its handlers.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import deque
from dataclasses import dataclass, field
from typing import ClassVar

from ingest.proposers import rules, table
from ingest.proposers.emit import Emitter
from ingest.proposers.emit import summary as _summary
from ingest.proposers.lists import SUBJECT_SEPARATOR, Item, PendingList, procedure

MAX_SUBJECT_HEADINGS = 3
MAX_LEAD_IN_ITEMS = 8
OPENING_PARAGRAPHS = 2  # a document says what it is in its first paragraphs (a tagline, then a description)
PLAIN_HEADING_LEVEL = 7
# Plain-string aliases: enum attribute lookups are measurable at a few hundred thousand lines per second.
_SEMANTIC, _EPISODIC, _PROCEDURAL = "semantic", "episodic", "procedural"
_TAGLINE, _LEAD_IN, _DATED = table.TAGLINE, table.LEAD_IN, table.DATED


@dataclass(frozen=True)
class Document:
    """What every page of a document shares: its title and the words that name it."""

    title: str | None
    names: frozenset[str]  # lowercased title words: "tmux is ..." may define tmux
    self_names: re.Pattern[str] | None  # `rules.self_names`: the prefilter of `rules.self_description`
    changelog: bool  # the title names a change log: plain lines may be releases

    @classmethod
    def titled(cls, title: str | None) -> Document:
        names = frozenset(word.strip("!?.,:;()'\"").lower() for word in title.split()) if title else frozenset()
        changelog = title is not None and rules.is_changelog_title(title)
        return cls(title, names, rules.self_names(title, names), changelog)


@dataclass
class Outline:
    """The heading path of a page and the subject it gives blocks; whether a change-log section is open."""

    title: str | None
    headings: list[tuple[int, str]] = field(default_factory=list)
    sections: int = 0  # headings read so far, but for one that repeats the title (`Scan.opening`)
    changelog_levels: list[int] = field(default_factory=list)
    in_changelog: bool = False  # the document is a change log, or a heading on the path names one
    changelog_doc: bool = False
    # `subject`, kept until the heading path changes (every block asks for it).
    _subject: str | None = None
    _subject_known: bool = False

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

    def last(self) -> str | None:
        return self.headings[-1][1] if self.headings else None

    def day(self) -> str | None:
        """The date the nearest heading that names one names."""
        return next((d for _, t in reversed(self.headings) if (d := rules.date_in(t)) is not None), None)

    def enter(self, level: int, title: str) -> None:
        """A heading of `level`: the path pops to its parent and takes it."""
        self.sections += title != self.title
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, title))
        self._subject_known = False
        # Headings only pop off the end: below a change-log heading until a heading of its level or higher.
        if self.changelog_levels:
            self.changelog_levels = [level for level in self.changelog_levels if level < self.headings[-1][0]]
        if rules.is_changelog_title(title):
            self.changelog_levels.append(self.headings[-1][0])
        self.in_changelog = self.changelog_doc or bool(self.changelog_levels)


@dataclass
class Release:
    """A dated release heading of a change log, collecting its changes until the next release or section."""

    line: int
    level: int
    version: str
    occurred_at: str
    groups: list[tuple[str, list[str]]] = field(default_factory=list)

    def change(self, text: str) -> None:
        if not self.groups:
            self.groups.append(("", []))
        change = rules.change_text(text)
        if change and any(c.isalpha() for c in change):
            self.groups[-1][1].append(change)

    def summary(self) -> str:
        parts = []
        for group, changes in self.groups:
            if changes:
                parts.append(f"{group}: {', '.join(changes)}" if group else "; ".join(changes))
        return _summary(f"Released {self.version}", parts)


@dataclass
class Scan(Emitter):
    """State of one pass over one page, and the handlers a line classifier calls."""

    doc: Document = field(default_factory=lambda: Document.titled(None))
    outline: Outline = field(init=False)
    pending: PendingList = field(init=False, default_factory=PendingList)
    paragraph: list[tuple[int, str]] = field(init=False, default_factory=list)
    paragraphs: int = field(init=False, default=0)  # prose paragraphs read so far (`opening`)
    release: Release | None = field(init=False, default=None)
    lineno: int = field(init=False, default=0)
    # `table.Reading`: what a rule may know of the text around the unit it reads (the document's).
    title: str | None = field(init=False, default=None)
    names: frozenset[str] = field(init=False, default=frozenset())
    self_names: re.Pattern[str] | None = field(init=False, default=None)

    PLAIN_HEADINGS: ClassVar[bool] = True  # a lone ALL-CAPS line is a heading (not in Markdown)

    def __post_init__(self) -> None:
        self.outline = Outline(self.doc.title, changelog_doc=self.doc.changelog, in_changelog=self.doc.changelog)
        self.title, self.names, self.self_names = self.doc.title, self.doc.names, self.doc.self_names

    # --- what rules may know (`table.Reading`) ------------------------------------------------------------

    @property
    def opening(self) -> bool:
        """In the first `OPENING_PARAGRAPHS` paragraphs, under the document's first heading at most: where a
        document says what it is ("This is a ...", "This library ...")."""
        return self.paragraphs <= OPENING_PARAGRAPHS and self.outline.sections <= 1

    def heading_day(self) -> str | None:
        return self.outline.day()

    @property
    def changelog(self) -> bool:
        """Inside a change log: its items are changes, not definitions or steps."""
        return self.release is not None or self.outline.in_changelog

    # --- blocks ------------------------------------------------------------------------------------------

    def semantic(self, kind: str, label: str, statement: str, lines: tuple[int, int]) -> None:
        payload = {"kind": kind, "label": label, "statement": statement}
        subject = self.outline.subject
        if subject is not None and subject != label:
            payload["subject"] = subject
        self.emit(_SEMANTIC, ("semantic", kind, label, subject or ""), payload, lines)

    def episode(self, text: str, line: int) -> bool:
        """A dated line, heading or item (the `dated` rule) becomes an episode."""
        if not text or not (text[0].isdigit() or text[0] in "[("):
            return False  # `rules.may_be_dated`, inlined: most lines a classifier leaves over are no dates
        found = _DATED.find(text, self)
        if found is None:
            return False
        occurred_at, summary = found
        payload = {"summary": summary, "occurred_at": occurred_at}
        context = self.outline.subject
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
        self.release = Release(line=line, level=level, version=version, occurred_at=f"{day}T00:00:00Z")
        return True

    def close_release(self) -> None:
        release, self.release = self.release, None
        if release is None:
            return
        summary = release.summary()
        payload = {"summary": summary, "occurred_at": release.occurred_at}
        if self.doc.title is not None:
            payload["context"] = self.doc.title
        self.emit(_EPISODIC, ("episodic", release.occurred_at, summary), payload, (release.line, release.line))

    # --- paragraphs --------------------------------------------------------------------------------------

    def flush_paragraph(self) -> None:
        if not self.paragraph:
            return  # called for every blank line and heading
        lines, self.paragraph = self.paragraph, []
        if self.release is not None:
            return  # prose inside a release: its changes are the list items
        if not lines[0][1].startswith("Metadata-Version:") and not rules.is_link_line(lines[0][1]):
            self.paragraphs += 1  # prose: not a package's headers, not badges
        if len(lines) == 1 and self.PLAIN_HEADINGS and self.plain_heading(lines[0]):
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
        found = rules.definition(sentence[:-1].rstrip() + ".", self.doc.names) if len(sentence.split()) > 2 else None
        if found is not None:
            kind, label = found
            self.pending.definition = (kind, label, rules.clean(sentence), lines[0][0], lines[-1][0])
        named = _LEAD_IN.find(rules.clean(sentence[:-1]), self)
        if named is not None:  # "To deploy the app:", "Checklist:"; not "This boils down to several options:"
            self.pending.lead_in = named
        else:
            self.pending.refused = True

    def definitions(self, lines: list[tuple[int, str]]) -> None:
        """The sentences of a run of lines, offered to the sentence rules of `table` in order."""
        text = " ".join([t for _, t in lines])
        if self.paragraphs == 1 and self.doc.title is not None and self.opening and self.tagline(text, lines):
            return
        if not table.may_find_in(text, self):
            return
        starts, at = [], 0
        for _, line_text in lines:
            starts.append(at)
            at += len(line_text) + 1
        for start, end in rules.whole_sentences(text):
            sentence = text[start:end]
            if sentence[-1] not in ".!" and not sentence.endswith((".)", '."', ".'")):
                continue  # not a whole sentence: cut by a line that looked like a title, or by a link
            for rule in table.SENTENCE_RULES:
                found = rule.find(sentence, self)
                if found is not None:
                    break
            else:
                continue
            if table.refused(sentence, self):
                continue
            first = lines[bisect.bisect_right(starts, start) - 1][0]
            last = lines[bisect.bisect_right(starts, end - 1) - 1][0]
            kind, label, statement = found
            self.semantic(kind, label, statement, (first, last))

    def tagline(self, text: str, lines: list[tuple[int, str]]) -> bool:
        """A first paragraph that is one phrase saying what the document's subject is (the `tagline` rule)."""
        spans = list(itertools.islice(rules.whole_sentences(text), 2))
        found = _TAGLINE.find(text[spans[0][0] : spans[0][1]], self) if len(spans) == 1 else None
        if found is None or table.refused(text, self):
            return False
        kind, label, statement = found
        self.semantic(kind, label, statement, (lines[0][0], lines[-1][0]))
        return True

    # --- lists -------------------------------------------------------------------------------------------

    def flush_list(self) -> None:
        pending = self.pending
        if not pending.items and pending.lead_in is None and pending.definition is None and not pending.refused:
            return  # the common case: a paragraph line with no list before it
        definition, refused, lead_in = pending.definition, pending.refused, pending.lead_in
        items, pending.items = [item.joined() for item in pending.items if not item.overlong], []
        pending.forget()
        if not items:
            return
        if self.release is not None:
            for item in items:
                self.release.change(item.text)
            return
        changelog = self.changelog
        # Under "Parameters"/"Arguments" the items are a function's parameters, not terms.
        last_heading = self.outline.last()
        parameters = last_heading is not None and rules.is_parameter_heading(last_heading)
        claimed = self.claim_items(items, terms=not (changelog or parameters))
        if definition is not None and not claimed and self.definition_with_list(definition, items):
            return
        announced = lead_in or last_heading
        if claimed or refused or changelog or len(items) < 2 or announced is None:
            return
        payload = procedure(items, lead_in, announced, self.outline.path, last_heading)
        if payload is not None:
            lines = (items[0].first, items[-1].last)
            self.emit(_PROCEDURAL, ("procedural", payload["label"], payload.get("subject", "")), payload, lines)

    def claim_items(self, items: list[Item], *, terms: bool) -> bool:
        """Items offered to the item rules of `table` in order (dated items become episodes, and when `terms`
        "Term: definition" items of a bulleted list concepts); True if any rule took one."""
        claimed = False
        for item in items:
            for rule in table.ITEM_RULES:
                if rule.gives == _EPISODIC:
                    if self.episode(item.text, item.first):
                        claimed = True
                        break
                elif terms and not item.ordered:
                    found = rule.find(item.text, self)
                    if found is not None and not table.refused(item.text, self):
                        claimed = True
                        kind, label, statement = found
                        self.semantic(kind, label, statement, (item.first, item.last))
                        break
        return claimed

    def definition_with_list(self, pending: tuple[str, str, str, int, int], items: list[Item]) -> bool:
        """"The API is minimal:" and its short list are one statement: "The API is minimal: a; b; c."."""
        kind, label, sentence, first, _ = pending
        statement = f"{sentence} {'; '.join(rules.clean(item.text).rstrip('.;,') for item in items)}."
        if len(items) > MAX_LEAD_IN_ITEMS or len(statement) > rules.MAX_STATEMENT_CHARS:
            return False
        self.semantic(kind, label, statement, (first, items[-1].last))
        return True

    def package_summary(self, fields: dict[str, tuple[int, str]]) -> None:
        """A Python package's core metadata (`METADATA`, `PKG-INFO`): its `Summary:` says what `Name:` is."""
        if "Name" not in fields or "Summary" not in fields:
            return
        name, (number, summary) = fields["Name"][1], fields["Summary"]
        if not rules.has_word_count(summary, 3) or rules.is_link_line(summary):
            return  # "UNKNOWN", a URL, or a word or two: nothing said
        if len(summary) > rules.MAX_STATEMENT_CHARS:
            return  # "UNKNOWN", a URL, or a word or two: nothing said
        said = summary.lower().startswith(name.lower()) and summary[len(name) : len(name) + 1] in (":", " ", ",")
        statement = summary if said else f"{name}: {summary}"
        # The subject names this document, not the package alone: a README titled "pip" that says what pip
        # is would otherwise be the same label and subject with another statement (a contradiction).
        version = f" {fields['Version'][1]}" if "Version" in fields else ""
        subject = f"{name}{version} package metadata"
        payload = {"kind": "concept", "label": name, "statement": statement, "subject": subject}
        self.emit(_SEMANTIC, ("semantic", "concept", name, subject), payload, (number, number))

    # --- headings and items ------------------------------------------------------------------------------

    def heading(self, level: int, title: str, number: int) -> None:
        self.flush_paragraph()
        self.flush_list()
        self.pending.lead_in = None
        if self.release is not None and level <= self.release.level:
            self.close_release()
        if not title:
            return
        if self.release is not None:
            self.release.groups.append((title, []))  # "### Added" inside "## [1.2.0] - 2026-03-14"
            return
        if self.open_release(level, title, number) or self.episode(title, number):
            return
        self.outline.enter(level, title)

    def item(self, number: int, text: str, ordered: bool) -> None:
        """A list item starts: a title-like line just before it is its lead-in (PDF text has no blank line)."""
        if self.paragraph:
            self.pending.lead_in = None
            if rules.is_title_line(self.paragraph[-1][1]) and (
                len(self.paragraph) == 1 or self.paragraph[-2][1][-1:] in ".!?:"
            ):  # "Installing the agent" then steps
                self.pending.lead_in = rules.clean(self.paragraph.pop()[1])
            self.flush_paragraph()
        text = text.strip()
        if text[:1] == "[" and text[2:4] == "] " and text[1] in " xX":
            text = text[4:]  # a task-list checkbox, `- [ ] step`
        self.pending.items.append(Item(number, number, text, ordered))

    def other(self, number: int, stripped: str) -> bool:
        """A line no format-specific kind claimed: a list ends; a dated line is an episode (True), else the
        caller adds it to the paragraph."""
        self.flush_list()
        self.pending.lead_in = None
        if self.episode(stripped, number):
            self.flush_paragraph()
            return True
        return False

    def finish(self) -> None:
        self.flush_paragraph()
        self.flush_list()
        self.close_release()
