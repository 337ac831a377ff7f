"""What a target names, for every use case that takes a block: `show`, the lifecycle commands (`drop`,
`redact`, `supersede`, `demote`) and their Python twins (`sdk.Brain.drop(...)`).

A block id or a unique prefix names that block; otherwise the text is a source's origin as recorded (e.g.
`docs/guide.md`), or a local file whose default origin is looked up, and names the source's current
canonical block. Origins are looked up through a `LedgerReader` (the lineage log when it describes the
snapshot), so naming a block by id decodes no provenance at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from brain.blocks.memory_type import MemoryType
from brain.blocks.provenance import RegistrationRecord
from brain.brain import Brain
from brain.errors import AmbiguousIdError, InvalidInputError, NotFoundError, UsageError
from brain.identity import BlockId
from brain.identity.names import bounded_name, can_be_file_name, id_digits, shown
from brain.ledger import Ledger
from brain.identity import is_digest_string

if TYPE_CHECKING:
    from ingest.block_ledger import LedgerReader

_ID_LIKE = re.compile(r"(sha256:)?[0-9a-fA-F]+")
MIN_PREFIX_LENGTH = 4


def resolve_all(brain: Brain, texts: Sequence[str | BlockId]) -> list[BlockId]:
    """Each target as a block id: a full id, an unambiguous prefix of a current member, a source's origin (its
    current canonical block), or a local file (its default origin's)."""
    from ingest.block_ledger import LedgerReader  # the lineage log and what it needs: only when a name is given

    reader = LedgerReader(brain)  # reads the lineage log only if some target is not an id
    return [t if isinstance(t, BlockId) else resolve_target(brain, reader, t) for t in texts]


def resolve_block_id(brain: Brain, text: str) -> BlockId:
    """The block `text` names: a full id as given, or the one current member its prefix matches."""
    if is_digest_string(text):
        return BlockId.parse(text)
    digits = text.removeprefix("sha256:")
    if len(digits) < MIN_PREFIX_LENGTH:
        raise UsageError(
            f"block id prefix {text!r} is too short",
            hint=f"give at least {MIN_PREFIX_LENGTH} hex digits of the id (see `brain ls`)",
        )
    return brain.resolve_prefix(text)


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
