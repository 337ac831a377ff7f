"""Procedure labels from lead-ins, plain-text headings and licence preambles: what real documents got wrong."""

from __future__ import annotations

import pytest

from brain.identity import BlockId
from ingest.proposers import rules
from ingest.proposers.base import SourceText
from ingest.proposers.extraction import extract
from ingest.proposers.titles import document_title

SOURCE = BlockId("7" * 64)
ALL = frozenset({"episodic", "procedural", "semantic"})


def _procedures(text: str, media_type: str = "text/plain") -> list[str]:
    found = extract(SourceText.of(SOURCE, media_type, text), ALL)
    return [c.payload["label"] for c in found if c.memory_type == "procedural"]


@pytest.mark.parametrize(
    ("lead_in", "label"),
    [
        ("To onboard an ambassador, a member of the TSC will", "To onboard an ambassador"),
        ("To build it, run", "To build it"),
        ("The basic sequence of operations is as follows", "The basic sequence of operations"),
        ("The steps to correct CVE information are", "The steps to correct CVE information"),
        ("Installing the agent", "Installing the agent"),
        ("However, there are some differences", None),
        ("In particular, it", None),
        ("Specifically, for each file, the tests", None),
        ("For example, you can", None),
        ("Note how this stylesheet", None),
        ("Major issues include", None),
        ("A typical workflow looks like", None),
        ("Currently, our focus is on", None),
    ],
)
def test_a_lead_in_names_its_list_or_nothing(lead_in: str, label: str | None) -> None:
    assert rules.lead_in_label(lead_in) == label


def test_a_discourse_marker_before_a_list_is_no_procedure_label() -> None:
    text = "Caching\n\nHowever, there are some differences:\n\n1. Entries expire.\n2. Misses are counted.\n"
    assert _procedures(text) == []


def test_a_purpose_clause_names_the_procedure() -> None:
    text = "Onboarding\n\nTo onboard an ambassador, a member of the team will:\n\n1. Add them to the team.\n" \
        "2. Announce it on the list.\n"
    assert _procedures(text) == ["To onboard an ambassador"]


def test_an_indented_hash_line_in_plain_text_is_no_heading() -> None:
    # A continuation line of a numbered item starting with `#` (bash's COMPAT) made "or % or the new ..." a title.
    text = "COMPAT\n\n1. A quote is special, unless the operator is\n    # or % or the new expansions.\n" \
        "2. Shells no longer exit on an assignment error.\n3. Completion keeps what the user typed.\n"
    assert _procedures(text) == ["Compat"]


def test_a_copyright_preamble_is_not_the_title() -> None:
    # GNU READMEs open with a notice and its terms; taking them as the title made the whole file a "licence".
    text = "  Copyright (C) 1992-2022 Free Software Foundation, Inc.\n\n" \
        "  Copying and distribution of this file, with or without modification,\n" \
        "  are permitted in any medium without royalty provided the copyright\n  notice is preserved.\n\n" \
        "This is GNU grep.\n\nA matcher is a program that finds text.\n"
    assert document_title(text, markdown=False) == "This is GNU grep."
    found = extract(SourceText.of(SOURCE, "text/plain", text), ALL)
    assert [(c.payload["kind"], c.payload["label"]) for c in found] == [("concept", "matcher")]


def test_gnu_change_log_entries_drop_commit_references_and_clock_times() -> None:
    text = "2026-03-02  10:15  Jane Doe  <jane@example.org>\n\n\tFrom Sam Roe:\n\tgpgconf: Fix the description.\n" \
        "\t+ commit ff30fcd3dc78c00ed87ce6bd3414b828bdf51e84\n\t* tools/gpgconf.c: Fix it.\n"
    found = extract(SourceText.of(SOURCE, "text/plain", text), ALL)
    assert [c.payload for c in found] == [{
        "summary": "gpgconf: Fix the description; tools/gpgconf.c: Fix it", "occurred_at": "2026-03-02T00:00:00Z",
        "context": "ChangeLog, Jane Doe"}]


def test_a_term_cut_inside_a_quotation_is_no_term() -> None:
    text = "# HTTP\n\n- Sending a 'Connection: keep-alive' header will keep the socket open for the next request.\n" \
        "- Node's agent: a pool of sockets shared by the requests of one client.\n"
    found = extract(SourceText.of(SOURCE, "text/markdown", text), ALL)
    assert [c.payload["label"] for c in found] == ["Node's agent"]


def test_a_vague_label_is_no_concept() -> None:
    text = "# Object wrap\n\nThe first is a database handle and the second is a query handle.\n"
    assert extract(SourceText.of(SOURCE, "text/markdown", text), ALL) == []


def test_package_metadata_says_what_the_package_is_and_titles_its_description() -> None:
    text = "Metadata-Version: 2.4\nName: quill\nVersion: 2.1.0\nSummary: A terminal note taker that syncs files\n" \
        "Classifier: Programming Language :: Python :: 3\n\n.. image:: https://ci.example.org/badge.svg\n\n" \
        "Usage\n=====\n\nA notebook is a folder of notes.\n"
    found = extract(SourceText.of(SOURCE, "text/plain", text), ALL)
    assert [c.payload for c in found] == [
        {"kind": "concept", "label": "quill", "statement": "quill: A terminal note taker that syncs files",
         "subject": "quill 2.1.0 package metadata"},
        {"kind": "concept", "label": "notebook", "statement": "A notebook is a folder of notes.",
         "subject": "quill > Usage"},
    ]
    # A summary that says nothing ("UNKNOWN") is no concept.
    assert extract(SourceText.of(SOURCE, "text/plain", "Metadata-Version: 2.1\nName: x\nSummary: UNKNOWN\n"), ALL) == []


def test_an_api_class_heading_is_no_term() -> None:
    # "Class: X extends Y" in two API pages made the label "Class" contradict itself across documents.
    text = "# Workers\n\n- Class: BroadcastChannel extends EventTarget\n- Event: something that happened to a worker\n"
    found = extract(SourceText.of(SOURCE, "text/markdown", text), ALL)
    assert [c.payload["label"] for c in found] == ["Event"]


def test_a_numbered_list_of_statements_under_a_heading_is_no_procedure() -> None:
    text = "# Components\n\n### Benefits\n\n1. The component is tested on every commit.\n" \
        "2. The component follows the release schedule.\n3. There is no extra package.\n\n" \
        "### Adding a component\n\n1. Open a proposal.\n2. Get two approvals.\n"
    assert _procedures(text, "text/markdown") == ["Adding a component"]


@pytest.mark.parametrize(
    ("item", "term"),
    [
        ("unix/unxcfg.h: enabled enhanced filtering when setlocale is available", None),
        ("ubz2err.c: new source file to isolate the fatal error callback", None),
        ("Buffer.from(array): allocates a new buffer using an array of bytes", "Buffer.from(array)"),
        ("package.json: the manifest file of a Node.js package", "package.json"),
    ],
)
def test_a_change_to_a_source_file_is_no_term(item: str, term: str | None) -> None:
    found = rules.term_item(item)
    assert (found[0] if found else None) == term
