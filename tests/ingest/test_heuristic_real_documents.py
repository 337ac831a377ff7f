"""The heuristic on the shapes real documents have: change logs, reST, man pages, and the junk it must not keep."""

from __future__ import annotations

import pytest

from brain.blocks.memory_type import MemoryType
from brain.identity import BlockId
from ingest.normalize.man_text import man_to_text
from ingest.proposers.base import SourceText
from ingest.proposers.candidates import Task
from ingest.proposers.extraction import extract
from ingest.proposers.heuristic import HeuristicProposer

SOURCE = BlockId("6" * 64)
ALL = frozenset({"episodic", "procedural", "semantic"})


def _found(text: str, media_type: str = "text/markdown") -> list[tuple[str, dict]]:
    return [(c.memory_type, c.payload) for c in extract(SourceText.of(SOURCE, media_type, text), ALL)]


def test_keep_a_changelog_releases_are_episodes_with_their_changes() -> None:
    text = "# Changelog\n\n## [Unreleased]\n\n- wip\n\n## [1.2.0] - 2026-03-14\n\n### Added\n- TLS client certs.\n\n" \
        "### Fixed\n- A crash on empty config.\n\n## [1.1.0] - 2026-01-20\n\n- deps: update npm to 6.13.4\n"
    assert _found(text) == [
        ("episodic", {"summary": "Released 1.2.0: Added: TLS client certs; Fixed: A crash on empty config",
                      "occurred_at": "2026-03-14T00:00:00Z", "context": "Changelog"}),
        ("episodic", {"summary": "Released 1.1.0: deps: update npm to 6.13.4", "occurred_at": "2026-01-20T00:00:00Z",
                      "context": "Changelog"}),
    ]


def test_debian_gnu_and_git_change_logs_are_dated_in_utc() -> None:
    debian = "lumen (1.2-1) unstable; urgency=medium\n\n  * New upstream release.\n\n" \
        " -- Jane Doe <jane@example.org>  Sat, 14 Mar 2026 00:30:00 +0100\n"
    assert _found(debian, "application/gzip") == [("episodic", {
        "summary": "Uploaded lumen 1.2-1: New upstream release", "occurred_at": "2026-03-13T23:30:00Z",
        "context": "lumen changelog"})]
    gnu = "2026-03-02  Jane Doe  <jane@example.org>\n\t    Sam Roe  <sam@example.org>\n\n" \
        "\t* src/cache.c (evict): Use the clock policy.\n" \
        "\t* NEWS: Mention it.\n"
    # The summary says what changed; the author is context, not the event.
    assert _found(gnu, "text/plain") == [("episodic", {
        "summary": "src/cache.c (evict): Use the clock policy; NEWS: Mention it", "occurred_at": "2026-03-02T00:00:00Z",
        "context": "ChangeLog, Jane Doe"})]
    git = "commit " + "a" * 40 + "\nAuthor: J <j@example.org>\n" \
        "Date:   Mon Mar 2 10:15:00 2026 +0100\n\n    Use the clock\n"
    assert _found(git, "text/plain") == [("episodic", {
        "summary": "Use the clock", "occurred_at": "2026-03-02T09:15:00Z", "context": "git log"})]
    # A message of punctuation only (harfbuzz's changelog has a commit whose message is ".") names no event.
    dot = "commit " + "b" * 40 + "\nAuthor: J <j@example.org>\n" \
        "Date:   Mon Mar 2 11:15:00 2026 +0100\n\n    .\n\n    Later text\n"
    assert _found(git + "\n" + dot, "text/plain") == _found(git, "text/plain")


@pytest.mark.parametrize(
    "text",
    [
        "# A\n\nThe API is extremely minimal:\n\nwhich is all.\n",  # a dangling lead-in
        "# A\n\nIf there is a lease, it is kept.\n",  # a fragment as label
        "# A\n\n- Coveralls: https://coveralls.example.org/repo\n- Docs: https://docs.example.org\n",  # links
        "# A\n\n## Contents\n\n1. Installation\n2. Usage\n3. License\n",  # a table of contents
        "# A\n\n## Options\n\n- `-v`: verbose output\n- `--port`: the port to listen on\n",  # flags
        "# A\n\n## Parameters\n\n- path: the file to read from disk\n- mode: how to open the file\n",  # parameters
        "# A\n\n## How to use\n\n1. Redistributions must retain the copyright notice.\n2. Neither the name ...\n",
        "# GNU General Public License\n\nThe act of running the Program is not restricted.\n",  # licence text
        "# A\n\nThe plotutils package is available at\nhttps://example.org/plotutils\n",  # a cut sentence
        "# A\n\n- deps: update npm to 6.13.4 in the tree\n- Returns: <Promise> fulfills with undefined\n",
    ],
)
def test_junk_shapes_give_nothing(text: str) -> None:
    assert _found(text) == []


def test_a_definition_that_introduces_a_list_takes_the_list() -> None:
    found = _found("# Tern\n\nThe API is minimal:\n\n- submit\n- cancel\n- status\n")
    assert found == [("semantic", {"kind": "fact", "label": "API",
                                   "statement": "The API is minimal: submit; cancel; status.",
                                   "subject": "Tern"})]


def test_same_section_names_in_two_documents_have_different_subjects() -> None:
    one = _found("# Lumen\n\n## Glossary\n\n- Cell: one value at the crossing of a row and a column\n")
    two = _found("# Quill\n\n## Glossary\n\n- Cell: one sample of one metric in a series\n")
    assert [p["subject"] for _, p in one + two] == ["Lumen > Glossary", "Quill > Glossary"]


def test_rest_titles_directives_fields_and_literal_blocks() -> None:
    text = "=====\nGuide\n=====\n\n:Version: 2.0\n\nSetup\n-----\n\n" \
        ".. note::\n   A worker is a process that runs jobs.\n\n" \
        ".. code-block:: python\n\n   A trap is a thing that is code.\n\n" \
        "Example::\n\n   The literal is a trap too.\n\n" \
        "#. Install it.\n#. Run it.\n"
    found = _found(text, "text/x-rst")
    assert found == [
        ("semantic", {"kind": "fact", "label": "Version", "statement": "Version: 2.0", "subject": "Guide"}),
        ("semantic", {"kind": "concept", "label": "worker", "statement": "A worker is a process that runs jobs.",
                      "subject": "Guide > Setup"}),
        ("procedural", {"label": "Setup", "goal": "Setup", "steps": [{"action": "Install it."}, {"action": "Run it."}],
                        "subject": "Guide"}),
    ]


def test_man_page_name_section_and_options() -> None:
    view = man_to_text('.TH LS 1\n.SH NAME\nls \\- list directory contents\n.SH OPTIONS\n.TP\n.B \\-a\ndo not ignore '
                       'entries\n.IP \\(bu 2\na bullet item\n.de XX\n.SH IGNORED\n..\n')
    assert view == "# LS(1)\n\n## NAME\n\n- ls — list directory contents\n\n" \
        "## OPTIONS\n\n- -a: do not ignore entries\n\n" \
        "- a bullet item\n"
    assert _found(view, "text/troff") == [("semantic", {"kind": "concept", "label": "ls",
                                                         "statement": "ls — list directory contents",
                                                         "subject": "LS(1) > NAME"})]


def test_an_empty_view_and_an_unrecognized_one_say_why() -> None:
    task = Task(source=SOURCE, allowed_memory_types=(MemoryType.EPISODIC,), task_id="t")
    empty = HeuristicProposer().propose(task, SourceText.of(SOURCE, "text/plain", "\n\n"))
    assert empty.notes == ("no-candidates: the normalized view is empty",)
    prose = HeuristicProposer().propose(task, SourceText.of(SOURCE, "text/plain", "just words\nmore words\n"))
    assert prose.notes == ("no-candidates: nothing recognized in 3 lines (text/plain)",)


def test_a_lowercase_name_from_the_title_can_be_defined() -> None:
    found = _found("Welcome to tmux!\n\ntmux is a terminal multiplexer.\nrunning is a verb.\n", "text/plain")
    assert found == [("semantic", {"kind": "concept", "label": "tmux", "statement": "tmux is a terminal multiplexer.",
                                   "subject": "Welcome to tmux!"})]


def test_list_items_continued_by_indented_lines_are_joined_and_an_overlong_one_is_let_go() -> None:
    from ingest.proposers.lists import MAX_ITEM_CHARS

    steps = "# Deploying Lumen\n\n## Steps\n\n" \
        "1. Build the\n   release archive\n2. Copy it\n   to the hosts\n   in order\n"
    ((kind, payload),) = _found(steps)
    assert kind == "procedural" and [s["action"] for s in payload["steps"]] == [
        "Build the release archive", "Copy it to the hosts in order"]
    # An item continued past the limit is no step (a careful reader would not quote it); the others stay.
    overlong = steps + "".join("   more words here\n" for _ in range(MAX_ITEM_CHARS // 15))
    overlong += "3. Restart the service\n"
    ((kind, payload),) = _found(overlong)
    assert [s["action"] for s in payload["steps"]] == ["Build the release archive", "Restart the service"]


def test_untitled_sources_that_open_alike_get_distinct_subjects() -> None:
    from ingest.proposers.titles import document_title

    # libxmlsec1's examples: a C comment frame (` *` lines are no text) whose licence lines come after the
    # description, and descriptions that share their first eight words.
    def example(what: str) -> str:
        return (f"/**\n * XML Security Library example: Decrypting an encrypted file using {what}.\n *\n"
                " * This is free software; see Copyright file in the source\n * distribution for wording.\n"
                " *\n * Copyright (C) 2002-2022 A. Author. All Rights Reserved.\n */\n#include <stdlib.h>\n")
    one, two = example("a single key"), example("keys manager")
    expected = "XML Security Library example: Decrypting an encrypted file using a single key."
    assert document_title(one, False) == expected
    assert document_title(one, False) != document_title(two, False)
    ((_, first),), ((_, second),) = _found(one, "text/plain"), _found(two, "text/plain")
    assert first["label"] == second["label"] and first["subject"] != second["subject"]


def test_numpydoc_parameter_lines_are_not_glossary_terms() -> None:
    # tqdm's README lists its parameters numpydoc-style; "API : list of events" is still a definition.
    params = "# tqdm\n\n## Extra CLI Options\n\n- delim : chr, optional Delimiting character [default: '\\n'].\n" \
        "- tee : bool, optional If true, passes stdin to both stderr and stdout.\n" \
        "- mode : str or None Which mode to use when writing the output.\n"
    assert _found(params) == []
    glossary = "# Trace\n\n- API : list of events in the trace\n- Chart: a picture of numbers\n"
    assert [p["label"] for _, p in _found(glossary)] == ["API", "Chart"]


def test_an_untitled_source_is_named_by_its_whole_opening_line_cut_only_past_a_titles_length() -> None:
    from ingest.proposers.titles import MAX_TITLE_CHARS, document_title

    # Sources that open alike differ in their last words: a cut at a number of words (16 before) named these
    # two alike, though the line is short.
    def opening(last: str) -> str:
        return f"Notes on the one small tool we use here to move a log file to the next box by {last}\n\nBody.\n"

    one, two = document_title(opening("hand"), False), document_title(opening("cron"), False)
    assert one == "Notes on the one small tool we use here to move a log file to the next box by hand"
    assert one != two
    # A paragraph written on one line is cut at its last whole word within a title's length.
    long = "word " * 60
    title = document_title(long + "\n", False)
    assert title is not None and title.endswith(" …") and len(title) <= MAX_TITLE_CHARS + 2
    assert title == " ".join(["word"] * 20) + " …"
