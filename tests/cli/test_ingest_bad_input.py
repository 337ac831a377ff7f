"""The issue's bad inputs, together in one `brain ingest --json` run of the console script.

A long single-line file, a gzip bomb, a truncated gzip, files whose declared charset lies (both ways), and
a PDF without a text layer: each is registered, reported under its own code, and the run goes on — the
good sources beside them still give knowledge, the exit status is 0, and `--strict` makes it 1 (docs/ingest.md).
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pypdf

from tests.cli.conftest import BrainRunner

ACTOR = "curator@example.org"
MAN = b".TH DEMO 1\n.SH NAME\ndemo \\- show a demo\n.SH DESCRIPTION\nA demo is a short \\fBshow\\fR of a tool.\n"
SENTENCE = "The **cache{0}** is a [node](https://example.org/{0}) that keeps `data` close. "


def _blank_pdf() -> bytes:
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=612, height=792)
    writer.add_blank_page(width=612, height=792)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _bad_inputs(root: Path) -> None:
    root.mkdir()
    # Past the 1 MiB a source is read in memory at once: this one is streamed in, then normalized from its blob.
    (root / "one-line.md").write_text("".join(SENTENCE.format(i) for i in range(30_000)))
    # 66 copies of one member that inflates to 1 MiB: 66 KiB on disk, past the 64 MiB text limit inflated.
    (root / "bomb.txt.gz").write_bytes(gzip.compress(b"\n" * (1 << 20), compresslevel=9, mtime=0) * 66)
    (root / "cut.1.gz").write_bytes(gzip.compress(MAN * 50, mtime=0)[:-40])
    (root / "says-utf8.html").write_bytes(b'<meta charset="utf-8"><p>A caf\xe9 is a place that serves coffee.</p>')
    (root / "says-latin1.html").write_bytes(
        '<meta charset="iso-8859-1"><p>A crème is a coffee with cream.</p>'.encode()
    )
    (root / "scan.pdf").write_bytes(_blank_pdf())
    (root / "ok.md").write_text("# Ok\n\nA note is a short text.\n")


def _codes(outcome: dict) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    return {(problem["code"], problem["kind"]) for problem in outcome["problems"]}


def test_bad_inputs_in_one_cli_run_each_get_their_own_code_and_the_run_goes_on(
    tmp_path: Path, brain_exe: BrainRunner
) -> None:
    _bad_inputs(tmp_path / "docs")
    assert brain_exe("--brain", "b", "init").code == 0
    run = brain_exe("--brain", "b", "--actor", ACTOR, "ingest", "docs", "--json")
    assert run.code == 0, run.stderr
    summary = run.json()
    by_path = {outcome["relpath"]: outcome for outcome in summary["outcomes"]}
    assert set(by_path) == {
        "one-line.md", "bomb.txt.gz", "cut.1.gz", "says-utf8.html", "says-latin1.html", "scan.pdf", "ok.md",
    }
    assert {path: outcome["status"] for path, outcome in by_path.items()} == dict.fromkeys(by_path, "registered")

    assert ("too-large", "failure") in _codes(by_path["bomb.txt.gz"])
    assert ("gzip-broken", "failure") in _codes(by_path["cut.1.gz"])
    assert ("no-text", "failure") in _codes(by_path["scan.pdf"])
    assert ("charset-mismatch", "note") in _codes(by_path["says-utf8.html"])
    assert ("charset-mismatch", "note") in _codes(by_path["says-latin1.html"])
    assert ("proposals-capped", "note") in _codes(by_path["one-line.md"])  # 30,000 definitions on one line
    failures = {path for path, outcome in by_path.items() if any(kind == "failure" for _, kind in _codes(outcome))}
    assert failures == {"bomb.txt.gz", "cut.1.gz", "scan.pdf"}

    # Registered as bytes, nothing derived from them; everything else still gave knowledge.
    assert {path: outcome["validated"] > 0 for path, outcome in by_path.items()} == {
        "one-line.md": True, "bomb.txt.gz": False, "cut.1.gz": False, "says-utf8.html": True,
        "says-latin1.html": True, "scan.pdf": False, "ok.md": True,
    }  # fmt: skip
    assert by_path["one-line.md"]["validated"] == 2_000  # the per-source cap, from a 2.4 MB line
    for code in ("too-large", "gzip-broken", "no-text", "charset-mismatch"):
        assert summary["problems_by_code"][code] >= 1, code

    # The same files under --strict: the run still commits the good part, and exits 1 for the failures.
    strict = brain_exe("--brain", "strict", "init")
    assert strict.code == 0
    strict = brain_exe("--brain", "strict", "--actor", ACTOR, "ingest", "docs", "--json", "--strict")
    assert strict.code == 1, strict.stderr
    assert strict.json()["validated"] == summary["validated"] and strict.json()["snapshot"] is not None
