"""Block models: golden ids from the spec, construction refusals, optional/empty handling, oldest-that-fits."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from brain.blocks import (
    Actor,
    ActorKind,
    Block,
    CanonicalBlock,
    DerivationRecord,
    EpisodicBlock,
    GenericBlock,
    MemoryType,
    NormalizedView,
    ProceduralBlock,
    Producer,
    ProducerKind,
    ProvenanceBlock,
    RegistrationRecord,
    Relation,
    RemovalMechanism,
    RemovalRecord,
    SemanticBlock,
    SemanticKind,
    Step,
    ValidationRecord,
    Verdict,
)
from brain.blocks.decode import TYPED_V1
from brain.blocks.schemas import REGISTERED_VERSIONS, payload_problems, select_schema_version
from brain.errors import CanonicalFormError, InvalidInputError
from brain.identity import BlockId, MerkleRoot, OciDigest

BLOB = "sha256:e038e5313b67a0a1481737ca2f90f40260c0a25b37260d9dbce228cc6ba64a68"
ID_A = "sha256:d85afe5c73c486e72f945e53bb0c1e6690c9e3afc935e3ff38a0ec1790a335bc"
ID_B = "sha256:ffe556de3d2b35b40d9959a2375adde6e41521322117f9c5b644ee288251dde5"
AT = "2026-11-30T13:32:11Z"
ACTOR = Actor(id="curator@example.org", kind=ActorKind.HUMAN)


def test_spec_example_canonical_block_bytes_and_id() -> None:
    block = CanonicalBlock(blob=BLOB, media_type="application/pdf", size=62)
    assert block.canonical_bytes() == (
        b'{"boltzmann":1,"memory_type":"canonical","payload":{"blob":"' + BLOB.encode() + b'",'
        b'"media_type":"application/pdf","size":62},"schema_version":1,"serialization":"jcs/1"}'
    )
    assert block.block_id == BlockId.parse("sha256:4c6d5c10a1b47195a77dff1dac2ab6ab40578a293a842d43cd1ba6ff8fa448ea")
    assert block.memory_type is MemoryType.CANONICAL and block.schema_version == 1


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            {"kind": "fact", "label": "x", "statement": "y"},
            "3f2965b3dc09e2af1260904ec8967a9e4e67b3c6b8053083f6e8896d3f29ce7d",
        ),
        (
            {"kind": "fact", "label": "x", "statement": "y", "subject": None},
            "3f2965b3dc09e2af1260904ec8967a9e4e67b3c6b8053083f6e8896d3f29ce7d",
        ),
        (
            {"aliases": [], "kind": "fact", "label": "x", "statement": "y"},
            "e5b8c8921cafb29b105da807b81a633de9a71a886230e109a4e24f2530feae83",
        ),
    ],
)
def test_spec_optional_and_empty_list_ids(payload: dict, expected: str) -> None:
    assert Block.from_payload("semantic", payload).block_id == BlockId(expected)
    assert SemanticBlock(**payload).block_id == BlockId(expected)


def test_none_is_omitted_and_empty_lists_are_kept() -> None:
    block = SemanticBlock(kind=SemanticKind.FACT, label="x", statement="y", aliases=())
    assert block.payload() == {"aliases": [], "kind": "fact", "label": "x", "statement": "y"}
    assert "subject" not in block.envelope()["payload"]


def test_spec_procedural_example_round_trips() -> None:
    block = ProceduralBlock(
        label="compute a spectrum",
        goal="obtain the frequency content of a signal",
        steps=(
            Step(action="sample the signal"),
            Step(action="apply the FFT", alternatives=("apply a DFT",), condition="the sample count is a power of two"),
        ),
        preconditions=("the signal is periodic",),
        success_criteria=("a spectrum is produced",),
        subject="signals",
        evidence=(BlockId.parse(ID_A),),
    )
    assert Block.decode(block.canonical_bytes(), block.block_id) == block


def test_spec_derivation_record_example() -> None:
    record = DerivationRecord(
        actor=ACTOR,
        at=AT,
        block=ID_B,
        derived_from=(ID_A,),
        locator="L5-L6",
        producer=Producer(id="acme/extractor", kind=ProducerKind.MODEL, version="2026-11"),
    )
    block = ProvenanceBlock(record=record)
    assert block.payload() == {
        "record": {
            "actor": {"id": "curator@example.org", "kind": "human"},
            "at": AT,
            "block": ID_B,
            "derived_from": [ID_A],
            "locator": "L5-L6",
            "producer": {"id": "acme/extractor", "kind": "model", "version": "2026-11"},
            "record_type": "derivation",
        }
    }


def test_block_id_is_cached_and_model_frozen() -> None:
    block = CanonicalBlock(blob=BLOB, media_type="text/plain", size=1)
    assert block.block_id is block.block_id
    with pytest.raises(ValidationError):
        block.size = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    "fields",
    [
        {"blob": BLOB, "media_type": "text/plain", "size": "62"},  # no coercion
        {"blob": BLOB, "media_type": "text/plain", "size": 62.0},  # floats refused
        {"blob": BLOB, "media_type": "text/plain", "size": True},  # bool is not an integer
        {"blob": BLOB, "media_type": "text/plain", "size": 2**53},  # beyond the JCS-safe range
        {"blob": BLOB, "media_type": "text/plain", "size": -1},
        {"blob": BLOB, "media_type": "", "size": 1},  # min length 1
        {"blob": BLOB.upper(), "media_type": "text/plain", "size": 1},
        {"blob": BLOB, "media_type": "text/plain", "size": 1, "extra": "x"},  # unknown member
        {"blob": MerkleRoot.parse(BLOB), "media_type": "text/plain", "size": 1},  # wrong identity level
    ],
)
def test_canonical_construction_refusals(fields: dict) -> None:
    with pytest.raises(ValidationError):
        CanonicalBlock(**fields)


def test_digest_fields_accept_the_right_kind_only() -> None:
    block = CanonicalBlock(blob=OciDigest.parse(BLOB), media_type="text/plain", size=1)
    assert isinstance(block.blob, OciDigest)
    view = NormalizedView(blob=BLOB, media_type="text/plain", size=1)
    assert CanonicalBlock(blob=BLOB, media_type="text/plain", size=1, normalized_view=view).payload()["normalized_view"]
    with pytest.raises(ValidationError):
        SemanticBlock(
            kind="fact",
            label="x",
            statement="y",
            relations=(Relation(predicate="p", target=BLOB),),
            evidence=(OciDigest.parse(ID_A),),
        )


@pytest.mark.parametrize(
    ("occurred_at", "ended_at", "ok"),
    [
        (AT, None, True),
        (AT, AT, True),  # equal is allowed
        (AT, "2026-11-30T13:32:12Z", True),
        (AT, "2026-11-30T13:32:10Z", False),  # ends before it starts
        ("2026-13-30T13:32:11Z", "2026-11-30T13:32:12Z", False),  # parsed because a range is given
        ("2026-13-30T13:32:11Z", None, True),  # reference quirk: not calendar-checked without a range
        ("2026-11-30T13:32:11+00:00", None, False),
        ("2026-11-30T13:32:11.000Z", None, False),
        ("2026-11-30t13:32:11z", None, False),
        ("2026-11-30 13:32:11Z", None, False),
    ],
)
def test_episodic_timestamps(occurred_at: str, ended_at: str | None, ok: bool) -> None:
    if ok:
        assert (
            EpisodicBlock(summary="s", occurred_at=occurred_at, ended_at=ended_at).payload()["occurred_at"]
            == occurred_at
        )
    else:
        with pytest.raises(ValidationError):
            EpisodicBlock(summary="s", occurred_at=occurred_at, ended_at=ended_at)


def test_procedural_needs_a_step_and_semantic_kind_is_case_sensitive() -> None:
    with pytest.raises(ValidationError):
        ProceduralBlock(label="l", goal="g", steps=())
    with pytest.raises(ValidationError):
        SemanticBlock(kind="Fact", label="x", statement="y")
    with pytest.raises(ValidationError):
        SemanticBlock(kind="scheme", label="x", statement="y")  # v3 only


def test_provenance_records_and_actor_ids_read_leniently() -> None:
    # Any non-empty actor id reads (§3.6): writers validate new ids with validate_actor_id themselves.
    lenient = Actor(id="Alex Smith!", kind="agent")
    block = ProvenanceBlock(record=RegistrationRecord(actor=lenient, at=AT, block=ID_A, license="CC-BY-4.0"))
    assert block.payload()["record"]["record_type"] == "registration"
    with pytest.raises(ValidationError):
        Actor(id="", kind="human")
    with pytest.raises(ValidationError):
        ValidationRecord(actor=ACTOR, at=AT, block=ID_A, verdict=Verdict.VALIDATED, checks=())
    with pytest.raises(ValidationError):
        RemovalRecord(
            actor=ACTOR, at=AT, blocks=(ID_A,), mechanism=RemovalMechanism.DROP, memory_type="semantic", reason=""
        )
    removal = RemovalRecord(
        actor=ACTOR, at=AT, blocks=(ID_A,), mechanism="tombstone", memory_type="canonical", reason="redacted"
    )
    assert ProvenanceBlock(record=removal).payload()["record"]["mechanism"] == "tombstone"


def test_registered_versions_match_the_spec() -> None:
    assert REGISTERED_VERSIONS == {
        MemoryType.CANONICAL: (1,),
        MemoryType.EPISODIC: (1, 2),
        MemoryType.SEMANTIC: (1, 2, 3),
        MemoryType.PROCEDURAL: (1, 2),
        MemoryType.PROVENANCE: (1, 2),
    }


CONTENT = {"blob": BLOB, "media_type": "text/markdown", "size": 10}
COLLABORATOR = {"id": "acme/helper", "kind": "agent", "model": "acme/model-1"}


@pytest.mark.parametrize(
    ("memory_type", "payload", "version"),
    [
        ("semantic", {"kind": "fact", "label": "x", "statement": "y"}, 1),
        ("semantic", {"kind": "fact", "label": "x", "statement": "y", "content": CONTENT}, 2),
        ("semantic", {"kind": "scheme", "scheme": "subjects", "exclusive": True}, 3),
        ("semantic", {"kind": "class", "scheme": "subjects", "label": "physics"}, 3),
        ("episodic", {"summary": "s", "occurred_at": AT, "content": CONTENT}, 2),
        ("procedural", {"label": "l", "goal": "g", "steps": [{"action": "a"}], "content": CONTENT}, 2),
        (
            "provenance",
            {
                "record": {
                    "record_type": "registration",
                    "actor": {"id": "a@b.org", "kind": "human"},
                    "at": AT,
                    "block": ID_A,
                }
            },
            1,
        ),
        (
            "provenance",
            {
                "record": {
                    "record_type": "registration",
                    "actor": {"id": "a@b.org", "kind": "human"},
                    "at": AT,
                    "block": ID_A,
                    "assisted_by": [COLLABORATOR],
                }
            },
            2,
        ),
    ],
)
def test_oldest_that_fits(memory_type: str, payload: dict, version: int) -> None:
    mt = MemoryType(memory_type)
    assert select_schema_version(mt, payload) == version
    block = Block.from_payload(mt, payload)
    assert block.schema_version == version and block.memory_type is mt
    assert isinstance(block, GenericBlock) == (version > 1)
    assert block.payload() == payload
    assert Block.decode(block.canonical_bytes(), block.block_id) == block


def test_from_payload_refusals_name_the_problem() -> None:
    with pytest.raises(InvalidInputError, match="statement"):
        Block.from_payload("semantic", {"kind": "fact", "label": "x", "statement": ""})
    with pytest.raises(CanonicalFormError, match="float"):
        Block.from_payload("canonical", {"blob": BLOB, "media_type": "text/plain", "size": 1.5})
    with pytest.raises(InvalidInputError, match="memory type"):
        Block.from_payload("memories", {})
    with pytest.raises(InvalidInputError):
        Block.from_payload("semantic", ["not", "an", "object"])  # type: ignore[arg-type]


def test_provenance_record_type_is_required_even_where_the_registry_defaults_it() -> None:
    record = {
        "actor": {"id": "a@b.org", "kind": "human"},
        "at": AT,
        "block": ID_A,
        "origin": "x",
        "assisted_by": [COLLABORATOR],
    }
    problems = payload_problems(MemoryType.PROVENANCE, 2, {"record": record})
    assert problems == ["payload.record: record_type is required"]
    assert select_schema_version(MemoryType.PROVENANCE, {"record": record}) is None


def test_generic_block_refuses_v1_and_unregistered_versions() -> None:
    with pytest.raises(ValidationError, match="typed model"):
        GenericBlock(memory_type="semantic", schema_version=1, payload={"kind": "fact", "label": "x", "statement": "y"})
    with pytest.raises(ValidationError, match="no registered"):
        GenericBlock(memory_type="canonical", schema_version=2, payload={})
    with pytest.raises(ValidationError):
        GenericBlock(memory_type="semantic", schema_version=2, payload={"kind": "fact"})


def test_generic_block_payload_is_a_copy() -> None:
    block = Block.from_payload("semantic", {"kind": "class", "scheme": "subjects", "label": "physics"})
    block.payload()["label"] = "changed"
    assert block.payload()["label"] == "physics"


def test_blocks_hash_and_compare_by_identity() -> None:
    generic = Block.from_payload("semantic", {"kind": "class", "scheme": "subjects", "label": "physics"})
    typed = SemanticBlock(kind="fact", label="x", statement="y")
    decoded = Block.decode(typed.canonical_bytes())
    assert {generic, typed, decoded} == {generic, typed}
    assert typed != SemanticBlock(kind="fact", label="x", statement="z") and typed != typed.payload()
    with pytest.raises(ValidationError):
        generic.schema_version = 3  # type: ignore[misc]


def test_model_copy_recomputes_identity() -> None:
    block = CanonicalBlock(blob=BLOB, media_type="text/plain", size=1)
    original = block.block_id
    changed = block.model_copy(update={"size": 2})
    assert (
        changed.block_id != original
        and changed.block_id == CanonicalBlock(blob=BLOB, media_type="text/plain", size=2).block_id
    )
    assert block.model_copy().block_id == original


def _json_schema_leaves(schema: object, definitions: dict) -> list[dict]:
    """Every leaf (non-container) subschema of a pydantic JSON schema, with `$ref`s followed."""
    if not isinstance(schema, dict):
        return []
    if "$ref" in schema:
        return _json_schema_leaves(definitions[schema["$ref"].rsplit("/", 1)[-1]], definitions)
    children = [*schema.get("anyOf", []), *schema.get("oneOf", []), *schema.get("allOf", [])]
    children += list(schema.get("properties", {}).values())
    if isinstance(schema.get("items"), dict):
        children.append(schema["items"])
    children += schema.get("prefixItems", [])
    if isinstance(schema.get("additionalProperties"), dict):
        children.append(schema["additionalProperties"])
    if children:
        return [leaf for child in children for leaf in _json_schema_leaves(child, definitions)]
    return [schema]


@pytest.mark.parametrize("model", sorted(TYPED_V1.values(), key=lambda m: m.__name__))
def test_typed_blocks_admit_only_exact_json_values(model: type) -> None:
    # Typed blocks skip the float/unsafe-integer walk when serialized (`_exact_json_fields`): that is only
    # sound while no field can hold a float, an unbounded integer or an arbitrary value.
    schema = model.model_json_schema()
    for leaf in _json_schema_leaves(schema, schema.get("$defs", {})):
        kind = leaf.get("type")
        assert kind in {"string", "integer", "null", "boolean"} or "const" in leaf or "enum" in leaf, leaf
        if kind == "integer":
            assert leaf.get("maximum", float("inf")) <= 2**53 - 1 and leaf.get("minimum", -float("inf")) >= 0, leaf
    assert model._exact_json_fields
