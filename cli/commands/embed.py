"""`brain embed [--model M] [--base-url U]`: bring the travelling vector index of every module up to date.

The semantic, procedural and episodic blocks and the passages of the sources are embedded through an
OpenAI-compatible `/v1/embeddings` endpoint (`retrieval.embedder`; configured like the `openai` proposer),
only what that model has not embedded yet; one new snapshot records the indexes (`ingest.embed`), and
`pack`/`push` publish them as vector-index layers.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Result


class EmbeddedModule(Result):
    """One module's index after `brain embed`."""

    memory_type: str
    units: int
    embedded: int
    reused: int
    index_digest: str | None


class EmbedResult(Result):
    """`brain embed --json`."""

    model: str
    dimension: int | None
    snapshot: str | None
    requests: int
    modules: list[EmbeddedModule]


def embed(
    ctx: typer.Context,
    model: Annotated[str | None, typer.Option("--model", metavar="M",
                                              help="Embedding model (else $BRAIN_EMBED_MODEL).")] = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", metavar="URL",
        help="OpenAI-compatible endpoint (else $BRAIN_OPENAI_BASE_URL, $OPENAI_BASE_URL, api.openai.com).")] = None,
    timeout: Annotated[float, typer.Option("--timeout", metavar="S", min=0.1, help="Seconds per request.")] = 60.0,
    max_retries: Annotated[int, typer.Option("--max-retries", metavar="N", min=0, help="Retries per request.")] = 4,
    as_json: JsonFlag = False,
) -> None:
    """Embed what is not embedded yet and record each module's vector index."""
    from ingest.embed import embed_brain
    from retrieval.embedder import Embedder, EmbedSettings

    context = cli_context(ctx)
    settings = EmbedSettings.from_environ(os.environ, model=model, base_url=base_url, timeout=timeout,
                                          max_retries=max_retries)
    assert settings is not None
    output = context.output(as_json)
    brain = context.open_brain()
    embedder = Embedder(settings)
    try:
        report = embed_brain(brain, context.actor(), embedder, lock_timeout=context.lock_timeout,
                             on_progress=output.message)
    finally:
        embedder.close()
    result = EmbedResult(model=report.model, dimension=report.dimension, snapshot=report.snapshot,
                         requests=report.requests,
                         modules=[EmbeddedModule(memory_type=m.memory_type, units=m.units, embedded=m.embedded,
                                                 reused=m.reused, index_digest=m.index_digest) for m in report.modules])
    output.result(result, lambda r: [
        *(f"{m.memory_type:<10} {m.units} vectors ({m.embedded} new, {m.reused} reused)" for m in r.modules),
        f"snapshot {r.snapshot}" if r.snapshot else "every index was already current",
    ])
