"""What an `ID|ORIGIN` argument names, for every command that takes a block: `show` and the lifecycle
commands (`drop`, `redact`, `supersede`, `demote`).

A block id or a unique prefix names that block; otherwise the text is a source's origin as recorded (e.g.
`docs/guide.md`), or a local file whose default origin is looked up, and names the source's current
canonical block. Origins are looked up through a `LedgerReader` (the lineage log when it describes the
snapshot), so naming a block by id decodes no provenance at all.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from brain.blocks.memory_type import MemoryType
from brain.blocks.provenance import RegistrationRecord
from brain.brain import Brain
from brain.errors import AmbiguousIdError, InvalidInputError, NotFoundError, UsageError
from brain.identity import BlockId
from brain.identity.names import bounded_name, can_be_file_name, id_digits, shown
from brain.ledger import Ledger
from cli.options import resolve_block_id

if TYPE_CHECKING:
    from ingest.block_ledger import LedgerReader

_ID_LIKE = re.compile(r"(sha256:)?[0-9a-fA-F]+")


def resolve_target(brain: Brain, reader: LedgerReader, text: str) -> BlockId:
    """The block `text` names: an id or unique prefix, else the current canonical block of an origin.

    Bounded before any lookup: at most `MAX_NAME` characters, and hex beyond 64 digits is no id at all.
    """
    bounded_name(text, "block id or origin")
    if _ID_LIKE.fullmatch(text):
        id_digits(text)
        try:
            return resolve_block_id(brain, text)
        except (NotFoundError, UsageError, InvalidInputError):
            if not _registered_under(reader.about_origin(text), text) and not _is_file(text):
                raise
    return source_of(reader, text)


def _is_file(text: str) -> bool:
    """Whether `text` names a regular file here; a name no file can have is not asked of the OS."""
    if not can_be_file_name(text):
        return False
    try:
        return Path(text).is_file()
    except OSError:
        return False


def _registered_under(ledger: Ledger, origin: str) -> list[RegistrationRecord]:
    return [r for _, r in ledger.records if isinstance(r, RegistrationRecord) and r.origin == origin]


def source_of(reader: LedgerReader, origin: str) -> BlockId:
    """The canonical member registered under `origin` that is current (else its latest registration)."""
    from ingest.sources.origins import default_origin  # only when a name is not an id

    # A file here means that file (from `docs/`, `README.md` is `docs/README.md`); else the origin as recorded.
    for name in ([default_origin(Path(origin))] if _is_file(origin) else []) + [origin]:
        ledger = reader.about_origin(name)
        records = _registered_under(ledger, name)
        if records:
            break
    canonical = reader.modules.get(MemoryType.CANONICAL)
    members = [r for r in records if canonical is not None and r.block in canonical]
    if not members and not can_be_file_name(origin):
        raise UsageError(f"{shown(origin)} is neither a block id nor a source origin, and no file can have that name",
                         hint="give a block id, a prefix of at least 4 hex digits, or an origin (see `brain ls`)")
    if not members:
        raise NotFoundError(
            f"no block id or source origin {shown(origin)} in the current snapshot",
            hint="see `brain ls --type canonical` for the origins, or give a block id",
        )
    current = sorted({r.block for r in members if ledger.is_accessible(r.block)})
    if len(current) > 1:
        raise AmbiguousIdError(
            f"origin {shown(origin)} names {len(current)} current sources: {', '.join(b.short for b in current)}",
            hint="give the block id instead",
        )
    return current[0] if current else max(members, key=lambda r: r.at).block
