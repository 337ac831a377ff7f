"""Run `brain ARGS...` and SIGKILL the process at its N-th filesystem step (N=0: count the steps, print them).

A step is a call that changes the disk: os.replace/rename/link/unlink/fsync, or an os.open that creates.
Used by test_reconcile_crash.py to kill merge, continue and abort at every stage, deterministically.
"""

from __future__ import annotations

import os
import signal
import sys

STEPS = ("replace", "rename", "link", "unlink", "fsync")


def main() -> int:
    target = int(sys.argv[1])
    args = sys.argv[2:]
    count = 0

    def step() -> None:
        nonlocal count
        count += 1
        if count == target:
            os.kill(os.getpid(), signal.SIGKILL)

    for name in STEPS:
        original = getattr(os, name)

        def wrapped(*a, _original=original, **k):  # type: ignore[no-untyped-def]
            step()
            return _original(*a, **k)

        setattr(os, name, wrapped)
    original_open = os.open

    def opening(path, flags, *a, **k):  # type: ignore[no-untyped-def]
        if flags & os.O_CREAT:
            step()
        return original_open(path, flags, *a, **k)

    os.open = opening  # type: ignore[assignment]
    from cli.main import main as brain_main

    try:
        code = brain_main(args)
    finally:
        if target == 0:
            sys.stderr.write(f"\nSTEPS {count}\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
