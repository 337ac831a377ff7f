"""The heuristic's rule table: every rule's examples hold, prefilters never hide a find, and the scan offers a
unit to the rules in table order."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from brain.identity import BlockId
from ingest.proposers import rules, table
from ingest.proposers.base import SourceText
from ingest.proposers.formats import MarkdownLines, PlainLines, RstLines, classifier_for
from ingest.proposers.extraction import extract

SOURCE = BlockId("9" * 64)
ALL = frozenset({"episodic", "procedural", "semantic"})


@dataclass
class _Reading:
    """A `table.Reading` for one example: the document's title, where the unit is, the day of its heading."""

    title: str | None
    names: frozenset[str]
    self_names: re.Pattern[str] | None
    opening: bool
    day: str | None

    @classmethod
    def of(cls, example: table.Example) -> _Reading:
        title = example.title
        names = frozenset(w.strip("!?.,:;()'\"").lower() for w in title.split()) if title else frozenset()
        return cls(title, names, rules.self_names(title, names), example.opening, example.day)

    def heading_day(self) -> str | None:
        return self.day


_EXAMPLES = [(rule, example) for rule in table.RULES for example in rule.examples]


@pytest.mark.parametrize(
    ("rule", "example"), _EXAMPLES, ids=[f"{rule.name}:{example.text[:40]}" for rule, example in _EXAMPLES]
)
def test_every_rule_finds_what_its_examples_say(rule: table.Rule, example: table.Example) -> None:
    assert rule.find(example.text, _Reading.of(example)) == example.found


@pytest.mark.parametrize("rule", table.RULES, ids=[rule.name for rule in table.RULES])
def test_every_rule_is_named_documented_and_has_an_example_of_each_side(rule: table.Rule) -> None:
    assert rule.doc and re.fullmatch(r"[a-z]+(?:-[a-z]+)*", rule.name)
    assert any(e.found not in (None, False) for e in rule.examples), "an example of what the rule finds"
    assert any(e.found in (None, False) for e in rule.examples), "an example of what it must not find"
    assert table.by_name(rule.name) is rule


def test_rule_names_are_unique_and_the_units_read_them_in_table_order() -> None:
    names = [rule.name for rule in table.RULES]
    assert len(names) == len(set(names))
    assert table.SENTENCE_RULES == (table.DEFINITION, table.SELF_DESCRIPTION)
    assert table.ITEM_RULES == (table.DATED, table.TERM)
    assert table.REFUSALS == (table.LINK_LINE, table.LICENCE_TEXT)
    with pytest.raises(KeyError):
        table.by_name("no-such-rule")


@pytest.mark.parametrize(
    ("rule", "example"),
    [(r, e) for r, e in _EXAMPLES if r.prefilter is not None and e.found is not None],
    ids=lambda value: value.name if isinstance(value, table.Rule) else value.text[:40],
)
def test_a_prefilter_lets_through_everything_its_rule_finds(rule: table.Rule, example: table.Example) -> None:
    assert rule.prefilter is not None and rule.prefilter(example.text, _Reading.of(example))


def test_a_dated_item_is_an_episode_before_it_can_be_a_term() -> None:
    item = "2026-03-02 Release: the first version of the tool"
    reading = _Reading(None, frozenset(), None, False, None)
    assert table.TERM.find(item, reading) is not None and table.DATED.find(item, reading) is not None
    text = f"# Notes\n\n- {item}\n- Cell: one value of a table row\n"
    found = extract(SourceText.of(SOURCE, "text/markdown", text), ALL)
    assert [(c.memory_type, c.payload.get("label") or c.payload.get("summary")) for c in found] == [
        ("episodic", "Release: the first version of the tool"), ("semantic", "Cell")]


def test_a_refusal_turns_down_what_a_rule_found() -> None:
    sentence = "The licence is the GNU General Public License, without any warranty."
    reading = _Reading("Lumen", frozenset({"lumen"}), rules.self_names("Lumen", frozenset({"lumen"})), False, None)
    assert table.DEFINITION.find(sentence, reading) is not None and table.refused(sentence, reading)
    assert extract(SourceText.of(SOURCE, "text/markdown", f"# Lumen\n\n{sentence}\n"), ALL) == []


@pytest.mark.parametrize(
    ("media_type", "classifier"),
    [("text/markdown", MarkdownLines), ("text/html", MarkdownLines), ("application/vnd.x+markdown", MarkdownLines),
     ("text/x-rst", RstLines), ("text/plain", PlainLines), ("text/troff", PlainLines),
     ("application/pdf", PlainLines)],
)
def test_each_format_has_its_line_classifier(media_type: str, classifier: type) -> None:
    assert classifier_for(media_type) is classifier


def test_the_classifiers_tell_the_same_lines_apart_by_their_format() -> None:
    text = "Guide\n=====\n\nINSTALLATION\n\n  # not a heading when indented\n\nA worker is a process that runs jobs.\n"

    def subjects(media_type: str) -> list[str | None]:
        return [c.payload.get("subject") for c in extract(SourceText.of(SOURCE, media_type, text), ALL)]

    # Markdown: a setext title, ALL-CAPS is prose, and the indented `#` line is a heading.
    assert subjects("text/markdown") == ["Guide > not a heading when indented"]
    assert subjects("text/plain") == ["Guide > Installation"]  # ALL-CAPS heading; an indented `#` is no heading
    assert subjects("text/x-rst") == ["Guide > Installation"]
