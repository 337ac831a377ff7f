"""The index follows lifecycle commands run through the CLI: drop, demote, redact (even under a server)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from brain.brain import Brain
from retrieval.paths import search_dir
from retrieval.query import Searcher, SearchRequest
from tests.retrieval.conftest import ACTOR, run_cli


def _titles(brain_dir: Path, query: str, **options: Any) -> dict[str, bool]:
    searcher = Searcher(Brain.open(brain_dir))
    try:
        result = searcher.search(SearchRequest(query, expand=False, **options))
    finally:
        searcher.close()
    assert all(m.verified for m in result.matches)
    return {m.title: m.accessible for m in result.matches}


def _cli(brain_dir: Path, *args: str) -> None:
    done = run_cli("--brain", str(brain_dir), "--actor", ACTOR, "--quiet", *args)
    assert done.code == 0, done


def test_dropping_the_winner_makes_the_superseded_block_accessible_again(reference_brain: Path) -> None:
    assert _titles(reference_brain, "Fourier", types=("semantic",)) == {"Fourier expansion": True}
    winner = Brain.open(reference_brain).resolve_prefix("1a0b3a6e9602")
    _cli(reference_brain, "drop", str(winner), "--reason", "wrong", "--yes")
    assert _titles(reference_brain, "Fourier", types=("semantic",)) == {"Fourier series": True}


def test_a_demoted_block_leaves_search_until_superseded_blocks_are_asked_for(corpus_brain: Path) -> None:
    found = _titles(corpus_brain, "warmer", types=("semantic",))
    assert found.get("warmer") is True
    searcher = Searcher(Brain.open(corpus_brain))
    block = next(m.block for m in searcher.search(SearchRequest("warmer", types=("semantic",))).matches
                 if m.title == "warmer")
    searcher.close()
    _cli(corpus_brain, "demote", block, "--reason", "stale")
    assert "warmer" not in _titles(corpus_brain, "warmer", types=("semantic",))
    assert _titles(corpus_brain, "warmer", types=("semantic",), include_superseded=True)["warmer"] is False


def test_a_redacted_source_is_gone_from_the_index_and_from_answers(corpus_brain: Path) -> None:
    searcher = Searcher(Brain.open(corpus_brain))  # an open index, as a server holds one
    before = searcher.search(SearchRequest("onboarding", types=("canonical",)))
    source = next(m.block for m in before.matches if m.evidence[0].origin == "pages/onboarding.html")
    _cli(corpus_brain, "redact", source, "--reason", "personal data", "--yes")
    after = searcher.search(SearchRequest("onboarding week access"))
    searcher.close()
    assert source not in {m.block for m in after.matches}
    assert all(e.block != source for m in after.matches for e in m.evidence)
    assert after.snapshot == str(Brain.open(corpus_brain).snapshot_digest())
    assert search_dir(corpus_brain).exists()  # the open searcher moved to the new file the redaction left
