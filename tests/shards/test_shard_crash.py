"""SIGKILL of a shard job at several moments: re-running the same command (`--shard I/N --base ...`)
completes, and the shard's compositions equal those of a run that was never killed."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brain.brain import Brain

ROOT = Path(__file__).resolve().parents[2]
BRAIN = Path(sys.executable).with_name("brain")
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}, "SOURCE_DATE_EPOCH": "1767225600",
       "NO_COLOR": "1", "BRAIN_ACTOR": "ci@example.org"}  # fmt: skip
pytestmark = pytest.mark.slow


def make_corpus(root: Path, count: int) -> None:
    spec = importlib.util.spec_from_file_location("bench_ingest", ROOT / "bench" / "ingest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.make_corpus(root, count)


def compositions(path: Path) -> dict[str, set[str]]:
    brain = Brain.open(path)
    return {str(t): {b.hex for b in m.block_ids} for t, m in brain.modules(brain.snapshot()).items()}


def shard_run(brain: Path, corpus: Path, *extra: str) -> list[str]:
    return [str(BRAIN), "--brain", str(brain), "-q", "ingest", str(corpus), "--checkpoint", "100", *extra]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shard-crash") / "corpus"
    make_corpus(root, 900)
    return root


@pytest.mark.parametrize("base", ["empty", "published"])
def test_a_killed_shard_job_completes_when_re_run(tmp_path: Path, corpus: Path, base: str) -> None:
    start = tmp_path / "start"
    subprocess.run([str(BRAIN), "--brain", str(start), "init", "-q"], env=ENV, check=True)
    if base == "published":  # a base holding part of the corpus, as the last published head would
        subprocess.run([*shard_run(start, corpus / "d00")], env=ENV, check=True, capture_output=True)
    base_ref = "empty" if base == "empty" else json.loads((start / "boltzmann" / "head.json").read_bytes())["snapshot"]
    args = ("--shard", "2/3", "--base", base_ref, "--sync")
    whole = tmp_path / "whole"
    subprocess.run(["cp", "-a", str(start), str(whole)], check=True)
    subprocess.run(shard_run(whole, corpus, *args), env=ENV, check=True, capture_output=True)
    expected = compositions(whole)
    for delay in (0.5, 2.0, 4.0):
        killed = tmp_path / f"killed-{delay}"
        subprocess.run(["cp", "-a", str(start), str(killed)], check=True)
        process = subprocess.Popen(shard_run(killed, corpus, *args), env=ENV, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
        time.sleep(delay)
        os.killpg(process.pid, signal.SIGKILL)  # the job and its forked workers, as a runner's cancel does
        process.wait()
        again = subprocess.run(shard_run(killed, corpus, *args), env=ENV, capture_output=True, text=True, check=False)
        assert again.returncode == 0, again.stderr
        assert compositions(killed) == expected
        verified = subprocess.run([str(BRAIN), "--brain", str(killed), "verify"], env=ENV, capture_output=True,
                                  text=True, check=False)  # fmt: skip
        assert verified.returncode == 0, verified.stdout
