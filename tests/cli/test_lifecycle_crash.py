"""A real `kill -9` of `brain drop`, `brain redact` and `brain prune` at random moments (at least 20 each):
the head is the previous snapshot or the finished one, the brain verifies, a re-run completes, and an
interrupted redaction leaves no readable copy once re-run. Each run is a real process forked from a
pre-warmed `brain` (tests/prewarmed.py), so the kill delays fall in the command's work, not its imports;
the trial copies live in memory (tests/scratch.py)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from brain.blocks import MemoryType
from brain.brain import Brain
from brain.verify.engine import verify_brain
from tests.prewarmed import PrewarmedBrain, prewarmed_brain

BRAIN_EXE = Path(sys.executable).with_name("brain")
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}, "SOURCE_DATE_EPOCH": "1767225600"}
KILLS = 20
ACTOR = ("--actor", "curator@example.org")


def _brain(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BRAIN_EXE), *args], env=ENV, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A brain of 120 notes, packed as v1, plus one source that many blocks quote and a phrase of it."""
    root = tmp_path_factory.mktemp("crash")
    docs = root / "docs"
    docs.mkdir()
    words = ["cache", "shard", "node", "replica", "token", "index", "eviction", "latency", "client", "policy"]
    for i in range(120):
        (docs / f"note{i:03d}.md").write_text(
            f"# Topic {i}\n\nA {words[i % 10]}{i} is a {words[(i * 3) % 10]} kept near the {words[(i * 7) % 10]}.\n\n"
            f"## How to restart\n\n1. stop the {words[i % 10]}\n2. start the {words[(i + 1) % 10]}\n"
        )
    (docs / "secret.md").write_text("# Secret\n\nThe vault passphrase is zebra-quartz-violin.\n\nA vault is a safe.\n")
    path = root / "brain"
    assert _brain("--brain", str(path), "init").returncode == 0
    assert _brain("--brain", str(path), *ACTOR, "ingest", str(docs)).returncode == 0
    assert _brain("--brain", str(path), "pack", "--tag", "v1").returncode == 0
    brain = Brain.open(path)
    secret = next(
        b for b in brain.module(MemoryType.CANONICAL).blocks() if b.size == len((docs / "secret.md").read_bytes())
    )
    return path, str(secret.block_id), "zebra-quartz-violin"


@pytest.fixture(scope="module")
def prewarmed() -> Iterator[PrewarmedBrain]:
    with prewarmed_brain(ENV, "drop", "redact", "prune", "verify") as server:
        yield server


def _copy(base: Path, target: Path) -> Path:
    shutil.copytree(base, target)
    (target / "blobs" / "sha256" / ("0" * 64)).write_bytes(b"garbage a killed run left")  # something to prune
    return target


def _killed_runs(runner: PrewarmedBrain, base: Path, scratch: Path, args: tuple[str, ...], check) -> None:
    probe = _copy(base, scratch / "probe")
    started = time.monotonic()
    assert runner.run("--brain", str(probe), *args).returncode == 0
    duration = time.monotonic() - started
    rng = random.Random(" ".join(args))
    killed = 0
    # The probe's duration is one sample on a machine whose load varies (parallel test workers): every run
    # that finished before its kill shortens the delays that follow, so most kills land mid-way.
    scale = 1.0
    for trial in range(KILLS):
        path = _copy(base, scratch / f"t{trial}")
        before = Brain.open(path).snapshot_digest()
        process = runner.start("--brain", str(path), *args)
        time.sleep(rng.uniform(0.05, 1.0) * duration * scale)
        runner.kill(process)
        was_killed = runner.wait(process, timeout=60) == -signal.SIGKILL
        killed += was_killed
        scale = scale if was_killed else scale * 0.7
        brain = Brain.open(path)
        history = [d for d, _ in brain.history()]
        assert history[0] == before or history[1] == before, trial
        report = verify_brain(brain, jobs=1)
        # A redaction killed after its head moved is reported unfinished until it is resumed (issue 24).
        assert report.ok or {p.code for p in report.problems if p.is_error} == {"redaction-unfinished"}, trial
        rerun = runner.run("--brain", str(path), *args)
        assert rerun.returncode in (0, 5), rerun.stderr  # 5: the drop finished before the kill (not a member)
        assert verify_brain(Brain.open(path), jobs=1).ok, trial
        check(path)
        shutil.rmtree(path)
    assert killed >= KILLS // 2, f"only {killed} runs were killed mid-way"


@pytest.mark.slow
def test_sigkill_drop(base: tuple[Path, str, str], memory_dir: Path, prewarmed: PrewarmedBrain):
    path, secret, _ = base
    args = (*ACTOR, "drop", secret, "--reason", "gone", "--allow-canonical", "--yes")

    def dropped(copy: Path) -> None:
        assert secret not in {str(b) for b in Brain.open(copy).module(MemoryType.CANONICAL).block_ids}

    _killed_runs(prewarmed, path, memory_dir, args, dropped)


@pytest.mark.slow
def test_sigkill_redact_leaves_no_readable_copy_once_rerun(
    base: tuple[Path, str, str], memory_dir: Path, prewarmed: PrewarmedBrain
):
    path, secret, phrase = base
    args = (*ACTOR, "redact", secret, "--reason", "leak", "--yes")

    def destroyed(copy: Path) -> None:
        found = subprocess.run(["grep", "-rlF", phrase, str(copy)], capture_output=True, text=True, check=False)
        assert found.stdout == "", found.stdout
        assert secret in {str(t) for t in Brain.open(copy).snapshot().modules["canonical"].tombstones or ()}

    _killed_runs(prewarmed, path, memory_dir, args, destroyed)


@pytest.mark.slow
def test_sigkill_prune(base: tuple[Path, str, str], memory_dir: Path, prewarmed: PrewarmedBrain):
    path, _, _ = base

    def pruned(copy: Path) -> None:
        assert not (copy / "blobs" / "sha256" / ("0" * 64)).exists()
        assert prewarmed.run("--brain", str(copy), "verify", "--tag", "v1").returncode == 0

    _killed_runs(prewarmed, path, memory_dir, ("prune",), pruned)
