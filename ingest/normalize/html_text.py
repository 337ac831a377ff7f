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


class _Lines:
    """Accumulates output lines; `gap` is how far apart (1 = new line, 2 = blank line) the next text goes."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.current = ""
        self.gap = 0
        self.marker = False  # `current` holds only a list or heading marker, waiting for its text

    def _open_line(self) -> None:
        if not self.current and self.lines and self.gap >= 2 and self.lines[-1] != "":
            self.lines.append("")
        self.gap = 0

    def text(self, words: str) -> None:
        if not self.current or self.current.endswith(" "):
            words = words.lstrip(" ")
        if words:
            self._open_line()
            self.current += words
            self.marker = False

    def raw(self, text: str) -> None:
        """Preformatted text: spaces kept, each newline ends a line (blank lines kept)."""
        first, *rest = text.split("\n")
        if first:
            self._open_line()
            self.current += first
        self.marker = False
        for line in rest:
            self.lines.append(self.current.rstrip(" \t"))
            self.current = line

    def prefix(self, marker: str) -> None:
        self._open_line()
        self.current = marker
        self.marker = True

    def end(self, gap: int, *, drop_marker: bool = False) -> None:
        """End the current line; a bare marker survives (`<li><p>x`) unless its element closes empty."""
        if self.marker:
            if not drop_marker:
                return
            self.current, self.marker = "", False
        line = self.current.rstrip(" \t")
        if line.strip():
            self.lines.append(line)
        self.current = ""
        self.gap = max(self.gap, gap)

    def result(self) -> str:
        self.end(0, drop_marker=True)
        while self.lines and not self.lines[-1].strip():
            self.lines.pop()
        while self.lines and not self.lines[0].strip():
            self.lines.pop(0)
        return "".join(line + "\n" for line in self.lines)


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
        elif tag in _CELLS and self.out.current and not self.out.current.endswith(" "):
            self.out.current += " "

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
    """The text of an HTML document under the rules in this module's docstring (before NFC)."""
    parser = _Extractor()
    try:
        parser.feed(html.replace("\r\n", "\n").replace("\r", "\n"))
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
        view = text_view(html_to_text(decoded.text))
        return NormalizedOutput(view, pipeline=parameterized(self.name, decoded.charset), notes=notes)
