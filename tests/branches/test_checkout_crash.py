"""A real SIGKILL of `brain checkout` at every pointer step (and at random moments): the brain opens, verifies,
and is on one branch or the other whole; the next writer commits onto the branch the repair settles on.

The kill points are exact: a driver runs the CLI in a child process with `os.fsync`/`os.replace` counted, and
the child kills itself with SIGKILL just before (or just after) the Nth of them. A checkout makes three atomic
writes (refs.json with `switching`, head.json, refs.json with `current`), each a file fsync, a rename and a
directory fsync: nine events, killed before and after each, plus kills before the first and after the last.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brain.branches.operations import current_branch, list_branches
from brain.branches.refs import read_refs
from brain.brain import Brain
from brain.verify.engine import verify_brain
from cli.main import main

ACTOR = "tester@example.org"

BRAIN_EXE = Path(sys.executable).with_name("brain")
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}, "SOURCE_DATE_EPOCH": "1767225600"}
DRIVER = """
import os, signal, sys
target, after = int(os.environ["KILL_AT"]), os.environ["KILL_AFTER"] == "1"
seen = [0]
def counted(real):
    def call(*args, **kwargs):
        seen[0] += 1
        if seen[0] == target and not after:
            os.kill(os.getpid(), signal.SIGKILL)
        result = real(*args, **kwargs)
        if seen[0] == target and after:
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    return call
os.fsync, os.replace = counted(os.fsync), counted(os.replace)
from cli.main import main
sys.exit(main(sys.argv[1:]))
"""
EVENTS = 9  # three atomic writes of fsync, replace, directory fsync


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A brain on main with a branch `side` one commit behind and main one commit ahead: (path, main, side)."""
    root = tmp_path_factory.mktemp("checkout")
    path = root / "brain"
    for n in range(3):
        (root / f"doc{n}.md").write_text(f"# Document {n}\n\nA cache{n} is a store kept near the client{n}.\n")
    assert _brain(path, "init") == 0
    assert _brain(path, "ingest", str(root / "doc0.md")) == 0
    assert _brain(path, "branch", "create", "side") == 0
    assert _brain(path, "checkout", "side") == 0
    assert _brain(path, "ingest", str(root / "doc1.md")) == 0
    assert _brain(path, "checkout", "main") == 0
    assert _brain(path, "ingest", str(root / "doc2.md")) == 0
    heads = {b.name: str(b.head) for b in list_branches(Brain.open(path))}
    assert heads["main"] != heads["side"]
    return path, heads["main"], heads["side"]


def _brain(path: Path, *args: str) -> int:
    """`brain` in this process (the commands around the killed one are not about the process boundary)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(ENV)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return main(["--brain", str(path), "--actor", ACTOR, *args])
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _run(path: Path, *args: str, kill_at: int | None = None, after: bool = False) -> int:
    """`brain` in a process of its own, killed at the `kill_at`th write event when given."""
    command = [sys.executable, "-c", DRIVER] if kill_at is not None else [str(BRAIN_EXE)]
    env = {**ENV, "KILL_AT": str(kill_at), "KILL_AFTER": "1" if after else "0"}
    done = subprocess.run(
        [*command, "--brain", str(path), "--actor", ACTOR, *args], env=env, capture_output=True, text=True, timeout=120
    )
    return done.returncode


def _check_whole(path: Path, main: str, side: str) -> str:
    """The brain opens and verifies, refs.json names one branch with the head, both branches are intact."""
    brain = Brain.open(path)  # repairs an interrupted checkout
    refs = read_refs(path)
    head = brain.snapshot_digest()
    assert verify_brain(brain, jobs=1).ok
    assert refs is not None and refs.switching is None
    heads = {b.name: str(b.head) for b in list_branches(brain, counts=False)}  # the current one from head.json
    assert heads == {"main": main, "side": side}
    branch = current_branch(brain)
    assert (branch, str(head)) in {("main", main), ("side", side)}
    retained = json.loads((path / "boltzmann" / "head.json").read_bytes())["retained"]
    assert main in retained and side in retained
    return branch


POINTS = [(k, after) for k in range(1, EVENTS + 1) for after in (False, True)] + [(0, False), (EVENTS + 1, False)]


@pytest.mark.parametrize(("kill_at", "after"), POINTS)
def test_checkout_killed_at_each_pointer_step(base, tmp_path: Path, kill_at: int, after: bool) -> None:
    source, main, side = base
    path = tmp_path / "b"
    shutil.copytree(source, path)
    code = _run(path, "checkout", "side", kill_at=kill_at, after=after)
    assert code in (0, -signal.SIGKILL)
    landed = _check_whole(path, main, side)
    if kill_at == 0 or kill_at > EVENTS:
        assert code == 0  # never killed: the checkout ran whole
    # head.json's rename is the fifth event: before it the brain is still on main, from it on on side.
    assert landed == ("side" if kill_at in (0, EVENTS + 1) or kill_at > 5 or (kill_at == 5 and after) else "main")
    # The next writer commits onto the branch the repair settled on, never the one being left.
    (tmp_path / "n.md").write_text("# After the crash\n\nA note written after the kill.\n")
    assert _brain(path, "ingest", str(tmp_path / "n.md")) == 0
    brain = Brain.open(path)
    assert current_branch(brain) == landed
    other = "main" if landed == "side" else "side"
    heads = {b.name: str(b.head) for b in list_branches(brain, counts=False)}
    assert heads[other] == (main if other == "main" else side) and heads[landed] not in (main, side)
    # And the checkout re-run completes.
    assert _brain(path, "checkout", "side") == 0
    assert current_branch(Brain.open(path)) == "side"


@pytest.mark.slow  # twenty-one console-script runs
def test_checkout_killed_at_random_moments(base, tmp_path: Path) -> None:
    source, main, side = base
    probe = tmp_path / "probe"
    shutil.copytree(source, probe)
    started = time.monotonic()
    assert _run(probe, "checkout", "side") == 0
    duration = time.monotonic() - started
    rng = random.Random(20)
    for trial in range(20):
        path = tmp_path / f"t{trial}"
        shutil.copytree(source, path)
        process = subprocess.Popen(
            [str(BRAIN_EXE), "--brain", str(path), "--actor", ACTOR, "checkout", "side"], env=ENV,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.5, 1.0) * duration)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        _check_whole(path, main, side)
