"""The `brain` console script: runs the typer app and turns every failure into one line and one exit code.

This is the only place that catches exceptions broadly. A `BrainError` prints `error: <message>` (and
`hint: <hint>`) and exits with its family's code; a click usage error exits 3; Ctrl-C exits 130; anything
else is a bug and exits 70. Tracebacks appear only with `--debug` (or `BRAIN_DEBUG=1`); the flag is read
from argv directly because an error may happen before the root callback has parsed it.
"""

from __future__ import annotations

import gc
import os
import sys
import traceback
from collections.abc import Sequence

import typer

from brain.errors import BrainError
from cli import index_upkeep
from cli.app import app
from cli.completion import prepare_shell_completion
from cli.exit_codes import ExitCode, exit_code_for


def main(argv: Sequence[str] | None = None) -> int:
    """Run `brain` with `argv` (default: the process arguments) and return the exit status."""
    return int(_run(list(sys.argv[1:] if argv is None else argv)))


def console() -> int:
    """The console script: `main` in a process of its own, so its garbage collection can be tuned for it."""
    _tune_garbage_collection()
    # pydantic looks for plugins by scanning the entry points of every installed distribution when the first
    # model validates (~40 ms of each command); brain uses none. Setting the variable yourself overrides this.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    return main()


def _tune_garbage_collection() -> None:
    # A run builds millions of long-lived objects that form no cycles (block ids, models, member sets), and
    # the default thresholds rescan them over and over: ~40% of reading a 90,000-block ledger. As mypy does,
    # collect the young generation far less often, and exempt what the imports built from every scan.
    gc.freeze()
    gc.set_threshold(200_000, 30, 30)


def _run(args: list[str]) -> int:
    """Run the app, map its outcome to an exit code, then bring the search indexes of moved heads current."""
    from brain.store.head import on_head_moved  # here: `import cli.main` does not load the store

    on_head_moved(index_upkeep.head_moved)  # the search index is current when a command that moved the head ends
    try:
        return _run_command(args)
    finally:
        index_upkeep.finish()


def _run_command(args: list[str]) -> int:
    from cli.output import StdoutClosedError, print_error  # rich: when a command runs, not at `import cli.main`

    debug = _debug_requested(args)
    prepare_shell_completion()
    command = typer.main.get_command(app)
    try:
        returned = command.main(args=args, prog_name="brain", standalone_mode=False)
    except BrainError as e:
        if debug:
            traceback.print_exc(file=sys.stderr)
        print_error(e.message, e.hint)
        return exit_code_for(e)
    except typer.TyperException as e:  # click's usage errors (bad option, missing argument, bad value)
        return _usage_error(e)
    except StdoutClosedError:
        return ExitCode.BROKEN_PIPE
    except (KeyboardInterrupt, typer.Abort):
        print_error("interrupted")
        return ExitCode.INTERRUPTED
    except SystemExit as e:  # shell completion and --install-completion/--show-completion end with sys.exit
        return e.code if isinstance(e.code, int) else ExitCode.OK if e.code is None else ExitCode.USAGE
    except Exception as e:  # noqa: BLE001 - the one place a bug becomes exit code 70 instead of a traceback
        from brain.store.oserrors import translate_os_error

        known = translate_os_error(e) if isinstance(e, OSError) else None
        if known is not None:  # a full disk, a permission, a directory where a file belongs: not a bug
            print_error(known.message, known.hint)
            return exit_code_for(known)
        if debug:
            traceback.print_exc(file=sys.stderr)
            print_error(f"internal error: {type(e).__name__}: {e}")
        else:
            print_error(f"internal error: {type(e).__name__}: {e} (rerun with --debug)")
        return ExitCode.INTERNAL
    # Without standalone mode click returns the exit code of `typer.Exit` (e.g. 0 after --help) or
    # the command's return value, which is None for every command. Typer turns Ctrl-C inside a command
    # into a silent `Exit(130)` (no command exits 130 itself), so the message is printed here.
    if returned == ExitCode.INTERRUPTED:
        print_error("interrupted")
    return returned if isinstance(returned, int) else ExitCode.OK


def _usage_error(error: typer.TyperException) -> int:
    """Report a click usage error in one line with a pointer to the command's help."""
    from cli.output import print_error

    ctx = getattr(error, "ctx", None)
    if type(error).__name__ == "NoArgsIsHelpError":
        # `brain` (or a group) without a command: the help is the message.
        sys.stderr.write(error.format_message().rstrip("\n") + "\n")
        return ExitCode.USAGE
    hint = f"run '{ctx.command_path} --help'" if ctx is not None else "run 'brain --help'"
    print_error(error.format_message(), hint)
    return ExitCode.USAGE


def _debug_requested(args: Sequence[str]) -> bool:
    """`--debug` anywhere before `--`, or BRAIN_DEBUG set to a true value."""
    options = args[: args.index("--")] if "--" in args else args
    return "--debug" in options or os.environ.get("BRAIN_DEBUG", "").lower() in ("1", "true", "yes")
