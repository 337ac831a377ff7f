"""`brain merge` and `brain reconcile` end to end, on real documents, with the bad input they refuse."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from brain.brain import Brain
from brain.identity import OciDigest, canonicalize, parse_strict
from tests.cli.conftest import BrainRunner, assert_one_line_error
from tests.reconcile.helpers import ACTOR, add, base, fact, source

DOCS = [p for p in sorted(Path("/usr/share/doc").glob("*/copyright"))[:6]]


def _copy_blobs(source_brain: Path, target: Path) -> None:
    """What a fetch does for a local copy: every blob of `source_brain` stored in `target` too."""
    for blob in (source_brain / "blobs" / "sha256").iterdir():
        dest = target / "blobs" / "sha256" / blob.name
        if not dest.exists() and not blob.name.startswith("."):
            shutil.copyfile(blob, dest)


def _doc(tmp_path: Path, index: int) -> Path:
    path = tmp_path / "docs" / f"doc{index}.txt"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(DOCS[index].read_bytes())
    return path


@pytest.fixture
def diverged(tmp_path: Path, brain: BrainRunner) -> tuple[Path, str, str]:
    """Two brains ingested from one head, each adding real documents; theirs' blobs copied into ours."""
    ours = tmp_path / "ours"
    assert brain("--brain", str(ours), "init").code == 0
    assert brain("--brain", str(ours), "--actor", ACTOR, "ingest", str(_doc(tmp_path, 0))).code == 0
    theirs = tmp_path / "theirs"
    shutil.copytree(ours, theirs)
    assert brain(
        "--brain", str(ours), "--actor", ACTOR, "ingest", str(_doc(tmp_path, 1)), str(_doc(tmp_path, 2))
    ).code == 0
    assert brain(
        "--brain", str(theirs), "--actor", ACTOR, "ingest", str(_doc(tmp_path, 3)), str(_doc(tmp_path, 4))
    ).code == 0
    _copy_blobs(theirs, ours)
    return ours, str(Brain.open(ours).snapshot_digest()), str(Brain.open(theirs).snapshot_digest())


def _d(text: str) -> OciDigest:
    return OciDigest.parse(text)


def test_merge_of_real_ingests_lands_the_union_and_verifies(
    diverged: tuple[Path, str, str], brain: BrainRunner
) -> None:
    ours, our_head, their_head = diverged
    plan = brain("--brain", str(ours), "merge", their_head, "--plan", "--json")
    assert plan.code == 0, plan.stderr
    review = plan.json()
    assert review["outcome"] == "planned" and review["withdrawn"] == {}
    b = Brain.open(ours)
    incoming = {str(block) for name in ("canonical", "provenance")
                for block in set(b.module(name, b.snapshot(_d(their_head))).block_ids)
                - set(b.module(name, b.snapshot(_d(our_head))).block_ids)}
    assert {v["block"] for v in review["verdicts"]} == incoming and len(review["verdicts"]) == review["judged"]
    assert {v["verdict"] for v in review["verdicts"]} == {"validated"}
    assert sorted(v["title"].split(" ")[0] for v in review["verdicts"] if v["module"] == "canonical") == \
        ["docs/doc3.txt", "docs/doc4.txt"]
    run = brain("--brain", str(ours), "--actor", ACTOR, "merge", their_head, "--reason", "join the docs", "--json")
    assert run.code == 0, run.stderr
    result = run.json()
    assert result["outcome"] == "merged"
    b = Brain.open(ours)
    b = Brain.open(ours)
    head = b.snapshot()
    assert head is not None and [str(p) for p in head.parents or ()] == [our_head, their_head]
    for name in ("canonical", "provenance"):
        union = set(b.module(name, b.snapshot(_d(our_head))).block_ids) | set(
            b.module(name, b.snapshot(_d(their_head))).block_ids
        )
        assert set(b.module(name).block_ids) == union
    verify = brain("--brain", str(ours), "verify", "--json")
    assert verify.code == 0, verify.stdout[-2000:]
    # The lineage log describes the merge (appended under the lock), exactly as a rebuild would.
    from ingest.lineage import LineageLog
    from ingest.lineage_graph import lineage_of

    log_file = LineageLog(ours)
    assert log_file.last_snapshot() == str(b.snapshot_digest())
    logged = log_file.load(b.snapshot_digest())
    assert logged is not None
    (ours / "boltzmann" / "cache" / "lineage.log").unlink()
    rebuilt = lineage_of(b, b.snapshot_digest(), persist=False)
    assert (logged.evidence, logged.statements, logged.dependents, logged.origins) == \
        (rebuilt.evidence, rebuilt.statements, rebuilt.dependents, rebuilt.origins)
    log = brain("--brain", str(ours), "log", "--json")
    assert log.code == 0 and log.json()[0]["parents"] == [str(head_digest) for head_digest in head.parents]
    again = brain("--brain", str(ours), "--actor", ACTOR, "merge", their_head, "--reason", "again", "--json")
    assert again.code == 0 and again.json()["outcome"] == "up_to_date"


def test_markdown_plan_is_a_pull_request_comment(diverged: tuple[Path, str, str], brain: BrainRunner) -> None:
    ours, _, their_head = diverged
    run = brain("--brain", str(ours), "merge", their_head, "--plan", "--format", "markdown")
    assert run.code == 0
    assert run.stdout.startswith("## brain merge") and "| module |" in run.stdout and "| strategy |" in run.stdout


def test_halt_writes_only_reconcile_json_in_the_exact_shape(tmp_path: Path, brain: BrainRunner) -> None:
    b, a, _ = base(tmp_path / "b")
    ours = add(b, fact("Beta", "red", a))
    theirs = add(b, fact("Beta", "blue", a), branch="x")
    before = {p.name: p.read_bytes() for p in (b.path / "boltzmann").iterdir() if p.is_file()}
    run = brain("--brain", str(b.path), "--actor", ACTOR, "merge", "x", "--reason", "join x")
    assert run.code == 5
    assert run.stderr.splitlines()[-1].startswith("error: reconciliation halted: 1 incoming block to admit or reject")
    after = {p.name: p.read_bytes() for p in (b.path / "boltzmann").iterdir() if p.is_file()}
    assert set(after) - set(before) == {"reconcile.json"}
    assert {k: v for k, v in after.items() if k not in ("reconcile.json", "lock")} == \
        {k: v for k, v in before.items() if k != "lock"}
    data = after["reconcile.json"]
    document = parse_strict(data)
    assert canonicalize(document) == data and not data.endswith(b"\n")
    assert document == {"boltzmann": 1, "theirs": str(theirs), "ancestor": document["ancestor"], "strategy": "merge",
                        "actor": {"id": ACTOR, "kind": "human"}, "reason": "join x", "head": str(ours),
                        "resolutions": {}}
    status = brain("--brain", str(b.path), "reconcile", "status", "--json")
    assert status.code == 0 and status.json()["theirs"] == str(theirs)


@pytest.mark.parametrize("command", [["ingest", "NEWFILE"], ["drop", "ID", "--reason", "r"], ["prune"],
                                     ["merge", "x", "--reason", "r"]])
def test_every_write_is_refused_while_open(tmp_path: Path, brain: BrainRunner, command: list[str]) -> None:
    b, a, s = base(tmp_path / "b")
    add(b, fact("Beta", "red", a))
    add(b, fact("Beta", "blue", a), branch="x")
    assert brain("--brain", str(b.path), "--actor", ACTOR, "merge", "x", "--reason", "j").code == 5
    new = tmp_path / "new.txt"
    new.write_text("a new document\n")
    args = [str(new) if c == "NEWFILE" else str(s.block_id) if c == "ID" else c for c in command]
    head = b.snapshot_digest()
    run = brain("--brain", str(b.path), "--actor", ACTOR, *args, "--yes" if command[0] == "drop" else "--json")
    assert run.code == 5, run
    assert "brain reconcile status" in run.stderr
    assert b.snapshot_digest() == head


@pytest.mark.parametrize("hostile", [
    b"{not json",
    b'{"boltzmann":1}',
    b'{"actor":{"id":"a@b.c","kind":"human"},"ancestor":"sha256:' + b"0" * 64 + b'","boltzmann":1,"evil":1,'
    b'"head":"sha256:'
    + b"0" * 64
    + b'","reason":"r","resolutions":{},"strategy":"merge","theirs":"sha256:'
    + b"0" * 64
    + b'"}',
    b'{ "boltzmann": 1 }',
])
def test_hostile_reconcile_json_is_one_line_and_blocks_writes(
    tmp_path: Path, brain: BrainRunner, hostile: bytes
) -> None:
    b, _, _ = base(tmp_path / "b")
    (b.path / "boltzmann" / "reconcile.json").write_bytes(hostile)
    status = brain("--brain", str(b.path), "reconcile", "status")
    assert_one_line_error(status, 2)
    head = b.snapshot_digest()
    write = brain("--brain", str(b.path), "--actor", ACTOR, "ingest", str(DOCS[0]))
    assert write.code == 5 and b.snapshot_digest() == head
    assert brain("--brain", str(b.path), "--actor", ACTOR, "reconcile", "abort").code == 0
    assert not (b.path / "boltzmann" / "reconcile.json").exists()


def test_empty_reconcile_json_reads_as_absent(tmp_path: Path, brain: BrainRunner) -> None:
    b, _, _ = base(tmp_path / "b")
    (b.path / "boltzmann" / "reconcile.json").write_bytes(b"")
    assert brain("--brain", str(b.path), "reconcile", "status").code == 4
    assert brain("--brain", str(b.path), "--actor", ACTOR, "ingest", str(DOCS[0])).code == 0


def test_bad_input_is_one_line_and_writes_nothing(tmp_path: Path, brain: BrainRunner) -> None:
    b, _, _ = base(tmp_path / "b")
    add(b, source("main"))
    head = b.snapshot_digest()
    missing = brain("--brain", str(b.path), "--actor", ACTOR, "merge", "sha256:" + "ab" * 32, "--reason", "r")
    assert_one_line_error(missing, 4)
    nothing = brain("--brain", str(b.path), "--actor", ACTOR, "merge", "no-such-branch", "--reason", "r")
    assert_one_line_error(nothing, 4)
    no_reason = brain("--brain", str(b.path), "--actor", ACTOR, "merge", "x")
    assert_one_line_error(no_reason, 3)
    both = brain("--brain", str(b.path), "--actor", ACTOR, "merge", "x", "--reason", "r", "--ff-only", "--no-ff")
    assert_one_line_error(both, 3)
    other = Brain.init(tmp_path / "other")
    theirs = add(other, source("unrelated"))
    _copy_blobs(other.path, b.path)
    unrelated = brain("--brain", str(b.path), "--actor", ACTOR, "merge", str(theirs), "--reason", "r")
    assert_one_line_error(unrelated, 5)
    assert "no common ancestor" in unrelated.stderr and "--allow-unrelated" in unrelated.stderr
    assert b.snapshot_digest() == head and not (b.path / "boltzmann" / "reconcile.json").exists()


def test_resolve_refuses_what_it_may_not_answer(tmp_path: Path, brain: BrainRunner) -> None:
    b, a, _ = base(tmp_path / "b")
    add(b, fact("Beta", "red", a))
    add(b, fact("Beta", "blue", a), branch="x")
    assert brain("--brain", str(b.path), "--actor", ACTOR, "merge", "x", "--reason", "j").code == 5
    unknown = brain("--brain", str(b.path), "--actor", ACTOR, "reconcile", "resolve", "ffff", "--reject")
    assert_one_line_error(unknown, 3)
    state = json.loads((b.path / "boltzmann" / "reconcile.json").read_bytes())
    assert state["resolutions"] == {}
    both = brain("--brain", str(b.path), "--actor", ACTOR, "reconcile", "resolve", "ffff", "--reject", "--admit")
    assert_one_line_error(both, 3)
    accept = brain("--brain", str(b.path), "--actor", ACTOR, "reconcile", "accept-removals", "--reason", "r")
    assert_one_line_error(accept, 5)
    cont = brain("--brain", str(b.path), "--actor", ACTOR, "reconcile", "continue")
    assert_one_line_error(cont, 5)


def test_merge_onto_the_reference_brain_history(reference_brain: Path, brain: BrainRunner) -> None:
    """A branch from the reference brain's v1 joined into its v2 head: the result verifies (§8)."""
    from brain.branches.operations import create_branch

    b = Brain.open(reference_brain)
    v1 = "sha256:100ea8f01da426a5a2020ddc90f28d49169b57793541cdbb266c2387ef549839"
    ours = b.snapshot_digest()
    create_branch(b, "old", ACTOR, at=b.resolve_snapshot_prefix(v1))
    theirs = add(b, source("a note added on a branch from v1"), branch="old")
    run = brain("--brain", str(reference_brain), "--actor", ACTOR, "merge", "old", "--reason", "join old", "--json")
    assert run.code == 0, run.stderr
    head = b.snapshot()
    assert head is not None and head.parents == (ours, theirs)
    # v2 removed a semantic block after v1: that exclusion stands, and the branch's addition lands.
    assert set(b.module("semantic").block_ids) == set(b.module("semantic", b.snapshot(ours)).block_ids)
    assert len(b.module("canonical").block_ids) == len(b.module("canonical", b.snapshot(ours)).block_ids) + 1
    verify = brain("--brain", str(reference_brain), "verify", "--json")
    assert verify.code == 0, verify.stdout[-3000:]


def test_gz_docs_exist() -> None:
    assert DOCS and all(p.is_file() for p in DOCS)
    _ = gzip


def test_push_is_refused_while_open(tmp_path: Path, brain: BrainRunner) -> None:
    b, a, _ = base(tmp_path / "b")
    add(b, fact("Beta", "red", a))
    add(b, fact("Beta", "blue", a), branch="x")
    assert brain("--brain", str(b.path), "--actor", ACTOR, "merge", "x", "--reason", "j").code == 5
    run = brain("--brain", str(b.path), "push", "127.0.0.1:1/nowhere:latest", "--plain-http")
    assert_one_line_error(run, 5)
    assert "brain reconcile status" in run.stderr


def test_state_round_trips_byte_for_byte_with_answers(tmp_path: Path) -> None:
    from brain.blocks.provenance import Actor, ActorKind
    from brain.identity import BlockId
    from brain.reconcile.state import AcceptedRemovals, ReconcileState, Resolution, read_state, write_state

    who = Actor(id=ACTOR, kind=ActorKind.HUMAN)
    block = BlockId("cd" * 32)
    state = ReconcileState(
        theirs=OciDigest("ab" * 32), ancestor=OciDigest("ef" * 32), strategy="rebase", actor=who, reason="r",
        head=OciDigest("01" * 32),
        resolutions={block: Resolution(kind="prefer", prefer=BlockId("aa" * 32), actor=who, at="2026-12-01T18:39:57Z")},
        accepted_removals=AcceptedRemovals(blocks={"semantic": (block,)}, actor=who, reason="fine",
                                           at="2026-12-01T18:39:57Z"),
    )
    (tmp_path / "boltzmann").mkdir()
    write_state(tmp_path, state)
    data = (tmp_path / "boltzmann" / "reconcile.json").read_bytes()
    assert data == canonicalize(json.loads(data)) and read_state(tmp_path) == state
    assert data.startswith(b'{"accepted_removals":{"actor":{"id":"tester@example.org","kind":"human"},"at":')
    assert (
        b'"resolutions":{"sha256:' + b"cd" * 32 + b'":{"actor":' in data
        and b'"kind":"prefer","prefer":"sha256:' in data
    )
    bad = data.replace(b'"at":"2026-12-01T18:39:57Z"', b'"at":"yesterday"', 1)
    (tmp_path / "boltzmann" / "reconcile.json").write_bytes(bad)
    with pytest.raises(Exception, match="not a reconciliation state"):
        read_state(tmp_path)


def test_status_names_the_branch_and_the_open_reconciliation(tmp_path: Path, brain: BrainRunner) -> None:
    b, a, _ = base(tmp_path / "b")
    add(b, fact("Beta", "red", a))
    theirs = add(b, fact("Beta", "blue", a), branch="x")
    clean = brain("--brain", str(b.path), "status", "--json").json()["branch"]
    assert (clean["name"], clean["reconciling"]) == ("main", None)
    assert brain("--brain", str(b.path), "--actor", ACTOR, "merge", "x", "--reason", "j").code == 5
    status = brain("--brain", str(b.path), "status", "--json")
    assert status.code == 0 and status.json()["branch"]["reconciling"] == str(theirs)
    text = brain("--brain", str(b.path), "status").stdout
    assert "branch    main (tag latest)" in text and f"reconciling with {theirs.short}" in text
    assert brain("--brain", str(b.path), "reconcile", "abort").code == 0
    assert brain("--brain", str(b.path), "checkout", "x").code == 0
    assert brain("--brain", str(b.path), "status", "--json").json()["branch"]["name"] == "x"
