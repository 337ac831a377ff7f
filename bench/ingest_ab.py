"""A/B of `brain ingest` between source trees: a fresh ingest of the bench corpus, then an unchanged re-ingest,
each tree into its own brain, rounds interleaved; prints wall, whole-run user CPU (the proposer's forked
workers included) and the main process's own user CPU, as medians.

The main-process figure separates the run's own cost (registering, the gate, staging, the lineage log,
commits) from the heuristic's, which runs in forked workers for large runs. Trees are put first on
PYTHONPATH and run by this interpreter (so one venv serves both); compile them first
(`python -m compileall -q TREE`) when PYTHONDONTWRITEBYTECODE is set, or every run recompiles.

usage: python bench/ingest_ab.py NAME=TREE [NAME=TREE ...] [--files 3000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import ENV, make_corpus  # noqa: E402 - the bench's own corpus and environment

# Runs the console script in-process and reports its own user CPU when it exits (its children's is not in it).
_RUN = (
    "import atexit, os, resource, sys\n"
    "atexit.register(lambda: os.write(2, b'MAIN-USER %f\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_utime))\n"
    "sys.argv = ['brain', *sys.argv[1:]]\n"
    "from cli.main import console\n"
    "console()\n"
)


def run(tree: str, cwd: Path, *args: str) -> tuple[float, float, float, float]:
    """(wall, whole-run user, main-process user, whole-run system) seconds of `brain ARGS` with `tree` first."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", _RUN, *args], env={**ENV, "PYTHONPATH": tree}, cwd=cwd,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    err = process.stderr.read().decode()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"brain {' '.join(args)} failed with {tree}: {err}")
    return wall, usage.ru_utime, float(err.rsplit("MAIN-USER ", 1)[1].split()[0]), usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="+", metavar="NAME=TREE")
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    trees = dict(spec.split("=", 1) for spec in options.trees)
    work = Path(tempfile.mkdtemp(prefix="ingest-ab-"))
    try:
        make_corpus(work / "corpus", options.files)
        results: dict[str, dict[str, list[tuple[float, float, float, float]]]] = {
            n: {"fresh": [], "rerun": []} for n in trees
        }
        for round_ in range(options.rounds):
            for name in list(trees) if round_ % 2 == 0 else list(trees)[::-1]:
                brain = f"{name}-{round_}"
                os.sync()  # the previous run's writeback is not this run's cost
                run(trees[name], work, "--brain", brain, "init")
                for mode in ("fresh", "rerun"):
                    args = ("--brain", brain, "--actor", "bench@example.org", "-q", "ingest", "corpus")
                    results[name][mode].append(run(trees[name], work, *args))
        for mode in ("fresh", "rerun"):
            for name, runs in results.items():
                wall, user, own, system = (statistics.median(r[i] for r in runs[mode]) for i in range(4))
                print(f"{mode:6} {name:10} wall {wall:7.3f} s  user {user:7.3f} s  main-process user {own:7.3f} s  "
                      f"system {system:7.3f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
