"""The command registry: one module per command, listed here in `--help` order (see `cli/app.py`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from cli.commands import init, log, ls, prove, show, status
from cli.commands import fetch, inspect, login, pull, push
from cli.commands import pack, tags
from cli.commands import verify
from cli.commands import proposers
from cli.commands import ingest
from cli.commands import diff, drop, demote, prune, redact, supersede
from cli.commands import cat, search, serve
from cli.commands import context
from cli.commands import embed
from cli.commands import config
from cli.commands import copy, logout, tag
from cli.commands import version
from cli.commands import export
from cli.commands import doctor
from cli.commands import sign, signatures, trust
from cli.commands import branch, checkout
from cli.commands import merge, reconcile

COMMANDS: list[Callable[..., Any] | typer.Typer] = [
    init.init,
    ingest.ingest,
    drop.drop,
    supersede.supersede,
    demote.demote,
    redact.redact,
    prune.prune,
    diff.diff,
    status.status,
    verify.verify,
    sign.sign,
    signatures.signatures,
    trust.trust,
    branch.branch,
    checkout.checkout,
    merge.merge,
    reconcile.reconcile,
    log.log,
    ls.ls,
    show.show,
    search.search,
    context.context,
    embed.embed,
    cat.cat,
    serve.serve,
    prove.prove,
    pack.pack,
    tags.tags,
    tag.tag,
    tag.untag,
    push.push,
    pull.pull,
    fetch.fetch,
    inspect.inspect,
    login.login,
    logout.logout,
    copy.copy,
    export.export,
    proposers.proposers,
    config.config,
    version.version,
    doctor.doctor,
]
