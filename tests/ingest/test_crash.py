"""A real `kill -9` of `brain ingest` at random moments: the brain stays verifiable, the fingerprint index
never names an uncommitted block, the lineage log is either exact or refused, and re-running converges on
exactly the blocks of an uninterrupted run."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brain.blocks import MemoryType
from brain.brain import Brain
from brain.identity import BlockId
from ingest.fingerprints import FingerprintIndex
from ingest.lineage import LineageLog
from tests.ingest.lineage_oracle import lineage_of_ledger

BRAIN_EXE = Path(sys.executable).with_name("brain")
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}, "SOURCE_DATE_EPOCH": "1767225600"}
FILES = 300


def _corpus(root: Path) -> Path:
    rng = random.Random(7)
    words = "cache shard node replica token index eviction latency client policy".split()
    for i in range(FILES):
        path = root / f"d{i % 10}" / f"note{i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        steps = "\n".join(f"{k}. {rng.choice(words)} the {rng.choice(words)}" for k in range(1, 4))
        path.write_text(
            f"# Topic {i}\n\nA {words[i % 10]}{i} is a {rng.choice(words)} kept near the {rng.choice(words)}.\n\n"
            f"## How to restart\n\n{steps}\n\n2026-03-{1 + i % 28:02d} 10:{i % 60:02d} restarted node {i}\n"
        )
    return root


def _ingest(brain: Path, root: Path) -> subprocess.Popen[bytes]:
    command = [str(BRAIN_EXE), "--brain", str(brain), "--actor", "curator@example.org", "-q", "ingest", str(root)]
    return subprocess.Popen([*command, "--checkpoint", "10"], env=ENV, stdout=subprocess.DEVNULL)


def _brain(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BRAIN_EXE), *args], env=ENV, capture_output=True, text=True, timeout=120, check=False)


def _members(path: Path) -> dict[MemoryType, frozenset[BlockId]]:
    return {t: m.members for t, m in Brain.open(path).modules().items()}


def _lineage_is_current_or_stale(path: Path) -> bool:
    """The lineage log either describes the head exactly (as the ledger says) or is refused as stale."""
    brain = Brain.open(path)
    snapshot = brain.snapshot()
    if snapshot is None:
        return True
    logged = LineageLog(path).load(brain.snapshot_digest())
    semantic = brain.modules(snapshot).get(MemoryType.SEMANTIC)
    truth, _ = lineage_of_ledger(brain.ledger(snapshot), semantic.blocks() if semantic is not None else ())
    return logged is None or logged == truth


@pytest.mark.slow
def test_sigkill_at_random_moments_then_rerun_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "src")
    reference, crashed = tmp_path / "reference", tmp_path / "crashed"
    for path in (reference, crashed):
        assert _brain("--brain", str(path), "init").returncode == 0
    started = time.monotonic()
    assert _ingest(reference, root).wait(timeout=300) == 0
    duration = time.monotonic() - started

    rng = random.Random(1234)
    killed = 0
    # Each run has less left to do than the one before (what was committed stays), and a loaded machine makes
    # the reference duration a poor clock: kill earlier as runs finish, and try until four were killed.
    for attempt in range(10):
        if killed >= 4:
            break
        process = _ingest(crashed, root)
        time.sleep(rng.uniform(0.1, 0.6) * duration / (1 + attempt - killed))
        process.send_signal(signal.SIGKILL)
        killed += process.wait(timeout=60) == -signal.SIGKILL
        verify = _brain("--brain", str(crashed), "verify")
        assert verify.returncode == 0, verify.stdout + verify.stderr
        canonical = _members(crashed).get(MemoryType.CANONICAL, frozenset())
        index = FingerprintIndex.load(crashed)
        assert all(index.get(p).block in canonical for p in index.paths())  # type: ignore[union-attr]
        assert _lineage_is_current_or_stale(crashed)
    assert killed >= 2, "the runs finished before they could be killed: raise FILES"

    assert _ingest(crashed, root).wait(timeout=300) == 0
    assert _brain("--brain", str(crashed), "verify").returncode == 0
    assert _members(crashed) == _members(reference)
    assert _lineage_is_current_or_stale(crashed)
    again = _brain("--brain", str(crashed), "--actor", "curator@example.org", "ingest", str(root), "--json")
    assert again.returncode == 0 and '"registered": 0' in again.stdout and '"blocks_added": 0' in again.stdout
