"""Incrementally updated Merkle levels equal the tree built from scratch (`brain.merkle.levels`)."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

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
    assert (root.hex() if root is not None else None) == (
        merkle_root_of_sorted_hex(new_hexes).hex if new_hexes else None
    )


def test_a_chain_of_small_additions_keeps_the_root_of_a_fresh_build() -> None:
    hexes = sorted(_hex(n) for n in range(5000))
    levels = levels_of_sorted_hex(hexes)
    for step in range(12):
        added = [_hex(10_000 + 31 * step + k) for k in range(1 + step % 5)]
        new = sorted(hexes + added)
        levels = updated_levels(levels, hexes, new, added, [])
        hexes = new
        assert top(levels) == bytes.fromhex(merkle_root_of_sorted_hex(hexes).hex)
