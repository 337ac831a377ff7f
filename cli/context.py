"""The global options every command sees, carried on `typer.Context.obj`, and where each value came from.

Actor default, in order: `--actor`, `$BRAIN_ACTOR`, then `sdk.actor.resolve_actor`'s (git user.email,
`$USER@localhost.localdomain`). The default is only resolved and validated by commands that write, so
reading a brain never shells out to git.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from brain.errors import NotABrainError

if TYPE_CHECKING:  # loaded where used: `import cli.main` pays for neither the core nor rich
    from brain.brain import Brain
    from cli.config import BoundConfig
    from cli.output import Output

DEFAULT_BRAIN_DIR = Path("brain")
DEFAULT_LOCK_TIMEOUT = 10.0


class ColorMode(str, Enum):
    """`--color`: `auto` colours a terminal unless `NO_COLOR` is set; `always` and `never` decide alone."""

    NEVER = "never"
    AUTO = "auto"
    ALWAYS = "always"


class OutputFormat(str, Enum):
    """`--output`: `table` for people, `json` (what `--json` prints), `markdown` (tables as Markdown)."""

    TABLE = "table"
    JSON = "json"
    MARKDOWN = "markdown"


# Global option name (the root callback's parameter) -> the CliContext field it sets.
_FIELDS = {"brain": "brain_path", "actor": "actor_option", "config": "config_path", "output": "output_format"}


@dataclass
class CliContext:
    """Global options of one invocation; commands ask it for the brain and the acting identity."""

    brain_path: Path = DEFAULT_BRAIN_DIR
    actor_option: str | None = None
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    debug: bool = False
    quiet: bool = False
    color: ColorMode = ColorMode.AUTO
    output_format: OutputFormat = OutputFormat.TABLE
    config_path: Path | None = None
    config_file: BoundConfig | None = None
    # Global option name -> where its value came from (`flag --brain`, `environment $BRAIN_DIR`, ...).
    sources: dict[str, str] = field(default_factory=dict)
    _actor: str | None = field(default=None, init=False, repr=False)

    def set_global(self, name: str, value: Any, source: str) -> None:
        """Set global option `name` (as the root callback names it) and remember where the value came from."""
        if name == "brain" and value is not None:
            value = Path(value)
        elif name == "color" and value is not None:
            value = ColorMode(value)
        elif name == "output" and value is not None:
            value = OutputFormat(value)
        setattr(self, _FIELDS.get(name, name), value)
        self.sources[name] = source
        if name == "actor":
            self._actor = None
        if name == "color":
            from cli.output import set_color_mode

            set_color_mode(self.effective_color())

    def effective_color(self) -> str:
        """`always`, `never`, or `auto`: NO_COLOR (non-empty) turns `auto` into `never`."""
        if self.color is ColorMode.AUTO and os.environ.get("NO_COLOR"):
            return ColorMode.NEVER.value
        return self.color.value

    def open_brain(self, *, unfinished_redaction: bool = False) -> Brain:
        """Open the brain at `--brain` (raises `NotABrainError` when there is none).

        An interrupted redaction may have left redacted bytes on disk: every command but those passing
        `unfinished_redaction=True` (`redact`, `verify`) refuses until `brain redact --resume` finishes it.
        """
        path = self.brain_path
        if path.exists() and not path.is_dir():
            raise NotABrainError(f"{path} is a file, not a brain directory", hint="point --brain at a brain directory")
        from brain.brain import Brain

        try:
            brain = Brain.open(path)
        except NotABrainError as e:
            if path != DEFAULT_BRAIN_DIR or self.sources.get("brain", "default") != "default":
                raise
            # Without --brain or BRAIN_DIR the user may not know which directory was tried.
            raise NotABrainError(
                f"./{path} is not a brain (the default: no --brain option and BRAIN_DIR is not set)",
                hint="pass --brain PATH or set BRAIN_DIR, or create ./brain with `brain init`",
            ) from e
        if not unfinished_redaction:
            from brain.store.redaction import refuse_if_unfinished

            refuse_if_unfinished(brain.path, "this command")
        return brain

    def wait_note(self) -> Callable[[str], None]:
        """What a library use case waiting for the writer lock calls to say who it waits for (stderr, unless
        --quiet); commands hand it this with `lock_timeout`."""
        from cli.output import Output

        return Output(quiet=self.quiet).message

    def output(self, as_json: bool) -> Output:
        """The renderer for this command's results (`--json` or `--output json|markdown`)."""
        from cli.output import Output

        return Output(
            as_json=as_json or self.output_format is OutputFormat.JSON,
            quiet=self.quiet,
            markdown=self.output_format is OutputFormat.MARKDOWN and not as_json,
        )

    def actor(self) -> str:
        """The validated acting identity; only commands that write call this."""
        if self._actor is None:
            from sdk.actor import resolve_actor

            self._actor = resolve_actor(self.actor_option)
        return self._actor


def cli_context(ctx: typer.Context) -> CliContext:
    """The `CliContext` the root callback stored (a default one when a command runs standalone)."""
    root = ctx.find_root()
    if not isinstance(root.obj, CliContext):
        root.obj = CliContext()
    return root.obj
