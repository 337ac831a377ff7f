"""Output: JSON is exactly the model, piped output has no escapes, progress follows the stream kind."""

from __future__ import annotations

import io
import json

from pathlib import Path

import pytest
from rich.text import Text

from brain.blocks import Block
from brain.brain import Brain
from cli.output import Output, Result, _LineProgress, _console, print_error, printable, to_json_text
from tests.cli.conftest import BrainRunner


class Row(Result):
    name: str
    count: int


def test_json_of_a_model_and_of_a_list() -> None:
    assert json.loads(to_json_text(Row(name="a", count=1))) == {"name": "a", "count": 1}
    assert json.loads(to_json_text([Row(name="a", count=1)])) == [{"name": "a", "count": 1}]


def test_result_prints_json_or_the_rendering(capsys: pytest.CaptureFixture[str]) -> None:
    Output(as_json=True).result(Row(name="[bold]x[/bold]", count=2), lambda r: "unused")
    assert json.loads(capsys.readouterr().out) == {"name": "[bold]x[/bold]", "count": 2}
    Output().result(Row(name="[bold]x[/bold]", count=2), lambda r: f"{r.name} {r.count}")
    captured = capsys.readouterr()
    # User data is never taken for markup, and a pipe gets no escape sequences.
    assert captured.out == "[bold]x[/bold] 2\n" and captured.err == ""


def test_piped_table_is_plain_columns(capsys: pytest.CaptureFixture[str]) -> None:
    output = Output()
    table = output.table("id", "title")
    table.add_row("abc", "a rather long title " * 10)
    output.result(Row(name="n", count=0), lambda r: table)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and "\x1b" not in lines[1] and lines[1].startswith("abc")


def test_error_line_and_hint() -> None:
    stream = io.StringIO()
    print_error("block x not found\nsecond line", "run brain ls", stream=stream)
    assert stream.getvalue() == "error: block x not found second line\nhint: run brain ls\n"


def test_quiet_and_json_silence_messages_and_progress(capsys: pytest.CaptureFixture[str]) -> None:
    for output in (Output(quiet=True), Output(as_json=True, quiet=True)):
        output.message("note")
        output.warning("careful")
        with output.progress("ingest", total=2) as bar:
            bar.advance(item="a")
    with Output(as_json=True).progress("ingest", total=1) as bar:
        bar.advance()
    assert capsys.readouterr().err == ""


def test_line_progress_prints_first_and_final_lines() -> None:
    stream = io.StringIO()
    progress = _LineProgress(_console(stream), "ingest", total=3)
    for name in ("a", "b", "c"):
        progress.advance(item=name)
    progress.finish()
    lines = stream.getvalue().splitlines()
    # The throttle keeps a fast loop to its first line; the last line always reports the total.
    assert lines == ["ingest: 1/3 a", "ingest: 3/3"]


def test_progress_on_a_pipe_writes_plain_lines(capsys: pytest.CaptureFixture[str]) -> None:
    with Output().progress("pull", total=None) as bar:
        bar.advance(2, item="layer")
    assert capsys.readouterr().err.splitlines() == ["pull: 2 layer", "pull: 2"]


def test_printable_escapes_controls_and_bidi_overrides() -> None:
    assert printable("plain café ✓") == "plain café ✓"
    assert printable("a\x1b[31mb\x07\tc\r\nd\x7f\x9b\u202e") == "a\\x1b[31mb\\x07\\tc\\r\\nd\\x7f\\x9b\\u202e"
    assert printable("one\ntwo\x1b", keep_newlines=True) == "one\ntwo\\x1b"


def test_hostile_cells_messages_and_errors_stay_one_escaped_line(capsys: pytest.CaptureFixture[str]) -> None:
    output = Output()
    table = output.table("id", "title")
    table.add_row("abc", "new\nline\x1b]0;pwned\x07.md")
    table.add_row("def", Text("styled\x1b[2J", style="bold"))
    output.result(Row(name="n", count=0), lambda r: ["head \x1b[31m", table])
    output.message("note about \x1b[31mred.md")
    output.warning("careful with \x1b[31mred.md")
    with output.progress("ingest", total=1) as bar:
        bar.advance(item="\x1b[31mred.md")
    print_error("no block in \x1b[31mred.md", "fix \x1b[0m it")
    captured = capsys.readouterr()
    assert "\x1b" not in captured.out and "\x07" not in captured.out and "\x1b" not in captured.err
    assert captured.out.splitlines() == [
        "head \\x1b[31m",
        "id   title",
        "abc  new\\nline\\x1b]0;pwned\\x07.md",
        "def  styled\\x1b[2J",
    ]
    assert "note about \\x1b[31mred.md" in captured.err and "error: no block in \\x1b[31mred.md" in captured.err


def test_ls_and_show_escape_hostile_labels_end_to_end(tmp_path: Path, brain: BrainRunner) -> None:
    hostile = Block.from_payload(
        "episodic", {"summary": "evil\x1b]0;pwned\x07 \u202eevent", "occurred_at": "2026-01-01T00:00:00Z"}
    )
    with Brain.init(tmp_path / "b").writer("tester@example.org") as writer:
        writer.add(hostile)
        writer.commit()
    listed = brain("--brain", "b", "ls")
    shown = brain("--brain", "b", "show", hostile.block_id.hex)
    assert listed.code == 0 and shown.code == 0
    for run in (listed, shown):
        assert "\x1b" not in run.stdout and "\x07" not in run.stdout and "\u202e" not in run.stdout, run.stdout
    assert "evil\\x1b]0;pwned\\x07 \\u202eevent" in listed.stdout
    assert listed.stdout.count("\n") == 2
    # --json keeps the data exactly (JSON escapes what it must).
    assert brain("--brain", "b", "ls", "--json").json()[0]["title"] == "evil\x1b]0;pwned\x07 \u202eevent"


def test_piped_tables_skip_rich_but_lay_out_exactly_like_it(capsys: pytest.CaptureFixture[str]) -> None:
    output = Output()
    table = output.table("id", "title", "")
    rows = [("abc", "日本語 wide", "x"), ("d", Text("styled", style="bold")), ("😀e", "", "(inaccessible)")]
    for row in rows:
        table.add_row(*row)
    output.result(Row(name="n", count=0), lambda r: table)
    fast = capsys.readouterr().out
    # What rich itself prints for the same borderless table in a pipe.
    with output._stdout.capture() as captured:
        output._stdout.print(table)
    assert fast == "".join(line.rstrip() + "\n" for line in captured.get().splitlines())
    assert fast.splitlines()[1] == "abc  日本語 wide  x"


def test_json_escapes_c1_controls_and_bidi_overrides_but_keeps_the_value() -> None:
    row = Row(name="csi\x9b31m del\x7f \u202eevil\u2028 café", count=1)
    text = to_json_text([row])
    assert not any(ch in text for ch in "\x9b\x7f\u202e\u2028")
    assert "\\u009b31m" in text and "café" in text
    assert json.loads(text) == [{"name": row.name, "count": 1}]


def test_terminal_progress_bar_shows_hostile_item_names_escaped() -> None:
    from rich.console import Console
    from rich.progress import Progress, TextColumn

    from cli.output import _RichProgress

    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=100)
    with Progress(TextColumn("{task.fields[item]}", markup=False), console=console, auto_refresh=False) as bar:
        _RichProgress(bar, "ingest", total=1).advance(item="\x1b]0;pwned\x07.md")
        bar.refresh()
    assert "\x1b]0;pwned" not in stream.getvalue() and "\\x1b]0;pwned\\x07.md" in stream.getvalue()
