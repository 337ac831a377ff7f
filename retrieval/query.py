"""`search`: ranked hits from the index, associative expansion, per-source grouping, and evidence bundles
whose block bytes and inclusion proofs this process checked against the snapshot the answer names.

Order of work: the request is validated before the index is touched (a bad query writes nothing); the
index is brought to the head; then one read transaction gives the snapshot and every row, so an answer
never mixes two snapshots even while another process updates the index.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from brain.blocks.base import Block
from brain.brain import Brain
from brain.errors import BrainError, ConflictError, InvalidInputError, NotFoundError, UsageError
from brain.identity import BlockId, OciDigest
from brain.identity.names import shown
from brain.snapshot import Snapshot
from retrieval import DEFAULT_LIMIT
from retrieval.documents import SEARCHABLE, is_change_log, name_key, title_of
from retrieval.expand import Expansion, Neighbour, spread
from retrieval.fusion import DenseSearch
from retrieval.index import SearchIndex, UpdateStats
from retrieval.index_rows import tag_key
from retrieval.models import Evidence, Match, Proof, SearchResult, Via
from retrieval.passages import excerpt, parse_locator, text_at
from retrieval.proofs import Prover
from retrieval.tokenize import STOPWORDS, fts_query, query_terms

MAX_LIMIT = 200
MAX_QUERY_CHARS = 100_000
MAX_TAG_CHARS = 1000
PER_SOURCE = 3  # at most this many matches from one source, so one long document cannot fill the page
CANDIDATES_PER_SLOT = 4
BM25_WEIGHTS = (4.0, 1.0, 0.5)  # title, body, identifier parts
WHOLE_WEIGHTS = (8.0, 4.0, 1.0)  # a source's names, headings, whole text (BM25F-like fields)
WHOLE_CANDIDATES = 20  # document-level candidates fused with the passages
JOINING = 10  # of those, at most this many join the candidates with their best passage
PASSAGE_SHARE = 0.6  # a row's score: this share of its passage's, the rest its source's document-level score
NAME_BONUS = 0.4  # a source whose own name is a word of the query
QUIET_SHARE = 0.3  # episodes and change-log passages, unless the query asks about time or versions
_TIME_WORDS = re.compile(
    r"\b(?:when|since|until|before|after|ago|date[sd]?|year|month|day|time ?line|history|changes?|changed|"
    r"changelog|news|release[sd]?|version(?:s|ed)?|upgrade[sd]?|deprecated|introduced|latest|recent(?:ly)?|"
    r"\d{4}|v?\d+\.\d+(?:\.\d+)*)\b",
    re.IGNORECASE,
)
_NAME_TOKEN = re.compile(r"[\w][\w.+-]*[\w+]|\w")
_VIEW_CACHE_BYTES = 32 << 20
_EDGES_PER_QUERY = 64  # neighbours read per direction; the fan-out cap keeps far fewer
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}Z)?$")


@dataclass(frozen=True)
class SearchRequest:
    """What `brain search` was asked (already parsed; `validate` checks the values)."""

    query: str
    types: tuple[str, ...] = ()
    subject: str | None = None
    since: str | None = None
    until: str | None = None
    limit: int = DEFAULT_LIMIT
    include_superseded: bool = False
    expand: bool = True
    evidence: str | None = None  # hex id of a source: only it and the blocks drawn from it (`--evidence`)
    tags: tuple[str, ...] = ()  # only blocks carrying every one of these tags (`--tag`, AND; case-folded)

    def drawn_from(self, source_hex: str) -> SearchRequest:
        """The same request, kept to one source and the blocks drawn from it (`--evidence`)."""
        return dataclasses.replace(self, evidence=source_hex)

    def validate(self) -> list[str]:
        """The query terms; raises `UsageError` for a request that cannot be run."""
        if not isinstance(self.query, str) or not self.query.strip():
            raise UsageError("the query is empty", hint="give one or more words to search for")
        if len(self.query) > MAX_QUERY_CHARS:
            raise UsageError(f"the query is {len(self.query)} characters long; the limit is {MAX_QUERY_CHARS}")
        for name in self.types:
            if name not in SEARCHABLE:
                extra = (" (provenance records are not indexed: see `brain log` and `brain show`)"
                         if name == "provenance" else "")
                raise UsageError(
                    f"unknown or unsearchable type {shown(name)}{extra}", hint=f"use one of {', '.join(SEARCHABLE)}"
                )
        for tag in self.tags:
            if not isinstance(tag, str) or not tag_key(tag):
                raise UsageError("--tag needs a tag (an episode's `tags` entry)", hint="e.g. --tag release")
            if len(tag) > MAX_TAG_CHARS:
                raise UsageError(f"--tag is {len(tag)} characters long; the limit is {MAX_TAG_CHARS}")
        if self.evidence is not None and not re.fullmatch(r"[0-9a-f]{64}", self.evidence):
            raise UsageError(f"--evidence {self.evidence[:80]!r} is not a resolved source id")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise UsageError(f"--limit must be between 1 and {MAX_LIMIT}, got {self.limit}")
        for label, value in (("--since", self.since), ("--until", self.until)):
            if value is not None and not _is_date(value):
                raise UsageError(f"{label} {shown(value)} is not a date", hint="use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ")
        terms = query_terms(self.query)
        if not terms:
            raise UsageError(f"the query {_short(self.query)!r} has no words to search for",
                             hint="punctuation and symbols alone are not searchable")
        return terms


@dataclass
class _Row:
    block: str
    memory_type: str
    accessible: bool
    source: str
    locator: str | None
    score: float
    via: Via | None = None
    also: list[str] = field(default_factory=list)  # sources with the same text, shown as one result
    why: str = ""  # how the score was made (`search --explain`)


@dataclass
class _Block:
    """What the index holds about one block, for evidence and expansion."""

    block: str
    memory_type: str
    accessible: bool
    source: str
    origin: str | None
    media_type: str | None
    view: str | None
    locator: str | None
    subject: str | None
    at: str | None
    fingerprint: bytes | None = None
    tags: frozenset[str] = frozenset()  # case-folded (`index_rows.tag_key`)


@dataclass
class Views:
    """Normalized views read (and re-hashed) from the store, the most recent kept up to a byte budget."""

    brain: Brain
    cache: OrderedDict[str, str] = field(default_factory=OrderedDict)
    size: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def text(self, view_hex: str) -> str | None:
        """The view's text, or None when its bytes are missing or do not hash to its name."""
        with self.lock:
            found = self.cache.get(view_hex)
            if found is not None:
                self.cache.move_to_end(view_hex)
                return found
        try:
            data = self.brain.blobs.get(OciDigest(view_hex))
        except BrainError:
            return None
        text = data.decode("utf-8", errors="replace")
        with self.lock:
            self.cache[view_hex] = text
            self.size += len(text)
            while self.size > _VIEW_CACHE_BYTES and len(self.cache) > 1:
                _, dropped = self.cache.popitem(last=False)
                self.size -= len(dropped)
        return text


_BLOCK_COLUMNS = ("b.memory_type, b.accessible, s.digest, b.origin, b.media_type, b.view, b.locator, b.subject, "
                  "b.at, b.fingerprint, (SELECT json_group_array(tag) FROM tags WHERE block = b.id)")


def _block_of(hex_id: str, row: Sequence[Any]) -> _Block:
    """A `_Block` from the `_BLOCK_COLUMNS` of its row."""
    t, accessible, source, origin, media, view, locator, subject, at, fingerprint, tags = row
    return _Block(hex_id, t, bool(accessible), bytes(source).hex() if source else hex_id, origin, media,
                  bytes(view).hex() if view else None, locator, subject, at,
                  bytes(fingerprint) if fingerprint else None, frozenset(json.loads(tags or "[]")))


class Searcher:
    """Search over one brain; keeps its index connection, proof trees and views warm between queries."""

    def __init__(
        self, brain: Brain, index: SearchIndex | None = None, *, prover: Prover | None = None,
        views: Views | None = None,
    ) -> None:
        self.brain = brain
        self._index = index
        self.prover = prover if prover is not None else Prover(brain)
        self.views = views if views is not None else Views(brain)
        self._memo: dict[str, _Block | None] = {}  # per query
        self._kinds: dict[int, str] | None = None
        self.last_update: UpdateStats | None = None
        self.explanations: dict[str, str] = {}  # block id string -> why it ranked where it did (last search)
        self.dense = DenseSearch()  # vector indexes fused with the lexical ranking (`retrieval.fusion`)
        self.notes: list[str] = []  # why the last answer is lexical only, or an index was ignored

    @property
    def index(self) -> SearchIndex:
        """The index, opened (and created) on first use: a request refused earlier writes nothing."""
        if self._index is None:
            self._index = SearchIndex.open(self.brain)
        return self._index

    def close(self) -> None:
        """Close the index."""
        if self._index is not None:
            self._index.close()
        self.dense.close()

    def refresh(self, *, rebuild: bool = False, jobs: int = 1) -> UpdateStats:
        """Bring the index to the brain's head (`rebuild`: from scratch; `jobs`: processes that may build the
        documents of a large change)."""
        if self.brain.snapshot_digest() is None:
            raise NotFoundError(
                f"the brain at {self.brain.path} is empty: it has no snapshot to search",
                hint="ingest sources first (`brain ingest PATH`) or pull a brain",
            )
        try:
            self.last_update = self.index.ensure_current(rebuild=rebuild, jobs=jobs)
        except sqlite3.OperationalError as e:
            raise ConflictError(f"the search index is busy or unwritable: {e}",
                                hint="another process is updating it; try again") from None
        return self.last_update

    def search(self, request: SearchRequest) -> SearchResult:
        """Run one query: validate, bring the index current, rank, expand, group, bundle and verify."""
        terms = request.validate()
        self.refresh()
        self._memo.clear()
        self._kinds = None  # ids are reassigned by a rebuild
        with self.index.read_transaction():
            digest = self.index.snapshot_digest()
            if digest is None:
                raise NotFoundError(f"the brain at {self.brain.path} has no snapshot to search")
            snapshot = self.brain.snapshot(digest)
            assert snapshot is not None
            rows = self._ranked(terms, request)
            self.notes = []
            rows = self.dense.fuse(self, rows, request, digest, snapshot, self.notes, make_row=_Row, passes=_passes,
                                   wanted=request.limit * CANDIDATES_PER_SLOT)
            if request.expand and rows:
                rows = self._expand(rows, request)
            page = _group(rows, request.limit, self._same_text_key)
            self.explanations = {f"sha256:{r.block}": _explained(r) for r in page}
            matches = [m for m in (self._bundle(row, snapshot) for row in page) if m is not None]
        return SearchResult(query=request.query, snapshot=str(digest), matches=matches, notes=list(self.notes))

    # --- ranking ---------------------------------------------------------------------------------

    def _ranked(self, terms: list[str], request: SearchRequest) -> list[_Row]:
        """The best `CANDIDATES_PER_SLOT × limit` passing documents, by BM25 then id (deterministic).

        FTS5 ranks alone first (no join per matching row); the candidates are then joined and filtered.
        Only candidates ranked strictly better than the last one fetched are kept (unless every match was
        fetched), so rows tied at the cut never depend on row ids, and an incrementally updated index
        answers exactly like a rebuilt one. Too few survivors after filtering: fetch four times more.
        """
        where, params = _filters(request)
        wanted = request.limit * CANDIDATES_PER_SLOT
        fetch = wanted * 4
        match = fts_query(terms)
        db = self.index.db
        weights = ", ".join(map(str, BM25_WEIGHTS))
        ranking = f"SELECT rowid, bm25(fts, {weights}) FROM fts WHERE fts MATCH ? ORDER BY 2 LIMIT ?"
        joined = (
            "SELECT d.rowid, k.digest, b.memory_type, b.accessible, s.digest, d.locator "
            "FROM docs d JOIN blocks b ON b.id = d.block JOIN keys k ON k.id = b.id "
            "LEFT JOIN keys s ON s.id = b.source "
            f"WHERE d.rowid IN (SELECT value FROM json_each(?)) {where}"
        )
        # The whole group of documents tied at a cut: for a word in nearly every document (IDF ~0) thousands tie,
        # and fetching four times more until the group fits took six passes over every match (90 ms at 10^5).
        tied_at = (f"SELECT rowid, r FROM (SELECT rowid, bm25(fts, {weights}) AS r FROM fts WHERE fts MATCH ?) "
                   "WHERE r = ?")

        def passing(ranks: dict[int, float]) -> list[tuple[Any, ...]]:
            rows = db.execute(joined, (json.dumps(list(ranks)), *params)).fetchall()
            return [(*row[1:], ranks[row[0]]) for row in rows]

        while True:
            top = db.execute(ranking, (match, fetch + 1)).fetchall()
            complete = len(top) <= fetch
            cut = None if complete else top[fetch][1]
            ranks = dict(top if cut is None else [(rowid, rank) for rowid, rank in top if rank < cut])
            found = passing(ranks)
            if complete or len(found) >= wanted:
                break
            # Strictly better ones, plus every one at the cut: the same rows a larger fetch would keep first.
            tied = dict(db.execute(tied_at, (match, cut)).fetchall())
            found += passing(tied)
            ranks.update(tied)
            if len(found) >= wanted:
                break
            fetch *= 4
        found.sort(key=lambda r: (r[5], r[0], r[4] or ""))
        rows = [
            _Row(bytes(b).hex(), t, bool(a), bytes(s or b).hex(), loc, -rank)
            for b, t, a, s, loc, rank in found[:wanted]
        ]
        _normalize(rows)
        return self._fused(rows, terms, request, match, where, params)

    def _fused(
        self, rows: list[_Row], terms: list[str], request: SearchRequest, match: str, where: str,
        params: list[object],
    ) -> list[_Row]:
        """Passage rows fused with their source's document-level score (BM25F over names, headings and the
        whole text) and an exact-name bonus; a source that ranks well as a whole but has no passage among the
        candidates joins with its best passage. Episodes and change logs are quieted unless the query asks
        about time or versions. Deterministic: ties broken by block id and locator."""
        db = self.index.db
        weights = ", ".join(map(str, WHOLE_WEIGHTS))
        whole = dict(db.execute(
            f"SELECT rowid, bm25(whole, {weights}) FROM whole WHERE whole MATCH ? ORDER BY 2, 1 LIMIT ?",
            (match, WHOLE_CANDIDATES),
        ).fetchall())
        named = _name_candidates(request.query)
        # A source by any of its names in the query; a derived block only when the query is its label.
        name_keys = {int(k) for k, name, memory_type in db.execute(
            "SELECT n.block, n.name, b.memory_type FROM names n JOIN blocks b ON b.id = n.block "
            f"WHERE n.name IN ({', '.join('?' * len(named))})", named
        ) if memory_type == "canonical" or name == named[0]} if named else set()
        keys = sorted(set(whole) | name_keys)
        fetch_passages = sorted(set(whole) | {k for k in name_keys if self._is_source(k)})
        digests = {int(k): bytes(d).hex() for k, d in db.execute(
            "SELECT id, digest FROM keys WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(keys),))}
        best_whole = max((-v for v in whole.values()), default=0.0)
        doc_score = {digests[k]: (-v / best_whole if best_whole > 0 else 0.0) for k, v in whole.items()}
        named_sources = {digests[k] for k in name_keys}  # sources named, and derived blocks by their label
        present = {r.source for r in rows}
        # Sources strong as a whole (or named) with no passage among the candidates: their best passage.
        joined = (
            "SELECT b.accessible, d.locator FROM docs d JOIN blocks b ON b.id = d.block "
            f"WHERE d.rowid = ? {where}"
        )
        ranking = (f"SELECT rowid, bm25(fts, {', '.join(map(str, BM25_WEIGHTS))}) FROM fts WHERE fts MATCH :match "
                   "AND rowid BETWEEN (SELECT min(rowid) FROM docs WHERE block = :key) "
                   "AND (SELECT max(rowid) FROM docs WHERE block = :key) ORDER BY 2, 1 LIMIT 1")
        missing = [k for k in fetch_passages if digests[k] not in present]
        missing.sort(key=lambda k: (k not in name_keys, whole.get(k, 0.0), k))
        if not request.types or "canonical" in request.types:
            for key in missing[:JOINING]:
                hex_id = digests[key]
                top = db.execute(ranking, {"match": match, "key": key}).fetchone()
                if top is None:
                    continue
                passing = db.execute(joined, (top[0], *params)).fetchone()
                if passing is None:
                    continue
                rows.append(_Row(hex_id, "canonical", bool(passing[0]), hex_id, passing[1], 0.0))
                present.add(hex_id)
        quiet = not _TIME_WORDS.search(request.query)
        for row in rows:
            document = doc_score.get(row.source, 0.0)
            score = PASSAGE_SHARE * row.score + (1 - PASSAGE_SHARE) * document
            why = [f"passage {row.score:.3f} x {PASSAGE_SHARE}",
                   f"source as a whole {document:.3f} x {1 - PASSAGE_SHARE:.1f}"]
            if row.source in named_sources or row.block in named_sources:
                score += NAME_BONUS
                why.append(f"+ {NAME_BONUS} (its name is in the query)")
            if quiet and (row.memory_type == "episodic" or self._is_change_log(row.source)):
                score *= QUIET_SHARE
                why.append(f"x {QUIET_SHARE} ({'an episode' if row.memory_type == 'episodic' else 'a change log'}; "
                           "the query asks nothing about time or versions)")
            row.score = score
            row.why = ", ".join(why)
        rows.sort(key=lambda r: (-r.score, r.block, r.locator or ""))
        rows = rows[: request.limit * CANDIDATES_PER_SLOT]
        _normalize(rows)
        return rows

    def _same_text_key(self, row: _Row) -> tuple[str, ...] | None:
        """What makes two rows the same text: the source's view (by digest) and the place in it, and for a
        derived block also its type and subject."""
        source = self._block(row.source)
        if source is None or source.view is None:
            return None
        if row.memory_type == "canonical":
            return ("canonical", source.view, row.locator or "")
        info = self._block(row.block)
        if info is None or info.fingerprint is None:
            return None
        return (row.memory_type, info.fingerprint.hex(), row.locator or "")

    def _drawn_from(self, info: _Block, source: str | None) -> bool:
        """Whether a block is `source` or drawn from it (always, without `--evidence`)."""
        if source is None or info.block == source:
            return True
        key, target = self.index.key(info.block), self.index.key(source)
        if key is None or target is None:
            return False
        return bool(self.index.db.execute(
            "SELECT 1 FROM edges e JOIN kinds n ON n.id = e.kind AND n.name = 'evidence' WHERE e.src = ? AND e.dst = ?",
            (key, target)).fetchone())

    def _is_source(self, key: int) -> bool:
        row = self.index.db.execute("SELECT memory_type FROM blocks WHERE id=?", (key,)).fetchone()
        return row is not None and row[0] == "canonical"

    def _is_change_log(self, source: str) -> bool:
        info = self._block(source)
        return info is not None and is_change_log(info.origin)

    def view_at(self, source_hex: str, locator: str | None) -> str | None:
        """A source's checked view at a locator (the whole view without one); None when its text cannot be read
        or the locator does not parse."""
        info = self._block(source_hex)
        if info is None or info.view is None:
            return None
        view = self.views.text(info.view)
        if view is None or locator is None:
            return view
        try:
            where = parse_locator(locator)
        except InvalidInputError:
            return None
        return text_at(view, info.media_type or "", where)

    def verified_block(self, block_id: BlockId, memory_type: str) -> Block | None:
        """The block re-read, re-hashed and decoded, or None (see `_verified_block`)."""
        return self._verified_block(block_id, memory_type)

    def _block(self, hex_id: str) -> _Block | None:
        if hex_id in self._memo:
            return self._memo[hex_id]
        found = self._memo[hex_id] = self._read_block(hex_id)
        return found

    def prefetch(self, hex_ids: Sequence[str]) -> None:
        """Read the blocks of `hex_ids` not read yet in this query in one statement (for `_block`)."""
        unread = list(dict.fromkeys(h for h in hex_ids if h not in self._memo))
        for start in range(0, len(unread), 500):
            chunk = unread[start : start + 500]
            found = {bytes(row[0]).hex(): row[1:] for row in self.index.db.execute(
                f"SELECT k.digest, {_BLOCK_COLUMNS} FROM keys k JOIN blocks b ON b.id = k.id "
                f"LEFT JOIN keys s ON s.id = b.source WHERE k.digest IN ({', '.join('?' * len(chunk))})",
                [bytes.fromhex(h) for h in chunk])}
            for hex_id in chunk:
                row = found.get(hex_id)
                self._memo[hex_id] = None if row is None else _block_of(hex_id, row)

    def _read_block(self, hex_id: str) -> _Block | None:
        key = self.index.key(hex_id)
        row = None if key is None else self.index.db.execute(
            f"SELECT {_BLOCK_COLUMNS} FROM blocks b LEFT JOIN keys s ON s.id = b.source WHERE b.id=?", (key,),
        ).fetchone()
        return None if row is None else _block_of(hex_id, row)

    # --- expansion ---------------------------------------------------------------------------------

    def _expand(self, rows: list[_Row], request: SearchRequest) -> list[_Row]:
        seeds: dict[str, float] = {}
        for row in rows:
            seeds.setdefault(row.block, row.score)
        def passable(hex_id: str) -> Iterator[Neighbour]:
            # Activation never flows through a block the answer could not show (§7.2).
            for neighbour, accessible in self._neighbours(hex_id):
                if accessible is not None and (accessible or request.include_superseded):
                    yield neighbour

        reached = spread(seeds, passable)
        present = {r.block for r in rows}
        added = []
        for found in reached:
            if found.block in present:
                continue
            info = self._block(found.block)
            if info is None or not _passes(info, request) or not self._drawn_from(info, request.evidence):
                continue
            locator = None
            if info.memory_type == "canonical" and found.edge == "evidence":
                parent = self._block(found.parent)
                locator = parent.locator if parent is not None else None
            added.append(_Row(info.block, info.memory_type, info.accessible, info.source, locator,
                              round(found.activation, 6), Via.of(found.edge, f"sha256:{found.parent}")))
            present.add(info.block)
        return sorted([*rows, *added], key=lambda r: -r.score)

    def _neighbours(self, hex_id: str) -> Iterator[tuple[Neighbour, bool | None]]:
        """Blocks one edge away (at most `_EDGES_PER_QUERY` per direction) and whether each is accessible
        (None: not indexed, so never shown)."""
        key = self.index.key(hex_id)
        if key is None:
            return
        db = self.index.db
        if self._kinds is None:
            self._kinds = self.index.kind_names()
        kinds = self._kinds
        evidence = next((i for i, name in kinds.items() if name == "evidence"), -1)
        # One statement for the three directions (out, in, through a shared source): a query reads up to
        # `MAX_SEEDS × FAN_OUT` nodes, and statements, not rows, are what costs here.
        rows = db.execute(
            "SELECT * FROM (SELECT 0, e.kind, k.digest, b.accessible FROM edges e JOIN keys k ON k.id = e.dst "
            "LEFT JOIN blocks b ON b.id = e.dst WHERE e.src = :key ORDER BY k.digest LIMIT :cap) "
            "UNION ALL SELECT * FROM (SELECT 1, e.kind, k.digest, b.accessible FROM edges e "
            "JOIN keys k ON k.id = e.src LEFT JOIN blocks b ON b.id = e.src WHERE e.dst = :key "
            "ORDER BY k.digest LIMIT :cap) "
            "UNION ALL SELECT * FROM (SELECT DISTINCT 2, -1, k.digest, b.accessible FROM edges e "
            "JOIN edges o ON o.dst = e.dst AND o.kind = e.kind JOIN keys k ON k.id = o.src "
            "LEFT JOIN blocks b ON b.id = o.src WHERE e.src = :key AND e.kind = :evidence AND o.src != e.src "
            "ORDER BY k.digest LIMIT :cap)",
            {"key": key, "cap": _EDGES_PER_QUERY, "evidence": evidence},
        ).fetchall()
        for direction, kind, digest, accessible in rows:
            if direction == 2:
                yield Neighbour(bytes(digest).hex(), "shared-evidence"), _flag(accessible)
                continue
            name = kinds.get(kind) or self._kind_name(kind)
            yield Neighbour(bytes(digest).hex(), _inverse(name) if direction else name), _flag(accessible)

    def _kind_name(self, kind: int) -> str:
        self._kinds = self.index.kind_names()  # a kind added since the cache was filled
        return self._kinds.get(kind, "edge")

    # --- bundles -----------------------------------------------------------------------------------

    def _bundle(self, row: _Row, snapshot: Snapshot) -> Match | None:
        ref = snapshot.modules.get(row.memory_type)
        if ref is None:
            return None
        block_id = BlockId(row.block)
        proof = self.prover.prove(ref, block_id)
        if proof is None:
            return None  # not a member of the snapshot the answer names: never shown
        info = self._block(row.block)
        evidence, quoted_ok = self._evidence(row, info)
        block = self._verified_block(block_id, row.memory_type)
        verified = block is not None and proof.verify(ref.root) and quoted_ok
        title = "" if block is None else title_of(row.memory_type, block.payload(), info.origin if info else None)
        return Match(
            block=str(block_id),
            memory_type=row.memory_type,
            title=title,
            score=row.score,
            accessible=row.accessible,
            via=row.via,
            evidence=evidence,
            proof=Proof(root=str(ref.root), leaf_index=proof.leaf_index, tree_size=proof.tree_size,
                        audit_path=list(proof.audit_path)),
            verified=verified,
        )

    def _verified_block(self, block_id: BlockId, memory_type: str) -> Block | None:
        """The block re-read, re-hashed and decoded (§1.5), or None when its bytes are not what the id names."""
        try:
            block = Block.decode(self.brain.blobs.get(block_id), block_id)
        except BrainError:
            return None
        return block if block.memory_type.value == memory_type else None

    def _evidence(self, row: _Row, info: _Block | None) -> tuple[list[Evidence], bool]:
        if info is None:
            return [], False
        if row.memory_type == "canonical":
            sources = [(info, row.locator), *((self._block(h) or _unknown(h), row.locator) for h in row.also)]
        else:
            key = self.index.key(row.block)
            cited = [bytes(d).hex() for (d,) in self.index.db.execute(
                "SELECT k.digest FROM edges e JOIN kinds n ON n.id = e.kind JOIN keys k ON k.id = e.dst "
                "WHERE e.src=? AND n.name='evidence'", (key,))]
            sources = [(self._block(h) or _unknown(h), info.locator) for h in cited]
            sources += [(self._block(h) or _unknown(h), info.locator) for h in row.also if h not in cited]
        out = []
        all_ok = True
        for source, locator in sources:
            text = self.views.text(source.view) if source.view else None
            if source.view and text is None:
                all_ok = False
            quoted = excerpt(text, source.media_type or "", locator) if text is not None else ""
            for origin in [source.origin or "", *self._other_origins(source)]:
                out.append(Evidence(block=f"sha256:{source.block}", origin=origin,
                                    media_type=source.media_type or "", locator=locator, excerpt=quoted))
        return out, all_ok

    def _other_origins(self, source: _Block) -> list[str]:
        """The other origins the same source bytes were registered from (identical files in several places)."""
        key = self.index.key(source.block)
        if key is None:
            return []
        found = self.index.db.execute(
            "SELECT DISTINCT origin FROM records WHERE block=? AND type=1 AND origin IS NOT NULL ORDER BY origin "
            "LIMIT 17", (key,)).fetchall()
        return [str(o) for (o,) in found if o != source.origin][:16]


def _flag(value: object) -> bool | None:
    return None if value is None else bool(value)


def _unknown(hex_id: str) -> _Block:
    return _Block(hex_id, "canonical", False, hex_id, None, None, None, None, None, None)


def _inverse(kind: str) -> str:
    if kind.startswith("relation:"):
        return "relation-from:" + kind.removeprefix("relation:")
    return {"uses": "used-by", "evidence": "derived"}.get(kind, f"{kind}-from")


def _filters(request: SearchRequest) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    if not request.include_superseded:
        clauses.append("b.accessible = 1")
    if request.types:
        clauses.append(f"b.memory_type IN ({', '.join('?' * len(request.types))})")
        params.extend(request.types)
    if request.subject is not None:
        clauses.append("b.subject = ?")
        params.append(request.subject.casefold())
    if request.since is not None:
        clauses.append("b.at >= ?")
        params.append(request.since)
    if request.until is not None:
        clauses.append("b.at <= ?")
        params.append(_end_of(request.until))
    for tag in dict.fromkeys(tag_key(t) for t in request.tags):  # every tag (AND)
        clauses.append("b.id IN (SELECT block FROM tags WHERE tag = ?)")
        params.append(tag)
    if request.evidence is not None:
        # The source itself, or a block whose evidence edges name it.
        clauses.append("(b.id = (SELECT id FROM keys WHERE digest = ?) OR EXISTS (SELECT 1 FROM edges e "
                       "JOIN kinds n ON n.id = e.kind AND n.name = 'evidence' WHERE e.src = b.id "
                       "AND e.dst = (SELECT id FROM keys WHERE digest = ?)))")
        params.extend([bytes.fromhex(request.evidence)] * 2)
    return "".join(f" AND {c}" for c in clauses), params


def _is_date(value: str) -> bool:
    """`YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SSZ` naming a real day and time (not 2026-13-45)."""
    if not _DATE.fullmatch(value):
        return False
    try:
        datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ" if "T" in value else "%Y-%m-%d")
    except ValueError:
        return False
    return True


def _end_of(value: str) -> str:
    return value if "T" in value else f"{value}T23:59:59Z"


def _passes(info: _Block, request: SearchRequest) -> bool:
    if not request.include_superseded and not info.accessible:
        return False
    if request.types and info.memory_type not in request.types:
        return False
    if request.subject is not None and info.subject != request.subject.casefold():
        return False
    if request.tags and not {tag_key(t) for t in request.tags} <= info.tags:
        return False
    if request.since is not None and (info.at is None or info.at < request.since):
        return False
    return not (request.until is not None and (info.at is None or info.at > _end_of(request.until)))


def _group(
    rows: Sequence[_Row], limit: int, same_text: Callable[[_Row], tuple[str, ...] | None] = lambda row: None
) -> list[_Row]:
    """At most `PER_SOURCE` rows per source and `limit` in all; groups ordered by their best row. A row whose
    text is the same as a better row's (`same_text`: identical views at the same place, from several
    sources) is not shown again: its source is listed on the better row."""
    groups: OrderedDict[str, list[_Row]] = OrderedDict()
    seen: set[tuple[str, str | None]] = set()
    texts: dict[tuple[str, ...], _Row] = {}
    taken = 0
    for row in rows:  # already by descending score
        key = (row.block, row.locator)
        if key in seen:
            continue
        text = same_text(row)
        if text is not None:
            first = texts.get(text)
            if first is not None:
                if row.source != first.source and row.source not in first.also:
                    first.also.append(row.source)
                seen.add(key)
                continue
            texts[text] = row
        group = groups.setdefault(row.source, [])
        if len(group) >= PER_SOURCE:
            continue
        seen.add(key)
        group.append(row)
        taken += 1
        if taken >= limit:
            break
    return [row for group in groups.values() for row in group]


def _explained(row: _Row) -> str:
    if row.via is not None:
        return f"reached by expansion along {row.via.edge} from {row.via.from_[:19]} (activation {row.score:.3f})"
    also = f"; the same text is in {len(row.also)} more source(s)" if row.also else ""
    return f"{row.why or 'passage score'}; relative to the best: {row.score:.3f}{also}"


def _normalize(rows: list[_Row]) -> None:
    """Scores divided by the best one (rounded, so that equal inputs give equal outputs)."""
    best = max((r.score for r in rows), default=0.0)
    for row in rows:
        row.score = round(row.score / best, 6) if best > 0 else 0.0


def _name_candidates(query: str) -> list[str]:
    """The words of a query that may be a source's own name (`dpkg-query`, `libsodium23`, `README.md`), and
    the whole query (a concept's label)."""
    found: dict[str, None] = {}
    whole = name_key(query[:2000])
    if whole:
        found[whole] = None
    for token in _NAME_TOKEN.findall(query[:2000]):
        lowered = token.casefold()
        if lowered not in STOPWORDS and len(lowered) <= 100:
            found.setdefault(lowered, None)
            found.setdefault(lowered.replace("_", "-"), None)
            found.setdefault(lowered.replace("-", "_"), None)
        if len(found) >= 96:
            break
    return list(found)


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = ["Expansion", "SearchRequest", "Searcher"]
