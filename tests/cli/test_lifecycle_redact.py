"""`brain redact` end to end on real files: the bytes leave the whole brain directory (blobs, packed
artifacts, caches), the blocks stay members listed as tombstones, verify says tombstoned, and nothing
(re-ingest, pack) brings them back."""

from __future__ import annotations

import subprocess
from pathlib import Path

from brain.blocks import MemoryType
from brain.brain import Brain
from tests.cli.conftest import BrainRunner, assert_one_line_error
from tests.cli.test_lifecycle_sync import ACTOR, _docs, _ingest


def _grep(root: Path, phrase: str) -> list[str]:
    done = subprocess.run(["grep", "-rlF", phrase, str(root)], capture_output=True, text=True, check=False)
    return done.stdout.split()


def _phrase(text: str) -> str:
    """A distinctive line of `text` (the longest, trimmed), to grep for."""
    return max(text.splitlines(), key=len).strip()[:40]


def test_redact_destroys_a_source_and_what_quotes_it_everywhere(brain: BrainRunner, tmp_path: Path):
    docs, path = _docs(tmp_path), tmp_path / "brain"
    assert brain("--brain", str(path), "init").code == 0
    first = _ingest(brain, path, docs)
    source = next(o for o in first["outcomes"] if o["validated"] > 0 and o["media_type"] == "text/plain")
    text = (docs / source["relpath"]).read_text(errors="replace")
    b = Brain.open(path)
    derived = [i for i in b.ledger().closure(b.resolve_prefix(source["block"]))]
    statements = [b.resolve(i).payload().get("statement") for i in derived]
    phrase, stated = _phrase(text), next(s for s in statements if s)[:40]
    assert _grep(path, phrase) and _grep(path, stated)
    assert brain("--brain", str(path), "pack", "--tag", "v1").code == 0
    assert _grep(path, stated)  # the packed layer holds it too (compressed, so grep the blob list below)
    before = b.snapshot_digest()
    run = brain("--brain", str(path), "--actor", ACTOR, "redact", source["block"][:14], "--reason", "leaked", "--yes",
                "--json")
    assert run.code == 0, run
    result = run.json()
    assert result["tombstoned"]["canonical"] == [source["block"]]
    assert sorted(x for t, ids in result["tombstoned"].items() if t != "canonical" for x in ids) == sorted(
        map(str, derived)
    )
    assert result["affected_tags"] == ["v1"] and "boltzmann/cache" in result["purged_caches"]
    assert _grep(path, phrase) == [] and _grep(path, stated) == []
    # The members stay (same compositions and roots); the references list them as tombstones.
    after = b.snapshot()
    parent = b.snapshot(before)
    for name, ref in after.modules.items():
        assert ref.composition == parent.modules[name].composition or name == "provenance"
    assert [str(t) for t in after.modules["canonical"].tombstones] == [source["block"]]
    records = [b.resolve(i).payload()["record"] for i in b.module(MemoryType.PROVENANCE).block_ids
               if i not in b.module(MemoryType.PROVENANCE, before)]
    assert {r["mechanism"] for r in records} == {"tombstone"} and all(r["reason"] == "leaked" for r in records)
    report = brain("--brain", str(path), "verify", "--json").json()
    assert report["ok"] is True and report["modules"]["canonical"]["blocks"]["tombstoned"] == 1
    shown = brain("--brain", str(path), "show", source["block"])
    assert shown.code != 0 and "redacted" in shown.stderr
    # Nothing writes the bytes back: not a re-ingest of the same file, not a pack.
    again = _ingest(brain, path, docs, "--no-cache")
    assert _grep(path, phrase) == [] and again["failed"] == 0
    assert brain("--brain", str(path), "pack", "--tag", "v2").code == 0
    assert _grep(path, phrase) == [] and brain("--brain", str(path), "verify").code == 0
    assert brain("--brain", str(path), "verify", "--tag", "v2").code == 0


def test_redact_only_the_named_block_and_refusals(brain: BrainRunner, tmp_path: Path):
    docs, path = _docs(tmp_path), tmp_path / "brain"
    assert brain("--brain", str(path), "init").code == 0
    first = _ingest(brain, path, docs)
    source = next(o for o in first["outcomes"] if o["validated"] > 0)
    run = brain("--brain", str(path), "redact", source["block"], "--reason", "r", "--only", "--json")
    assert run.code == 0 and run.json()["tombstoned"] == {"canonical": [source["block"]]}
    again = brain("--brain", str(path), "redact", source["block"], "--reason", "r", "--only", "--json")
    assert again.code == 0 and again.json()["snapshot"] is None
    b = Brain.open(path)
    record = b.module(MemoryType.PROVENANCE).block_ids[0]
    refused = brain("--brain", str(path), "redact", str(record), "--reason", "r", "--json")
    assert refused.code == 5 and refused.json()["refused"]["code"] == "provenance-record"
    assert_one_line_error(brain("--brain", str(path), "redact", str(record), "--reason", "r"), 5)
    assert brain("--brain", str(path), "verify").code == 0


def test_a_redaction_on_the_reference_brain_verifies_and_reads(brain: BrainRunner, reference_brain: Path):
    b = Brain.open(reference_brain)
    pdf = next(
        blk for blk in b.module(MemoryType.CANONICAL).blocks() if blk.payload()["media_type"] == "application/pdf"
    )
    run = brain("--brain", str(reference_brain), "--actor", ACTOR, "redact", str(pdf.block_id), "--reason", "r",
                "--yes", "--json")
    assert run.code == 0, run
    assert set(run.json()["tombstoned"]) == {"canonical", "semantic"}  # Laplace quotes the PDF
    assert not b.blobs.has(pdf.block_id) and not b.blobs.has(pdf.blob)
    assert brain("--brain", str(reference_brain), "verify").code == 0
    assert brain("--brain", str(reference_brain), "ls", "--all", "--json").code == 0
