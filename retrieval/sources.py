"""Reading a source: which canonical block a user means (id, prefix or origin), and its view at a locator."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from brain.blocks.base import Block
from brain.blocks.canonical import CanonicalBlock
from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.errors import AmbiguousIdError, BrainError, NotFoundError, UsageError
from brain.identity import BlockId, OciDigest, is_digest_string
from brain.identity.names import HEX_DIGITS, bounded_name, can_be_file_name, shown
from retrieval.documents import readable_text
from retrieval.index import SearchIndex
from retrieval.passages import Locator, parse_locator, text_at

MIN_PREFIX = 4
_HEX = frozenset("0123456789abcdef")
CHUNK = 1 << 20


@dataclass(frozen=True)
class SourceView:
    """A source's normalized view (all of it, or the part a locator names)."""

    block: BlockId
    origin: str | None
    media_type: str
    view_media_type: str
    locator: str | None
    text: str


def resolve_source(brain: Brain, index: SearchIndex, text: str) -> BlockId:
    """The canonical member `text` names: a block id, an origin as registered, or an id prefix."""
    if not text or not text.strip():
        raise UsageError("no source given", hint="give a canonical block id, a prefix of one, or an origin")
    bounded_name(text, "source")
    canonical = brain.module(MemoryType.CANONICAL)
    if is_digest_string(text):
        block_id = BlockId.parse(text)
        if block_id not in canonical:
            raise NotFoundError(f"{text} is not a canonical member of the current snapshot",
                                hint="`brain cat` reads sources; see `brain ls --type canonical`")
        return block_id
    index.ensure_current()
    rows = index.db.execute(
        "SELECT k.digest, b.accessible FROM blocks b JOIN keys k ON k.id = b.id "
        "WHERE b.origin=? AND b.memory_type='canonical' ORDER BY b.accessible DESC, k.digest",
        (text,),
    ).fetchall()
    if rows:
        accessible = [r for r in rows if r[1]]
        chosen = accessible or rows
        if len(accessible) > 1:
            ids = ", ".join(BlockId(bytes(r[0]).hex()).short for r in accessible[:5])
            raise AmbiguousIdError(f"origin {shown(text)} names {len(accessible)} current sources ({ids})",
                                   hint="give the block id instead")
        return BlockId(bytes(chosen[0][0]).hex())
    digits = text.removeprefix("sha256:").lower()
    if len(digits) >= MIN_PREFIX and set(digits) <= _HEX:
        block_id = brain.resolve_prefix(text)
        if block_id not in canonical:
            raise NotFoundError(f"{block_id} is a {_type_of(brain, block_id)} block, not a source",
                                hint="`brain cat` reads canonical sources; `brain show` shows any block")
        return block_id
    if len(digits) > HEX_DIGITS and set(digits) <= _HEX or not can_be_file_name(text):
        raise UsageError(f"{shown(text)} is neither a block id nor a source origin",
                         hint="give a canonical block id, a prefix of at least 4 hex digits, or an origin")
    raise NotFoundError(f"no source has origin {shown(text)} and it is not a block id",
                        hint="see `brain ls --type canonical` for origins and ids")


def _type_of(brain: Brain, block_id: BlockId) -> str:
    try:
        return str(brain.resolve(block_id).memory_type)
    except BrainError:
        return "non-canonical"


def source_block(brain: Brain, block_id: BlockId) -> CanonicalBlock:
    """The canonical block, re-hashed and decoded."""
    block = brain.resolve(block_id)
    if not isinstance(block, CanonicalBlock):
        raise NotFoundError(f"{block_id} is a {block.memory_type} block, not a source")
    return block


def origin_of(index: SearchIndex, block_id: BlockId) -> str | None:
    """The origin the registration recorded (from the index)."""
    key = index.key(block_id.hex)
    row = None if key is None else index.db.execute("SELECT origin FROM blocks WHERE id=?", (key,)).fetchone()
    return None if row is None else row[0]


def read_view(brain: Brain, index: SearchIndex, block_id: BlockId, locator: str | None = None) -> SourceView:
    """The view of a source (re-hashed), or the part `locator` names; refuses a source without a view."""
    where: Locator | None = parse_locator(locator) if locator is not None else None
    block = source_block(brain, block_id)
    digest = readable_text(block.payload())
    if digest is None:
        raise NotFoundError(f"source {block_id.short} ({block.media_type}) has no normalized view",
                            hint="read its bytes with `brain cat --original`")
    text = brain.blobs.get(OciDigest.parse(digest)).decode("utf-8", errors="replace")
    view_media_type = block.normalized_view.media_type if block.normalized_view else block.media_type
    if where is not None:
        text = text_at(text, block.media_type, where)
        if not text:
            raise NotFoundError(f"locator {locator!r} is outside the view of {block_id.short}")
    return SourceView(block_id, origin_of(index, block_id), block.media_type, view_media_type,
                      None if where is None else str(where), text)


def original_bytes(brain: Brain, block_id: BlockId) -> Iterator[bytes]:
    """The source's original bytes in chunks; the hash is checked when the end is reached."""
    block: Block = source_block(brain, block_id)
    assert isinstance(block, CanonicalBlock)
    with brain.blobs.open(block.blob) as reader:
        while chunk := reader.read(CHUNK):
            yield chunk
