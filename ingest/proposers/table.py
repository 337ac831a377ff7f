"""The heuristic's rules as one ordered table: each a named `Rule` with its examples, applied in table order.

A unit of text (a paragraph, a sentence, a list item, a line) is offered to the rules that read it, in the
order they appear in `RULES`; the first that finds something wins, and then the refusals (`REFUSALS`) may
still turn it down. Every rule carries examples — what it finds in a text, or `None` where it must find
nothing — and `tests/ingest/test_heuristic_rules.py` runs each of them, so a change to a rule that breaks
one of its examples fails a test that names the rule. A rule's `prefilter` (when it has one) is a cheap
necessary condition tested once per paragraph before any sentence of it is parsed.

What a rule finds: a semantic rule `(kind, label, statement)`, an episodic one `(occurred_at, summary)`, a
lead-in the name of its list, a refusal True. The pure functions behind the rules are in `rules`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ingest.proposers import rules


class Reading(Protocol):
    """What a rule may know about the text around the unit it reads (the scan of a page is one)."""

    title: str | None  # the document's title
    names: frozenset[str]  # its lowercased words ("tmux is ..." may define tmux)
    self_names: re.Pattern[str] | None  # `rules.self_names`: the self-description prefilter

    @property
    def opening(self) -> bool:
        """In the document's first paragraphs, where it says what it is."""
        ...

    def heading_day(self) -> str | None:
        """The date the nearest heading names, for time-only lines."""
        ...


@dataclass(frozen=True)
class Example:
    """A text and what the rule finds in it (`None`: nothing), read under `title` (in the opening or not)."""

    text: str
    found: Any
    title: str | None = None
    opening: bool = False
    day: str | None = None


@dataclass(frozen=True)
class Rule:
    """One named rule: what it reads, what it gives, how it finds it, and its examples."""

    name: str
    reads: tuple[str, ...]  # units: "paragraph", "lead-in", "sentence", "item", "line", "heading"
    gives: str  # "semantic", "episodic", "label", "refusal"
    find: Callable[[str, Reading], Any]
    examples: tuple[Example, ...]
    prefilter: Callable[[str, Reading], bool] | None = None
    doc: str = field(default="", compare=False)


def _stated(found: tuple[str, str] | None, sentence: str) -> tuple[str, str, str] | None:
    return None if found is None else (found[0], found[1], rules.clean(sentence))


def _definition(sentence: str, reading: Reading) -> tuple[str, str, str] | None:
    return _stated(rules.definition(sentence, reading.names), sentence)


def _self_description(sentence: str, reading: Reading) -> tuple[str, str, str] | None:
    found = rules.self_description(sentence, reading.title, reading.names, opening=reading.opening)
    return _stated(found, sentence)


def _tagline(sentence: str, reading: Reading) -> tuple[str, str, str] | None:
    if reading.title is None:
        return None
    said = rules.tagline(sentence, reading.title)
    return None if said is None else ("concept", rules.without_article(reading.title), said)


def _term(item: str, reading: Reading) -> tuple[str, str, str] | None:
    if item.lstrip("`*")[:1] == "-":
        return None  # flags (`-v, --verbose: ...`)
    found = rules.term_item(item)
    return None if found is None else ("concept", found[0], found[1])


def _may_self_describe(text: str, reading: Reading) -> bool:
    return reading.self_names is not None and reading.self_names.search(text) is not None


def _no_subject(reading: Reading) -> str | None:
    return None


TAGLINE = Rule(
    "tagline", ("paragraph",), "semantic", _tagline,
    (
        Example("Data validation using Python type hints.", ("concept", "pydantic",
                "pydantic: Data validation using Python type hints."), title="pydantic", opening=True),
        Example("Terms used across the Lumen notes.", None, title="Glossary", opening=True),  # prose, no name
        Example("You're writing a library.", None, title="sniffio", opening=True),  # a clause
    ),
    doc="The first paragraph of a document whose title is a name, when it is one phrase saying what it is.",
)
DEFINITION = Rule(
    "definition", ("sentence",), "semantic", _definition,
    (
        Example("Kubernetes is a container orchestrator.", ("concept", "Kubernetes",
                "Kubernetes is a container orchestrator.")),
        Example("The default port is 8080.", ("fact", "default port", "The default port is 8080.")),
        Example("A nautical mile is 1852 metres.", ("fact", "nautical mile", "A nautical mile is 1852 metres.")),
        Example("tmux is a terminal multiplexer.", ("concept", "tmux", "tmux is a terminal multiplexer."),
                title="tmux"),
        Example("running is a verb.", None),  # lowercase, not the title's name
        Example("If there is a lease, it is kept.", None),  # a clause fragment as label
        Example("The sequence is as follows.", None),
    ),
    prefilter=lambda text, reading: rules.may_define(text),
    doc="X is a/an/the ..., X means / refers to / is defined as ..., The X is <value>, X occurs when ...",
)
SELF_DESCRIPTION = Rule(
    "self-description", ("sentence",), "semantic", _self_description,
    (
        Example("aiosqlite provides a friendly, async interface to sqlite databases.", ("fact", "aiosqlite",
                "aiosqlite provides a friendly, async interface to sqlite databases."), title="aiosqlite"),
        Example("This library helps you deal with boolean expressions.", ("fact", "boolean.py",
                "This library helps you deal with boolean expressions."), title="boolean.py", opening=True),
        Example("This library helps you deal with boolean expressions.", None, title="boolean.py"),  # later on
        Example("Node.js buffers accept all case variations of encoding strings.", None, title="Node.js"),
    ),
    prefilter=_may_self_describe,
    doc="What the document's own subject is or does: X provides ..., This library ..., This is a ...",
)
TERM = Rule(
    "term", ("item",), "semantic", _term,
    (
        Example("Cell: one value at the crossing of a row and a column", ("concept", "Cell",
                "Cell: one value at the crossing of a row and a column")),
        Example("API : list of events in the trace", ("concept", "API", "API : list of events in the trace")),
        Example("`-v`: verbose output on the terminal", None),  # a flag
        Example("deps: update npm to 6.13.4 in the tree", None),  # a change
        Example("DEP0046: util.isBuffer()", None),  # a name and a call: fewer than three words of prose
        Example("Class: IntervalHistogram extends Histogram", None),  # a declaration in code
        Example("Class: Frame implements Serializable", None),
        # GNU ChangeLog entries `file (function): what changed` (real lines from coreutils, dash, binutils, bc):
        Example("unix/unxcfg.h: enabled enhanced filtering when setlocale is available", None),  # a file changed
        Example("src/copy.c (copy_reg): Handle the case where CLONE_NOOWNERCOPY is set", None),
        Example("src/mksyntax.c (filltable): Use 258, not 257 as the size of the table", None),
        Example("objdump.c (load_specific_debug_section): Check for excessively large sections", None),
        Example("Makefile.am (SUBDIRS): Add the doc directory to the build", None),
        Example("delim : chr, optional Delimiting character", None),  # a numpydoc parameter
    ),
    doc="An unordered list item `Term: definition` or `Term — definition`, outside change logs and parameters.",
)
DATED = Rule(
    "dated", ("heading", "line", "item"), "episodic", lambda text, reading: rules.episode(text, reading.heading_day),
    (
        Example("2026-03-02 10:21 deployed the cache", ("2026-03-02T10:21:00Z", "deployed the cache")),
        Example("2026-03-02T10:21:00+01:00 rollback started", ("2026-03-02T09:21:00Z", "rollback started")),
        Example("09:12 the deploy started", ("2026-03-02T09:12:00Z", "the deploy started"), day="2026-03-02"),
        Example("09:12 the deploy started", None),  # no day above it
        Example("2026-03-02 <jo@example.org>", None),  # an address
        Example("2026-02-30 a day that never was", None),
    ),
    prefilter=lambda text, reading: rules.may_be_dated(text),
    doc="A line, heading or list item that starts with a valid date or timestamp (UTC); a time under a dated heading.",
)
LEAD_IN = Rule(
    "lead-in", ("lead-in",), "label", lambda label, reading: rules.list_lead_in(label),
    (
        Example("To deploy the app", "To deploy the app"),
        Example("To onboard an ambassador, a member of the TSC will", "To onboard an ambassador"),
        Example("The basic sequence of operations is as follows", "The basic sequence of operations"),
        Example("However, there are some differences", None),
        Example("This boils down to several options", None),
        Example("Major issues include", None),  # cut before its object
    ),
    doc="A short line or sentence ending in `:` before a list names the list (a procedure's label), or nothing.",
)
LINK_LINE = Rule(
    "link-line", ("sentence", "item"), "refusal", lambda text, reading: rules.is_link_line(text),
    (
        Example("Coveralls: https://coveralls.example.org/repo", True),
        Example("[![Build](https://ci.example.org/badge.svg)](https://ci.example.org)", True),
        Example("Kubernetes is a container orchestrator.", False),
    ),
    doc="A link, badge or URL with little else says nothing.",
)
LICENCE_TEXT = Rule(
    "licence-text", ("sentence", "item"), "refusal", lambda text, reading: rules.is_licence_text(text),
    (
        Example("Redistributions of source code must retain the above copyright notice.", True),
        Example("The software is provided without warranty of any kind.", True),
        Example("Kubernetes is a container orchestrator.", False),
    ),
    doc="Licence conditions and boilerplate are terms, not knowledge about the project.",
)

RULES: tuple[Rule, ...] = (TAGLINE, DEFINITION, SELF_DESCRIPTION, DATED, TERM, LEAD_IN, LINK_LINE, LICENCE_TEXT)
"""Every rule, in the order the scan offers a unit to them."""


def rules_reading(unit: str) -> tuple[Rule, ...]:
    """The rules (not the refusals) that read `unit`, in table order."""
    return tuple(rule for rule in RULES if unit in rule.reads and rule.gives != "refusal")


SENTENCE_RULES = rules_reading("sentence")  # a definition before a self-description
ITEM_RULES = rules_reading("item")  # a dated item is an episode before it can be a term
REFUSALS = tuple(rule for rule in RULES if rule.gives == "refusal")


def refused(text: str, reading: Reading) -> bool:
    """Whether a refusal turns down what a rule found in `text`."""
    for rule in REFUSALS:
        if rule.find(text, reading):
            return True
    return False


def may_find_in(text: str, reading: Reading) -> bool:
    """Whether any sentence rule's prefilter lets the paragraph `text` through."""
    for rule in SENTENCE_RULES:
        if rule.prefilter is None or rule.prefilter(text, reading):
            return True
    return False


def by_name(name: str) -> Rule:
    """The rule called `name`; KeyError for an unknown one."""
    for rule in RULES:
        if rule.name == name:
            return rule
    raise KeyError(name)


__all__ = ["ITEM_RULES", "REFUSALS", "RULES", "SENTENCE_RULES", "Example", "Reading", "Rule", "by_name",
           "may_find_in", "refused", "rules_reading"]
