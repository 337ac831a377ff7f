"""`html-text`: the readable text of an HTML page, with a light Markdown-like structure.

Rules (deterministic, stdlib `html.parser` only; the encoding as `charset` finds it — a BOM, UTF-8, the
page's `<meta charset>` or XML declaration, then the detector — named on the record when not UTF-8:
`html-text;charset=cp1252`):
- the contents of `head`, `script`, `style`, `noscript`, `template`, `svg` are dropped;
- entities are decoded; a no-break space counts as a space; runs of whitespace collapse to one space;
- block elements (`p`, `div`, `section`, `li`, `tr`, `h1`-`h6`, `pre`, ...) start a new line; paragraph-
  level ones (`p`, headings, lists, tables, `pre`, `blockquote`, sectioning) leave one blank line;
- headings become `# `..`###### ` lines; list items become `- ` or `1. ` lines (nested lists indent by
  two spaces), so the heuristic proposer sees sections and steps as in Markdown;
- `pre` keeps its whitespace and line breaks;
- trailing spaces and repeated blank lines are removed; the view ends with one LF; then NFC.
Version `1+py<major.minor>+unicode-<x>`: the parser ships with Python, NFC with its Unicode database.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from ingest.normalize.base import (
    PYTHON_TAG,
    UNICODE_TAG,
    NormalizationError,
    NormalizedOutput,
    TextPipeline,
    text_view,
)
from ingest.normalize.charset import parameterized, read_text

PARSE_ERROR = "html-broken"
ACCEPTED = frozenset({"text/html"})

_DROPPED = frozenset({"head", "script", "style", "noscript", "template", "svg"})
_PARAGRAPH = frozenset(
    {"p", "pre", "blockquote", "ul", "ol", "dl", "table", "section", "article", "header", "footer",
     "nav", "aside", "main", "figure", "form", "fieldset", "hr", "address", "details", "body"}
)  # fmt: skip
_LINE = frozenset({"br", "div", "li", "tr", "dt", "dd", "figcaption", "caption", "summary", "option"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_CELLS = frozenset({"td", "th"})
_SPACE = re.compile(r"[ \t\n\f\r\u00a0]+")


_PIECES = 4096  # pieces of a line joined at once: a 50 MB one-line page arrives as millions of them


def _rstrip(pieces: list[str], chars: str) -> None:
    """`"".join(pieces).rstrip(chars)`, done on the pieces in place (without joining them)."""
    while pieces:
        last = pieces[-1].rstrip(chars)
        if last:
            pieces[-1] = last
            return
        pieces.pop()


def _blank(pieces: list[str]) -> bool:
    """`not "".join(pieces).strip()`: nothing but whitespace."""
    return all(not piece or piece.isspace() for piece in pieces)


class _Lines:
    """Accumulates the output text; `gap` is how far apart (1 = new line, 2 = blank line) the next text goes.

    Memory and time stay linear in the page, whatever the length of its lines: the current line is a list
    of pieces, joined in groups of `_PIECES` (a 50 MB `<p>` arrives in millions of pieces: `str +=` on a
    string another reference holds copies it whole each time, and one `str` per piece costs ~50 bytes more
    than its text). Finished lines go to `out`, blank ones only once text follows them (leading and
    trailing blank lines are not part of the view), and `result` joins them once.
    """

    def __init__(self) -> None:
        self.out: list[str] = []  # the finished lines, each followed by an LF
        self.blanks: list[str] = []  # whitespace-only lines (and their LFs) not yet known to be inside the text
        self.started = False  # a line with text was written: blank lines from here on may be inside the text
        self.finished = False  # a line was finished (`_open_line` separates paragraphs only after one)
        self.last_empty = False  # the last finished line is empty
        self.chunks: list[str] = []  # the current line: groups of joined pieces ...
        self.parts: list[str] = []  # ... then its latest pieces, never an empty one
        self.gap = 0
        self.marker = False  # the current line holds only a list or heading marker, waiting for its text

    def _has_text(self) -> bool:
        return bool(self.parts or self.chunks)

    def _ends_in_space(self) -> bool:
        return (self.parts[-1] if self.parts else self.chunks[-1]).endswith(" ")

    def ends_open(self) -> bool:
        """The current line has text and does not end in a space (a table cell needs one before it)."""
        return self._has_text() and not self._ends_in_space()

    def space(self) -> None:
        self._add(" ")

    def _add(self, piece: str) -> None:
        self.parts.append(piece)
        if len(self.parts) >= _PIECES:
            self._group()

    def _group(self) -> None:
        self.chunks.append("".join(self.parts))
        self.parts = []

    def _take(self) -> list[str]:
        """The current line's pieces (at most a few for a short line); the line is empty afterwards."""
        pieces = self.chunks
        if self.parts:
            pieces.append("".join(self.parts))
        self.chunks, self.parts = [], []
        return pieces

    def _finish(self, pieces: list[str]) -> None:
        """A finished line, as pieces (none: an empty line)."""
        if not _blank(pieces):
            self._write(pieces)
            return
        self.finished = True
        self.last_empty = not any(pieces)
        if self.started:
            self.blanks += [*pieces, "\n"]

    def _write(self, pieces: list[str]) -> None:
        """A finished line with text, as pieces."""
        self.finished, self.last_empty, self.started = True, False, True
        out = self.out
        if self.blanks:
            out += self.blanks
            self.blanks = []
        out += pieces
        out.append("\n")

    def _open_line(self) -> None:
        if not self._has_text() and self.finished and self.gap >= 2 and not self.last_empty:
            self._finish([])
        self.gap = 0

    def text(self, words: str) -> None:
        parts = self.parts
        last = parts[-1] if parts else self.chunks[-1] if self.chunks else " "  # an empty line: as after a space
        if last[-1] == " ":
            words = words.lstrip(" ")
        if words:
            if self.gap:
                self._open_line()
            parts.append(words)  # `_add`, inlined: this runs once per piece of text
            if len(parts) >= _PIECES:
                self._group()
            self.marker = False

    def raw(self, text: str) -> None:
        """Preformatted text: spaces kept, each newline ends a line (blank lines kept)."""
        first, *rest = text.split("\n")
        if first:
            self._open_line()
            self._add(first)
        self.marker = False
        for line in rest:
            pieces = self._take()
            _rstrip(pieces, " \t")
            self._finish(pieces)
            if line:
                self._add(line)

    def prefix(self, marker: str) -> None:
        self._open_line()
        self.chunks, self.parts = [], [marker]
        self.marker = True

    def end(self, gap: int, *, drop_marker: bool = False) -> None:
        """End the current line; a bare marker survives (`<li><p>x`) unless its element closes empty."""
        if self.marker:
            if not drop_marker:
                return
            self.chunks, self.parts, self.marker = [], [], False
        if self.chunks:
            pieces = self._take()
            _rstrip(pieces, " \t")
            if not _blank(pieces):
                self._write(pieces)
        elif self.parts:  # a short line
            parts, self.parts = self.parts, []
            line = (parts[0] if len(parts) == 1 else "".join(parts)).rstrip(" \t")
            if line.strip():
                self._write([line])
        if gap > self.gap:
            self.gap = gap

    def result(self) -> str:
        """The view text: every line ends with an LF; blank lines at either end are left out."""
        self.end(0, drop_marker=True)
        out, self.out = self.out, []
        return "".join(out)


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out = _Lines()
        self.dropped = 0
        self.pre = 0
        self.pre_opened = False
        self.lists: list[list[int]] = []  # per open list: [is_ordered, next number]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROPPED:
            self.dropped += 1
        elif self.dropped:
            return
        elif tag in _HEADINGS:
            self.out.end(2)
            self.out.prefix("#" * _HEADINGS[tag] + " ")
        elif tag in ("ul", "ol"):
            self.out.end(2 if not self.lists else 1)
            start = dict(attrs).get("start") or "1"
            self.lists.append([tag == "ol", int(start) if start.lstrip("-").isdigit() else 1])
        elif tag == "li":
            self.out.end(1)
            ordered, number = self.lists[-1] if self.lists else [False, 1]
            indent = "  " * max(len(self.lists) - 1, 0)
            if self.lists and ordered:
                self.lists[-1][1] += 1
            self.out.prefix(f"{indent}{number}. " if ordered else f"{indent}- ")
        elif tag in _PARAGRAPH or tag in _LINE:
            self.out.end(2 if tag in _PARAGRAPH else 1)
            if tag == "pre":
                self.pre += 1
                self.pre_opened = True
        elif tag in _CELLS and self.out.ends_open():
            self.out.space()

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROPPED:
            self.dropped = max(self.dropped - 1, 0)
        elif self.dropped:
            return
        elif tag in ("ul", "ol"):
            if self.lists:
                self.lists.pop()
            self.out.end(2 if not self.lists else 1, drop_marker=True)
        elif tag in _HEADINGS or tag in _PARAGRAPH:
            if tag == "pre" and self.pre:
                self.pre -= 1
            self.out.end(2, drop_marker=tag in _HEADINGS)
        elif tag in _LINE:
            self.out.end(1, drop_marker=tag == "li")

    def handle_data(self, data: str) -> None:
        if self.dropped:
            return
        if self.pre:
            # As in browsers, a newline right after <pre> is not content.
            self.out.raw(data[1:] if self.pre_opened and data.startswith("\n") else data)
            self.pre_opened = False
        else:
            self.out.text(_SPACE.sub(" ", data))


def html_to_text(html: str) -> str:
    """The text of an HTML document under the rules in this module's docstring (before NFC).

    Pass the only reference to a large page (`Decoded.take()`): it is released once parsed, before the
    lines are joined, so the page, its lines and their join are never all held at once.
    """
    parser = _Extractor()
    html = html.replace("\r\n", "\n").replace("\r", "\n")
    try:
        parser.feed(html)
        del html  # the parser keeps only the unparsed tail
        parser.close()
    except (AssertionError, ValueError) as e:  # html.parser's last-resort complaints
        raise NormalizationError(PARSE_ERROR, f"unparseable HTML: {e}") from None
    return parser.out.result()


class HtmlText(TextPipeline):
    """The `html-text` pipeline."""

    name = "html-text"
    version = f"1+{PYTHON_TAG}+{UNICODE_TAG}"
    accepted = ACCEPTED

    def normalize_bytes(self, data: bytes) -> NormalizedOutput:
        """The same view from bytes already in memory (a small source read once by registration)."""
        self.check_size(data)
        decoded = read_text(data, self.charset, html=True)
        del data  # a large source: only its text is needed from here on (the caller passed it, not kept it)
        notes = (decoded.note,) if decoded.note else ()
        view = text_view(html_to_text(decoded.take()))
        return NormalizedOutput(view, pipeline=parameterized(self.name, decoded.charset), notes=notes)
