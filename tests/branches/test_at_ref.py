"""`brain branch create NAME --at REF`: a branch, HEAD, HEAD~N / HEAD^, a local tag, a snapshot digest prefix,
each optionally N first parents back; anything else a one-line error naming what REF may be (exit 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.blocks import Block
from brain.branches.operations import create_branch, resolve_branch, resolve_start
from brain.brain import Brain
from brain.errors import NotFoundError
from brain.identity import OciDigest
from tests.cli.conftest import BrainRunner, assert_one_line_error

ACTOR = "tester@example.org"


def _commit(brain: Brain, n: int, branch: str | None = None) -> OciDigest:
    with brain.writer(ACTOR, branch=branch) as writer:
        writer.add(Block.from_payload("episodic", {"summary": f"event {n}", "occurred_at": "2026-01-01T00:00:00Z"}))
        digest = writer.commit()
    assert digest is not None
    return digest


@pytest.fixture
def three(tmp_path: Path) -> tuple[Brain, list[OciDigest]]:
    brain = Brain.init(tmp_path / "b")
    return brain, [_commit(brain, n) for n in range(3)]


def test_library_resolves_every_form(three: tuple[Brain, list[OciDigest]]) -> None:
    brain, (first, second, third) = three
    create_branch(brain, "side", ACTOR, second)
    side_head = _commit(brain, 10, branch="side")
    tags = {"v1": second}
    assert resolve_start(brain, "HEAD") == third
    assert resolve_start(brain, "HEAD~1") == resolve_start(brain, "HEAD^") == second
    assert resolve_start(brain, "HEAD~2") == resolve_start(brain, "HEAD^^") == resolve_start(brain, "main~2") == first
    assert resolve_start(brain, "side") == side_head and resolve_start(brain, "side~1") == second
    assert resolve_start(brain, third.hex[:8]) == third and resolve_start(brain, f"{third.hex[:10]}~2") == first
    assert resolve_start(brain, "v1~1", tagged=tags.get) == first
    assert resolve_start(brain, "HEAD~0") == third
    with pytest.raises(NotFoundError, match="goes past the history stored"):
        resolve_start(brain, "HEAD~3")
    with pytest.raises(NotFoundError, match="no branch, tag or snapshot 'v1'"):
        resolve_start(brain, "v1")  # without the tag reader a tag is not known
    for bad in ("HEAD~", "~1", "HEAD~x", "side^~1"):
        with pytest.raises(NotFoundError):
            resolve_start(brain, bad)


def test_cli_at_head_n_tag_and_prefix(tmp_path: Path, brain: BrainRunner) -> None:
    path = tmp_path / "b"
    assert brain("--brain", str(path), "init").code == 0
    docs = sorted(Path("/usr/share/doc").glob("*/copyright"))[:3]
    heads = []
    for doc in docs:
        copy = tmp_path / f"{doc.parent.name}.txt"
        copy.write_bytes(doc.read_bytes())
        assert brain("--brain", str(path), "--actor", ACTOR, "ingest", str(copy)).code == 0
        heads.append(Brain.open(path).snapshot_digest())
    assert brain("--brain", str(path), "pack", "--tag", "v1").code == 0
    for name, ref, expected in (("back1", "HEAD~1", heads[1]), ("back2", "HEAD^^", heads[0]),
                                ("tagged", "v1~1", heads[1]), ("prefix", heads[1].hex[:7], heads[1])):
        run = brain("--brain", str(path), "--actor", ACTOR, "branch", "create", name, "--at", ref, "--json")
        assert run.code == 0, run.stderr
        assert run.json()["snapshot"] == str(expected)
        assert resolve_branch(Brain.open(path), name) == expected
    for ref in ("HEAD~7", "nosuchtag", "HEAD~"):
        before = (path / "boltzmann" / "refs.json").read_bytes()
        run = brain("--brain", str(path), "--actor", ACTOR, "branch", "create", "never", "--at", ref)
        assert_one_line_error(run, 4)
        assert (path / "boltzmann" / "refs.json").read_bytes() == before
