"""One line classifier per format: what kind of line a raw line of the normalized view is, in that format.

Each classifier is a `Scan` (`scan.py`) whose `line` tells the kinds apart in its format's priority order and
calls the scan's handler for the kind (`heading`, `item`, `other`, or the paragraph):

* `MarkdownLines` — `text/markdown`, `*+markdown`, and `text/html` (`html-text` makes a Markdown view):
  `#` and setext headings, ``` and ~~~ fences.
* `RstLines` — `text/x-rst`: underlined and overlined titles, directives (admonitions are prose), field
  lists, literal blocks; no fences and no `#` headings.
* `PlainLines` — everything else: `text/plain`, `text/troff` (`man-text` makes `#` headings at the margin and
  `-` items), PDF text: `#` headings at the margin only, underlined titles, ALL-CAPS lines, ``` fences.

A line that starts with a letter is prose in every format (unless a list or a reST literal block is open,
or a change log may start a release on it): each classifier takes that fast path first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from ingest.proposers import rules
from ingest.proposers.scan import PLAIN_HEADING_LEVEL, Scan
from ingest.proposers.titles import ADORNMENT, SETEXT, atx_heading

_ITEM = re.compile(r"\s{0,12}(?:([-*+•])|([0-9]{1,3}|#)[.)])\s+(\S.*)")  # `#.`: reST auto-numbering
_ITEM_START = "-*+•0123456789#"
_ADORNMENT_CHARS = "=-~^\"'*+#:._`"
_DIRECTIVE = re.compile(r"\.\.\s+([A-Za-z][\w:-]*)::(?:\s+(.*))?")
_FIELD = re.compile(r":([A-Za-z][\w -]{0,30}):\s+(\S.*)")
_ADMONITIONS = frozenset(["note", "warning", "tip", "important", "caution", "attention", "hint", "danger", "error",
                          "seealso", "admonition", "versionadded", "versionchanged", "deprecated"])  # fmt: skip
_NOT_FACT_FIELDS = frozenset(["param", "parameter", "arg", "argument", "key", "keyword", "type", "returns", "return",
                              "rtype", "raises", "raise", "except", "exception", "var", "ivar", "cvar", "vartype",
                              "meta"])  # fmt: skip


@dataclass
class _Lines(Scan):
    """What every classifier shares: list items, their continuations, release lines of change logs."""

    FENCES: ClassVar[tuple[str, ...]] = ("```",)
    MARKDOWN_TITLES: ClassVar[bool] = False  # `titles.document_title` reads `#`/setext titles first

    def line(self, number: int, raw: str) -> None:
        raise TypeError(f"{type(self).__name__} classifies no lines")  # every format overrides it

    def prose(self, number: int, stripped: str) -> None:
        """Most lines of real text are prose: one that starts with a letter is no heading or list item. With no
        list open and not a possible release line of a change log, all a classifier does for it is this: the
        line joins the paragraph, and nothing before it leads in to a list any more. (The classifiers inline it
        on their hot path; the reST one calls it.)"""
        pending = self.pending
        pending.lead_in = pending.definition = None  # what `flush_list` does when no list is open
        pending.refused = False
        self.paragraph.append((number, stripped))

    def atx(self, number: int, stripped: str) -> bool:
        """A `#` heading; True when the line is one."""
        heading = atx_heading(stripped)
        if heading is None:
            return False
        self.heading(heading[0], rules.clean(heading[1]), number)
        return True

    def listed(self, number: int, raw: str, stripped: str) -> bool:
        """A list item, an item's continuation line, or a change log's release line; True when consumed."""
        item = _ITEM.fullmatch(raw) if stripped[0] in _ITEM_START else None
        if item is not None:
            if self.changelog and not raw[:1].isspace() and rules.release(item[3]) is not None:
                self.heading(PLAIN_HEADING_LEVEL, rules.clean(item[3]), number)  # GNU NEWS: "* Noteworthy changes in"
            else:
                self.item(number, item[3], item[1] is None)
            return True
        if self.pending.items and raw[0].isspace() and not self.paragraph:
            self.pending.items[-1].continued(stripped, number)
            return True
        if (
            not self.paragraph and not raw[0].isspace() and len(stripped) < 100 and self.changelog
            and rules.release(stripped) is not None
        ):
            self.heading(PLAIN_HEADING_LEVEL, rules.clean(stripped), number)  # "Version 1.2 (2026-03-14)"
            return True
        return False


@dataclass
class MarkdownLines(_Lines):
    """Markdown and the Markdown views of HTML: `#` and setext headings; no ALL-CAPS headings."""

    FENCES: ClassVar[tuple[str, ...]] = ("```", "~~~")
    MARKDOWN_TITLES: ClassVar[bool] = True
    PLAIN_HEADINGS: ClassVar[bool] = False

    def line(self, number: int, raw: str) -> None:
        self.lineno = number
        stripped = raw.strip()
        # Inlined (a call per line costs ~4%): see `_Lines.prose`.
        if stripped[:1].isalpha() and not self.pending.items and (self.paragraph or not self.changelog):
            pending = self.pending
            pending.lead_in = pending.definition = None
            pending.refused = False
            self.paragraph.append((number, stripped))
            return
        if not stripped:
            self.flush_paragraph()
            return
        first = stripped[0]
        if first == "#":
            if self.atx(number, stripped):
                return
        elif first in "=-" and len(self.paragraph) == 1 and SETEXT.fullmatch(stripped) is not None:
            number, title = self.paragraph.pop()
            self.heading(1 if first == "=" else 2, rules.clean(title), number)
            return
        if self.listed(number, raw, stripped) or self.other(number, stripped):
            return
        self.paragraph.append((number, stripped))


@dataclass
class _AdornedLines(_Lines):
    """Formats whose titles are underlined (and overlined) by a run of one punctuation character."""

    styles: list[tuple[str, bool]] = field(init=False, default_factory=list)
    overline: str | None = field(init=False, default=None)

    def adorned(self, char: str, overlined: bool) -> int:
        """The level of a title style: styles rank in order of first use."""
        style = (char, overlined)
        if style not in self.styles:
            self.styles.append(style)
        return self.styles.index(style) + 1

    def adornment(self, stripped: str) -> bool:
        """An underline (the paragraph's one line is a title), an overline, or a rule; True when consumed."""
        if ADORNMENT.fullmatch(stripped) is None:  # (the callers test `_ADORNMENT_CHARS` first)
            return False
        if len(self.paragraph) == 1 and len(stripped) + 2 >= len(self.paragraph[0][1]):
            title_number, title = self.paragraph.pop()
            overlined, self.overline = self.overline == stripped[0], None
            self.heading(self.adorned(stripped[0], overlined), rules.clean(title), title_number)
        elif not self.paragraph:
            self.flush_list()
            self.overline = stripped[0]
        else:
            self.flush_paragraph()
        return True


@dataclass
class PlainLines(_AdornedLines):
    """Plain text, man pages' text view, PDF text: `#` headings only at the margin (indented, a `#` line is
    code or a continuation), underlined titles, ALL-CAPS lines as headings."""

    def line(self, number: int, raw: str) -> None:
        self.lineno = number
        stripped = raw.strip()
        # Inlined (a call per line costs ~4%): see `_Lines.prose`.
        if stripped[:1].isalpha() and not self.pending.items and (self.paragraph or not self.changelog):
            pending = self.pending
            pending.lead_in = pending.definition = None
            pending.refused = False
            self.paragraph.append((number, stripped))
            return
        if not stripped:
            self.flush_paragraph()
            return
        if raw[0] == "#" and self.atx(number, stripped):
            return
        if stripped[0] in _ADORNMENT_CHARS and self.adornment(stripped):
            return
        if self.listed(number, raw, stripped) or self.other(number, stripped):
            return
        self.paragraph.append((number, stripped))


@dataclass
class RstLines(_AdornedLines):
    """reStructuredText: adorned titles, directives (admonitions are prose, the rest is not), field lists,
    literal blocks after `::`; no fences (`~~~~` underlines titles) and no `#` headings."""

    FENCES: ClassVar[tuple[str, ...]] = ()
    literal: bool = field(init=False, default=False)
    literal_next: bool = field(init=False, default=False)

    def line(self, number: int, raw: str) -> None:
        self.lineno = number
        stripped = raw.strip()
        if (
            stripped[:1].isalpha() and not self.pending.items and not self.literal
            and (self.paragraph or not self.changelog) and not stripped.endswith("::")
        ):
            self.prose(number, stripped)
            return
        if not stripped:
            self.flush_paragraph()
            if self.literal_next:  # "Example::" introduced the literal block, not what follows it
                self.literal, self.literal_next = True, False
                self.pending.lead_in, self.pending.definition = None, None
            return
        if self.rst_line(stripped, raw):
            return
        if stripped[0] in _ADORNMENT_CHARS and self.adornment(stripped):
            return
        if self.listed(number, raw, stripped) or self.other(number, stripped):
            return
        if stripped.endswith("::"):
            self.literal_next = True
            stripped = stripped[:-1] if len(stripped) > 2 and stripped[-3] != " " else stripped[:-2].rstrip()
            if not stripped:
                return
        self.paragraph.append((number, stripped))

    def rst_line(self, stripped: str, raw: str) -> bool:
        """Directives, comments and field lists, and the lines of a literal block; True when consumed."""
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
            words = name.split()
            if words[0].lower() not in _NOT_FACT_FIELDS and len(words) <= 3 and any(c.isalnum() for c in value):
                self.semantic("fact", name, f"{name}: {value}", (self.lineno, self.lineno))
            return True
        return False


def classifier_for(media_type: str) -> type[_Lines]:
    """The line classifier of a normalized view's media type (see the table above)."""
    if media_type in ("text/markdown", "text/html") or media_type.endswith("+markdown"):
        return MarkdownLines
    if media_type == "text/x-rst":
        return RstLines
    return PlainLines
