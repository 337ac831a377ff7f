"""`brain proposers` through the real entry point."""

from __future__ import annotations

from typing import Any


def test_lists_builtins_as_json(brain: Any) -> None:
    run = brain("proposers", "--json")
    assert run.code == 0, run
    rows = run.json()
    assert [(r["name"], r["source"], r["version"]) for r in rows[:3]] == [
        ("heuristic", "builtin", "1"), ("exec", "builtin", "1"), ("openai", "builtin", "1"),
    ]


def test_table_for_people(brain: Any) -> None:
    run = brain("proposers")
    assert run.code == 0 and "heuristic" in run.stdout and "exec:COMMAND" in run.stdout
