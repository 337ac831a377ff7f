"""Source formats end to end: gzip, roff man pages, reST, legacy encodings, and the bad inputs of each."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brain.brain import Brain
from cli.commands.verify import InstalledPipelines
from ingest.normalize import NormalizationError, get_pipeline, pipeline_for
from ingest.normalize.gzip_text import inflate
from ingest.run import IngestOptions, ingest
from ingest.sources import read_head, sniff

ROOT = Path(__file__).resolve().parents[2]
EVAL = ROOT / "fixtures" / "eval" / "docs"
ACTOR = "tester@example.org"
MAN = b'.TH DEMO 1\n.SH NAME\ndemo \\- show a demo\n.SH DESCRIPTION\nA demo is a short \\fBshow\\fR of a tool.\n'


def _run(root: Path, brain: Path):  # type: ignore[no-untyped-def]
    return ingest(Brain.init(brain), [root], IngestOptions(), actor=ACTOR)


def _outcomes(result) -> dict[str, list[tuple[str, str]]]:  # type: ignore[no-untyped-def]
    return {o.relpath: [(p.code, p.kind) for p in o.problems] for o in result.outcomes}


def _records(brain: Path) -> dict[str, tuple[str, str]]:
    ledger = Brain.open(brain).ledger()
    return {
        str(r.block): (r.pipeline, r.pipeline_version) for _, r in ledger.records if r.record_type == "normalization"
    }


def test_formats_are_normalized_and_named_on_the_record(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "demo.1.gz").write_bytes(gzip.compress(MAN, mtime=0))
    (src / "demo.1").write_bytes(MAN.replace(b"demo", b"other"))
    (src / "notes.txt").write_bytes("Caf\u00e9 notes\n\nA cr\u00e8me is a coffee with cream.\n".encode("cp1252"))
    (src / "guide.rst").write_text("Guide\n=====\n\nA widget is a small tool.\n")
    result = _run(src, tmp_path / "brain")
    by_path = {o.relpath: o for o in result.outcomes}
    assert by_path["demo.1.gz"].media_type == "application/gzip" and by_path["demo.1"].media_type == "text/troff"
    assert by_path["guide.rst"].media_type == "text/x-rst"
    assert all(o.validated >= 1 for o in result.outcomes), _outcomes(result)
    records = _records(tmp_path / "brain")
    names = {by_path[path].block: records[by_path[path].block][0] for path in by_path}
    assert names == {
        by_path["demo.1.gz"].block: "gzip+man-text",
        by_path["demo.1"].block: "man-text",
        by_path["notes.txt"].block: "text-nfc;charset=cp1252",
        by_path["guide.rst"].block: "text-nfc",
    }
    # `verify --deep` resolves every recorded name, at the recorded version, to the same view.
    installed = InstalledPipelines()
    for name, version in records.values():
        assert installed.installed_version(name) == version, name
    deep = subprocess.run(
        [
            str(Path(sys.executable).with_name("brain")), "--brain", str(tmp_path / "brain"), "verify", "--deep",
            "--json",
        ],
        capture_output=True, text=True, check=False,
    )
    assert deep.returncode == 0 and json.loads(deep.stdout)["problems"] == [], deep.stdout


def test_bad_inputs_are_registered_reported_with_their_own_code_and_the_run_goes_on(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    bomb = gzip.compress(b"\n" * (65 << 20), compresslevel=9)  # ~64 KiB that inflates past the text limit
    (src / "bomb.txt.gz").write_bytes(bomb)
    (src / "cut.1.gz").write_bytes(gzip.compress(MAN * 50, mtime=0)[:-40])
    (src / "liar.html").write_bytes(b'<meta charset="utf-8"><p>A caf\xe9 is a place that serves coffee.</p>')
    (src / "ok.md").write_text("# Ok\n\nA note is a short text.\n")
    result = _run(src, tmp_path / "brain")
    codes = _outcomes(result)
    assert ("too-large", "failure") in codes["bomb.txt.gz"]
    assert ("gzip-broken", "failure") in codes["cut.1.gz"]
    assert ("charset-mismatch", "note") in codes["liar.html"]
    assert all(o.status == "registered" for o in result.outcomes)
    assert {o.relpath: o.validated > 0 for o in result.outcomes} == {
        "bomb.txt.gz": False, "cut.1.gz": False, "liar.html": True, "ok.md": True
    }


def test_inflate_caps_output_and_reads_multi_member_streams() -> None:
    assert inflate(gzip.compress(b"one ") + gzip.compress(b"two"), 100) == b"one two"
    with pytest.raises(NormalizationError) as caught:
        inflate(gzip.compress(b"x" * 1000), 999)
    assert caught.value.code == "too-large"
    with pytest.raises(NormalizationError) as caught:
        inflate(b"\x1f\x8b\x08\x00garbage", 100)
    assert caught.value.code == "gzip-broken"


def test_gzip_of_binary_content_is_a_note_not_a_failure(tmp_path: Path) -> None:
    path = tmp_path / "a.tar.gz"
    path.write_bytes(gzip.compress(b"\x00\x01\x02" * 100))
    pipeline = pipeline_for("application/gzip")
    assert pipeline is not None
    with pytest.raises(NormalizationError) as caught:
        pipeline.normalize(path)
    assert (caught.value.code, caught.value.note) == ("gzip-not-text", True)


def test_a_declared_charset_decodes_and_utf16_with_a_bom_is_text(tmp_path: Path) -> None:
    path = tmp_path / "u.txt"
    path.write_bytes("A volume is a disk.\n".encode("utf-16"))
    assert sniff(path, read_head(path)).media_type == "text/plain"
    output = get_pipeline("text-nfc").normalize(path)
    assert output.data == b"A volume is a disk.\n" and output.pipeline == "text-nfc;charset=utf-16-le"
    assert get_pipeline("text-nfc;charset=utf-16-le").normalize(path).data == output.data


_VIEWS = """
import hashlib, json, sys
from pathlib import Path
from ingest.normalize import pipeline_for
from ingest.sources import read_head, sniff
views = {}
for path in sorted(Path(sys.argv[1]).iterdir()):
    if path.name.endswith(".json"):
        continue
    pipeline = pipeline_for(sniff(path, read_head(path)).media_type)
    output = pipeline.normalize(path)
    views[path.name] = [output.pipeline or pipeline.name, hashlib.sha256(output.data).hexdigest()]
print(json.dumps(views, sort_keys=True))
"""


def test_views_of_every_format_are_identical_in_two_processes() -> None:
    outputs = []
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", _VIEWS, str(EVAL)], capture_output=True, check=True, cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
    names = {name for name, _ in outputs[0].values()}
    assert {"gzip+man-text", "gzip+text-nfc", "man-text", "pdf-text", "html-text;charset=cp1252"} <= names
