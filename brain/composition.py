"""Composition documents (§5.1) and module references (§5.2): one module version's leaf list and its pointer.

Compositions can hold 10^5+ ids, so decoding validates ids with one regex pass and builds the canonical
bytes by hand (the layout is fixed and every id is ASCII); golden tests pin them to the JCS serializer.
"""

from __future__ import annotations

import bisect
import gc
import operator
import re
from collections.abc import Iterable, Iterator
from typing import Any, Final, Literal, Self

from pydantic import PrivateAttr, model_validator

from brain.blocks.document import JcsDocument, check_boltzmann, read_json_object
from brain.blocks.fields import BlockIds, Size, Text, WireModel
from brain.blocks.memory_type import MemoryType
from brain.errors import IntegrityError
from brain.identity import BlockId, MerkleRoot, OciDigest
from brain.merkle import inclusion_proof_of_sorted_hex, merkle_root_of_sorted_hex
from brain.merkle.levels import Levels, levels_of_sorted_hex, top, updated_levels
from brain.merkle.proof import InclusionProof
from brain.merkle.tree import EMPTY_ROOT

LAYOUT: Final = "rfc6962-sorted/1"
_COMPOSITION_KEYS = frozenset({"block_ids", "boltzmann", "layout", "memory_type"})
_ID_RUN = re.compile(r"(?:sha256:[0-9a-f]{64})*")
_MEMORY_TYPES = {m.value: m for m in MemoryType}


class DocumentDecodeError(IntegrityError):
    """A stored composition, snapshot or projection document fails a protocol check."""


class CompositionDecodeError(DocumentDecodeError):
    """Stored composition bytes are not a valid, canonical composition document (§5.1)."""


class Composition(JcsDocument):
    """The members of one module version: block ids strictly ascending, no duplicates (may be empty)."""

    memory_type: MemoryType
    block_ids: BlockIds

    _root: MerkleRoot | None = PrivateAttr(default=None)
    _hexes: list[str] | None = PrivateAttr(default=None)
    _tree: Levels | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _strictly_ascending(self) -> Self:
        hexes = [b.hex for b in self.block_ids]
        if not all(map(operator.lt, hexes, hexes[1:])):
            raise ValueError("block_ids must be strictly ascending with no duplicates (use Composition.of)")
        return self

    @classmethod
    def of(cls, memory_type: MemoryType | str, block_ids: Iterable[BlockId]) -> Composition:
        """The composition of a set of block ids in any order (sorted, duplicates collapsed)."""
        by_hex = {b.hex: b for b in (b if type(b) is BlockId else BlockId.parse(b) for b in block_ids)}
        hexes = sorted(by_hex)
        return cls._trusted(MemoryType.parse(str(memory_type)), hexes, tuple(map(by_hex.__getitem__, hexes)))

    @classmethod
    def of_sorted(
        cls, memory_type: MemoryType | str, block_ids: list[BlockId], base: Composition | None = None,
        added: Iterable[BlockId] = (), removed: Iterable[BlockId] = (),
    ) -> Composition:
        """The composition of block ids already strictly ascending (the writer's sorted membership; checked).

        When they are `base`'s members plus `added` less `removed` and `base` keeps its tree (`keep_tree`),
        the new tree (and root) is computed from it, re-hashing only what the edits changed, and kept; the member
        hex list is then `base`'s edited in place (checked where the edits are) rather than rebuilt and
        re-checked whole."""
        added_hex, removed_hex = [b.hex for b in added], [b.hex for b in removed]
        edited = None if base is None or base._tree is None else _edited(base._hex_list(), added_hex, removed_hex)
        if edited is not None and len(edited) == len(block_ids) and \
                all(block_ids[bisect.bisect_left(edited, h)].hex == h for h in added_hex):
            hexes = edited
        else:
            hexes = [b.hex for b in block_ids]
            if not all(map(operator.lt, hexes, hexes[1:])):
                raise ValueError("composition members must be strictly ascending (use Composition.of)")
        composition = cls._trusted(MemoryType.parse(str(memory_type)), hexes, tuple(block_ids))
        if base is not None and base._tree is not None:
            tree = updated_levels(base._tree, base._hex_list(), hexes, added_hex, removed_hex)
            composition._tree = tree
            root = top(tree)
            composition._root = EMPTY_ROOT if root is None else MerkleRoot.from_raw(root)
        return composition

    def keep_tree(self) -> None:
        """Compute and keep every level of the Merkle tree (a long-lived writer's modules; see `of_sorted`)."""
        if self._tree is None:
            tree = levels_of_sorted_hex(self._hex_list())
            root = top(tree)
            computed = EMPTY_ROOT if root is None else MerkleRoot.from_raw(root)
            if self._root is not None and self._root != computed:
                raise IntegrityError(f"composition root {self._root} differs from its recomputed tree's")
            self._tree, self._root = tree, computed

    def stored_as(self, digest: OciDigest) -> None:
        """Keep `digest`, what `BlobStore.put(self.to_bytes())` returned (it hashed these very bytes), as this
        document's digest instead of hashing them again."""
        self._digest = digest

    def drop_bytes(self) -> None:
        """Let the document bytes go once stored (their digest stays known); `to_bytes` rebuilds them."""
        if self._bytes is not None:
            _ = self.digest
            self._bytes = None

    @property
    def keeps_tree(self) -> bool:
        """Whether `keep_tree` (or `of_sorted` from a base that kept one) gave this composition its levels."""
        return self._tree is not None

    @classmethod
    def of_hexes(cls, memory_type: MemoryType | str, hexes: list[str]) -> Composition:
        """The composition of members given as sorted, distinct, well-formed hex digests (checked here cheaply:
        order and form; no block-id objects are built until they are asked for)."""
        if not all(map(operator.lt, hexes, hexes[1:])) or not _is_lower_hex("".join(hexes)) or \
                any(len(h) != 64 for h in hexes):
            raise ValueError("composition members must be sorted, distinct 64-digit lowercase hex digests")
        return cls._trusted(MemoryType.parse(str(memory_type)), list(hexes))

    @classmethod
    def _trusted(cls, memory_type: MemoryType, hexes: list[str], ids: tuple[BlockId, ...] | None = None) -> Composition:
        # Ids already checked (sorted, distinct, well-formed): skip per-id pydantic and regex validation.
        if ids is None:
            # Bulk allocation of 10^5 small objects triggers repeated full GC passes that find nothing to free.
            was_enabled = gc.isenabled()
            gc.disable()
            try:
                ids = tuple(map(_unchecked_block_id, hexes))
            finally:
                if was_enabled:
                    gc.enable()
        composition = cls.model_construct(memory_type=memory_type, block_ids=ids)
        composition._hexes = hexes
        return composition

    def _hex_list(self) -> list[str]:
        if self._hexes is None:
            self._hexes = [b.hex for b in self.block_ids]
        return self._hexes

    def to_bytes(self) -> bytes:
        """The canonical (JCS) document bytes, no trailing newline."""
        if self._bytes is None:
            self._bytes = b"".join(self.chunks())
        return self._bytes

    def chunks(self, members: int = 4096) -> Iterator[bytes]:
        """`to_bytes()` in pieces of about `members` members each (`BlobStore.put_stream` stores a 10^6-member
        document without holding its ~74 MB, or the two copies building it in one piece takes)."""
        if self._bytes is not None:
            yield self._bytes
            return
        hexes = self._hex_list()
        yield b'{"block_ids":['
        for at in range(0, len(hexes), members):
            run = '"sha256:' + '","sha256:'.join(hexes[at : at + members]) + '"'
            yield (run if at == 0 else "," + run).encode("ascii")
        yield f'],"boltzmann":1,"layout":"{LAYOUT}","memory_type":"{self.memory_type.value}"}}'.encode("ascii")

    @property
    def root(self) -> MerkleRoot:
        """The `rfc6962-sorted/1` Merkle root over the members."""
        if self._root is None:
            self._root = merkle_root_of_sorted_hex(self._hex_list())
        return self._root

    def __len__(self) -> int:
        return len(self.block_ids)

    def prove(self, block_id: BlockId) -> InclusionProof:
        """An inclusion proof for a member; raises `NotFoundError` if it is not one."""
        return inclusion_proof_of_sorted_hex(self._hex_list(), BlockId.parse(block_id))

    def module_ref(self, **optional: Any) -> ModuleRef:
        """A module reference pointing at this composition (`optional`: embedding_model, index_digest, tombstones)."""
        return ModuleRef(
            memory_type=self.memory_type,
            root=self.root,
            composition=self.digest,
            block_count=len(self.block_ids),
            **optional,
        )

    @classmethod
    def decode(cls, data: bytes, expected: OciDigest | None = None) -> Composition:
        """Read stored composition bytes, refusing everything §5.1 refuses; raises `CompositionDecodeError`."""
        data = bytes(data)
        actual, memory_type, hexes = _checked(data, expected)
        composition = cls._trusted(memory_type, hexes)
        composition._adopt(data, actual)
        return composition

    @staticmethod
    def member_hexes(data: bytes, expected: OciDigest | None = None) -> tuple[MemoryType, list[str]]:
        """The memory type and member hex digests of stored composition bytes, with every check `decode`
        makes but no block-id objects and no Merkle root (a reconciliation diffs 10^5-member lists)."""
        _, memory_type, hexes = _checked(bytes(data), expected)
        return memory_type, hexes


def _checked(data: bytes, expected: OciDigest | None) -> tuple[OciDigest, MemoryType, list[str]]:
    """§5.1's refusals over stored bytes: the digest, memory type and member hexes."""
    actual, document = read_json_object(data, expected, OciDigest, "composition", CompositionDecodeError)
    if document.keys() != _COMPOSITION_KEYS:
        missing, extra = sorted(_COMPOSITION_KEYS - document.keys()), sorted(document.keys() - _COMPOSITION_KEYS)
        raise CompositionDecodeError(
            f"composition keys must be exactly {sorted(_COMPOSITION_KEYS)} "
            f"(missing: {missing}; unexpected: {extra})"
        )
    check_boltzmann(document, "composition", CompositionDecodeError)
    memory_type = _MEMORY_TYPES.get(document["memory_type"]) if isinstance(document["memory_type"], str) else None
    if memory_type is None:
        raise CompositionDecodeError(f"composition has unknown memory_type {document['memory_type']!r}")
    if document["layout"] != LAYOUT:
        raise CompositionDecodeError(f"composition layout must be {LAYOUT!r}, got {document['layout']!r}")
    ids = document["block_ids"]
    well_formed = isinstance(ids, list) and all(type(i) is str and len(i) == 71 for i in ids)
    hexes = [i[7:] for i in ids] if well_formed else []
    # With every hex part lowercase hex (no ':'), "sha256:" can occur only as a prefix: counting it checks all.
    if not well_formed or not _is_lower_hex("".join(hexes)) or "".join(ids).count("sha256:") != len(ids):
        raise CompositionDecodeError(f"composition block_ids must be a list of block ids ({_first_malformed(ids)})")
    if not all(map(operator.lt, hexes, hexes[1:])):
        raise CompositionDecodeError("composition block_ids are not strictly ascending (unsorted or duplicated)")
    joined = ",".join(f'"sha256:{h}"' for h in hexes)
    canonical = f'{{"block_ids":[{joined}],"boltzmann":1,"layout":"{LAYOUT}","memory_type":"{memory_type.value}"}}'
    if canonical.encode("ascii") != data:
        raise CompositionDecodeError("composition is not in canonical jcs/1 form (re-serialization differs)")
    return actual, memory_type, hexes


def _edited(hexes: list[str], added: list[str], removed: list[str]) -> list[str] | None:
    """A copy of the sorted, distinct `hexes` less `removed` and with `added`, or None when an edit does not fit
    (a removed id that is not there, an added one that is, or one that is not 64 lowercase hex digits): the
    neighbours of every insertion are compared, so the copy is strictly ascending wherever `hexes` was."""
    result = list(hexes)
    for h in removed:
        at = bisect.bisect_left(result, h)
        if at == len(result) or result[at] != h:
            return None
        del result[at]
    for h in added:
        at = bisect.bisect_left(result, h)
        if (at < len(result) and result[at] == h) or len(h) != 64 or not _is_lower_hex(h):
            return None
        result.insert(at, h)
    return result


def _is_lower_hex(text: str) -> bool:
    """Only the characters 0-9a-f (as `[0-9a-f]*`, at C speed: `fromhex` also takes whitespace and upper
    case, which the round trip through `hex()` does not give back)."""
    even = text if len(text) % 2 == 0 else text + "0"
    try:
        return bytes.fromhex(even).hex() == even
    except ValueError:
        return False


def _unchecked_block_id(hex_digest: str) -> BlockId:
    """A BlockId for hex the caller has already validated (a composition's one regex pass)."""
    block_id = object.__new__(BlockId)
    object.__setattr__(block_id, "hex", hex_digest)  # BlockId.__setattr__ refuses; the value is immutable after this
    return block_id


def _first_malformed(ids: Any) -> str:
    if not isinstance(ids, list):
        return f"got {type(ids).__name__}"
    bad = next((i for i in ids if not (type(i) is str and _ID_RUN.fullmatch(i) and len(i) == 71)), None)
    return f"malformed id {bad!r}"


class ModuleRef(WireModel):
    """One entry of a snapshot's `modules`: which composition (and root) a module is at (§5.2)."""

    memory_type: MemoryType
    root: MerkleRoot
    composition: OciDigest
    block_count: Size
    layout: Literal["rfc6962-sorted/1"] = LAYOUT
    embedding_model: Text | None = None
    index_digest: OciDigest | None = None
    tombstones: BlockIds | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.index_digest is not None and self.embedding_model is None:
            raise ValueError("index_digest requires embedding_model")
        if self.tombstones is not None:
            hexes = [b.hex for b in self.tombstones]
            if not all(map(operator.lt, hexes, hexes[1:])):
                raise ValueError("tombstones must be strictly ascending with no duplicates")
        return self


_RECORD = 74  # '"sha256:' + 64 hex digits + '",': one member in the document, the comma included
_SMALL = 16  # ranges this short are compared member by member


def member_changes_of_documents(
    memory_type: MemoryType, old: bytes, new: bytes, counts: tuple[int, int] | None = None
) -> tuple[list[str], list[str]]:
    """(added, removed) member hex digests, ascending, from composition document `old` to `new` of `memory_type`
    (`counts`: the member counts their module references state, checked).

    For two stored documents (each already hash-checked against its name) that share most of their members,
    the cost follows the change, not the module: members are fixed-width records in ascending order, so equal
    runs are recognised by comparing their bytes at C speed, and only ranges that differ are split further
    (at a member of `old`, found in `new` by binary search). Raises `CompositionDecodeError` for bytes that
    are not laid out as a canonical composition of one memory type (`decode` says exactly what is wrong).
    """
    a, b = _members_region(old), _members_region(new)
    suffix = f'],"boltzmann":1,"layout":"{LAYOUT}","memory_type":"{memory_type.value}"}}'.encode()
    if _suffix(old) != suffix or _suffix(new) != suffix:
        raise CompositionDecodeError(f"not both canonical {memory_type} compositions")
    if counts is not None and (len(a) // _RECORD, len(b) // _RECORD) != counts:
        raise CompositionDecodeError(f"the compositions hold {len(a) // _RECORD} and {len(b) // _RECORD} members, "
                                     f"their module references say {counts[0]} and {counts[1]}")
    added: list[str] = []
    removed: list[str] = []
    stack = [(0, len(a) // _RECORD, 0, len(b) // _RECORD)]
    while stack:
        a0, a1, b0, b1 = stack.pop()
        if a1 - a0 == b1 - b0 and a[a0 * _RECORD:a1 * _RECORD] == b[b0 * _RECORD:b1 * _RECORD]:
            continue
        if a1 - a0 + b1 - b0 <= _SMALL:
            left, right = _hexes_of(a, a0, a1), _hexes_of(b, b0, b1)
            held, kept = set(left), set(right)
            added += [h for h in right if h not in held]
            removed += [h for h in left if h not in kept]
            continue
        if a1 == a0:
            added += _hexes_of(b, b0, b1)
            continue
        mid = (a0 + a1) // 2
        key = a[mid * _RECORD:(mid + 1) * _RECORD]
        at = bisect.bisect_left(range(b0, b1), key, key=lambda i: b[i * _RECORD:(i + 1) * _RECORD]) + b0
        found = at < b1 and b[at * _RECORD:(at + 1) * _RECORD] == key
        if not found:
            removed += _hexes_of(a, mid, mid + 1)
        stack.append((mid + 1, a1, at + 1 if found else at, b1))
        stack.append((a0, mid, b0, at))
    return sorted(added), sorted(removed)


def _suffix(data: bytes) -> bytes:
    return data[data.rfind(b"]"):]


def _members_region(data: bytes) -> bytes:
    """The member records of a composition document, each with its comma (the last one's appended)."""
    prefix = b'{"block_ids":['
    end = data.rfind(b"]")
    if not data.startswith(prefix) or end < len(prefix):
        raise CompositionDecodeError("not a composition document (no block_ids list first)")
    body = data[len(prefix):end]
    region = body + b"," if body else b""
    if len(region) % _RECORD or (region and not (region[:8] == b'"sha256:' and region[-2:] == b'",')):
        raise CompositionDecodeError("composition block_ids are not a list of block ids")
    return region


def _hexes_of(region: bytes, first: int, stop: int) -> list[str]:
    hexes = [region[i * _RECORD + 8:i * _RECORD + 72].decode("ascii", "replace") for i in range(first, stop)]
    for h in hexes:
        if len(h) != 64 or not _is_lower_hex(h):
            raise CompositionDecodeError(f"composition block_ids hold a malformed id {h[:70]!r}")
    return hexes
