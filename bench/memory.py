"""Peak memory and time of `brain ingest` on one huge single-line file per format (a subprocess, as a user runs it).

Target (issue 11): the whole `brain ingest` process peaks at <= 4x the text it reads, and the time is linear
in the size (a 50 MB one-line file takes seconds, not minutes). Each format gets one file of about `--mib`
MiB on a single line, with markup (`The **cache12** is a [node](https://example.org/12) that keeps `data`
close.` in Markdown, the same with `<b>` in HTML, roff escapes in a man page, ...), and a `.gz` of the
Markdown one. The peak is `ru_maxrss` of the ingest process from `wait4` (it includes the interpreter and
the imports, ~62 MB: the `baseline` line is `brain ingest` of a one-line file); the ratio divides it by the
text the process reads (the inflated size for the `.gz`). Not in the default list: `txt-cp1252`, Windows-1252 text
(no declaration: the detector names it), and `md-utf8`, Markdown with an em dash in every sentence
(CPython holds such text at 2 bytes a character, so every copy of it costs twice the ASCII one). `md-item`
is not one line but one Markdown list item continued by indented lines over the whole file.

usage: python bench/memory.py [--mib 50] [--repeat 1] [--formats md,html,txt,rst,man,md.gz,md-item] [--keep DIR]
       python bench/memory.py --scaling   # the same at 1/4, 1/2 and full size: time and peak per MiB
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

BRAIN = Path(sys.executable).with_name("brain")
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}, "SOURCE_DATE_EPOCH": "1767225600"}
WORDS = "cache shard replica node latency eviction policy request client server token index block hash".split()


def _sentence(i: int, bold: tuple[str, str], link: Callable[[str, str], str], code: tuple[str, str]) -> str:
    thing, kind = WORDS[i % len(WORDS)], WORDS[(i * 7 + 3) % len(WORDS)]
    url = f"https://example.org/{i}"
    return f"The {bold[0]}{thing}{i}{bold[1]} is a {link(kind, url)} that keeps {code[0]}data{code[1]} close. "


def _markdown(i: int) -> str:
    return _sentence(i, ("**", "**"), lambda text, url: f"[{text}]({url})", ("`", "`"))


def _markdown_utf8(i: int) -> str:
    # An em dash is beyond Latin-1: CPython then stores the text at 2 bytes a character, the UTF-8 at ~1.
    return _markdown(i).replace(" that keeps", " — a café that keeps")


def _html(i: int) -> str:
    return _sentence(i, ("<b>", "</b>"), lambda text, url: f'<a href="{url}">{text}</a>', ("<code>", "</code>"))


def _rst(i: int) -> str:
    return _sentence(i, ("**", "**"), lambda text, url: f"`{text} <{url}>`_", ("``", "``"))


def _roff(i: int) -> str:
    return _sentence(i, ("\\fB", "\\fR"), lambda text, url: f"\\fI{text}\\fP (\\fC{url}\\fP)", ("\\f(CW", "\\fP"))


# name -> (file name, text before the long line, sentence maker, text after it)
FORMATS: dict[str, tuple[str, str, Callable[[int], str], str]] = {
    "md": ("one.md", "", _markdown, "\n"),
    "md-utf8": ("one-utf8.md", "", _markdown_utf8, "\n"),
    "txt": ("one.txt", "", _markdown, "\n"),
    # Plain prose: on Markdown with one accent a sentence, the detector picks mac-latin2 (tie-breaking aside).
    "txt-cp1252": ("one-cp1252.txt", "", lambda i: f"The café{i} is a crème that keeps data close. ", "\n"),
    "rst": ("one.rst", "", _rst, "\n"),
    "html": ("one.html", "<html><head><title>T</title></head><body><p>", _html, "</p></body></html>\n"),
    "man": ("one.1", ".TH ONE 1\n.SH NAME\none \\- a long page\n.SH DESCRIPTION\n", _roff, "\n"),
    # Not one line: one list item continued over the whole file by indented lines (joined once, not per line).
    "md-item": ("one-item.md", "# T\n\n- The first item\n", lambda i: "  " + _markdown(i) + "\n", "\n"),
}


def make_file(directory: Path, fmt: str, size: int) -> tuple[Path, int]:
    """A file of about `size` bytes in `fmt` whose text is one line (`md.gz`: a gzip of the Markdown one).

    Written in pieces: this process stays small, because a child forked from it counts the parent's
    resident pages in its own peak until it execs (`ru_maxrss` would report this bench, not `brain`).
    Returns the path and the size of the text `brain ingest` reads (the inflated size for a gzip).
    """
    gzipped = fmt.endswith(".gz")
    name, head, sentence, tail = FORMATS[fmt.removesuffix(".gz")]
    path = directory / (name + ".gz" if gzipped else name)
    encoding = "cp1252" if fmt.startswith("txt-cp1252") else "utf-8"  # legacy text: the detector names it
    written = 0
    with gzip.GzipFile(path, "wb", compresslevel=6, mtime=0) if gzipped else open(path, "wb") as out:
        piece, pending, i = [head], len(head), 0
        while written + pending < size:
            piece.append(sentence(i))
            pending += len(piece[-1])
            i += 1
            if len(piece) >= 4096:
                data = "".join(piece).encode(encoding)
                out.write(data)
                written += len(data)
                piece, pending = [], 0
        data = "".join([*piece, tail]).encode(encoding)
        out.write(data)
        written += len(data)
    return path, written


def run(*args: str) -> tuple[float, int]:
    """Run `brain ARGS`; (wall seconds, peak RSS in bytes of that process)."""
    started = time.perf_counter()
    process = subprocess.Popen([str(BRAIN), *args], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    assert process.stderr is not None
    errors = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"brain {' '.join(args)} failed:\n{errors}")
    return wall, usage.ru_maxrss * 1024  # Linux reports KiB


def ingest_once(work: Path, source: Path, tag: str) -> tuple[float, int]:
    """A fresh brain, then `brain ingest SOURCE` in it: (wall, peak RSS) of the ingest alone."""
    brain = work / f"brain-{tag}"
    shutil.rmtree(brain, ignore_errors=True)
    run("--brain", str(brain), "init")
    return run("--brain", str(brain), "--actor", "bench@example.org", "-q", "ingest", str(source))


def bench(work: Path, formats: list[str], size: int, repeat: int) -> None:
    """Print one line per format: text size, peak RSS median, ratio, wall median, and MB/s."""
    tiny = work / "tiny.md"
    tiny.write_text("The cache is a node that keeps data close.\n")
    walls, peaks = zip(*(ingest_once(work, tiny, "tiny") for _ in range(repeat)), strict=True)
    print(
        f"{'baseline':8} one 44-byte line: peak {statistics.median(peaks) / 1e6:6.1f} MB, "
        f"wall {statistics.median(walls):5.2f} s"
    )
    for fmt in formats:
        directory = work / fmt.replace(".", "-")
        directory.mkdir(parents=True, exist_ok=True)
        path, text = make_file(directory, fmt, size)
        stored = path.stat().st_size
        walls, peaks = zip(*(ingest_once(work, directory, fmt) for _ in range(repeat)), strict=True)
        peak, wall = statistics.median(peaks), statistics.median(walls)
        on_disk = f" ({stored / 1e6:.1f} MB on disk)" if stored != text else ""
        print(
            f"{fmt:8} {text / 1e6:6.1f} MB text{on_disk}: peak {peak / 1e6:6.1f} MB = {peak / text:4.2f}x, "
            f"wall {wall:6.2f} s ({text / 1e6 / wall:5.1f} MB/s)",
            flush=True,
        )
        shutil.rmtree(directory, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=50.0, help="size of each file's text in MiB (default 50)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per format; medians are printed")
    parser.add_argument("--formats", default="md,html,txt,rst,man,md.gz,md-item")
    parser.add_argument("--scaling", action="store_true", help="also run at 1/4 and 1/2 of --mib (linearity)")
    parser.add_argument("--keep", type=Path, help="work directory to keep (default: a temporary one)")
    args = parser.parse_args()
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    unknown = [f for f in formats if f.removesuffix(".gz") not in FORMATS]
    if unknown:
        parser.error(f"unknown formats {unknown}; known: {', '.join(FORMATS)} (and NAME.gz)")
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        for fraction in (0.25, 0.5, 1.0) if args.scaling else (1.0,):
            size = int(args.mib * fraction * (1 << 20))
            print(f"-- {size / 1e6:.1f} MB per file, {args.repeat} run(s) each", flush=True)
            bench(work, formats, size, args.repeat)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
