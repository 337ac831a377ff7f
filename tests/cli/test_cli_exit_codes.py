"""Exit codes and the one-line error contract, through the installed console script in a subprocess."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from brain.brain import Brain
from brain.identity import BlockId
from cli.context import CliContext
from tests.cli.conftest import BRAIN_EXE, TWIN_PREFIX, BrainRunner, assert_one_line_error


def test_console_script_exit_codes(brain_exe: BrainRunner, reference_brain: Path, tmp_path: Path) -> None:
    ref = ("--brain", str(reference_brain))
    ok = brain_exe(*ref, "status", "--json")
    assert ok.code == 0 and ok.json()["snapshot"].startswith("sha256:0954")
    assert_one_line_error(brain_exe("--brain", str(tmp_path / "missing"), "status"), 2)
    assert_one_line_error(brain_exe(*ref, "show", "deadbeef"), 4)
    assert_one_line_error(brain_exe(*ref, "status", "--no-such-option"), 3)
    (reference_brain / "boltzmann" / "head.json").write_text('{"boltzmann":')
    assert_one_line_error(brain_exe(*ref, "show", "4c6d"), 2)


def test_console_script_ambiguous_prefix(brain_exe: BrainRunner, twin_brain: tuple[Path, list[BlockId]]) -> None:
    target, _ = twin_brain
    assert_one_line_error(brain_exe("--brain", str(target), "prove", TWIN_PREFIX), 4)


def test_a_bug_exits_70_with_one_line(brain: BrainRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    # No real code path is known to be buggy, so stand one in where a command meets the library.
    def broken(self: CliContext) -> Brain:
        raise RuntimeError("boom")

    monkeypatch.setattr(CliContext, "open_brain", broken)
    run = brain("status")
    assert run.code == 70 and run.stderr == "error: internal error: RuntimeError: boom (rerun with --debug)\n"
    debug = brain("--debug", "status")
    assert debug.code == 70 and "Traceback" in debug.stderr and "rerun" not in debug.stderr


def test_interrupt_exits_130(brain: BrainRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(self: CliContext) -> Brain:
        raise KeyboardInterrupt

    monkeypatch.setattr(CliContext, "open_brain", interrupted)
    run = brain("log")
    # Typer swallows the KeyboardInterrupt into a silent exit 130; the user still gets one line.
    assert run.code == 130 and run.stderr == "error: interrupted\n"


def test_ctrl_c_while_waiting_for_the_lock_exits_130_in_one_line(reference_brain: Path) -> None:
    import os
    import signal
    import time

    from brain.store.lock import WriterLock

    # PYTHONFAULTHANDLER: should the process hang after the interrupt, SIGABRT makes it print every thread's stack.
    env = {**os.environ, "BRAIN_ACTOR": "tester@example.org", "NO_COLOR": "1", "PYTHONFAULTHANDLER": "1"}
    source = reference_brain.parent / "note.md"
    source.write_text("# Note\n\nTerm: a definition.\n")
    with WriterLock(reference_brain):
        process = subprocess.Popen(
            [str(BRAIN_EXE), "--brain", str(reference_brain), "--lock-timeout", "60", "ingest", str(source)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
            # As from a terminal: a child inherits an ignored SIGINT (Python then installs no handler, as
            # `nohup` expects), and the test worker may have been left ignoring it; the stack dump of the hang
            # seen twice in full runs showed the child still polling for the lock, never interrupted.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        assert process.stderr is not None
        assert process.stderr.readline().startswith("waiting for writer")  # blocked on our lock
        time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        try:
            out, err = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)
            out, err = process.communicate(timeout=30)
            pytest.fail(f"still running 30 s after SIGINT; its threads when aborted:\n{err}")
    assert process.returncode == 130 and out == "" and err == "error: interrupted\n"


def test_closed_stdout_exits_141_quietly(reference_brain: Path) -> None:
    process = subprocess.Popen(
        [str(BRAIN_EXE), "--brain", str(reference_brain), "ls", "--all"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before the first byte, like `brain ls | true`
    assert process.wait(timeout=60) == 141
    assert process.stderr.read() == b""
