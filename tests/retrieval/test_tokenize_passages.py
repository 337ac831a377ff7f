"""Terms and passages: pure logic, checked on the cases the index and queries depend on."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.errors import InvalidInputError
from retrieval.passages import Locator, excerpt, parse_locator, passages, text_at
from retrieval.tokenize import (
    _COMPOUND,
    _TRIGGER,
    FTS_TOKENIZER,
    MAX_QUERY_TERMS,
    MAX_TERM_LENGTH,
    _token_terms,
    expansion_terms,
    fts_query,
    identifier_parts,
    query_terms,
)


@pytest.mark.parametrize(
    ("token", "parts"),
    [
        ("read_block", ["read", "block"]),
        ("ReadBlock", ["read", "block"]),
        ("HTTPServer", ["http", "server"]),
        ("brain.store.atomic", ["brain", "store", "atomic"]),
        ("os::path", ["os", "path"]),
        ("shard", []),
        ("HTTP", []),
        ("café", []),
    ],
)
def test_identifier_parts(token: str, parts: list[str]) -> None:
    assert identifier_parts(token) == parts


def test_expansion_adds_joined_dotted_names_and_parts() -> None:
    terms = expansion_terms("call brain.store.atomic or ReadBlock, not plain words").split()
    assert terms == ["brain_store_atomic", "brain", "store", "atomic", "read", "block"]


def _expanded_one_token_at_a_time(text: str) -> str:
    """What `expansion_terms` means, slowly: the terms of every compound token, as a query cuts the text, that
    holds a trigger."""
    out = []
    for token in _COMPOUND.finditer(text):
        holds = any(token.start() <= t.start() < token.end() for t in _TRIGGER.finditer(text, token.start(),
                                                                                          token.end() + 1))
        if holds and len(token.group()) <= MAX_TERM_LENGTH * 4 and (terms := _token_terms(token.group())):
            out.append(terms)
    return " ".join(out)


def test_expansion_reaches_the_token_after_one_it_steps_over() -> None:
    # Walking back from the `_` of `bash_profile` reaches `HOME`, a token of its own (`/.` joins nothing): the
    # expansion must go on to the token that holds the trigger (before brain-search/5 it stopped at `HOME`).
    assert expansion_terms("read by $HOME/.bash_profile at login") == "bash profile"
    assert expansion_terms("a.b.c x_y") == "a_b_c a b c x y"


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="aZé9_./: -\n\t$", max_size=40))
def test_expansion_is_every_compound_token_holding_a_trigger(text: str) -> None:
    assert expansion_terms(text) == _expanded_one_token_at_a_time(text)


def test_query_terms_drop_stopwords_and_fts_syntax() -> None:
    assert query_terms('how do I "deploy" a NEAR* -release?') == ["deploy", "near", "release"]
    assert query_terms("the") == ["the"]  # only stopwords: keep them rather than search for nothing
    assert query_terms('"*-()') == []
    assert len(query_terms(" ".join(f"word{i}" for i in range(20_000)))) == MAX_QUERY_TERMS


def _table(rows: list[str]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE f USING fts5(body, extra, tokenize=\"{FTS_TOKENIZER}\")")
    db.executemany("INSERT INTO f VALUES (?, ?)", [(r, expansion_terms(r)) for r in rows])
    return db


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("read_block", 1),  # the raw identifier
        ("read block", 1),  # its parts
        ("ReadBlock", 1),
        ("brain.store.atomic", 2),  # the dotted name, and the row that mentions store
        ("CAFE", 3),  # case and diacritics
        ('"NEAR" * - AND OR', 0),  # operators are words here, and match nothing
    ],
)
def test_queries_match_through_the_same_tokenizer(query: str, expected: int) -> None:
    db = _table(["we call read_block here", "brain.store.atomic writes", "Café au lait", "store it"])
    found = db.execute("SELECT rowid FROM f WHERE f MATCH ? ORDER BY rank", (fts_query(query_terms(query)),)).fetchall()
    assert [r[0] for r in found][:1] == ([expected] if expected else [])


def test_passages_cover_every_line_with_locators_that_name_their_text() -> None:
    text = "\n".join(f"line {i} " + "x" * 60 for i in range(1, 60))
    found = passages(text, "text/plain")
    assert len(found) > 1
    for passage in found:
        assert text_at(text, "text/plain", parse_locator(passage.locator)).strip() == passage.text
    covered = sorted({n for p in found
                      for n in range(parse_locator(p.locator).first or 0, (parse_locator(p.locator).last or 0) + 1)})
    assert covered == list(range(1, 60))


def test_pdf_passages_are_located_by_page_and_line() -> None:
    text = "title\nintro line\f2. Sharding\nConsistent hashing maps keys.\f"
    found = passages(text, "application/pdf")
    assert [(p.locator, p.text) for p in found] == [
        ("p.1 L1-L2", "title\nintro line"),
        ("p.2 L1-L2", "2. Sharding\nConsistent hashing maps keys."),
    ]
    assert text_at(text, "application/pdf", parse_locator("p.2 L2")) == "Consistent hashing maps keys."
    assert excerpt(text, "application/pdf", "p.2") == "2. Sharding\nConsistent hashing maps keys."
    assert text_at(text, "application/pdf", parse_locator("p.9")) == ""


@pytest.mark.parametrize(
    ("text", "locator"),
    [("L5", Locator(first=5)), ("L5-L9", Locator(first=5, last=9)), ("p.3 L2-L4", Locator(3, None, 2, 4)),
     ("line 1", Locator(first=1)), ("page 2", Locator(page=2)), ("p.2-p.3", Locator(2, 3))],
)
def test_locators_parse(text: str, locator: Locator) -> None:
    assert parse_locator(text) == locator


@pytest.mark.parametrize("text", ["", "x", "L0", "L9-L3", "p.", "L5; rm -rf /"])
def test_bad_locators_are_refused(text: str) -> None:
    with pytest.raises(InvalidInputError):
        parse_locator(text)
