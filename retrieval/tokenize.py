"""Terms: how text is cut into searchable words, on the index side and the query side alike.

SQLite's `unicode61` tokenizer does the Unicode work (case folding, diacritics removed, every
non-alphanumeric character a separator except `_`) and `porter` stems English words (`mapped`, `maps` →
`map`), the same for documents and for the quoted query terms, so both sides always agree. What it cannot
do is see code identifiers, so this module adds their parts:
`read_block` is indexed as the token `read_block` and as `read`, `block`; `CamelCase` as `camelcase` and
`camel`, `case`; a dotted name `brain.store.atomic` as its parts (the tokenizer splits on `.`) and as the
joined token `brain_store_atomic`, so a query naming the whole identifier ranks it first.

Queries become an OR of quoted terms, never FTS syntax: `"`, `*`, `NEAR`, `-` or `AND` typed by a user or
an agent are just words or separators, and a 100 kB query is cut to its first `MAX_QUERY_TERMS` terms.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2 tokenchars '_'"
MAX_QUERY_TERMS = 32
MAX_TERM_LENGTH = 64  # longer runs (hashes, base64) are not words anyone types

# A word possibly joined to others by `.`, `_`, `::` or `/` (identifiers, module paths).
_COMPOUND = re.compile(r"\w+(?:(?:\.|::|/)\w+)*")
# What only a token with parts contains: `_`, a case change inside a word, or a separator between words.
# Documents are scanned for these (fixed-width, no backtracking); plain prose never reaches Python code.
# Written as a position inside the token (lookarounds) behind a one-character prefilter: the scan over a whole
# view is then mostly the regex engine's fast character-class search (2.3x faster than plain alternatives).
_TRIGGER = re.compile(r"(?=[_A-Z.:/])(?:_|(?<=[a-z0-9])[A-Z]|(?<=[A-Z])[A-Z](?=[a-z])|(?<=\w)(?:\.|::|/)(?=\w))")
# A character no compound token holds (`_COMPOUND`'s alphabet is `\w` and its separators).
_OUTSIDE_TOKEN = re.compile(r"[^\w.:/]")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Case boundaries: "HTTPServer" -> HTTP, Server; "readBlock2" -> read, Block2.
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+")
_SEPARATORS = re.compile(r"\.|::|/")

# Function words that would make an OR query match nearly every document; dropped from queries only
# (never from the index), and only when the query has other terms.
STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how", "i", "in", "into",
     "is", "it", "its", "of", "on", "or", "our", "that", "the", "their", "then", "there", "these", "this", "to", "was",
     "we", "what", "when", "where", "which", "who", "why", "will", "with", "you", "your"]
)


def identifier_parts(token: str) -> list[str]:
    """The parts of a compound token (`snake_case`, `CamelCase`, `dotted.name`), lower case; [] if simple."""
    words = [w for w in _WORD.findall(token)]
    parts: list[str] = []
    for word in words:
        pieces = _CAMEL.findall(word) if word.isascii() and not word.islower() and not word.isupper() else [word]
        parts.extend(pieces if pieces else [word])
    parts = [p.lower() for p in parts]
    return parts if len(parts) > 1 else []


def expansion_terms(text: str) -> str:
    """The extra terms that make identifiers in `text` findable by their parts and their joined form: those of
    every compound token (`_COMPOUND`, as a query cuts it) that holds a trigger."""
    out: list[str] = []
    done = 0  # where the last token expanded (or stepped over) ends: every token before it is handled
    backwards: str | None = None
    length = len(text)
    while (trigger := _TRIGGER.search(text, done)) is not None:
        # The compound token holding the trigger starts after the last character that cannot be in one: found
        # in C on the reversed text (a per-character walk in Python was most of an index update's time).
        left = trigger.start()
        if left > done:
            if backwards is None:
                backwards = text[::-1]
            outside = _OUTSIDE_TOKEN.search(backwards, length - left)
            left = max(done, 0 if outside is None else length - outside.start())
        match = _COMPOUND.search(text, left)
        if match is None:
            break
        # From `left` the tokens are the query's own, and the trigger lies in one (its character is `\w`, or a
        # separator between two). A token that ends before it (`$HOME/.bash_profile` yields `HOME` first) is
        # stepped over and the search resumes at its end, so the trigger's own token is always reached.
        done = match.end()
        token = match.group()
        if done <= trigger.start() or len(token) > MAX_TERM_LENGTH * 4:
            continue
        terms = _token_terms(token)
        if terms:
            out.append(terms)
    return " ".join(out)


@functools.lru_cache(maxsize=1 << 16)
def _token_terms(token: str) -> str:
    """The expansion of one compound token ('' when it has no parts); tokens repeat a lot (paths, versions)."""
    parts = identifier_parts(token)
    if not parts:
        return ""
    if _SEPARATORS.search(token):
        return " ".join(["_".join(_WORD.findall(token)).lower(), *parts])
    return " ".join(parts)


def query_terms(query: str) -> list[str]:
    """The distinct terms of a query, in order: each token, its joined form and its parts; stopwords out."""
    found: dict[str, None] = {}
    for match in _COMPOUND.finditer(query):
        token = match.group()
        joined = "_".join(_WORD.findall(token)) if _SEPARATORS.search(token) else token
        for term in (joined, *identifier_parts(token)):
            term = term.lower().strip("_")
            if term and len(term) <= MAX_TERM_LENGTH and _WORD.search(term):
                found.setdefault(term, None)
        if len(found) >= MAX_QUERY_TERMS * 4:
            break
    terms = list(found)
    content = [t for t in terms if t not in STOPWORDS]
    return (content or terms)[:MAX_QUERY_TERMS]


def fts_query(terms: Iterable[str]) -> str:
    """An FTS5 MATCH expression: the terms quoted (so no FTS operator survives) and OR-ed."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def highlight_spans(text: str, terms: Iterable[str]) -> Iterator[tuple[int, int]]:
    """Character spans of `text` whose words (or identifier parts) are among `terms` (lower case)."""
    wanted = {t.lower() for t in terms}
    for match in _WORD.finditer(text):
        if match.group().lower() in wanted:
            yield match.span()
