"""Where the heuristic's readers put what they find: one `Emitter` per page (or per change log), the cap.

A source keeps its first `MAX_CANDIDATES_PER_SOURCE` distinct candidates; past them only hashes are counted
(for the `proposals-capped` note), and past `MAX_COUNTED` reading stops (`CountingDone`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ingest.proposers import rules
from ingest.proposers.base import SourceText
from ingest.proposers.candidates import Candidate

MAX_CANDIDATES_PER_SOURCE = 2_000
MAX_COUNTED = 10 * MAX_CANDIDATES_PER_SOURCE  # past this many, the scan stops: the note says "more than"
SPLIT_BELOW = 1 << 20  # a smaller text is split at once (faster); a larger one is walked line by line
# Keys of what was found in one source (after the cap only their hashes, to count them).
Seen = set[tuple[str, ...] | int]


class CountingDone(Exception):
    """Raised by `Emitter.emit` once more than `MAX_COUNTED` candidates were found: nothing more can be kept."""


@dataclass
class Emitter:
    """The candidates of one source (`out`), the keys already found (`seen`), and the page being read."""

    source: SourceText
    allowed: frozenset[str]
    page: int | None
    out: list[Candidate]
    seen: Seen

    def emit(self, memory_type: str, key: tuple[str, ...], payload: dict[str, Any], lines: tuple[int, int]) -> None:
        """Keep a candidate at `lines` unless its `key` was found already in this source (or the cap is met)."""
        if memory_type not in self.allowed or key in self.seen:
            return
        if len(self.out) >= MAX_CANDIDATES_PER_SOURCE:
            # Only counted for the cap note (a hash, not the key), and only so far: a 50 MB source has a
            # million candidates, and nobody needs their exact number, only the first ones.
            digest = hash(key)
            if digest not in self.seen:
                self.seen.add(digest)
                if len(self.seen) > MAX_COUNTED:
                    raise CountingDone
            return
        self.seen.add(key)
        first, last = lines
        locator = f"L{first}" if first == last else f"L{first}-L{last}"
        if self.page is not None:
            locator = f"p.{self.page} {locator}"
        self.out.append(
            Candidate(
                memory_type=memory_type, payload=payload, evidence=(str(self.source.block_id),), locator=locator
            )
        )


def lines(text: str, *, trailing_space: bool = True) -> Iterator[str]:
    """The lines of `text`; one at a time for a large text (a split would hold a copy of all of them at once).

    `trailing_space=False` lets a large text's lines be cut without their trailing whitespace, for a reader
    that looks only at a line's start and its stripped form (`heuristic._Scan.line`): then `line.strip()` of a 50 MB
    one-line view is the line itself, not a third copy of the text.
    """
    if len(text) < SPLIT_BELOW:
        yield from text.split("\n")
        return
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        last = end == -1
        end = len(text) if last else end
        cut = end
        while not trailing_space and cut > start and text[cut - 1].isspace():
            cut -= 1
        yield text if start == 0 and cut == len(text) else text[start:cut]  # the whole text: no copy
        if last:
            return
        start = end + 1


def summary(lead: str, changes: list[str]) -> str:
    """`lead: change; change; ...`, as many whole changes as fit a statement."""
    room = rules.MAX_STATEMENT_CHARS - len(lead) - 2
    if not changes or len(changes[0]) > room:
        return lead
    return f"{lead}: {joined(changes, room)}"


def joined(changes: list[str], room: int = rules.MAX_STATEMENT_CHARS) -> str:
    """`change; change; ...`: the first change, then as many whole changes as fit in `room` characters."""
    joined = changes[0]
    for change in changes[1:]:
        if len(joined) + len(change) + 2 > room:
            break
        joined = f"{joined}; {change}"
    return joined
