"""The one place that writes to the terminal: results to stdout, messages and progress to stderr.

A command hands `Output.result` a pydantic result model plus a function that turns it into rich
renderables for people. With `--json` the model is printed as `model_dump(mode="json")` instead, so the
JSON shape is exactly the model's. Rich decides colours from the stream: when stdout or stderr is not a
terminal (or `NO_COLOR` is set) no escape sequence is written, and tables lose their borders so that
`grep`/`cut` see plain columns. User data is never parsed as rich markup, and control characters in it
(file names, labels from a pulled brain) are shown escaped: a raw ESC could drive the terminal, a raw
newline would split one row into two.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel
from rich import box
from rich.console import Console, RenderableType
from rich.json import JSON
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from brain.frozen import FrozenModel

R = TypeVar("R", bound=BaseModel | Sequence[BaseModel])

# Piped output must not wrap: a line cut in two breaks `grep`. Rich still sizes tables to content.
_PIPE_WIDTH = 10_000
_LINE_PROGRESS_INTERVAL = 1.0


# C0 and C1 controls, DEL, and the bidirectional overrides that can make text display out of order.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT_ESCAPES.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with control characters shown as escapes (`\\n`, `\\x1b`, ...), newlines kept if asked."""
    if not _UNPRINTABLE.search(text):
        return text
    if keep_newlines:
        return "\n".join(_UNPRINTABLE.sub(_escape, line) for line in text.split("\n"))
    return _UNPRINTABLE.sub(_escape, text)


def _printable_renderable(item: Any, *, keep_newlines: bool = False) -> Any:
    """A renderable whose text shows control characters escaped (styles dropped only when it had any)."""
    if isinstance(item, str):
        return printable(item, keep_newlines=keep_newlines)
    text = item.text if isinstance(item, JSON) else item
    if isinstance(text, Text) and _UNPRINTABLE.search(text.plain.replace("\n", "") if keep_newlines else text.plain):
        return Text(printable(text.plain, keep_newlines=keep_newlines), style=text.style)
    return item


class _PrintableTable(Table):
    """A table whose cells never carry raw control characters, and which keeps its rows as plain text.

    Rich measures and renders every cell through its layout engine (about 0.7 ms a row); a pipe gets
    the same aligned columns from `plain_lines`, which is what keeps `brain ls | grep` fast at 100k rows.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._plain_rows: list[list[str]] | None = []

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        """Add a row, escaping control characters in its text cells."""
        cells = [_printable_renderable(cell) for cell in renderables]
        if self._plain_rows is not None:
            if all(isinstance(cell, (str, Text)) for cell in cells):
                self._plain_rows.append([cell if isinstance(cell, str) else cell.plain for cell in cells])
            else:
                self._plain_rows = None
        super().add_row(*cells, **kwargs)

    def plain_lines(self) -> list[str] | None:
        """The rows as columns padded by two spaces (rich's borderless layout), or None if a cell is not text."""
        if self._plain_rows is None:
            return None
        width = len(self.columns)
        headers = [str(column.header) for column in self.columns]
        rows = [[*row, *[""] * (width - len(row))] for row in self._plain_rows]
        rows = [headers, *rows] if self.show_header else rows
        widths = [max((cell_len(row[i]) for row in rows), default=0) for i in range(width)]
        return [
            "".join(cell + " " * (size - cell_len(cell) + 2) for cell, size in zip(row, widths, strict=True)).rstrip()
            for row in rows
        ]


class Result(FrozenModel):
    """Base of the CLI's presentation models: frozen, no unknown fields; its JSON is the `--json` output."""

class StdoutClosedError(Exception):
    """The reader of stdout went away (`brain log | head`); `cli.main` exits quietly with 141."""


@contextmanager
def _guard_stdout() -> Iterator[None]:
    """Turn a broken pipe on stdout into `StdoutClosedError` and silence the interpreter's final flush."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError as e:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass  # stdout is not a real file (a test capture): nothing will be flushed at exit anyway
        finally:
            os.close(devnull)
        raise StdoutClosedError() from e


# `--color` of this invocation (set once by the root callback; `auto` leaves it to rich and NO_COLOR).
_color_mode = "auto"


def set_color_mode(mode: str) -> None:
    """`never`, `auto` or `always` for every console made from now on (`--color`, NO_COLOR)."""
    global _color_mode
    _color_mode = mode


def _console(stream: Any) -> Console:
    """A rich console on `stream` that never interprets markup or highlights data."""
    is_tty = bool(getattr(stream, "isatty", lambda: False)())
    colour: dict[str, Any] = {}
    if _color_mode == "never":
        colour = {"no_color": True, "color_system": None}
    elif _color_mode == "always":
        # Colour even in a pipe (`| less -R`), but keep the pipe's layout: rich only colours a "terminal".
        colour = {"force_terminal": True, "color_system": "standard"}
    return Console(
        file=stream,
        markup=False,
        highlight=False,
        emoji=False,
        soft_wrap=not is_tty,
        width=None if is_tty else _PIPE_WIDTH,
        **colour,
    )


def to_json_text(data: BaseModel | Sequence[BaseModel]) -> str:
    """The `--json` text of a result model or a list of them."""
    if isinstance(data, BaseModel):
        payload: Any = data.model_dump(mode="json")
    else:
        payload = [item.model_dump(mode="json") for item in data]
    text = json.dumps(payload, indent=2, ensure_ascii=False)
    # json escapes C0 controls itself; DEL, C1 (e.g. the one-byte CSI) and bidi overrides it leaves raw, and
    # they can only occur inside strings, where `\uXXXX` is the same value.
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def print_error(message: str, hint: str | None = None, *, stream: Any = None) -> None:
    """`error: <message>` (and `hint: <hint>`) on stderr; used only by `cli.main`."""
    console = _console(stream if stream is not None else sys.stderr)
    console.print(Text.assemble(("error:", "bold red"), " ", _one_line(message)))
    if hint:
        console.print(Text.assemble(("hint:", "bold"), " ", _one_line(hint)))


def _one_line(text: str) -> str:
    """Collapse newlines so that every message stays one line; other control characters are escaped."""
    return printable(" ".join(text.splitlines()) if "\n" in text else text)


class ProgressSink(Protocol):
    """What a long-running command reports progress to."""

    def advance(self, n: int = 1, item: str | None = None) -> None:
        """Record `n` finished units; `item` names the last one (a path, a digest)."""

    def conclude(self, text: str) -> None:
        """What the final line shows after the count (the totals the result will report)."""


class _NoProgress:
    """Progress under `--quiet` or `--json`: nothing."""

    def advance(self, n: int = 1, item: str | None = None) -> None:
        """Ignore."""

    def conclude(self, text: str) -> None:
        """Ignore."""


class _LineProgress:
    """Progress on a non-terminal stderr: a plain line at most once a second, and a final one."""

    def __init__(self, console: Console, description: str, total: int | None) -> None:
        self._console = console
        self._description = description
        self._total = total
        self._done = 0
        self._last_item: str | None = None
        self._last_print: float | None = None
        self._conclusion: str | None = None

    def advance(self, n: int = 1, item: str | None = None) -> None:
        """Count and maybe print one line."""
        self._done += n
        self._last_item = item if item is not None else self._last_item
        now = time.monotonic()
        if self._last_print is None or now - self._last_print >= _LINE_PROGRESS_INTERVAL:
            self._print()
            self._last_print = now

    def conclude(self, text: str) -> None:
        """Show `text` after the final count."""
        self._conclusion = text

    def finish(self) -> None:
        """Print the final count (and the conclusion, if any)."""
        self._last_item = self._conclusion
        self._print()

    def _print(self) -> None:
        count = f"{self._done}/{self._total}" if self._total is not None else str(self._done)
        tail = f" {printable(self._last_item)}" if self._last_item else ""
        self._console.print(f"{self._description}: {count}{tail}")


class _RichProgress:
    """Progress on a terminal stderr: a rich bar."""

    def __init__(self, progress: Any, description: str, total: int | None) -> None:
        self._progress = progress
        self._task = progress.add_task(description, total=total, item="")

    def advance(self, n: int = 1, item: str | None = None) -> None:
        """Move the bar (and show `item` after it)."""
        if item is None:
            self._progress.advance(self._task, n)
        else:
            self._progress.update(self._task, advance=n, item=printable(item))

    def conclude(self, text: str) -> None:
        """Show `text` after the bar in place of the last item."""
        self._progress.update(self._task, item=printable(text))


class Output:
    """Renders one command's results and messages according to `--json` and `--quiet`."""

    def __init__(self, *, as_json: bool = False, quiet: bool = False, markdown: bool = False) -> None:
        self.as_json = as_json
        self.quiet = quiet
        self.markdown = markdown
        self._stdout = _console(sys.stdout)
        self._stderr = _console(sys.stderr)

    @property
    def is_terminal(self) -> bool:
        """Whether people are reading stdout directly (decides borders and styles; never with markdown)."""
        return not self.markdown and _is_tty(sys.stdout)

    def result(self, data: R, render: Callable[[R], RenderableType | Iterable[RenderableType]]) -> None:
        """Print a result (a model or a list of them): its JSON with `--json`, else what `render` makes."""
        with _guard_stdout():
            if self.as_json:
                sys.stdout.write(to_json_text(data) + "\n")
                return
            rendered = render(data)
            items = [rendered] if isinstance(rendered, (str, Text)) or not isinstance(rendered, Iterable) else rendered
            items = [_printable_renderable(item, keep_newlines=True) for item in items]
            if self.markdown:
                sys.stdout.write("".join(line for item in items for line in _markdown_lines(item, self._stdout)))
                return
            if self.is_terminal:
                for item in items:
                    self._stdout.print(item)
                return
            # In a pipe, render first and strip the padding rich adds to the last column.
            for item in items:
                lines = item.plain_lines() if isinstance(item, _PrintableTable) else None
                if lines is None:
                    with self._stdout.capture() as captured:
                        self._stdout.print(item)
                    lines = [line.rstrip() for line in captured.get().splitlines()]
                sys.stdout.write("".join(line + "\n" for line in lines))

    def message(self, text: str) -> None:
        """A note for people on stderr (suppressed by `--quiet`)."""
        if not self.quiet:
            self._stderr.print(printable(text, keep_newlines=True))

    def warning(self, text: str) -> None:
        """`warning: <text>` on stderr (suppressed by `--quiet`)."""
        if not self.quiet:
            self._stderr.print(Text.assemble(("warning:", "bold yellow"), " ", _one_line(text)))

    def table(self, *columns: str) -> Table:
        """A table for people: bordered on a terminal, plain whitespace-separated columns in a pipe."""
        if self.is_terminal:
            table = _PrintableTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        else:
            table = _PrintableTable(box=None, show_edge=False, pad_edge=False, padding=(0, 2, 0, 0))
        for name in columns:
            table.add_column(name, overflow="fold" if self.is_terminal else "ignore", no_wrap=not self.is_terminal)
        return table

    @contextmanager
    def progress(self, description: str, total: int | None = None) -> Iterator[ProgressSink]:
        """Report progress of a long step on stderr; silent under `--quiet` and `--json`."""
        if self.quiet or self.as_json:
            yield _NoProgress()
            return
        if not _is_tty(sys.stderr):
            lines = _LineProgress(self._stderr, description, total)
            yield lines
            lines.finish()
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = [
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("{task.fields[item]}", markup=False),
        ]  # fmt: skip
        with Progress(*columns, console=self._stderr, transient=False) as bar:
            yield _RichProgress(bar, description, total)


def _is_tty(stream: Any) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())


def _markdown_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _markdown_lines(item: Any, console: Console) -> Iterator[str]:
    """`--output markdown`: a table as a GitHub Markdown table, anything else as its plain text."""
    if isinstance(item, Table) and (not isinstance(item, _PrintableTable) or item.plain_lines() is not None):
        headers = [str(column.header) for column in item.columns]
        rows = item._plain_rows if isinstance(item, _PrintableTable) else None
        if rows is None:
            rows = [[str(cell) for cell in column.cells] for column in item.columns]
            rows = [list(row) for row in zip(*rows, strict=False)]
        yield "| " + " | ".join(_markdown_cell(h) for h in headers) + " |\n"
        yield "|" + "|".join(" --- " for _ in headers) + "|\n"
        for row in rows:
            cells = [*row, *[""] * (len(headers) - len(row))]
            yield "| " + " | ".join(_markdown_cell(cell) for cell in cells) + " |\n"
        yield "\n"
        return
    with console.capture() as captured:
        console.print(item)
    yield "".join(line.rstrip() + "\n" for line in captured.get().splitlines())
    yield "\n"


def styled(text: str, style: str) -> Text:
    """`text` with a rich style (dropped automatically when the stream is not a terminal)."""
    return Text(text, style=style)
