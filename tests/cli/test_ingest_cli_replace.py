"""`brain ingest` of a changed source (§3.7 "replace source"): the new block supersedes the old one, the
facts read only from the old bytes are demoted, the summary says "replaced", and `brain ls` shows only
the current version; the same bytes at a new path add nothing."""

from __future__ import annotations

import os
from pathlib import Path

from brain.blocks import MemoryType
from brain.blocks.provenance import DemotionRecord, RegistrationRecord, SupersessionRecord
from brain.brain import Brain
from tests.cli.conftest import BrainRunner

ACTOR = "curator@example.org"
GLOSSARY = "# Glossary\n\nA shard is a slice of the keyspace.\n\nA replica is a copy of a shard.\n"


def _write(root: Path, files: dict[str, str]) -> Path:
    for relpath, content in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return root


def _ingest(brain: BrainRunner, brain_dir: Path, *args: str) -> dict:  # type: ignore[type-arg]
    run = brain("--brain", str(brain_dir), "--actor", ACTOR, "ingest", *args, "--json")
    assert run.code == 0, run
    return run.json()  # type: ignore[no-any-return]


def _ls(brain: BrainRunner, brain_dir: Path, memory_type: str, *flags: str) -> list[dict]:  # type: ignore[type-arg]
    run = brain("--brain", str(brain_dir), "ls", "--type", memory_type, "--json", *flags)
    assert run.code == 0, run
    return run.json()  # type: ignore[no-any-return]


def _touch_later(path: Path) -> None:
    # A different mtime, as an editor leaves it (and not "racy": an hour ago).
    stamp = path.stat().st_mtime - 3600
    os.utime(path, (stamp, stamp))


def test_a_changed_source_supersedes_its_previous_version(brain: BrainRunner, tmp_path: Path) -> None:
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    docs = _write(
        tmp_path / "docs", {"notes/glossary.md": GLOSSARY, "notes/other.md": "# Other\n\nA node is a host.\n"}
    )
    first = _ingest(brain, brain_dir, str(docs))
    old = next(o["block"] for o in first["outcomes"] if o["relpath"] == "notes/glossary.md")
    old_facts = {b["block_id"] for b in _ls(brain, brain_dir, "semantic")}

    glossary = docs / "notes/glossary.md"
    glossary.write_text(GLOSSARY.replace("A replica is a copy of a shard.", "A leader is the writer of a shard."))
    _touch_later(glossary)
    second = _ingest(brain, brain_dir, str(docs))
    assert (second["registered"], second["replaced"], second["unchanged"]) == (0, 1, 1), second
    outcome = next(o for o in second["outcomes"] if o["relpath"] == "notes/glossary.md")
    assert outcome["status"] == "replaced" and outcome["replaces"] == [old]
    new = outcome["block"]

    accessible = {b["block_id"] for b in _ls(brain, brain_dir, "canonical")}
    everything = {b["block_id"] for b in _ls(brain, brain_dir, "canonical", "--all")}
    assert new in accessible and old not in accessible and old in everything

    # The ledger holds exactly the §3.7 records: registration + supersession (no reason), same timestamp.
    opened = Brain.open(brain_dir)
    ledger = opened.ledger()
    supersessions = [r for _, r in ledger.records if isinstance(r, SupersessionRecord)]
    assert [(str(r.block), str(r.supersedes), r.reason) for r in supersessions] == [(new, old, None)]
    registration = next(r for _, r in ledger.records if isinstance(r, RegistrationRecord) and str(r.block) == new)
    assert registration.origin == "docs/notes/glossary.md" and registration.at == supersessions[0].at

    # Facts read only from the old bytes are demoted (still members); the other source's facts are not.
    demoted = {str(r.block) for _, r in ledger.records if isinstance(r, DemotionRecord)}
    from_old = {str(b) for b in ledger.dependents.get(supersessions[0].supersedes, ())}
    assert demoted and demoted == from_old and demoted <= old_facts
    current = {b["block_id"] for b in _ls(brain, brain_dir, "semantic")}
    assert not current & demoted and current - old_facts  # the new facts are in
    members = opened.module(MemoryType.SEMANTIC).members
    assert all(b in {str(m) for m in members} for b in demoted)
    assert brain("--brain", str(brain_dir), "verify").code == 0

    again = _ingest(brain, brain_dir, str(docs))
    assert (again["registered"], again["replaced"], again["unchanged"], again["blocks_added"]) == (0, 0, 2, 0)


def test_the_same_bytes_at_a_new_path_add_nothing(brain: BrainRunner, tmp_path: Path) -> None:
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    docs = _write(tmp_path / "docs", {"a.md": GLOSSARY})
    _ingest(brain, brain_dir, str(docs))
    (docs / "a.md").rename(docs / "b.md")
    moved = _ingest(brain, brain_dir, str(docs))
    assert (moved["registered"], moved["replaced"], moved["blocks_added"]) == (0, 0, 0), moved
    assert len(_ls(brain, brain_dir, "canonical", "--all")) == 1


def test_origin_option_is_the_identity_of_a_replaced_source(brain: BrainRunner, tmp_path: Path) -> None:
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    one = _write(tmp_path / "v1", {"g.md": GLOSSARY})
    two = _write(tmp_path / "v2", {"g.md": GLOSSARY + "\nA quorum is a majority of replicas.\n"})
    _ingest(brain, brain_dir, str(one / "g.md"), "--origin", "https://example.org/g.md")
    elsewhere = _ingest(brain, brain_dir, str(two / "g.md"), "--origin", "https://example.org/other.md")
    assert (elsewhere["registered"], elsewhere["replaced"]) == (1, 0)
    replaced = _ingest(brain, brain_dir, str(two / "g.md"), "--origin", "https://example.org/g.md")
    # The same bytes are already a member (under another origin): nothing new to register or supersede.
    assert (replaced["registered"], replaced["replaced"], replaced["blocks_added"]) == (0, 0, 0), replaced
    three = _write(tmp_path / "v3", {"g.md": GLOSSARY + "\nA term is a word.\n"})
    third = _ingest(brain, brain_dir, str(three / "g.md"), "--origin", "https://example.org/g.md")
    assert (third["registered"], third["replaced"]) == (0, 1), third
    assert len(_ls(brain, brain_dir, "canonical")) == 2  # other.md's version and the third g.md


def test_help_shows_a_clean_path_metavar(brain: BrainRunner) -> None:
    run = brain("ingest", "--help")
    assert run.code == 0 and "{PATH}..." in run.stdout.splitlines()[0] and "PATH..." not in run.stdout


def test_reverting_to_superseded_bytes_is_reported_not_silent(brain: BrainRunner, tmp_path: Path) -> None:
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    docs = _write(tmp_path / "docs", {"g.md": GLOSSARY})
    first = _ingest(brain, brain_dir, str(docs))
    (docs / "g.md").write_text(GLOSSARY + "\nA quorum is a majority of replicas.\n")
    _touch_later(docs / "g.md")
    second = _ingest(brain, brain_dir, str(docs))
    (docs / "g.md").write_text(GLOSSARY)
    reverted = _ingest(brain, brain_dir, str(docs))
    outcome = reverted["outcomes"][0]
    assert outcome["block"] == first["outcomes"][0]["block"] and reverted["blocks_added"] == 0
    assert [(p["code"], p["kind"]) for p in outcome["problems"]] == [("reverted-to-superseded", "failure")]
    assert second["outcomes"][0]["block"][7:19] in outcome["problems"][0]["detail"]
    strict = brain("--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(docs), "--strict")
    assert strict.code == 1 and "reverted-to-superseded" in strict.stdout  # reported by every run, not once
