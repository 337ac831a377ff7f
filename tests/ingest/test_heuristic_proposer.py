"""The heuristic proposer: what it finds, where it says it found it, and what it leaves alone."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.blocks import Block
from brain.blocks.provenance import Producer
from brain.identity import BlockId, canonicalize
from ingest.proposers.base import SourceText
from ingest.proposers.candidates import Candidate, Task
from ingest.proposers.emit import MAX_CANDIDATES_PER_SOURCE
from ingest.proposers.heuristic import PRODUCER, HeuristicProposer
from ingest.proposers.rules import dated, definition, procedure_goal, sentences, term_item
from ingest.proposers.titles import atx_heading

SOURCE = BlockId("5" * 64)
ALL = ("episodic", "procedural", "semantic")

DOC = """# Signals

The Fourier transform is a linear operator that maps a signal
to its spectrum. It is useful.
The sampling rate is 44100 Hz.
The Fourier transform is a different sentence with the same label.

## How to compute a spectrum

1. Sample the signal
2. Apply the FFT
   to the samples
3. Read the magnitudes

## Glossary

- FFT: fast Fourier transform
- **DFT**: discrete Fourier transform

## Features

- fast
- small

## Log

- 2026-03-14 09:12 Deployed version 2
2026-03-15T10:00:00+01:00 Seminar on spectra
2026-02-30 Not a real day

```
The code block is a trap.
2026-01-01 also a trap
```
"""


def _propose(text: str, media_type: str = "text/markdown", types: tuple[str, ...] = ALL) -> list[Candidate]:
    task = Task(source=SOURCE, allowed_memory_types=types, task_id="t")
    result = HeuristicProposer().propose(task, SourceText.of(SOURCE, media_type, text))
    assert result.usage is None and result.candidates.task_id == "t"
    assert result.candidates.producer.to_json() == {"kind": "pipeline", "id": "brain/heuristic", "version": "3"}
    return list(result.candidates.candidates)


def _summary(candidates: list[Candidate]) -> list[tuple[str, str | None, dict]]:
    return [(c.memory_type, c.locator, c.payload) for c in candidates]


def test_the_constructed_producer_is_a_valid_one() -> None:
    # PRODUCER is built with model_construct (no validation at import): it must be what validation gives.
    validated = Producer.model_validate(PRODUCER.model_dump(mode="json"))
    assert validated == PRODUCER
    assert validated.model_dump(mode="json") == PRODUCER.model_dump(mode="json")
    assert validated.model_fields_set == PRODUCER.model_fields_set
    assert HeuristicProposer.version == PRODUCER.version


def test_markdown_document() -> None:
    found = _summary(_propose(DOC))
    assert found == [
        ("semantic", "L3-L4", {"kind": "concept", "label": "Fourier transform",
                               "statement": "The Fourier transform is a linear operator that maps a signal to its "
                                            "spectrum.",
                               "subject": "Signals"}),
        ("semantic", "L5", {"kind": "fact", "label": "sampling rate", "statement": "The sampling rate is 44100 Hz.",
                            "subject": "Signals"}),
        ("procedural", "L10-L13", {"label": "How to compute a spectrum", "goal": "compute a spectrum",
                                   "steps": [{"action": "Sample the signal"},
                                             {"action": "Apply the FFT to the samples"},
                                             {"action": "Read the magnitudes"}], "subject": "Signals"}),
        ("semantic", "L17", {"kind": "concept", "label": "FFT", "statement": "FFT: fast Fourier transform",
                             "subject": "Signals > Glossary"}),
        ("semantic", "L18", {"kind": "concept", "label": "DFT", "statement": "DFT: discrete Fourier transform",
                             "subject": "Signals > Glossary"}),
        ("episodic", "L27", {"summary": "Deployed version 2", "occurred_at": "2026-03-14T09:12:00Z",
                             "context": "Signals > Log"}),
        ("episodic", "L28", {"summary": "Seminar on spectra", "occurred_at": "2026-03-15T09:00:00Z",
                             "context": "Signals > Log"}),
    ]


def test_every_candidate_builds_a_block_and_has_no_float() -> None:
    for candidate in _propose(DOC):
        assert candidate.evidence == (str(SOURCE),)
        block = Block.from_payload(candidate.memory_type, candidate.payload | {"evidence": list(candidate.evidence)})
        assert block.schema_version == 1
        canonicalize(candidate.payload)


def test_allowed_types_filter() -> None:
    assert {c.memory_type for c in _propose(DOC, types=("episodic",))} == {"episodic"}


def test_pdf_pages_give_page_locators() -> None:
    text = "Title page\fIntro\nThe FFT is an algorithm that\nruns fast.\n\f\n2026-01-01 New year party"
    found = _summary(_propose(text, "application/pdf"))
    assert [(t, loc) for t, loc, _ in found] == [("semantic", "p.2 L2-L3"), ("episodic", "p.3 L2")]


def test_procedures_need_two_items_a_label_and_a_cue_for_bullets() -> None:
    assert _propose("1. only one step\n") == []
    assert _propose("1. no heading\n2. no lead-in\n") == []
    found = _propose("To deploy the app:\n\n1. build\n2. ship\n")
    assert [c.payload for c in found] == [
        {"label": "To deploy the app", "goal": "deploy the app", "steps": [{"action": "build"}, {"action": "ship"}]}
    ]
    assert _propose("## Installation\n\n- get python\n- pip install brain\n")[0].memory_type == "procedural"


def test_generic_step_headings_take_the_section_title() -> None:
    text = "# Deploying Lumen\n\n## Steps\n\n1. drain a shard\n2. replace the image\n"
    [procedure] = _propose(text)
    assert procedure.payload["label"] == "Deploying Lumen" and "subject" not in procedure.payload


def test_time_only_lines_take_the_date_of_a_heading() -> None:
    text = "# Incident on 2026-03-14\n\n## Timeline\n\n- 09:12 deploy started\n- 9:15:30 UTC alert fired\n- 25:00 no\n"
    found = [(c.payload["occurred_at"], c.payload["summary"]) for c in _propose(text)]
    assert found == [("2026-03-14T09:12:00Z", "deploy started"), ("2026-03-14T09:15:30Z", "alert fired")]
    assert _propose("# Timeline\n\n09:12 deploy started\n") == []


def test_dedupe_within_one_source_keeps_first() -> None:
    found = _propose("Kubernetes is an orchestrator.\n\nKubernetes is a platform.\n")
    assert [c.payload["statement"] for c in found] == ["Kubernetes is an orchestrator."]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("The Fourier transform is a linear operator.", ("concept", "Fourier transform")),
        ("A monad means a monoid.", ("concept", "monad")),
        ("Latency refers to delay.", ("concept", "Latency")),
        ("The default port is 8080.", ("fact", "default port")),
        ("It is a thing.", None),
        ("This is the way.", None),
        ("Python is great.", None),
        ("running is a verb.", None),
        ("Is the FFT a transform?", None),
    ],
)
def test_definition_rule(sentence: str, expected: tuple[str, str] | None) -> None:
    assert definition(sentence) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("2026-03-14 deployed", ("2026-03-14T00:00:00Z", "deployed")),
        ("2026-03-14 09:12 - standup", ("2026-03-14T09:12:00Z", "standup")),
        ("2026-03-14T09:12:30.250Z: backup", ("2026-03-14T09:12:30Z", "backup")),
        ("2026-03-14T00:30:00+01:00 midnight", ("2026-03-13T23:30:00Z", "midnight")),
        ("[2026-03-14] release notes", ("2026-03-14T00:00:00Z", "release notes")),
        ("2026-02-29 not a leap year", None),
        ("2026-13-01 bad month", None),
        ("2026-03-14 25:00 bad hour", None),
        ("2026-03-14", None),
        ("2026-03-14 1234", None),
        ("20260314 compact", None),
        ("v2026-03-14 prefixed", None),
    ],
)
def test_dated_rule(line: str, expected: tuple[str, str] | None) -> None:
    assert dated(line) == expected


def test_small_rules() -> None:
    assert term_item("Step 1: do it") is None
    assert term_item("09:12 the deploy started") is None
    assert term_item("API — application programming interface") == ("API", "API — application programming interface")
    assert procedure_goal("How to Build") == "Build"
    assert sentences("One is a. Two! e.g.x") == [(0, 9), (10, 14), (15, 20)]


def test_garbage_text_never_fails() -> None:
    weird = "\x00\ufeff#\n# \n-\n1.\n```\n" + "é" * 1000 + "\n" + "2026-01-01\n" * 3 + "\f\f"
    for media_type in ("text/plain", "application/pdf"):
        for candidate in _propose(weird, media_type):
            Block.from_payload(candidate.memory_type, candidate.payload | {"evidence": list(candidate.evidence)})


_LINES = st.sampled_from(
    ["# Steps", "## How to run", "1. do it", "- FFT: fast", "The X is a y.", "2026-03-14 09:12 met", "", "```",
     "Intro", "  continued", "To start:", "[2026-02-29] bad", "===", "---", "\f", "It is a trap."]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_LINES | st.text(max_size=40), max_size=30), st.sampled_from(["text/markdown", "application/pdf"]))
def test_every_candidate_of_any_text_is_a_valid_block(lines: list[str], media_type: str) -> None:
    candidates = _propose("\n".join(lines), media_type)
    keys = set()
    for candidate in candidates:
        block = Block.from_payload(candidate.memory_type, candidate.payload | {"evidence": list(candidate.evidence)})
        assert block.schema_version == 1 and candidate.locator
        keys.add(block.block_id)
    assert len(keys) == len(candidates)


_BACKTRACKING_SENTENCE = re.compile(r"(?:[^.!?]|[.!?](?!\s|$))+[.!?]?")


@given(st.text(alphabet="ab .!?\n\t\u00a0", max_size=40))
def test_sentence_spans_match_the_plain_pattern(text: str) -> None:
    expected = [(m.start() + len(m[0]) - len(m[0].lstrip()), m.end()) for m in _BACKTRACKING_SENTENCE.finditer(text)]
    assert sentences(text) == [span for span in expected if span[0] < span[1]]


def test_one_huge_line_splits_into_sentences_in_constant_regex_memory() -> None:
    import tracemalloc

    line = "The " + "x is a " * 300_000  # once ~120 bytes of regex stack per character (250 MB here)
    tracemalloc.start()
    try:
        spans = sentences(line)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert spans == [(0, len(line))] and peak < 10 << 20


_BACKTRACKING_HEADING = re.compile(r"(#{1,6})\s+(.*?)\s*#*\s*")


@given(st.integers(1, 8), st.text(alphabet="# ab\t\u00a0\n\x0b", max_size=14))
def test_atx_heading_matches_the_plain_pattern(hashes: int, tail: str) -> None:
    line = "#" * hashes + tail
    match = _BACKTRACKING_HEADING.fullmatch(line)
    assert atx_heading(line) == (None if match is None else (len(match[1]), match[2]))


def test_a_heading_with_a_long_run_of_inner_spaces_is_linear() -> None:
    # Once the pattern above took ~1 s for 1,000 inner spaces and ~1 min for 4,000 (cubic backtracking).
    line = "## a" + " " * 200_000 + "b ##"
    assert atx_heading(line) == (2, "a" + " " * 200_000 + "b")
    found = _propose(line + "\n\nThe widget is a small thing.\n")
    assert [(c.payload["label"], c.payload.get("subject")) for c in found] == [("widget", "a b")]


def test_truncation_at_the_cap_is_reported_as_a_note() -> None:
    found = MAX_CANDIDATES_PER_SOURCE + 7
    # Each line a distinct dated event, plus one repeat that dedupe drops (it is not counted as found).
    text = "\n".join(f"2026-01-01 event {i}" for i in range(found)) + "\n2026-01-01 event 0\n"
    task = Task(source=SOURCE, allowed_memory_types=ALL, task_id="t")
    result = HeuristicProposer().propose(task, SourceText.of(SOURCE, "text/plain", text))
    assert len(result.candidates.candidates) == MAX_CANDIDATES_PER_SOURCE
    assert result.candidates.candidates[-1].payload["summary"] == f"event {MAX_CANDIDATES_PER_SOURCE - 1}"
    assert result.notes == (
        f"proposals-capped: kept the first {MAX_CANDIDATES_PER_SOURCE} of {found} candidates "
        f"(at most {MAX_CANDIDATES_PER_SOURCE} per source)",
    )
    under = "\n".join(f"2026-01-01 event {i}" for i in range(MAX_CANDIDATES_PER_SOURCE))
    exact = HeuristicProposer().propose(task, SourceText.of(SOURCE, "text/plain", under))
    assert len(exact.candidates.candidates) == MAX_CANDIDATES_PER_SOURCE and exact.notes == ()
    assert HeuristicProposer().propose(task, SourceText.of(SOURCE, "text/markdown", DOC)).notes == ()


def test_counting_past_the_cap_stops_at_a_bound() -> None:
    from ingest.proposers.emit import MAX_COUNTED

    text = "\n".join(f"2026-01-01 event {i}" for i in range(MAX_COUNTED + 500))
    task = Task(source=SOURCE, allowed_memory_types=ALL, task_id="t")
    result = HeuristicProposer().propose(task, SourceText.of(SOURCE, "text/plain", text))
    assert len(result.candidates.candidates) == MAX_CANDIDATES_PER_SOURCE
    assert result.notes == (
        (
            f"proposals-capped: kept the first {MAX_CANDIDATES_PER_SOURCE} of more than {MAX_COUNTED} candidates "
            f"(at most {MAX_CANDIDATES_PER_SOURCE} per source)"
        ),
    )
