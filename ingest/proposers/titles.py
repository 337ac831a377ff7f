"""A document's title and what its opening says about it: the first heading, an underlined title, a line that
reads as one, YAML front matter's `title:`, or, untitled, its opening words; a package's core metadata headers.

The subjects of every block of a document start with its title, so two documents must not share one by
accident; a licence's title tells the scan the document is terms, not knowledge.
"""

from __future__ import annotations

import itertools
import re

from ingest.proposers import rules
from ingest.proposers.changelogs import HEAD_LINE_CHARS
from ingest.proposers.emit import SPLIT_BELOW

MAX_TITLE_CHARS = 100  # an underlined title, or the opening line that names an untitled document, at most
TITLE_WINDOW = 16_384  # the title is looked for in the first characters only
METADATA_HEADER_LINES = 400  # a package's core metadata headers (many `Classifier:` lines) come first

HEADING_MARK = re.compile(r"(#{1,6})\s+")
SETEXT = re.compile(r"(=+|-+)\s*")
ADORNMENT = re.compile(r"([=\-~^\"'*+#:._`])\1{2,}\s*")
_FIRST_HEADING = re.compile(r"^#{1,6}[ \t]+\S", re.MULTILINE)
_FIRST_H1 = re.compile(r"^#[ \t]+\S", re.MULTILINE)


def atx_heading(line: str) -> tuple[int, str] | None:
    """`(level, title)` of a Markdown `#` heading (closing `#`s dropped), or None.

    Same result as fullmatching `(#{1,6})\\s+(.*?)\\s*#*\\s*`, in linear time: that pattern backtracks
    cubically (a heading line with 4,000 inner spaces took a minute).
    """
    mark = HEADING_MARK.match(line)
    if mark is None:
        return None
    title = line[mark.end() :].rstrip().rstrip("#").rstrip()
    return None if "\n" in title else (len(mark[1]), title)


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
    lines = first_lines(text, 41)
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
        if ADORNMENT.fullmatch(stripped) is not None or (stripped == "---" and index == 0):
            continue
        heading = atx_heading(stripped) if stripped[0] == "#" else None
        if heading is not None:
            return rules.clean(heading[1]) or None
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        underlined = following and following[0] in "=-~^\"'*+#:._`" and ADORNMENT.fullmatch(following) is not None
        titled = underlined or (markdown and following and SETEXT.fullmatch(following))
        if titled and len(stripped) <= MAX_TITLE_CHARS:
            return rules.clean(stripped)
        if rules.is_title_line(stripped) and not rules.dated(stripped):
            return rules.clean(stripped)
        return opening_line(stripped)
    return None


def opening_line(line: str) -> str:
    """The name of an untitled document: its opening line, whole. Documents that open alike differ in the words
    that come last ("XML Security Library example: Decrypting an encrypted file using a single key." and "...
    using keys manager."), so the line is not cut at a number of words; only a line longer than a title
    (`MAX_TITLE_CHARS`: a paragraph written on one line) is cut, at its last whole word within that length."""
    name = " ".join(rules.clean(line).rstrip(":").split())
    if len(name) <= MAX_TITLE_CHARS:
        return name
    head = name[: MAX_TITLE_CHARS + 1]
    return (head.rsplit(" ", 1)[0] if " " in head else name[:MAX_TITLE_CHARS]) + " …"


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


def core_metadata(text: str) -> dict[str, tuple[int, str]]:
    """`Name`, `Version` and `Summary` of a package's core metadata headers (RFC 822 style), with their lines."""
    fields: dict[str, tuple[int, str]] = {}
    for number, line in enumerate(first_lines(text, METADATA_HEADER_LINES), start=1):
        if not line.strip():
            break  # the headers end at the first blank line; the long description follows
        key, colon, value = line.partition(": ")
        if colon and key in ("Name", "Version", "Summary") and rules.clean(value):
            fields[key] = (number, rules.clean(value))
    return fields


def first_lines(text: str, count: int) -> list[str]:
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
