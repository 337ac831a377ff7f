"""What the index holds for each block (pure logic over decoded JSON payloads).

Every searchable block becomes one or more documents of three columns (`title`, `body`, `extra` = the
identifier parts of `tokenize.expansion_terms`), a few filter values and its outgoing edges. The text of a
document depends only on immutable inputs (the block's bytes, its view's bytes and the origin recorded
when it was first indexed), so the index can regenerate it exactly to delete it from a contentless table.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from retrieval.passages import passages
from retrieval.tokenize import expansion_terms

SEARCHABLE = ("canonical", "episodic", "semantic", "procedural")
MAX_ORIGINAL_TEXT = 4 << 20
MAX_WHOLE_CHARS = 8192  # a source's document-level text: its opening (what it is about; tuned on the eval sets)
MAX_HEADINGS = 200
# File names that say what a file is, not what it is about: the directory names the source instead.
GENERIC_NAMES = frozenset({
    "readme", "metadata", "pkg-info", "index", "changelog", "changes", "news", "history", "copyright", "install",
    "authors", "todo", "license", "licence", "notice", "contributing", "faq", "usage", "manual", "guide", "doc",
    "docs", "description", "about", "overview", "intro", "introduction", "main", "summary", "notes",
})
_COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".z", ".lz", ".br")
# Extensions a name is not about: man sections (`.1`, `.5ssl`), text markups.
_EXTENSION = re.compile(r"\.(?:\d[a-z]*|md|markdown|rst|txt|text|html?|org|adoc|asciidoc|pod|tex|pdf|json|ya?ml|toml)$",
                        re.IGNORECASE)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_UNDERLINE = re.compile(r"^\s*([=\-~^*+#])\1{2,}\s*$")
_HEADER_FIELD = re.compile(r"^(?:Name|Summary|Keywords):\s*(.+)$", re.IGNORECASE)
_MAN_NAMES = re.compile(r"^[-*\s]*(.+?)\s+(?:—|–|-|\\-)\s+(.+)$")
_WORDS = re.compile(r"[^\W_]+(?:[-_.+][^\W_]+)*")
_CHANGE_LOG = re.compile(r"(?:^|[/_.-])(?:changelog|changes|news|history|release[-_ ]?notes)(?:$|[/_.-])",
                         re.IGNORECASE)


@dataclass(frozen=True)
class Document:
    """One row of the full-text table: a passage of a source (`locator` set) or a whole block."""

    title: str
    body: str
    locator: str | None = None

    @functools.cached_property
    def extra(self) -> str:
        """Identifier parts of the title and body (see `tokenize`); kept once computed (a worker computes it
        and the writer reads it)."""
        return expansion_terms(f"{self.title}\n{self.body}")


@dataclass(frozen=True)
class Edge:
    """A typed edge out of a block: `relation:<predicate>`, `uses` or `evidence` (to its source)."""

    kind: str
    target: str  # hex of the target block id


@dataclass(frozen=True)
class Whole:
    """A source's document-level row (BM25F-like fields): its names, its headings, its whole text."""

    names: tuple[str, ...]
    headings: str
    body: str

    @functools.cached_property
    def name(self) -> str:
        """The names as one field (with their identifier parts)."""
        joined = " ".join(self.names)
        return f"{joined} {expansion_terms(joined)}".strip()


@dataclass
class Indexed:
    """Everything the index stores about one block."""

    memory_type: str
    title: str
    subject: str | None = None
    at: str | None = None
    documents: list[Document] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    whole: Whole | None = None
    labels: tuple[str, ...] = ()  # a derived block's label and aliases, as a query would name it

    @property
    def names(self) -> tuple[str, ...]:
        """What the block is called (the `names` table: an exact-name match lifts it)."""
        return self.whole.names if self.whole is not None else self.labels

    def expand(self) -> None:
        """Compute every document's identifier expansion now (kept, and pickled with the entry)."""
        for document in self.documents:
            _ = document.extra
        if self.whole is not None:
            _ = self.whole.name


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _hexes(value: Any) -> Iterator[str]:
    for item in _strings(value):
        if item.startswith("sha256:") and len(item) == 71:
            yield item[7:]


def readable_text(payload: dict[str, Any]) -> str | None:
    """The digest of the text a source is searched and quoted by: its normalized view, else (a plain-text
    source registered without one, as other writers do) its original bytes when they are small text."""
    view = payload.get("normalized_view")
    if isinstance(view, dict) and isinstance(view.get("blob"), str):
        return view["blob"]
    media_type, size = payload.get("media_type"), payload.get("size")
    is_text = isinstance(media_type, str) and media_type.lower().startswith("text/")
    if is_text and isinstance(size, int) and size <= MAX_ORIGINAL_TEXT and isinstance(payload.get("blob"), str):
        return str(payload["blob"])
    return None


def one_line(text: str, limit: int = 120) -> str:
    """`text` on one line, cut to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def source_title(origin: str | None, media_type: str, size: Any) -> str:
    """A canonical block's title: where it came from, else what it is."""
    return origin if origin else f"{media_type}, {size} bytes"


def title_of(memory_type: str, payload: dict[str, Any], origin: str | None) -> str:
    """The one-line title of a block, as search shows it."""
    if memory_type == "canonical":
        return source_title(origin, _text(payload.get("media_type")), payload.get("size"))
    if memory_type == "episodic":
        return one_line(_text(payload.get("summary")))
    return one_line(_text(payload.get("label")))


def canonical(
    payload: dict[str, Any], origin: str | None, view: str | None, view_media_type: str
) -> Indexed:
    """A source: one document per passage of its view, or one naming it when it has no readable view."""
    media_type = _text(payload.get("media_type"))
    title = source_title(origin, media_type, payload.get("size"))
    heading = origin or ""
    found = [Document(heading, p.text, p.locator) for p in passages(view, view_media_type)] if view else []
    if not found:
        found = [Document(title, media_type)]
    return Indexed("canonical", title, documents=found, whole=whole_of(origin, view))


def names_of_origin(origin: str | None) -> list[str]:
    """What a source is called by its origin: the file name without compression and markup extensions,
    and the directory's name when the file's name is generic (`jq/README` is jq's, `man1/tar.1.gz` tar's)."""
    if not origin:
        return []
    parts = [p for p in origin.replace("\\", "/").split("/") if p]
    if not parts:
        return []
    stem = parts[-1]
    for _ in range(3):
        lowered = stem.lower()
        for suffix in _COMPRESSED:
            if lowered.endswith(suffix):
                stem = stem[: -len(suffix)]
                break
        stem = _EXTENSION.sub("", stem)
    names = [] if stem.lower() in GENERIC_NAMES or not stem else [stem]
    if re.split(r"[-_.]", stem)[0].lower() in GENERIC_NAMES and len(parts) > 1:
        names.append(parts[-2])
    return [n.casefold() for n in names if n]


def is_change_log(origin: str | None) -> bool:
    """Whether a source is a change log or release notes, by its file name."""
    return bool(origin) and bool(_CHANGE_LOG.search(origin.rsplit("/", 1)[-1]))  # type: ignore[union-attr]


def whole_of(origin: str | None, view: str | None) -> Whole | None:
    """The document-level row of a source: names (origin, a man page's NAME section, a METADATA `Name:`),
    headings (Markdown, setext/RST underlines, NAME descriptions, `Summary:`), and the whole view."""
    if not view:
        return None
    names = names_of_origin(origin)
    headings: list[str] = []
    lines = view[:MAX_WHOLE_CHARS].split("\n")
    in_name = False
    for number, line in enumerate(lines[:20_000]):
        if len(headings) >= MAX_HEADINGS:
            break
        found = _HEADING.match(line)
        if found:
            text = found.group(1).strip()
            in_name = text.upper() == "NAME"
            if not in_name:
                headings.append(text)
            continue
        if number + 1 < len(lines) and line.strip() and _UNDERLINE.match(lines[number + 1]) and len(line) < 120:
            headings.append(line.strip())
            continue
        if number < 40:
            field_match = _HEADER_FIELD.match(line)
            if field_match:
                value = field_match.group(1).strip()
                if line.lower().startswith("name:"):
                    names.append(value.casefold())
                else:
                    headings.append(value)
                continue
        if in_name and line.strip():
            man = _MAN_NAMES.match(line.strip())
            if man:
                names.extend(n.strip().casefold() for n in man.group(1).split(",") if n.strip())
                headings.append(man.group(2).strip())
            else:
                headings.append(line.strip())
            in_name = False
    return Whole(tuple(dict.fromkeys(n for n in names if n)), "\n".join(headings), view[:MAX_WHOLE_CHARS])


def derived(memory_type: str, payload: dict[str, Any], evidence: Iterable[str]) -> Indexed:
    """A semantic, procedural or episodic block (any schema version: members are read by name)."""
    edges = [Edge("evidence", h) for h in dict.fromkeys([*_hexes(payload.get("evidence")), *evidence])]
    subject = _text(payload.get("subject")) or None
    if memory_type == "semantic":
        title = _text(payload.get("label"))
        body: list[Any] = [payload.get("statement"), *_strings(payload.get("aliases")), payload.get("subject")]
        for relation in payload.get("relations") or ():
            if isinstance(relation, dict) and isinstance(relation.get("predicate"), str):
                edges.extend(Edge(f"relation:{relation['predicate']}", h) for h in _hexes([relation.get("target")]))
        labels = _labels([title, *_strings(payload.get("aliases"))])
        return Indexed("semantic", one_line(title), subject, None, [Document(title, _join(body))], edges,
                       labels=labels)
    if memory_type == "procedural":
        title = _text(payload.get("label"))
        body = [payload.get("goal")]
        for step in payload.get("steps") or ():
            if isinstance(step, dict):
                body.extend([step.get("action"), step.get("condition"), *_strings(step.get("alternatives"))])
                edges.extend(Edge("uses", h) for h in _hexes(step.get("uses")))
        body.extend([*_strings(payload.get("preconditions")), *_strings(payload.get("success_criteria"))])
        body.append(payload.get("subject"))
        return Indexed("procedural", one_line(title), subject, None, [Document(title, _join(body))], edges,
                       labels=_labels([title]))
    summary = _text(payload.get("summary"))
    occurred, ended = _text(payload.get("occurred_at")), _text(payload.get("ended_at"))
    body = [payload.get("context"), *_strings(payload.get("participants")), payload.get("outcome")]
    body.extend([*_strings(payload.get("tags")), occurred[:10], ended[:10]])
    return Indexed("episodic", one_line(summary), subject, occurred or None, [Document(summary, _join(body))], edges)


def name_key(text: str) -> str:
    """A name or a whole query as the `names` table compares them: words only, case folded, one space."""
    return " ".join(_WORDS.findall(text.casefold()))[:200]


def _labels(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(k for k in (name_key(v) for v in values) if k))


def _join(parts: Iterable[Any]) -> str:
    return "\n".join(p for p in parts if isinstance(p, str) and p)
