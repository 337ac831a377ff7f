"""`brain context`: what an agent puts in its prompt — the best hits and their expansion, deduplicated, each a
citable item (text, origin, locator, block id, verified), packed greedily by score into a token budget.

Token estimate (conservative, no tokenizer needed): an item costs `ceil(UTF-8 bytes / 3)` tokens for its text
plus the same estimate of the header line the Markdown rendering puts above it, and the pack's title line is
counted once. BPE tokenizers of current models (cl100k, o200k, Llama 3) spend 3.5–4.5 bytes per token on
English prose and ~3–3.5 on code, and one token per CJK character (3 bytes), so the estimate is above the
real count on ordinary text; it can be under on pathological input (long base64, emoji runs). `tokens` is
the estimate of exactly what `--format markdown` prints, and `tokens <= budget` always holds.

Packing: candidates are the search's matches (with expansion), by score: first the best match of each
source, then the others, so a small pack covers as many sources as it can. A passage longer than a fifth
of the budget is cut to the run of its lines holding the most query words (its locator names those lines,
so the item stays citable; one line longer than that is cut at a sentence end and marked `…`). An item whose
text was already packed (the same text, or text inside a packed
item of the same source) is skipped; an item that does not fit the remaining budget is skipped and smaller
ones after it may still fit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from brain.errors import InvalidInputError, UsageError
from brain.identity import BlockId
from retrieval.documents import derived, one_line
from retrieval.models import ContextItem, ContextResult, Match
from retrieval.passages import Locator, parse_locator
from retrieval.query import Searcher, SearchRequest
from retrieval.tokenize import highlight_spans, query_terms

MIN_TOKENS = 16
MIN_ITEM_TOKENS = 48
ITEMS_PER_BUDGET = 6  # a passage longer than budget / 5 tokens is cut to its best lines
MAX_TOKENS = 1_000_000
CANDIDATES = 40  # matches considered for a pack
BYTES_PER_TOKEN = 3
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")  # never pasted into a prompt as is


def estimate_tokens(text: str) -> int:
    """A conservative token count of `text` (see the module docstring)."""
    return math.ceil(len(text.encode("utf-8", errors="surrogatepass")) / BYTES_PER_TOKEN)


@dataclass(frozen=True)
class ContextRequest:
    """What `brain context` was asked."""

    query: str
    max_tokens: int
    types: tuple[str, ...] = ()
    include_superseded: bool = False
    tags: tuple[str, ...] = ()  # only blocks carrying every one of these tags (`--tag`)

    def validate(self) -> None:
        """Raise `UsageError` for a budget out of range (the query is checked by the search)."""
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int):
            raise UsageError(f"--max-tokens must be an integer, got {self.max_tokens!r}")
        if not MIN_TOKENS <= self.max_tokens <= MAX_TOKENS:
            raise UsageError(f"--max-tokens must be between {MIN_TOKENS} and {MAX_TOKENS}, got {self.max_tokens}")

    def search(self) -> SearchRequest:
        """The search that gives the candidates."""
        return SearchRequest(self.query, types=self.types, limit=CANDIDATES,
                             include_superseded=self.include_superseded, expand=True, tags=self.tags)


def title_line(query: str) -> str:
    """The first line of the Markdown rendering."""
    return f"# Context for: {one_line(query, 200)}\n\n"


def header_line(number: int, item: ContextItem) -> str:
    """The line above an item's text in the Markdown rendering."""
    where = f"{item.origin}:{item.locator}" if item.origin and item.locator else item.origin or item.block
    check = "verified" if item.verified else "NOT VERIFIED"
    return f"## [{number}] {where} ({item.memory_type}, {item.block[:19]}, {check})\n\n"


def item_cost(number: int, item: ContextItem) -> int:
    """Tokens an item takes in the pack: its header and its text, each estimated."""
    return estimate_tokens(header_line(number, item)) + estimate_tokens(item.text + "\n\n")


def render_markdown(result: ContextResult) -> str:
    """The pack as Markdown: a title line, then per item a header (where, type, id, verified) and its text."""
    parts = [title_line(result.query)]
    for number, item in enumerate(result.items, start=1):
        parts.append(header_line(number, item))
        parts.append(item.text + "\n\n")
    return "".join(parts).rstrip("\n") + "\n"


def pack(searcher: Searcher, request: ContextRequest) -> ContextResult:
    """Search, then pack the matches into the budget (see the module docstring)."""
    request.validate()
    found = searcher.search(request.search())
    used = estimate_tokens(title_line(request.query))
    cap = max(MIN_ITEM_TOKENS, request.max_tokens // ITEMS_PER_BUDGET)
    terms = set(query_terms(request.query))
    items: list[ContextItem] = []
    packed_texts: list[tuple[str, str]] = []  # (source block, normalized text) already in the pack
    ranked = sorted(found.matches, key=lambda m: -m.score)  # stable: the search's order breaks ties
    # First the best item of each source, then the others: a pack covers as many sources as it can.
    firsts: dict[str, Match] = {}
    for match in ranked:
        firsts.setdefault(_source_of(match), match)
    order = [*firsts.values(), *(m for m in ranked if firsts[_source_of(m)] is not m)]
    for match in order:
        item = _item(searcher, match, cap, terms)
        if item is None:
            continue
        source = _source_of(match)
        flat = " ".join(item.text.split())
        if any(flat in text for src, text in packed_texts if src == source or text == flat):
            continue
        cost = item_cost(len(items) + 1, item)
        if used + cost > request.max_tokens:
            continue
        items.append(item)
        packed_texts.append((source, flat))
        used += cost
    return ContextResult(query=found.query, snapshot=found.snapshot, budget=request.max_tokens, tokens=used,
                         items=items, notes=found.notes)


def _source_of(match: Match) -> str:
    return match.evidence[0].block if match.evidence else match.block


def _item(searcher: Searcher, match: Match, cap: int, terms: set[str]) -> ContextItem | None:
    evidence = match.evidence[0] if match.evidence else None
    origin = evidence.origin if evidence else ""
    locator = evidence.locator if evidence else None
    if match.memory_type == "canonical":
        text, locator = _passage(searcher, match, locator, cap, terms) if evidence else ("", locator)
    else:
        text = _derived_text(searcher, match)
    text = _CONTROL.sub("\ufffd", text.strip())
    if not text:
        return None
    return ContextItem(block=match.block, memory_type=match.memory_type, text=text, origin=origin,
                       locator=locator, score=match.score, verified=match.verified)


def _passage(
    searcher: Searcher, match: Match, locator: str | None, cap: int, terms: set[str]
) -> tuple[str, str | None]:
    """The source's text at the match's locator, from its checked view: the whole passage when it fits `cap`
    tokens, else the run of its lines that holds the most query words within `cap` (its own locator)."""
    evidence = match.evidence[0]
    if locator is None:
        return evidence.excerpt, None
    text = searcher.view_at(evidence.block[7:], locator)
    if text is None:
        return evidence.excerpt, locator
    if estimate_tokens(text) <= cap:
        return text, locator
    try:
        where = parse_locator(locator)
    except InvalidInputError:
        return evidence.excerpt, locator
    if where.first is None or (where.page_end is not None and where.page_end != where.page):
        return evidence.excerpt, locator
    lines = text.split("\n")
    start, end = _best_window(lines, cap, terms)
    window = Locator(page=where.page, first=where.first + start, last=where.first + end - 1)
    chosen = "\n".join(lines[start:end])
    return (chosen if estimate_tokens(chosen) <= cap else _cut(chosen, cap)), str(window)


def _cut(text: str, cap: int) -> str:
    """The start of one long line within `cap` tokens, closed at a sentence (else a word) end, marked `…`."""
    room = text.encode("utf-8", errors="surrogatepass")[: max(cap - 1, 1) * BYTES_PER_TOKEN - 3]
    head = room.decode("utf-8", errors="ignore")
    for stop in (". ", "; ", ", ", " "):
        at = head.rfind(stop)
        if at > len(head) // 2:
            return head[: at + 1].rstrip() + " …"
    return head.rstrip() + "…"


def _best_window(lines: list[str], cap: int, terms: set[str]) -> tuple[int, int]:
    """[start, end) of the contiguous lines within `cap` tokens holding the most query words (earliest wins)."""
    weights = [sum(1 for _ in highlight_spans(line, terms)) for line in lines]
    best = (-1, 0, 1)
    for start in range(len(lines)):
        if not lines[start].strip():
            continue
        size = 0
        score = 0
        end = start
        while end < len(lines) and size + estimate_tokens(lines[end] + "\n") <= cap:
            size += estimate_tokens(lines[end] + "\n")
            score += weights[end]
            end += 1
        if end == start:  # one line longer than the cap: it alone
            end = start + 1
            score = weights[start]
        if score > best[0]:
            best = (score, start, end)
    _, start, end = best
    while end - 1 > start and not lines[end - 1].strip():
        end -= 1
    return start, end


def _derived_text(searcher: Searcher, match: Match) -> str:
    """A derived block's text as the index reads it: its title and body (statement, steps, context...)."""
    block = searcher.verified_block(BlockId(match.block.removeprefix("sha256:")), match.memory_type)
    if block is None:
        return ""
    indexed = derived(match.memory_type, block.payload(), ())
    return "\n".join(f"{d.title}\n{d.body}".strip() for d in indexed.documents)
