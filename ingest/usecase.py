"""The ingest use case as `brain ingest` runs it: refuse a partial brain, run the pipeline (`ingest.run`),
follow the folder (`ingest.sync`), sign the snapshot it made.

The order is the command's: the partial-brain refusal first, then the key is opened and its scopes are
checked (nothing written yet), then the run, then `--sync` (its own snapshot, under the lock again), then
one signature over the head the two left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.errors import ProblemsFoundError
from brain.head_signing import HeadSigning, SignedHead
from brain.installed import refuse_if_left_out
from brain.snapshot import TrustScope
from ingest.report import IngestProgress, IngestResult
from ingest.run import IngestOptions
from ingest.run import ingest as run_ingest

if TYPE_CHECKING:
    from brain.authn.signer import Signer

PassphraseSource = Callable[[Path], "bytes | None"]
_WHY = "ingest registers canonical sources and its validation gate checks evidence, duplicates and contradictions"


class SignedIngestResult(IngestResult):
    """The ingest result, plus the signature record over the snapshot it made (`--sign-with`)."""

    signed: SignedHead | None = None


def ingest_paths(
    brain: Brain,
    paths: Sequence[Path],
    options: IngestOptions,
    *,
    actor: str,
    sync: bool = False,
    sign_with: str | Signer | None = None,
    passphrase: PassphraseSource | None = None,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
    on_progress: Callable[[IngestProgress], None] | None = None,
    on_run: Callable[[IngestResult], None] | None = None,
) -> SignedIngestResult:
    """Ingest `paths`, then (with `sync`) drop or demote the sources whose files are gone, then sign the head.

    `sign_with` is a signer, or a key spec `signers.open_signer` opens (asking `passphrase` for a locked key);
    a dry run signs nothing. `on_run` sees the pipeline's result before the sync starts.
    """
    needed = (MemoryType.CANONICAL, MemoryType.PROVENANCE, *options.allow)
    refuse_if_left_out(brain.blobs, brain.head(), brain.snapshot(), needed, _WHY)
    signer = None if options.dry_run else open_signer(sign_with, passphrase)
    signing = HeadSigning.prepare(brain, signer, {TrustScope.INGEST, TrustScope.COMMIT}, "this ingest")
    result = run_ingest(
        brain, paths, options, actor=actor, lock_timeout=lock_timeout, on_wait=on_wait, on_progress=on_progress
    )
    if on_run is not None:
        on_run(result)
    from ingest.sync import sync_after

    result = sync_after(
        brain, paths, options.origin, result, apply=sync, dry_run=options.dry_run, actor=actor,
        lock_timeout=lock_timeout, on_wait=on_wait, include=options.include, exclude=options.exclude,
    )  # fmt: skip
    signed = signing.sign_new_head(lock_timeout=lock_timeout, on_wait=on_wait)
    return SignedIngestResult(**dict(result), signed=signed)


def open_signer(sign_with: str | Signer | None, passphrase: PassphraseSource | None = None) -> Signer | None:
    """The signer `sign_with` names: a signer as given, or a key file / agent key spec opened by `signers`."""
    if sign_with is None or not isinstance(sign_with, str):
        return sign_with
    from signers import open_signer as open_spec

    return open_spec(sign_with, passphrase or _no_passphrase)


def _no_passphrase(path: Path) -> bytes | None:
    return None


def strict_failure(result: IngestResult) -> ProblemsFoundError | None:
    """What `--strict` raises after the report: failed sources or rejected candidates (None when there are none)."""
    if not result.strict_problems:
        return None
    return ProblemsFoundError(
        f"--strict: {result.strict_problems} problem(s) (failed sources or rejected candidates); "
        "the valid part was committed"
    )


__all__ = ["SignedIngestResult", "ingest_paths", "open_signer", "strict_failure"]
