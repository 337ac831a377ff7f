"""Branch names, their tags (§10.1) and the refs.json document (§10.2), byte for byte."""

from __future__ import annotations

import pytest

from brain.branches.names import branch_tag, decode_tag, validate_branch_name
from brain.branches.refs import BranchEntry, Refs, implicit_refs, read_refs, write_refs
from brain.errors import BrainUnreadableError, InvalidInputError
from brain.identity import OciDigest
from brain.store.head import Head, Origin, retained_with

A = OciDigest.of(b"a")
B = OciDigest.of(b"b")


@pytest.mark.parametrize("name", ["main", "feature/x", "Main", "a", "x_y-z/0", "latest", "a" * 125])
def test_valid_names(name: str) -> None:
    assert validate_branch_name(name) == name


@pytest.mark.parametrize(
    "name", ["", "a.b", "/a", "a/", "a//b", "_x", "-x", "a b", "é", "a/_b", "a" * 126, "main\n"]
)
def test_invalid_names(name: str) -> None:
    with pytest.raises(InvalidInputError, match="branch name"):
        validate_branch_name(name)


def test_tags() -> None:
    assert branch_tag("main", "v1") == "v1"
    assert branch_tag("main") == "latest"
    assert branch_tag("feature/x") == "br.feature.x"
    assert len(branch_tag("a" * 125)) == 128


@pytest.mark.parametrize(
    ("tag", "main_tag", "name"),
    [
        ("latest", "latest", "main"),
        ("br.feature.x", "latest", "feature/x"),
        ("br.Main", "latest", "Main"),
        ("br.latest", "latest", "latest"),
        ("br.main", "latest", None),
        ("br.", "latest", None),
        ("br.a..b", "latest", None),
        ("br.x.", "latest", None),
        ("br._x", "latest", None),
        ("v1", "latest", None),
        ("2026-11", "latest", None),
        ("v1", "v1", "main"),
        ("latest", "v1", None),
        ("br." + "a" * 125, "latest", "a" * 125),
        ("br." + "a" * 126, "latest", None),
    ],
)
def test_decode(tag: str, main_tag: str, name: str | None) -> None:
    assert decode_tag(tag, main_tag) == name


def test_refs_bytes_are_the_observed_shape(tmp_path) -> None:
    refs = Refs(
        current="main",
        branches={
            "main": BranchEntry(snapshot=A, tag="latest"), "feature/x": BranchEntry(snapshot=B, tag="br.feature.x"),
        },
    )
    write_refs(tmp_path, refs)
    raw = (tmp_path / "boltzmann" / "refs.json").read_bytes()
    assert raw == (
        b'{"boltzmann":1,"branches":{"feature/x":{"snapshot":"' + str(B).encode() + b'","tag":"br.feature.x"},'
        b'"main":{"snapshot":"' + str(A).encode() + b'","tag":"latest"}},"current":"main"}'
    )
    assert read_refs(tmp_path) == refs
    assert refs.heads() == [B, A]


def test_absent_or_empty_refs_is_implicit_main(tmp_path) -> None:
    assert read_refs(tmp_path) is None
    (tmp_path / "boltzmann").mkdir()
    (tmp_path / "boltzmann" / "refs.json").write_bytes(b"")
    assert read_refs(tmp_path) is None
    origin = Origin(partial=False, reference="r.example/x:v1", snapshot=A, tag="v1")
    implicit = implicit_refs(A, origin)
    assert implicit.branches["main"].tag == "v1" and implicit.branches["main"].reference == "r.example/x:v1"
    assert implicit_refs(A, None).main_tag == "latest"


@pytest.mark.parametrize(
    ("raw", "complaint"),
    [
        (b'{"boltzmann":1,"branches":{},"current":"main"}', "not one of its branches"),
        (b'{"current":"main","boltzmann":1,"branches":{"main":{"snapshot":"%s","tag":"latest"}}}', "canonical"),
        (b'{"boltzmann":1,"branches":{"main":{"snapshot":"%s","tag":"latest"}},"current":"main"}\n', "canonical"),
        (b'{"boltzmann":1,"branches":{"main":{"snapshot":"%s","tag":"latest"}},"current":"main","x":1}', "Extra"),
        (b'{"boltzmann":1,"branches":{"main":{"snapshot":"%s","tag":"latest","y":1}},"current":"main"}', "Extra"),
        (b'{"boltzmann":2,"branches":{"main":{"snapshot":"%s","tag":"latest"}},"current":"main"}', "boltzmann"),
        (b'{"boltzmann":1,"branches":{"a.b":{"snapshot":"%s","tag":"latest"}},"current":"a.b"}', "grammar"),
        (b'{"boltzmann":1,"branches":{"main":{"snapshot":"%s","tag":".bad"}},"current":"main"}', "OCI tag"),
        (b'{"boltzmann":1,"branches":{"main":{"snapshot":"%s","tag":"latest"}},"current":"main","switching":"x"}',
         "switching"),
        (b'{"boltzmann":1,"branches":{"main":{"snapshot":"sha256:zz","tag":"latest"}},"current":"main"}', "snapshot"),
        (b'[1]', "JSON object"),
        (b'{"boltzmann":1,"boltzmann":1}', "duplicate"),
        (b'\xff', "UTF-8"),
    ],
)
def test_hostile_refs_are_unreadable(tmp_path, raw: bytes, complaint: str) -> None:
    (tmp_path / "boltzmann").mkdir()
    if b"%s" in raw:
        raw = raw.replace(b"%s", str(A).encode())
    (tmp_path / "boltzmann" / "refs.json").write_bytes(raw)
    with pytest.raises(BrainUnreadableError, match=complaint):
        read_refs(tmp_path)


def test_retained_rule_of_10_2() -> None:
    d = [OciDigest.of(bytes([i])) for i in range(20)]
    # [new, old retained...] without repeats and other branch heads, cut to 10, then branch heads in name order.
    start = [d[0], d[1], d[2], d[1], *d[3:14]]
    assert retained_with(start, 10, [d[2], d[0], d[19]]) == (d[0], d[1], *d[3:11], d[2], d[19])
    head = Head.first(d[1]).advance(d[0], branch_heads=[d[1]])
    assert head.retained == (d[0], d[1])
    # Rewriting with other branch heads recomputes from the uncut start.
    many = Head.first(d[0], previous=tuple(d[1:15]))
    assert many.with_branch_heads([d[2]]).retained == (d[0], d[1], *d[3:11], d[2])
