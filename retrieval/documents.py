"""What the index holds for each block (pure logic over decoded JSON payloads).

Every searchable block becomes one or more documents of three columns (`title`, `body`, `extra` = the
identifier parts of `tokenize.expansion_terms`), a few filter values and its outgoing edges. The text of a
document depends only on immutable inputs (the block's bytes, its view's bytes and the origin recorded
when it was first indexed), so the index can regenerate it exactly to delete it from a contentless table.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from retrieval.passages import passages
from retrieval.tokenize import expansion_terms

SEARCHABLE = ("canonical", "episodic", "semantic", "procedural")
MAX_ORIGINAL_TEXT = 4 << 20


@dataclass(frozen=True)
class Document:
    """One row of the full-text table: a passage of a source (`locator` set) or a whole block."""

    title: str
    body: str
    locator: str | None = None

    @property
    def extra(self) -> str:
        """Identifier parts of the title and body (see `tokenize`)."""
        return expansion_terms(f"{self.title}\n{self.body}")


@dataclass(frozen=True)
class Edge:
    """A typed edge out of a block: `relation:<predicate>`, `uses` or `evidence` (to its source)."""

    kind: str
    target: str  # hex of the target block id


@dataclass
class Indexed:
    """Everything the index stores about one block."""

    memory_type: str
    title: str
    subject: str | None = None
    at: str | None = None
    documents: list[Document] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)


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
    return Indexed("canonical", title, documents=found)


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
        return Indexed("semantic", one_line(title), subject, None, [Document(title, _join(body))], edges)
    if memory_type == "procedural":
        title = _text(payload.get("label"))
        body = [payload.get("goal")]
        for step in payload.get("steps") or ():
            if isinstance(step, dict):
                body.extend([step.get("action"), step.get("condition"), *_strings(step.get("alternatives"))])
                edges.extend(Edge("uses", h) for h in _hexes(step.get("uses")))
        body.extend([*_strings(payload.get("preconditions")), *_strings(payload.get("success_criteria"))])
        body.append(payload.get("subject"))
        return Indexed("procedural", one_line(title), subject, None, [Document(title, _join(body))], edges)
    summary = _text(payload.get("summary"))
    occurred, ended = _text(payload.get("occurred_at")), _text(payload.get("ended_at"))
    body = [payload.get("context"), *_strings(payload.get("participants")), payload.get("outcome")]
    body.extend([*_strings(payload.get("tags")), occurred[:10], ended[:10]])
    return Indexed("episodic", one_line(summary), subject, occurred or None, [Document(summary, _join(body))], edges)


def _join(parts: Iterable[Any]) -> str:
    return "\n".join(p for p in parts if isinstance(p, str) and p)
