"""Incrementally updated Merkle levels, and compositions edited from a base, equal the ones built from scratch
(`brain.merkle.levels`, `Composition.of_sorted`)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.blocks.memory_type import MemoryType
from brain.composition import Composition
from brain.identity import BlockId
from brain.merkle import merkle_root_of_sorted_hex
from brain.merkle.levels import levels_of_sorted_hex, top, updated_levels


def _hex(n: int) -> str:
    return hashlib.sha256(n.to_bytes(4, "big")).hexdigest()


@settings(max_examples=300, deadline=None)
@given(
    old=st.sets(st.integers(0, 400), max_size=130),
    added=st.sets(st.integers(401, 800), max_size=40),
    drop=st.sets(st.integers(0, 400), max_size=40),
)
def test_updated_levels_equal_a_fresh_build(old: set[int], added: set[int], drop: set[int]) -> None:
    old_hexes = sorted(_hex(n) for n in old)
    removed = sorted(_hex(n) for n in old & drop)
    new_hexes = sorted(set(old_hexes) - set(removed) | {_hex(n) for n in added})
    levels = updated_levels(levels_of_sorted_hex(old_hexes), old_hexes, new_hexes, [_hex(n) for n in added], removed)
    assert levels == levels_of_sorted_hex(new_hexes)
    root = top(levels)
    expected = merkle_root_of_sorted_hex(new_hexes).hex if new_hexes else None
    assert (root.hex() if root is not None else None) == expected


def test_a_chain_of_small_additions_keeps_the_root_of_a_fresh_build() -> None:
    hexes = sorted(_hex(n) for n in range(5000))
    levels = levels_of_sorted_hex(hexes)
    for step in range(12):
        added = [_hex(10_000 + 31 * step + k) for k in range(1 + step % 5)]
        new = sorted(hexes + added)
        levels = updated_levels(levels, hexes, new, added, [])
        hexes = new
        assert top(levels) == bytes.fromhex(merkle_root_of_sorted_hex(hexes).hex)


def _ids(hexes: list[str]) -> list[BlockId]:
    return [BlockId.parse(f"sha256:{h}") for h in hexes]


@settings(max_examples=100, deadline=None)
@given(
    old=st.sets(st.integers(0, 300), min_size=1, max_size=120),
    added=st.sets(st.integers(301, 600), max_size=20),
    drop=st.sets(st.integers(0, 300), max_size=20),
)
def test_a_composition_edited_from_its_base_is_the_one_built_from_scratch(
    old: set[int], added: set[int], drop: set[int]
) -> None:
    base = Composition.of(MemoryType.SEMANTIC, _ids([_hex(n) for n in old]))
    base.keep_tree()
    removed = _ids(sorted(_hex(n) for n in old & drop))
    new_ids = sorted((set(base.block_ids) - set(removed)) | set(_ids([_hex(n) for n in added])), key=lambda b: b.hex)
    edited = Composition.of_sorted(MemoryType.SEMANTIC, new_ids, base, _ids([_hex(n) for n in added]), removed)
    fresh = Composition.of(MemoryType.SEMANTIC, new_ids)
    assert edited.to_bytes() == fresh.to_bytes() and edited.root == fresh.root and edited.block_ids == fresh.block_ids


def test_edits_that_do_not_fit_the_base_fall_back_to_the_full_check() -> None:
    hexes = sorted(_hex(n) for n in range(50))
    base = Composition.of(MemoryType.SEMANTIC, _ids(hexes))
    base.keep_tree()
    present = _ids([hexes[3]])  # "added" although the base holds it: the edit does not fit
    unsorted = _ids(hexes[:3] + [hexes[4], hexes[3]] + hexes[5:])
    with pytest.raises(ValueError, match="strictly ascending"):
        Composition.of_sorted(MemoryType.SEMANTIC, unsorted, base, present, [])
    # The length fits, the ids do not: the given ids are checked and used, never the edited copy.
    other = sorted(hexes[:-1] + [_hex(999)])
    built = Composition.of_sorted(MemoryType.SEMANTIC, _ids(other), base, _ids([_hex(777)]), _ids([hexes[-1]]))
    assert built.to_bytes() == Composition.of(MemoryType.SEMANTIC, _ids(other)).to_bytes()
