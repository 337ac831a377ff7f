"""Passages and locators over a normalized view (pure logic).

A view is UTF-8 text with LF line endings; a PDF's view (`pdf-text`) holds one page per form-feed-separated
piece. Locators use the syntax the ingest proposers write into derivation records: `L5`, `L5-L9` (lines,
1-based), `p.3` (a page), `p.3 L2-L4` (lines counted within page 3). A passage is a run of whole lines,
cut at blank lines where possible, so its locator names exactly the text that is indexed and quoted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from brain.errors import InvalidInputError
from brain.identity.names import shown

PAGE_BREAK = "\f"
PAGED_MEDIA_TYPES = frozenset({"application/pdf"})
PASSAGE_CHARS = 700  # a passage closes at the first paragraph end past this size...
MAX_PASSAGE_CHARS = 1400  # ...and at a line end past this one, whatever the paragraphs
MAX_EXCERPT_LINES = 8
MAX_EXCERPT_CHARS = 800

_LOCATOR = re.compile(
    r"^\s*(?:(?:p\.|page\s+)(?P<page>\d{1,6})(?:-(?:p\.)?(?P<page_end>\d{1,6}))?)?[\s,]*"
    r"(?:(?:L|lines?\s+)(?P<first>\d{1,9})(?:\s*-\s*L?(?P<last>\d{1,9}))?)?\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Locator:
    """A place in a view: an optional page and an optional line range (lines within the page if paged)."""

    page: int | None = None
    page_end: int | None = None
    first: int | None = None
    last: int | None = None

    def __str__(self) -> str:
        parts = []
        if self.page is not None:
            parts.append(f"p.{self.page}" + (f"-p.{self.page_end}" if self.page_end not in (None, self.page) else ""))
        if self.first is not None:
            last = self.last if self.last is not None else self.first
            parts.append(f"L{self.first}" if last == self.first else f"L{self.first}-L{last}")
        return " ".join(parts)


def parse_locator(text: str) -> Locator:
    """`L5`, `L5-L9`, `p.3`, `p.3 L2-L4`, `p.2-p.3` (and the spelled-out `line 5`, `lines 5-9`, `page 3`
    other writers use); raises `InvalidInputError` naming the syntax."""
    match = _LOCATOR.match(text)
    if match is None or not text.strip():
        raise InvalidInputError(
            f"invalid locator {shown(text)}", hint="use L5, L5-L9, p.3 or p.3 L2-L4 (lines are 1-based)"
        )
    values = {k: int(v) if v is not None else None for k, v in match.groupdict().items()}
    locator = Locator(**values)
    if any(v == 0 for v in values.values()):
        raise InvalidInputError(f"invalid locator {shown(text)}: pages and lines start at 1")
    if locator.first is not None and locator.last is not None and locator.last < locator.first:
        raise InvalidInputError(f"invalid locator {shown(text)}: the range ends before it starts")
    if locator.page is not None and locator.page_end is not None and locator.page_end < locator.page:
        raise InvalidInputError(f"invalid locator {shown(text)}: the page range ends before it starts")
    return locator


@dataclass(frozen=True)
class Passage:
    """One indexed piece of a view: its locator and its text (whole lines)."""

    locator: str
    text: str


def pages_of(text: str, media_type: str) -> list[str]:
    """The pages of a paged view (PDF), or the whole text as one unpaged piece."""
    return text.split(PAGE_BREAK) if media_type in PAGED_MEDIA_TYPES else [text]


def is_paged(media_type: str) -> bool:
    """Whether views of sources of `media_type` are split into pages (locators name `p.N`)."""
    return media_type in PAGED_MEDIA_TYPES


def passages(text: str, media_type: str) -> list[Passage]:
    """The passages of a view: runs of lines closed at a paragraph end once `PASSAGE_CHARS` are reached."""
    paged = is_paged(media_type)
    out: list[Passage] = []
    for page_number, page in enumerate(pages_of(text, media_type), start=1):
        lines = page.split("\n")
        start: int | None = None
        size = 0
        for number, line in enumerate(lines, start=1):
            blank = not line.strip()
            if start is None:
                if blank:
                    continue
                start, size = number, 0
            size += len(line) + 1
            closes = (blank and size >= PASSAGE_CHARS) or size >= MAX_PASSAGE_CHARS or number == len(lines)
            if closes:
                last = number - 1 if blank else number
                _emit(out, lines, start, last, page_number if paged else None)
                start = None
    return out


def _emit(out: list[Passage], lines: list[str], first: int, last: int, page: int | None) -> None:
    body = "\n".join(lines[first - 1 : last]).strip()
    if body:
        out.append(Passage(str(Locator(page=page, first=first, last=last)), body))


def text_at(text: str, media_type: str, locator: Locator) -> str:
    """The part of a view a locator names (whole pages, or lines within a page); '' when out of range."""
    pages = pages_of(text, media_type)
    if locator.page is not None:
        if not is_paged(media_type):
            if locator.page != 1:
                return ""
        else:
            last_page = locator.page_end or locator.page
            chosen = pages[locator.page - 1 : last_page]
            if not chosen:
                return ""
            pages = chosen
    body = PAGE_BREAK.join(pages) if locator.page is None else "\n".join(pages)
    if locator.first is None:
        return body
    lines = (pages[0] if locator.page is not None else body.replace(PAGE_BREAK, "\n")).split("\n")
    last = locator.last if locator.last is not None else locator.first
    return "\n".join(lines[locator.first - 1 : last])


def excerpt(text: str, media_type: str, locator: str | None) -> str:
    """A few lines of the view at `locator` (its start when there is none or it does not parse)."""
    where = Locator()
    if locator:
        try:
            where = parse_locator(locator)
        except InvalidInputError:
            where = Locator()
    body = text_at(text, media_type, where) if where != Locator() else text
    lines = [line for line in body.replace(PAGE_BREAK, "\n").split("\n")]
    while lines and not lines[0].strip():
        lines.pop(0)
    shown = "\n".join(lines[:MAX_EXCERPT_LINES]).strip()
    return shown if len(shown) <= MAX_EXCERPT_CHARS else shown[: MAX_EXCERPT_CHARS - 1].rstrip() + "…"
