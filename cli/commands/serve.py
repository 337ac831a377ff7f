"""`brain serve --mcp | --http HOST:PORT`: the brain for agents (HTTP on 127.0.0.1:8742 by default), read-only
unless `--allow-propose` (proposals land on `proposals/<agent>` through the gate; see `serve.proposals`).

The server answers `show`, `prove`, `status` and `ls` by running those very commands in-process with
`--json` (see `serve.face`), so its JSON is the CLI's by construction.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from brain.errors import UsageError
from cli.context import CliContext, cli_context
from cli.signing import SignWithOption

if TYPE_CHECKING:
    from brain.brain import Brain
    from serve.face import BrainFace
    from serve.proposals import ProposalDesk
    from serve.proposals_context import ServingBrain
    from serve.proposals_http import WriteApp

DEFAULT_HTTP = "127.0.0.1:8742"


def serve(
    ctx: typer.Context,
    mcp: Annotated[bool, typer.Option("--mcp", help="Speak the Model Context Protocol on stdin/stdout.")] = False,
    http: Annotated[
        str | None,
        typer.Option("--http", metavar="HOST:PORT", help=f"Serve HTTP on HOST:PORT (e.g. {DEFAULT_HTTP})."),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option("--token-file", metavar="PATH", help="Require `Authorization: Bearer <token>` (HTTP)."),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option("--workers", metavar="N", min=1, max=64, help="HTTP worker processes (default: one per core, "
                     "at most 4)."),
    ] = None,
    allow_propose: Annotated[
        bool,
        typer.Option("--allow-propose", help="Accept proposals (MCP tools `propose`, `record_episode`; HTTP POST "
                     "/v1/proposals, /v1/episodes): judged by the gate, committed onto proposals/<agent>, never "
                     "onto the served branch."),
    ] = False,
    tokens: Annotated[
        Path | None,
        typer.Option("--tokens", metavar="FILE", help="TOML tokens file ([tokens.NAME] secret_sha256, scopes, "
                     "actor): every HTTP request needs one of its bearer tokens (docs/agents.md)."),
    ] = None,
    rate_limit: Annotated[
        float,
        typer.Option("--rate-limit", metavar="N", min=0, help="Proposals per second per token (burst 2N; reads "
                     "20N); 0: no limit."),
    ] = 5.0,
    agent: Annotated[
        str | None,
        typer.Option("--agent", metavar="NAME", help="MCP: the agent's name; its proposals land on "
                     "proposals/NAME (default: from the actor id)."),
    ] = None,
    sign_with: SignWithOption = None,
) -> None:
    """Serve the brain to agents (MCP over stdio, or HTTP with the review UI at /ui/; default: HTTP on
    127.0.0.1:8742); read-only unless --allow-propose."""
    if mcp and http is not None:
        raise UsageError("choose one of --mcp or --http HOST:PORT", hint=f"e.g. `brain serve --http {DEFAULT_HTTP}`")
    if not mcp and http is None:
        http = DEFAULT_HTTP
    context = cli_context(ctx)
    brain = context.open_brain()  # a clear error before anything listens
    _check_options(mcp, allow_propose, token_file, tokens, agent, sign_with)
    from ingest.lineage_graph import bring_up_to_date
    from serve.face import BrainFace

    # Before anything listens (and no thread runs yet, so a rebuild may fork its readers): block pages then
    # read the records the log names about a block, not the whole ledger (once per process, every process).
    done = bring_up_to_date(brain)  # never waits for a writer: a busy lock leaves the log as it is
    note = context.output(False).message

    def banner(text: str) -> None:  # the first line a client reads names the address; what was done follows
        note(text)
        if done is not None:
            note(f"brain serve: {done}")
    cli_json = _cli_json(brain.path, ctx.find_root().command)  # one: it redirects the process's stdout
    face = BrainFace(brain.path, cli_json)
    try:
        if mcp:
            from serve.mcp_stdio import run_stdio

            desk = _desk(context, brain, sign_with) if allow_propose else None
            if done is not None:
                note(f"brain serve: {done}")
            run_stdio(face, desk, _mcp_agent(context, agent) if desk is not None else None)
        else:
            from serve.http_api import serve_http

            assert http is not None
            app = _http_app(context, face, cli_json, tokens, allow_propose, rate_limit, sign_with)
            processes = workers if workers is not None else min(os.cpu_count() or 1, 4)
            serve_http(face, http, token_file, note=banner, workers=processes, app=app)
    finally:
        face.close()


def _check_options(
    mcp: bool, allow_propose: bool, token_file: Path | None, tokens: Path | None, agent: str | None,
    sign_with: str | None,
) -> None:
    if mcp and (token_file is not None or tokens is not None):
        raise UsageError("--token-file and --tokens apply to --http; an MCP client owns the stdio pipe it talks over")
    if not mcp and agent is not None:
        raise UsageError("--agent applies to --mcp; over HTTP the token's name is the agent")
    if allow_propose and not mcp and tokens is None:
        raise UsageError("--allow-propose over HTTP needs --tokens FILE: a proposal is recorded under its token's "
                         "actor", hint="see docs/agents.md for the tokens file")
    if sign_with is not None and not allow_propose:
        raise UsageError("--sign-with signs proposals: it needs --allow-propose")


def _desk(context: CliContext, brain: Brain, sign_with: str | None) -> ProposalDesk:
    """The proposal use case, with the server's signer for a governed brain."""
    from cli.signing import load_signer
    from serve.proposals import ProposalDesk

    signer = None if sign_with is None else load_signer(sign_with)
    return ProposalDesk.open(brain.path, signer, lock_timeout=context.lock_timeout)


def _mcp_agent(context: CliContext, agent: str | None) -> tuple[str, str]:
    """(agent name, actor id) of the MCP client: `--agent` or the actor id's last part."""
    from serve.proposals import agent_name

    actor = context.actor()
    return agent_name(agent if agent is not None else actor), actor


def _http_app(
    context: CliContext, face: BrainFace, cli_json: Callable[[Sequence[str]], Any], tokens: Path | None,
    allow_propose: bool, rate_limit: float, sign_with: str | None,
) -> WriteApp:
    from serve.proposals_http import WriteApp, rate_limiter
    from serve.tokens import TokenTable, load_tokens
    from serve.proposals_context import ServingBrain
    from serve.ui import ReviewUI

    table = None if tokens is None else TokenTable(load_tokens(tokens))
    desk = _desk(context, face.brain, sign_with) if allow_propose else None
    served = ServingBrain(face.brain_path)  # one set of compositions for the UI's pages and its block ledgers
    return WriteApp(table, desk, ReviewUI(face, cli_json, show=ServedShow(served), brain=served),
                    rate_limiter(table, rate_limit))


def _cli_json(brain_path: Path, cli: Callable[..., Any]) -> Callable[[Sequence[str]], Any]:
    """Run a read-only command of this CLI (`cli`: the root command, as the running context names it, so
    this module need not import the app that imports it) in-process with --json; its parsed output."""
    import click  # only a server needs it: not loaded with every command

    lock = threading.Lock()  # redirecting stdout is process-wide

    def run(args: Sequence[str]) -> Any:
        out = io.StringIO()
        with lock, contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            try:
                cli(["--brain", str(brain_path), "--quiet", *args, "--json"], prog_name="brain", standalone_mode=False)
            except click.ClickException as e:
                raise UsageError(e.format_message()) from None
        return json.loads(out.getvalue())

    return run


class ServedShow:
    """`brain show --json` for a long-running server's review UI: the ledger reader (the lineage log, read
    whole once) is kept per served snapshot, so a block page costs the records about that block only."""

    def __init__(self, brain: ServingBrain) -> None:
        self.brain = brain
        self._lock = threading.Lock()
        self._reader: Any = None

    def warm(self) -> None:
        """Read what a first block page of the served snapshot needs (the review UI's warm-up calls this): the
        lineage log, and the modules' member sets its ledger reader consults."""
        with self._lock:
            reader = self._current()
            if reader.lineage is not None:
                for module in reader.modules.values():
                    module.members  # noqa: B018 - built and kept by the module

    def _current(self) -> Any:
        from ingest.block_ledger import LedgerReader

        digest = self.brain.snapshot_digest()
        if self._reader is None or self._reader.snapshot != digest:
            self._reader = LedgerReader(self.brain, digest)
        return self._reader

    def __call__(self, block: str) -> Any:
        """The JSON `brain show BLOCK --json` prints (the same models build it)."""
        from cli.commands.show import ShowResult, ledger_of
        from ingest.targets import resolve_target

        with self._lock:
            reader = self._current()
            block_id = resolve_target(self.brain, reader, block)
            ledger = reader.about([block_id])
            found = self.brain.resolve(block_id)
            result = ShowResult(
                block_id=block_id, memory_type=found.memory_type, schema_version=found.schema_version,
                member_of=[t for t, module in reader.modules.items() if block_id in module],
                payload=found.payload(), ledger=ledger_of(block_id, ledger),
            )
        return result.model_dump(mode="json")
