"""`man-text`: the readable text of a roff manual page (`man` and the common `mdoc` macros), Markdown-like.

Rules (deterministic, no external tools: `groff` output depends on its version and the terminal):
- `.TH name section` / `.Dt` give the title line `# name(section)`; `.SH`/`.Sh` are `## ` headings,
  `.SS`/`.Ss` are `### ` headings; in the NAME section `name \\- what it is` becomes `- name — what it is`;
- `.PP`, `.LP`, `.P`, `.sp`, `.Pp` end a paragraph; `.TP` / `.IP tag` / `.It` become list items
  `- tag: text`; `.nf`/`.fi` and `.EX`/`.EE` keep their lines (indented four spaces);
- font macros (`.B`, `.I`, `.BR`, `.IR`, ...) keep their text; other requests and comments are dropped;
- a line ending in a backslash continues on the next; `.de`/`.ig` blocks are skipped;
- escapes: font changes (`\\fB`, `\\f(CW`, `\\f[I]`) and size changes are dropped, `\\-` is `-`, named
  characters (`\\(em`, `\\[bu]`, ...) become their Unicode character, `\\e` is a backslash;
- then the shared text rules (encoding as `charset` finds it, LF, NFC), trailing blank lines removed.
Version `1+unicode-<x>`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

from ingest.normalize.base import (
    UNICODE_TAG,
    NormalizedOutput,
    TextPipeline,
    text_view,
)
from ingest.normalize.charset import parameterized, read_text

ACCEPTED = frozenset({"text/troff"})

_NAMED = {
    "em": "—", "en": "–", "hy": "-", "mi": "-", "bu": "•", "aq": "'", "dq": '"', "lq": "“", "rq": "”",
    "oq": "‘", "cq": "’", "co": "©", "rg": "®", "tm": "™", "de": "°", "ti": "~", "ha": "^", "ga": "`",
    "aa": "´", "rs": "\\", "sl": "/", "mu": "×", "di": "÷", "+-": "±", "<=": "≤", ">=": "≥", "!=": "≠",
    "->": "→", "<-": "←", "lA": "⇐", "rA": "⇒", "sc": "§", "ps": "¶", "pl": "+", "eq": "=", "ba": "|",
    "br": "│", "ul": "_", "fm": "′", "lB": "[", "rB": "]", "lC": "{", "rC": "}", "la": "⟨", "ra": "⟩",
}  # fmt: skip
_ESCAPE = re.compile(
    r"\\(?:f(?:\[[^\]]*\]|\([A-Za-z0-9]{2}|[A-Za-z0-9])"  # font
    r"|s[+-]?(?:\[[^\]]*\]|\([0-9]{2}|[0-9])"  # size
    r"|\*(?:\[[^\]]*\]|\(..|.)"  # string (dropped)
    r"|n(?:\[[^\]]*\]|\(..|.)"  # number register (dropped)
    r"|\((?P<two>..)|\[(?P<long>[^\]]*)\]"  # named characters
    r"|(?P<one>.))"
)
_SIMPLE = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "&": "", "|": "", "^": "", "c": "",
           "%": "", ":": "", "/": "", ",": "", "'": "´", "`": "`", ".": ".", "t": "\t", "!": ""}  # fmt: skip
_DEFINITIONS = frozenset({"de", "de1", "am", "ig"})  # requests whose body, up to `..`, is not text
_BULLETS = frozenset({"•", "—", "–", "-", "*", "·", "o", "+"})
_FONT_MACROS = frozenset({"B", "I", "SM", "SB", "Sy", "Em", "Nm", "Ar", "Pa", "Cm", "Li", "Ev", "Va", "Ic", "Dv", "Er"})
_ALTERNATING = frozenset({"BR", "RB", "BI", "IB", "IR", "RI"})
_PARAGRAPH = frozenset({"PP", "LP", "P", "sp", "Pp", "br", "Lp", "HP", "PD"})
_LITERAL_ON, _LITERAL_OFF = frozenset({"nf", "EX", "Bd"}), frozenset({"fi", "EE", "Ed"})
# Whitespace that `" ".join(text.split())` would change: a run, or a lone character other than a space.
_UNCOLLAPSED = re.compile(r"\s{2,}|[^\S ]")


_LONG_LINE = 1 << 16  # a longer line is unescaped in groups of `_GROUP` pieces
_GROUP = 8192
_SPLIT_BELOW = 1 << 20  # a smaller page is split into lines at once


def _resolve(match: re.Match[str]) -> str:
    name = match["two"] or match["long"]
    if name is not None:
        if name.startswith("u") and len(name) > 1 and all(c in "0123456789ABCDEFabcdef" for c in name[1:]):
            return chr(int(name[1:], 16))
        return _NAMED.get(name, "")
    single = match["one"]
    return _SIMPLE.get(single, single) if single is not None else ""


def _unescaped(text: str) -> list[str]:
    """`unescape(text)` in pieces: a long line's escapes are resolved and joined in groups, because
    `re.sub` lists every piece before it joins them (a 50 MB line of escapes made 400 MB of strings)."""
    comment = text.find('\\"')
    if comment != -1:
        text = text[:comment]
    if "\\" not in text:
        return [text]
    groups: list[str] = []
    parts: list[str] = []
    last = 0
    for match in _ESCAPE.finditer(text):  # what `sub` does: matches left to right, none empty
        parts += (text[last : match.start()], _resolve(match))
        last = match.end()
        if len(parts) >= _GROUP:
            groups.append("".join(parts))
            parts = []
    parts.append(text[last:])
    groups.append("".join(parts))
    return groups


def unescape(text: str) -> str:
    """A roff text line with its escapes resolved (comments `\\"` dropped)."""
    if len(text) >= _LONG_LINE:
        return "".join(_unescaped(text))
    comment = text.find('\\"')
    if comment != -1:
        text = text[:comment]
    return _ESCAPE.sub(_resolve, text) if "\\" in text else text


_MDOC_INLINE = frozenset(
    [
        "Ad", "An", "Aq", "Ar", "At", "Bq", "Brq", "Bx", "Cd", "Cm", "Dq", "Dv", "Ec", "Em", "Eo", "Er", "Ev", "Fa",
        "Fl", "Fn", "Fo", "Fc", "Ft", "Ic", "Li", "Lk", "Ms", "Mt", "Nm", "No", "Ns", "Nx", "Oc", "Oo", "Op", "Ox",
        "Pa", "Pq", "Ql", "Qq", "Sq", "Sx", "Sy", "Tn", "Ux", "Va", "Xr", "Xo", "Xc",
    ]
)


def _arguments(rest: str, mdoc: bool = False) -> list[str]:
    try:
        words = shlex.split(rest, posix=True)
    except ValueError:  # an unbalanced quote
        words = rest.split()
    if not mdoc:
        return words
    out: list[str] = []  # mdoc inline macros: `Fl v Ar file` is `-v file`
    flag = False
    for word in words:
        if word in _MDOC_INLINE:
            flag = word == "Fl"
            continue
        out.append(f"-{word}" if flag else word)
        flag = False
    return out


class _Page:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.current: list[str] = []
        self.literal = False
        self.section = ""
        self.tag_next = False  # `.TP`: the next text line is the tag
        self.item: str | None = None  # an open list item's tag

    def flush(self) -> None:
        if self.current:
            # `" ".join(" ".join(current).split())` without a list of every word (~50 bytes each: a 50 MB
            # one-line page made 500 MB of them); each step rebinds, so a long line is held at most twice.
            parts, self.current = self.current, []
            text = " ".join(parts)
            del parts
            if len(text) < _LONG_LINE:
                text = " ".join(text.split())
            else:
                text = text.strip()
                text = _UNCOLLAPSED.sub(" ", text)
            if not text:
                return
            if self.item is not None:
                if self.item in _BULLETS:  # `.IP \(bu`: a plain list item, not a term
                    text = f"- {text}" if text else ""
                else:
                    text = f"- {self.item}: {text}" if text else f"- {self.item}"
                self.item = None
            elif self.section == "NAME" and (" - " in text or " — " in text):
                name, _, what = text.replace(" — ", " - ").partition(" - ")
                text = f"- {name.strip()} — {what.strip()}"
            self.lines.append(text)
        elif self.item is not None:
            if self.item not in _BULLETS:
                self.lines.append(f"- {self.item}")
            self.item = None

    def blank(self) -> None:
        self.flush()
        if self.lines and self.lines[-1] != "":
            self.lines.append("")

    def text(self, words: str) -> None:
        if self.tag_next:
            self.blank()
            self.tag_next = False
            self.item = words.strip()
            return
        if words and not words.isspace():  # `words.strip()`, without copying a long line to test it
            self.current.append(words)

    def heading(self, marks: str, title: str) -> None:
        self.blank()
        self.lines += [f"{marks} {title}", ""]


def _pieces(source: str) -> Iterator[str]:
    """`source.split("\\n")` one piece at a time, letting go of `source` as its last line is cut (nothing
    handed out is kept here either: a page that is one long line is then held once, as that line)."""
    start, size = 0, len(source)
    while True:
        end = source.find("\n", start)
        if end == -1 or end == size - 1:  # the last line (then, after a final LF, an empty piece)
            held = [source]
            del source
            yield held.pop()[start:] if end == -1 else held.pop()[start:end]
            if end != -1:
                yield ""
            return
        yield source[start:end]
        start = end + 1


class _SourceLines:
    """The input lines, a line ending in an (unescaped) backslash joined to the next one (roff continuation).

    An iterator that keeps no line it handed out; a large source is cut by `_pieces` (pass the only
    reference to it), a small one split at once (faster).
    """

    def __init__(self, source: str) -> None:
        self.pieces = iter(source.split("\n")) if len(source) < _SPLIT_BELOW else _pieces(source)

    def __iter__(self) -> _SourceLines:
        return self

    def __next__(self) -> str:
        piece = next(self.pieces)
        if piece[-1:] != "\\":
            return piece  # the common case: no continuation
        pending: list[str] = []  # joined once: `str +=` over a long run of continued lines is quadratic
        while (len(piece) - len(piece.rstrip("\\"))) % 2 == 1:
            pending.append(piece[:-1])
            following = next(self.pieces, None)
            if following is None:
                joined = "".join(pending)
                if not joined:
                    raise StopIteration
                return joined
            piece = following
        if pending:
            pending.append(piece)
            return "".join(pending)
        return piece


def man_to_text(source: str) -> str:  # noqa: C901 - one dispatch over roff requests, in the order man(7) lists them
    """The view of a roff page under the rules in this module's docstring (before NFC)."""
    page = _Page()
    pending_heading: str | None = None
    mdoc = False
    program = ""  # mdoc: `.Nm` alone repeats the first `.Nm name`
    skipping = False  # inside a macro definition (`.de NAME` ... `..`) or an ignored block (`.ig`)
    lines = _SourceLines(source.replace("\r\n", "\n").replace("\r", "\n"))
    del source  # the lines hold the only reference
    for raw in lines:
        if skipping:
            skipping = raw.strip() != ".."
            continue
        if raw[:1] in (".", "'") and raw[1:].lstrip().split(" ", 1)[0] in _DEFINITIONS:
            skipping = True
            continue
        if raw.startswith((".", "'")) and not page.literal or raw.startswith((".fi", ".EE", ".Ed")):
            name, _, rest = raw[1:].lstrip().partition(" ")
            name = name.strip()
            rest = unescape(rest.strip())
            mdoc = mdoc or name in ("Dd", "Dt", "Sh")
            args = _arguments(rest, mdoc)
            if name in ("\\\"", "") or name.startswith('\\"'):
                continue
            if name in ("TH", "Dt"):
                title = args[0] if args else ""
                section = f"({args[1]})" if len(args) > 1 else ""
                page.heading("#", f"{title}{section}".strip())
            elif name in ("SH", "Sh", "SS", "Ss"):
                marks = "##" if name in ("SH", "Sh") else "###"
                if args:
                    page.heading(marks, " ".join(args))
                    page.section = " ".join(args).upper() if marks == "##" else page.section
                else:
                    pending_heading = marks
            elif name in _PARAGRAPH:
                page.blank()
            elif name == "TP":
                page.blank()
                page.tag_next = True
            elif name in ("IP", "It"):
                page.blank()
                tag = " ".join(args[:1] if name == "IP" else args)
                if tag:
                    page.item = tag
            elif name in _LITERAL_ON:
                page.blank()
                page.literal = True
            elif name in _LITERAL_OFF:
                page.literal = False
                page.blank()
            elif name in _FONT_MACROS and not (mdoc and name == "Nm"):
                page.text(" ".join(args))
            elif name in _ALTERNATING:
                page.text("".join(args))
            elif name == "Nd":
                page.text(f"— {' '.join(args)}")
            elif mdoc and name == "Nm":
                program = program or (args[0] if args else "")
                page.text(" ".join(args) if args else program)
            elif mdoc and name in _MDOC_INLINE:
                page.text(" ".join(_arguments(raw[1:].lstrip(), mdoc=True)))
            # other requests (`.RS`, `.de`, `.if`, `.so`, ...) carry no prose of their own
            continue
        if len(raw) < _LONG_LINE:
            text = unescape(raw)
        else:
            pieces = _unescaped(raw)
            del raw  # a long line: its unescaped pieces replace it before they are joined
            text = "".join(pieces)
            del pieces
        if pending_heading is not None:
            page.heading(pending_heading, text.strip())
            if pending_heading == "##":
                page.section = text.strip().upper()
            pending_heading = None
        elif page.literal:
            page.flush()
            page.lines.append(f"    {text}".rstrip())
        elif not text or text.isspace():
            page.blank()
        else:
            page.text(text)
    page.flush()
    while page.lines and not page.lines[-1]:
        page.lines.pop()
    lines_out, page.lines = page.lines, []
    lines_out.append("")  # joined with LF: every line, the last included, ends with one
    return "\n".join(lines_out)


class ManText(TextPipeline):
    """The `man-text` pipeline (`charset`: the recorded codec of a re-run; None detects it)."""

    name = "man-text"
    version = f"1+{UNICODE_TAG}"
    accepted = ACCEPTED

    def normalize_bytes(self, data: bytes) -> NormalizedOutput:
        """The same view from bytes already in memory (a small source read once by registration)."""
        self.check_size(data)
        decoded = read_text(data, self.charset)
        del data  # a large source: only its text is needed from here on (the caller passed it, not kept it)
        notes = (decoded.note,) if decoded.note else ()
        view = text_view(man_to_text(decoded.take()))
        return NormalizedOutput(view, pipeline=parameterized(self.name, decoded.charset), notes=notes)
