"""What a README says its package is or does: self-descriptions and taglines become blocks; others do not."""

from __future__ import annotations

import pytest

from brain.identity import BlockId
from ingest.proposers import rules
from ingest.proposers.base import SourceText
from ingest.proposers.extraction import extract

SOURCE = BlockId("8" * 64)
ALL = frozenset({"episodic", "procedural", "semantic"})


def _facts(text: str, media_type: str = "text/markdown") -> list[tuple[str, str, str]]:
    found = extract(SourceText.of(SOURCE, media_type, text), ALL)
    semantic = [c.payload for c in found if c.memory_type == "semantic"]
    return [(p["kind"], p["label"], p["statement"]) for p in semantic]


@pytest.mark.parametrize(
    ("sentence", "title", "opening", "expected"),
    [
        ("aiosqlite provides a friendly, async interface to sqlite databases.", "aiosqlite", False,
         ("fact", "aiosqlite")),
        ("PySocks lets you send traffic through SOCKS and HTTP proxy servers.", "PySocks", False, ("fact", "PySocks")),
        ("Wget supports downloads over HTTP, HTTPS and FTP.", "GNU Wget", False, ("fact", "Wget")),
        ("The Present extension provides a way for applications to update windows.", "The Present Extension", False,
         ("fact", "Present extension")),
        ("This library helps you deal with boolean expressions.", "boolean.py", True, ("fact", "boolean.py")),
        ("This library helps you deal with boolean expressions.", "boolean.py", False, None),  # not its opening
        ("This is a little HTTP/1.1 library written from scratch in Python.", "h11", True, ("concept", "h11")),
        ("This is a bugfix release.", "Avahi", False, None),  # under a release heading: about the release
        ("Node.js buffers accept all case variations of encoding strings.", "Node.js", False, None),  # a noun
        ("Pull requests should be small.", "Pull requests", False, None),
        ("The containers/image library allows pulling images.", "Command-line usage", True, None),  # another's
        ("The macros in pcre2posix.h ensure that re-compiling fixes programs.", "Change Log for PCRE2", False, None),
        ("This is the Debian prepackaged version of the GNU C Library.",
         "This is the Debian prepackaged version of the GNU C Library.", True, None),  # an untitled document
    ],
)
def test_a_sentence_about_the_documents_subject_describes_it(
    sentence: str, title: str, opening: bool, expected: tuple[str, str] | None
) -> None:
    names = frozenset(word.strip("!?.,:;()'\"").lower() for word in title.split())
    assert rules.self_description(sentence, title, names, opening=opening) == expected


@pytest.mark.parametrize(
    ("sentence", "title", "expected"),
    [
        ("Data validation using Python type hints.", "pydantic", "pydantic: Data validation using Python type hints."),
        ("A project to manage callbacks in asyncio projects.", "aiosignal",
         "aiosignal: A project to manage callbacks in asyncio projects."),
        ("Terms used across the Lumen notes.", "Glossary", None),  # a title of prose, not a name
        ("Auk means a small seabird and names a shipper.", "auk", None),  # a clause, not a phrase
        ("You're writing a library.", "sniffio", None),
        ("Library to apply JSON Patches according to", "jsonpatch", None),  # cut before its object
        ("See the documentation for details.", "pip", None),
        ("A specification for pythonic filesystems.", "NAME", None),  # a man page's section
    ],
)
def test_an_opening_phrase_is_a_tagline_of_a_named_subject(sentence: str, title: str, expected: str | None) -> None:
    assert rules.tagline(sentence, title) == expected


def test_a_package_description_opens_with_its_tagline_and_description() -> None:
    text = (
        "Metadata-Version: 2.1\nName: zephyr-kit\nVersion: 1.0\n\n"
        "[![CI](https://img.shields.io/badge/ci-passing-green)](https://ci.example.org)\n\n"
        "# Zephyr Kit\n\nFast wind-speed models for Python.\n\n"
        "zephyr-kit provides models of wind speed over terrain.\n\n"
        "## Usage\n\nThis is a paragraph under a section.\n"
    )
    facts = _facts(text, "text/plain")
    assert ("concept", "zephyr-kit", "zephyr-kit: Fast wind-speed models for Python.") in facts
    assert ("fact", "zephyr-kit", "zephyr-kit provides models of wind speed over terrain.") in facts
    assert not any("under a section" in statement for _, _, statement in facts)


def test_a_description_of_another_subject_is_no_block() -> None:
    text = "# kestrel\n\nkestrel grants leases on named locks.\n\nRedis provides a server for data structures.\n"
    assert _facts(text) == [("fact", "kestrel", "kestrel grants leases on named locks.")]


@pytest.mark.parametrize(
    ("line", "lead_in"),
    [
        ("From Jo Doe:", True),
        ("Patch by J. Doe:", True),
        ("Reported by covscan:", True),
        ("Merged from trunk:", True),
        ("using the following script:", True),
        ("* src/io.c (read_all):", False),  # a change names its file
        ("unix/unxcfg.h: enabled large file support", False),
        ("Fix the build on hosts where the linker refuses to link a shared object with undefined symbols:", False),
    ],
)
def test_a_changelog_line_introducing_changes_is_no_change(line: str, lead_in: bool) -> None:
    assert rules.is_entry_lead_in(line) is lead_in


def test_a_gnu_changelog_entry_keeps_its_changes_not_its_credits() -> None:
    text = (
        "2024-05-01  Jo Doe  <jo@example.org>\n\n"
        "\tReported by covscan:\n"
        "\t* src/strauss.c (print_totd): Limit array accesses.\n"
    )
    found = extract(SourceText.of(SOURCE, "text/plain", text), ALL)
    assert [c.payload["summary"] for c in found] == ["src/strauss.c (print_totd): Limit array accesses"]
