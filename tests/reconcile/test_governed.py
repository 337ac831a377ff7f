"""A governed brain (§9): the head merged in must authenticate, and the merge snapshot is signed with
`--sign-with` like any other head (§10.6, §10.8 items 3 and 6)."""

from __future__ import annotations

from pathlib import Path

from brain.brain import Brain
from tests.authn.keys import write_key
from tests.cli.conftest import BrainRunner, assert_one_line_error

ACTOR = "owner@example.org"


def _doc(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / "docs" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return str(path)


def test_governed_merge_authenticates_theirs_and_signs_the_result(tmp_path: Path, brain: BrainRunner) -> None:
    key = write_key(tmp_path, "owner")
    target = str(tmp_path / "brain")
    b = ("--brain", target, "--actor", ACTOR)
    assert brain(*b, "init", "--trust-key", f"{key}.pub@{ACTOR}", "--sign-with", str(key)).code == 0
    assert brain(*b, "ingest", _doc(tmp_path, "a.txt", "Fourier series decompose signals.\n"),
                 "--sign-with", str(key)).code == 0
    assert brain(*b, "branch", "create", "x").code == 0
    assert brain(*b, "checkout", "x").code == 0
    assert brain(*b, "ingest", _doc(tmp_path, "b.txt", "Laplace transforms solve ODEs.\n"),
                 "--sign-with", str(key)).code == 0
    theirs = Brain.open(Path(target)).snapshot_digest()
    assert brain(*b, "checkout", "main").code == 0
    assert (
        brain(*b, "ingest", _doc(tmp_path, "c.txt", "Wavelets localise in time.\n"), "--sign-with", str(key)).code == 0
    )
    ours = Brain.open(Path(target)).snapshot_digest()
    # An unsigned head of theirs is refused, nothing moved.
    assert brain(*b, "checkout", "x").code == 0
    assert brain(*b, "ingest", _doc(tmp_path, "d.txt", "An unsigned addition.\n")).code == 0
    unsigned = Brain.open(Path(target)).snapshot_digest()
    assert unsigned != theirs
    assert brain(*b, "checkout", "main").code == 0
    assert Brain.open(Path(target)).snapshot_digest() == ours
    refused = brain(*b, "merge", "x", "--reason", "join x", "--sign-with", str(key))
    assert_one_line_error(refused, 6)
    assert Brain.open(Path(target)).snapshot_digest() == ours
    merged = brain(*b, "merge", str(theirs), "--reason", "join x", "--sign-with", str(key), "--json")
    assert merged.code == 0, merged.stderr
    assert merged.json()["signed"]["snapshot"] == str(Brain.open(Path(target)).snapshot_digest())
    head = Brain.open(Path(target)).snapshot()
    assert head is not None and head.parents == (ours, theirs)
    verify = brain(*b, "verify", "--json")
    assert verify.code == 0, verify.stdout[-2000:]
    assert verify.json()["authenticity"]["state"] == "authorized"
