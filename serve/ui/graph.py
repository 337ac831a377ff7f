"""A block's provenance graph as a small SVG: its evidence on the left, the block in the middle, what the
ledger recorded about it below, and its dependents on the right. Layout only: the template escapes every
label (they come from documents and proposals)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NODE_W, NODE_H, GAP_Y, COLUMN_X = 210, 34, 12, (10, 300, 590)
MAX_PER_COLUMN = 8


@dataclass(frozen=True)
class Node:
    """One box: where it is, what it says, where it links."""

    x: int
    y: int
    label: str
    kind: str
    href: str | None
    w: int = NODE_W


@dataclass(frozen=True)
class Edge:
    """A line between two boxes, with its relation."""

    x1: int
    y1: int
    x2: int
    y2: int
    label: str


@dataclass(frozen=True)
class Graph:
    """The laid-out graph."""

    width: int
    height: int
    nodes: list[Node]
    edges: list[Edge]


def _short(text: str, n: int = 30) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def provenance_graph(shown: dict[str, Any], link: Any) -> Graph:
    """The graph of one `brain show --json` answer; `link(block_id)` gives a node's URL."""
    ledger = shown.get("ledger") or {}
    title = (shown.get("payload") or {}).get("label") or shown.get("memory_type", "block")
    left = [(c.get("origin") or c["block"][7:19], "evidence", c["block"]) for c in ledger.get("cited") or []]
    right = [(d[7:19], "dependent", d) for d in ledger.get("dependents") or []]
    right += [(w[7:19], "superseded by", w) for w in ledger.get("superseded_by") or []]
    left += [(s[7:19], "supersedes", s) for s in ledger.get("supersedes") or []]
    below = []
    producer = ledger.get("producer")
    if producer:
        below.append(f"produced by {producer.get('kind')} {producer.get('id')}")
    for name in ("registration", "normalization", "validation", "demotion"):
        record = ledger.get(name)
        if record:
            actor = (record.get("actor") or {}).get("id", "?")
            below.append(f"{name} by {actor} at {record.get('at', '?')}")
    left, right = left[:MAX_PER_COLUMN], right[:MAX_PER_COLUMN]
    rows = max(len(left), len(right), 1)
    height_top = rows * (NODE_H + GAP_Y) + GAP_Y
    center_y = height_top // 2 - NODE_H // 2
    nodes = [Node(COLUMN_X[1], center_y, _short(str(title)), "self", None)]
    edges = []
    for column, items in ((0, left), (2, right)):
        for i, (label, relation, block) in enumerate(items):
            y = GAP_Y + i * (NODE_H + GAP_Y)
            nodes.append(Node(COLUMN_X[column], y, _short(str(label)), relation.replace(" ", "-"), link(block)))
            x1, x2 = (COLUMN_X[0] + NODE_W, COLUMN_X[1]) if column == 0 else (COLUMN_X[1] + NODE_W, COLUMN_X[2])
            edges.append(Edge(x1, y + NODE_H // 2 if column == 0 else center_y + NODE_H // 2, x2,
                              center_y + NODE_H // 2 if column == 0 else y + NODE_H // 2, relation))
    y = height_top + GAP_Y
    for text in below[:6]:
        nodes.append(Node(COLUMN_X[1] - 60, y, _short(text, 52), "record", None, NODE_W + 120))
        edges.append(Edge(COLUMN_X[1] + NODE_W // 2, center_y + NODE_H, COLUMN_X[1] + NODE_W // 2, y, ""))
        y += NODE_H + GAP_Y
    return Graph(COLUMN_X[2] + NODE_W + 10, y + GAP_Y, nodes, edges)
