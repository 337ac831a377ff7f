"""The search index is ready when the brain is: ingest, pull and lifecycle commands bring it to the head as part
of their work, so the first query has nothing to build (issue 21, item 4)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brain.brain import Brain
from retrieval.index import SearchIndex
from retrieval.paths import index_path
from tests.cli.conftest import BRAIN_EXE
from tests.registry import RegistryServer
from tests.retrieval.conftest import CORPUS, ingest, run_cli


def _index_is_current(path: Path) -> bool:
    assert index_path(path).is_file()
    index = SearchIndex.open(Brain.open(path))
    try:
        return index.is_current()
    finally:
        index.close()


def test_a_head_pointer_that_changes_only_its_retained_list_leaves_the_index_current(tmp_path: Path) -> None:
    # A commit on another branch (an agent's proposal) rewrites head.json's `retained`, not the snapshot searched.
    brain = tmp_path / "brain"
    ingest(brain, CORPUS)
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "kites.md").write_text("# Kites\n\nA kite flies on a string.\n")
    ingest(brain, extra)
    assert _index_is_current(brain)
    held = Brain.open(brain).head()
    assert held is not None and len(held.retained) > 1
    (brain / "boltzmann" / "head.json").write_bytes(held.model_copy(update={"retained": held.retained[:1]}).to_bytes())
    assert _index_is_current(brain)
    index = SearchIndex.open(Brain.open(brain))
    try:
        generation = index.meta("generation")
        assert index.ensure_current().rebuilt is False and index.meta("generation") == generation
    finally:
        index.close()


def test_ingest_and_lifecycle_commands_leave_the_index_at_the_head(tmp_path: Path) -> None:
    brain = tmp_path / "brain"
    ingest(brain, CORPUS)
    assert _index_is_current(brain)
    first = run_cli("--brain", str(brain), "search", "consistent hashing", "--json")
    assert first.code == 0 and "search index built" not in first.stderr  # nothing left to build
    semantic = json.loads(run_cli("--brain", str(brain), "ls", "--type", "semantic", "--json").stdout)
    dropped = run_cli("--brain", str(brain), "drop", semantic[0]["block_id"], "--reason", "wrong", "--yes", "--json")
    assert dropped.code == 0, dropped
    assert _index_is_current(brain)
    demoted = run_cli("--brain", str(brain), "demote", semantic[1]["block_id"], "--reason", "stale", "--json")
    assert demoted.code == 0, demoted
    assert _index_is_current(brain)
    after = json.loads(run_cli("--brain", str(brain), "search", semantic[1]["title"], "--json").stdout)
    assert semantic[1]["block_id"] not in [m["block"] for m in after["matches"]]  # the update took effect


def test_a_read_only_index_never_fails_the_command(tmp_path: Path) -> None:
    brain = tmp_path / "brain"
    ingest(brain, CORPUS / "notes")
    search = index_path(brain).parent
    for path in search.iterdir():
        path.unlink()
    search.chmod(0o500)  # the sidecar cannot be written: the ingest still succeeds, the next search copes
    try:
        ingest(brain, CORPUS / "pages")
        found = run_cli("--brain", str(brain), "search", "onboarding first week", "--json")
        assert found.code == 0, found
    finally:
        search.chmod(0o700)


@pytest.mark.registry
def test_pull_leaves_the_index_at_the_head(registry: RegistryServer, tmp_path: Path) -> None:
    source = tmp_path / "src"
    ingest(source, CORPUS / "notes")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}, "NO_COLOR": "1",
           "DOCKER_CONFIG": str(tmp_path / "docker"), "HOME": str(tmp_path)}
    ref = registry.ref("retrieval/follow:v1")
    for args in (["--brain", str(source), "push", ref], ["--brain", str(tmp_path / "dest"), "pull", ref]):
        done = subprocess.run([str(BRAIN_EXE), *args], env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr
    assert _index_is_current(tmp_path / "dest")


def _notes(root: Path, count: int) -> Path:
    root.mkdir()
    for i in range(count):
        (root / f"note-{i:03}.md").write_text(f"# Note {i}\n\nThe parser_{i} reads WidgetFrame {i} from disk.\n")
    return root


def test_an_ingest_in_checkpoints_is_followed_from_a_process_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Interim moves (every checkpoint before the last) start the follower once they have committed FOLLOW_FROM
    # sources; the command still ends with the index at its head, and the rows equal those of one update of the
    # finished brain.
    from cli import index_upkeep

    started: list[Path] = []
    start = index_upkeep._start_follower

    def recorded(root: Path) -> subprocess.Popen[bytes] | None:
        started.append(root)
        return start(root)

    monkeypatch.setattr(index_upkeep, "_start_follower", recorded)
    monkeypatch.setattr(index_upkeep, "FOLLOW_FROM", 14)
    brain, corpus = tmp_path / "brain", _notes(tmp_path / "notes", 40)
    assert run_cli("--brain", str(brain), "init").code == 0
    done = run_cli("--brain", str(brain), "--actor", "t@example.org", "ingest", str(corpus), "--checkpoint", "7",
                   "--json")
    assert done.code == 0, done
    assert json.loads(done.stdout)["checkpoints"] >= 6 and _index_is_current(brain)
    assert started == [brain]  # at the second checkpoint (14 sources), once
    followed = _rows(brain)
    for path in index_path(brain).parent.iterdir():
        path.unlink()
    rebuilt = SearchIndex.open(Brain.open(brain))
    try:
        rebuilt.ensure_current()
    finally:
        rebuilt.close()
    assert _rows(brain) == followed


def test_a_small_ingest_in_checkpoints_starts_no_follower(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Below FOLLOW_FROM sources a follower's start costs more than it overlaps: the command updates at its end.
    from cli import index_upkeep

    started: list[Path] = []
    monkeypatch.setattr(index_upkeep, "_start_follower", lambda root: started.append(root))
    brain, corpus = tmp_path / "brain", _notes(tmp_path / "notes", 40)
    assert run_cli("--brain", str(brain), "init").code == 0
    done = run_cli("--brain", str(brain), "--actor", "t@example.org", "ingest", str(corpus), "--checkpoint", "7",
                   "--json")
    assert done.code == 0, done
    assert json.loads(done.stdout)["checkpoints"] >= 6 and _index_is_current(brain) and started == []


def _rows(brain: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(index_path(brain))
    try:
        return db.execute("SELECT hex(k.digest), b.memory_type, b.accessible, d.locator FROM blocks b "
                          "JOIN keys k ON k.id = b.id LEFT JOIN docs d ON d.block = b.id ORDER BY 1, 4").fetchall()
    finally:
        db.close()


def test_the_follower_runs_apart_and_its_failure_falls_back_to_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cli import index_upkeep

    brain = tmp_path / "brain"
    ingest(brain, CORPUS / "notes")
    for path in index_path(brain).parent.iterdir():
        path.unlink()
    index_upkeep.head_moved(brain, index_upkeep.FOLLOW_FROM)  # interim: a follower process, told at once
    (follower,) = index_upkeep._FOLLOWERS.values()
    assert follower.args[1:4] == ["-P", "-m", "retrieval.follow"] and follower.pid != os.getpid()
    index_upkeep.finish()
    assert follower.returncode == 0 and _index_is_current(brain) and not index_upkeep._FOLLOWERS
    for path in index_path(brain).parent.iterdir():
        path.unlink()
    monkeypatch.setattr("sys.executable", "/bin/false")  # a follower that fails at once
    index_upkeep.head_moved(brain, index_upkeep.FOLLOW_FROM)
    index_upkeep.head_moved(brain, 0)
    index_upkeep.finish()
    assert _index_is_current(brain)  # the command did the update itself


def test_a_killed_command_takes_its_follower_with_it(tmp_path: Path) -> None:
    brain = tmp_path / "brain"
    ingest(brain, CORPUS / "notes")
    # A command that starts its follower and is SIGKILLed before it ends: the follower must not outlive it. A
    # child of the command keeps the follower's input open (as a forked worker of a command may), so only the
    # parent-death signal, not the end of its input, can end it.
    script = ("import os, sys, time; from pathlib import Path; from cli import index_upkeep; "
              "index_upkeep.head_moved(Path(sys.argv[1]), index_upkeep.FOLLOW_FROM); "
              "print(next(iter(index_upkeep._FOLLOWERS.values())).pid, flush=True); "
              "child = os.fork(); child or (time.sleep(60), os._exit(0)); print(child, flush=True); time.sleep(60)")
    command = subprocess.Popen([sys.executable, "-c", script, str(brain)], stdout=subprocess.PIPE, text=True)
    assert command.stdout is not None
    follower, holder = int(command.stdout.readline()), int(command.stdout.readline())
    command.send_signal(signal.SIGKILL)
    command.wait()
    _wait_dead(follower, holder)


def _wait_dead(follower: int, holder: int) -> None:
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{follower}/stat") as stat:
                    if stat.read().split(") ")[1].startswith("Z"):
                        return  # dead, not yet reaped by init
            except FileNotFoundError:
                return
            time.sleep(0.05)
        os.kill(follower, signal.SIGKILL)
        raise AssertionError(f"the follower {follower} outlived its killed command")
    finally:
        os.kill(holder, signal.SIGKILL)
