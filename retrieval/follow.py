"""A brain's search index kept at its head while a command still moves it, from a process of its own.

A command whose head moves are interim (`brain.store.head.interim_moves`: an ingest's checkpoints before its
last) starts `python -P -m retrieval.follow ROOT PARENT_PID` once such moves have committed enough to be worth
it (`cli.index_upkeep.FOLLOW_FROM`) and writes a line to its standard input at every move after; the end of that
input says the command is done.
Each time this process wakes it brings the index to the head as it is then (moves told during an update are
folded into the next one), in one process and at a lower priority, so the update takes the cores the command
leaves idle instead of the command's own. At the end of its input it does the last pass with every core, which
the command waits for: the index is current when the command ends, as when the command did the whole update
itself at its end.

Linux kills it with its parent (`die_with_parent`): a killed command leaves no writer behind, and an update cut
short is rolled back by SQLite (the index is a cache; the next search brings it current).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from brain.concurrency import default_jobs, die_with_parent, lower_priority, restore_priority
from retrieval.index import follow_head

# How far below the command this process runs while the command works (an unprivileged process may always
# lower its own priority), and as a batch task: its wake-ups never preempt the command.
BACKGROUND_NICE = 10


def follow(root: Path, told: int) -> None:
    """Update at every wake-up on descriptor `told` until it is closed, then once more with every core."""
    initial = lower_priority(BACKGROUND_NICE)
    while True:
        try:
            news = os.read(told, 4096)  # every move told so far: one update covers them all
        except InterruptedError:
            continue
        if not news:
            break
        follow_head(root, jobs=1)
    restore_priority(initial)  # the command now waits for this pass (allowed only where privileged)
    follow_head(root, jobs=default_jobs())


def main(argv: list[str]) -> int:
    """`python -P -m retrieval.follow ROOT PARENT_PID`: follow the brain at ROOT for the process PARENT_PID."""
    root, parent = Path(argv[0]), int(argv[1])
    die_with_parent(parent)
    follow(root, sys.stdin.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
