"""Branches end to end from the CLI: a brain the reference implementation branched, hostile refs.json, bad
names, governed head moves, and every lifecycle command on the current branch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brain.brain import Brain
from tests.authn.keys import write_key
from tests.cli.conftest import BrainRunner, assert_one_line_error

ACTOR = "tester@example.org"
V1 = "sha256:100ea8f01da426a5a2020ddc90f28d49169b57793541cdbb266c2387ef549839"
V2 = "sha256:095450f76bbc09cdf261edba937a7cc312346096750fe07b49f532d6640e5904"
OLDER = "sha256:a88c24b491ba0320bfb2e7c2a4219f853c136741d5e0eb4a0e78915f94a504c2"  # V2's parent
# A blob of the reference brain that is not a snapshot: v1's canonical composition.
NOT_A_SNAPSHOT_HINT = "composition"


def refs_bytes(current: str = "main", switching: str | None = None, main: str = OLDER, feature: str = V1) -> bytes:
    """What the other implementation writes (§10.2, observed shape): main's entry lags the head."""
    text = (
        '{"boltzmann":1,"branches":{"feature/x":{"snapshot":"%s","tag":"br.feature.x"},'
        '"main":{"snapshot":"%s","tag":"latest"}},"current":"%s"' % (feature, main, current)
    )
    return (text + ("" if switching is None else ',"switching":"%s"' % switching) + "}").encode()


def run(brain: BrainRunner, where: Path, *args: str):  # type: ignore[no-untyped-def]
    return brain("--brain", str(where), "--actor", ACTOR, *args)


def files(root: Path) -> dict[str, bytes]:
    """Every file of the brain but the lock and the caches."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "lock" and "cache" not in p.parts and "search" not in p.parts
    }


@pytest.fixture
def branched(reference_brain: Path) -> Path:
    (reference_brain / "boltzmann" / "refs.json").write_bytes(refs_bytes())
    return reference_brain


def test_a_brain_the_reference_branched(branched: Path, brain: BrainRunner, tmp_path: Path) -> None:
    listed = run(brain, branched, "branch", "--json")
    assert listed.code == 0, listed.stderr
    infos = {b["name"]: b for b in listed.json()["branches"]}
    assert infos["main"]["head"] == V2 and infos["main"]["current"]  # head.json is the truth, not the lagging entry
    assert (infos["feature/x"]["head"], infos["feature/x"]["ahead"], infos["feature/x"]["behind"]) == (V1, 0, 4)

    assert run(brain, branched, "checkout", "feature/x").code == 0
    assert str(Brain.open(branched).snapshot_digest()) == V1
    refs = (branched / "boltzmann" / "refs.json").read_bytes()
    assert refs == refs_bytes(current="feature/x", main=V2)  # the leaving entry brought up, byte for byte
    head = json.loads((branched / "boltzmann" / "head.json").read_bytes())
    assert head["snapshot"] == V1 and V2 in head["retained"]
    assert run(brain, branched, "verify").code == 0

    # Extend it: an ingest commits onto feature/x; main stays where it was.
    (tmp_path / "extra.md").write_text("# Extra\n\nA gossip protocol spreads state between peers.\n")
    assert run(brain, branched, "ingest", str(tmp_path / "extra.md")).code == 0
    tip = Brain.open(branched).snapshot()
    assert tip is not None and str(tip.first_parent) == V1
    assert run(brain, branched, "verify").code == 0
    found = run(brain, branched, "search", "gossip", "--json")
    assert found.code == 0 and found.json()["matches"] and found.json()["snapshot"] == str(tip.digest)
    back = run(brain, branched, "checkout", "main", "--json")
    assert back.code == 0 and back.json()["snapshot"] == V2
    on_main = run(brain, branched, "search", "gossip", "--json").json()  # the index follows the branch's head
    assert on_main["snapshot"] == V2 and on_main["matches"] == []
    assert run(brain, branched, "verify").code == 0


def test_a_switching_the_reference_left_is_repaired_on_open(branched: Path, brain: BrainRunner) -> None:
    # The reference was killed after moving head.json to feature/x: the repair finishes the checkout.
    (branched / "boltzmann" / "refs.json").write_bytes(refs_bytes(switching="feature/x", main=V2))
    head = json.loads((branched / "boltzmann" / "head.json").read_bytes())
    (branched / "boltzmann" / "head.json").write_text(
        json.dumps({**head, "snapshot": V1}, separators=(",", ":"), sort_keys=True)
    )
    listed = run(brain, branched, "branch", "--json").json()
    assert listed["current"] == "feature/x"
    assert (branched / "boltzmann" / "refs.json").read_bytes() == refs_bytes(current="feature/x", main=V2)


@pytest.mark.parametrize(
    ("raw", "complaint"),
    [
        (refs_bytes().replace(b"}", b"}\n", 1)[:-1] + b"}", "canonical"),
        (refs_bytes() + b"\n", "canonical"),
        (refs_bytes()[:-1] + b',"extra":1}', "Extra"),
        (refs_bytes(current="nope"), "not one of its branches"),
        (refs_bytes(feature="sha256:" + "0" * 64), "not stored"),
        (
            refs_bytes(feature="sha256:bcce8857fbb5d57249129a498dc80735432acfdd141285d77ed905c1635ca953"),
            "not a snapshot",
        ),
        (refs_bytes().replace(b"br.feature.x", b"br.main"), "tag"),
        (b"{not json", "JSON"),
    ],
)
def test_hostile_refs_json(reference_brain: Path, brain: BrainRunner, raw: bytes, complaint: str) -> None:
    (reference_brain / "boltzmann" / "refs.json").write_bytes(raw)
    before = files(reference_brain)
    for args in (("branch",), ("checkout", "feature/x"), ("branch", "create", "y"), ("branch", "delete", "feature/x")):
        done = run(brain, reference_brain, *args)
        assert_one_line_error(done, 2)
        assert complaint.lower() in done.stderr.lower(), done.stderr
    assert files(reference_brain) == before  # nothing written


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("branch", "create", "a.b"), 3),
        (("branch", "create", "-x"), 3),
        (("branch", "create", "a" * 126), 3),
        (("branch", "create", "x", "--at", "sha256:" + "1" * 64), 4),
        (("branch", "create", "x", "--at", "nosuchbranch"), 4),
        (("checkout", "nope"), 4),
        (("checkout", "br.main"), 3),
        (("branch", "delete", "nope"), 4),
        (("branch", "delete", "main"), 5),
    ],
)
def test_bad_input(reference_brain: Path, brain: BrainRunner, args: tuple[str, ...], code: int) -> None:
    before = files(reference_brain)
    done = run(brain, reference_brain, *args)
    assert_one_line_error(done, code)
    assert files(reference_brain) == before


def test_create_at_a_snapshot_and_a_branch(reference_brain: Path, brain: BrainRunner) -> None:
    made = run(brain, reference_brain, "branch", "create", "old", "--at", V1[7:19], "--json")
    assert made.code == 0, made.stderr
    assert made.json()["snapshot"] == V1 and made.json()["tag"] == "br.old"
    assert run(brain, reference_brain, "branch", "create", "older", "--at", "old").code == 0
    names = [b["name"] for b in run(brain, reference_brain, "branch", "--json").json()["branches"]]
    assert names == ["main", "old", "older"]
    # Unmerged but contained in another branch: deletes without --force.
    assert run(brain, reference_brain, "branch", "delete", "older").code == 0


def test_governed_head_moves_are_authenticated(tmp_path: Path, brain: BrainRunner) -> None:
    key = write_key(tmp_path, "owner")
    target = tmp_path / "gov"
    actor = "owner@example.org"
    assert brain("--brain", str(target), "init", "--trust-key", f"{key}.pub@{actor}", "--sign-with", str(key)).code == 0
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Fourier series decompose periodic signals.\n")
    assert brain("--brain", str(target), "--actor", actor, "ingest", str(docs), "--sign-with", str(key)).code == 0
    assert brain("--brain", str(target), "--actor", actor, "branch", "create", "side").code == 0
    moved = brain("--brain", str(target), "--actor", actor, "checkout", "side", "--json")
    assert moved.code == 0 and moved.json()["authenticated"] == "authorized"
    (docs / "b.txt").write_text("Laplace transforms turn differential equations into algebra.\n")
    assert brain("--brain", str(target), "--actor", actor, "ingest", str(docs)).code == 0  # unsigned
    unsigned = Brain.open(target).snapshot_digest()
    assert brain("--brain", str(target), "--actor", actor, "checkout", "main").code == 0
    before = files(target)
    refused = brain("--brain", str(target), "--actor", actor, "checkout", "side")
    assert_one_line_error(refused, 6)
    assert "unsigned" in refused.stderr
    refused = brain("--brain", str(target), "--actor", actor, "branch", "create", "again", "--at", str(unsigned))
    assert_one_line_error(refused, 6)
    assert files(target) == before  # head unchanged, nothing written
    assert brain("--brain", str(target), "sign", str(unsigned), "--sign-with", str(key)).code == 0
    assert brain("--brain", str(target), "--actor", actor, "checkout", "side").code == 0
    assert Brain.open(target).snapshot_digest() == unsigned  # noqa: SIM300


def test_lifecycle_commands_on_the_current_branch(reference_brain: Path, brain: BrainRunner, tmp_path: Path) -> None:
    assert run(brain, reference_brain, "branch", "create", "work").code == 0
    assert run(brain, reference_brain, "checkout", "work").code == 0
    (tmp_path / "n.md").write_text("# Notes\n\nA vector clock orders events between replicas.\n")
    assert run(brain, reference_brain, "ingest", str(tmp_path / "n.md")).code == 0
    canonical = run(brain, reference_brain, "ls", "--type", "canonical", "--json")
    assert canonical.code == 0, canonical.stderr
    [ours] = [b["block_id"] for b in canonical.json() if b["title"].startswith("n.md")]
    dropped = run(brain, reference_brain, "drop", ours, "--reason", "only a test", "--allow-canonical")
    assert dropped.code == 0, dropped.stderr
    assert ours not in run(brain, reference_brain, "ls", "--type", "canonical", "--json").stdout
    assert run(brain, reference_brain, "status").code == 0
    assert run(brain, reference_brain, "log").code == 0
    assert run(brain, reference_brain, "pack", "--tag", "work-build").code == 0
    assert run(brain, reference_brain, "prune").code == 0
    assert run(brain, reference_brain, "verify").code == 0
    work = {b["name"]: b for b in run(brain, reference_brain, "branch", "--json").json()["branches"]}
    assert (work["work"]["ahead"], work["work"]["behind"]) == (0, 0)
    assert (work["main"]["ahead"], work["main"]["behind"], work["main"]["head"]) == (0, 2, V2)
    # prune --keep 1 keeps every branch's history although head.json is on work: main checks out and verifies.
    assert run(brain, reference_brain, "prune", "--keep", "1").code == 0
    head = json.loads((reference_brain / "boltzmann" / "head.json").read_bytes())
    assert head["retained"] == [work["work"]["head"], V2]
    assert run(brain, reference_brain, "checkout", "main").code == 0
    assert run(brain, reference_brain, "verify").code == 0
