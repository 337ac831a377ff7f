"""Wire shapes of retrieval answers: `brain search --json` (= the MCP `search` tool = `GET /v1/search`) and
`brain cat --json`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from retrieval.sources import SourceView


class _Wire(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="forbid", serialize_by_alias=True, validate_by_name=True, defer_build=True
    )


class Via(_Wire):
    """How associative expansion reached a block: the edge it followed and the block it came from."""

    edge: str
    from_: str = Field(alias="from")

    @classmethod
    def of(cls, edge: str, parent: str) -> Via:
        """The edge followed and the block (id string) it was followed from."""
        return cls.model_validate({"edge": edge, "from": parent})


class Evidence(_Wire):
    """A canonical source a match rests on, where in it, and the text there."""

    block: str
    origin: str
    media_type: str
    locator: str | None
    excerpt: str


class Proof(_Wire):
    """An inclusion proof of the matched block in its module's Merkle root at the answer's snapshot."""

    root: str
    leaf_index: int
    tree_size: int
    audit_path: list[str]


class Match(_Wire):
    """One hit: a block (or a passage of a source), its evidence, and whether this process verified it."""

    block: str
    memory_type: str
    title: str
    score: float
    accessible: bool
    via: Via | None
    evidence: list[Evidence]
    proof: Proof
    verified: bool


class SearchResult(_Wire):
    """The answer to one query against one snapshot."""

    query: str
    snapshot: str
    matches: list[Match]
    notes: list[str] = Field(default_factory=list)  # why the ranking is lexical only, an index ignored


class CatResult(_Wire):
    """A source's normalized view, or the part of it a locator names (`brain cat --json`)."""

    block: str
    origin: str | None
    media_type: str
    view_media_type: str
    locator: str | None
    text: str

    @classmethod
    def of(cls, view: SourceView) -> CatResult:
        """The wire form of a view read by `retrieval.sources.read_view`."""
        return cls(block=str(view.block), origin=view.origin, media_type=view.media_type,
                   view_media_type=view.view_media_type, locator=view.locator, text=view.text)


class ContextItem(_Wire):
    """One citable item of a context pack: its text, where it is from, and whether this process verified it."""

    block: str
    memory_type: str
    text: str
    origin: str
    locator: str | None
    score: float
    verified: bool


class ContextResult(_Wire):
    """`brain context --json` (= the MCP `context` tool = `GET /v1/context`): a pack within a token budget."""

    query: str
    snapshot: str
    budget: int
    tokens: int
    items: list[ContextItem]
    notes: list[str] = Field(default_factory=list)
