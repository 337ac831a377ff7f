"""Output: JSON is exactly the model, piped output has no escapes, progress follows the stream kind."""

from __future__ import annotations

import io
import json

import pytest

from cli.output import Output, Result, _LineProgress, _console, print_error, to_json_text


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
