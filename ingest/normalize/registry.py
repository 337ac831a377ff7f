"""The installed normalization pipelines, by media type and by name.

`brain ingest` asks `pipeline_for(media_type)`; `brain verify --deep` re-runs the pipeline a
`normalization` record names (`get_pipeline(name)`) and compares versions via `installed_pipelines()`.
"""

from __future__ import annotations

from brain.errors import NotFoundError
from ingest.normalize.base import Pipeline
from ingest.normalize.html_text import HtmlText
from ingest.normalize.pdf_text import PdfText
from ingest.normalize.text_nfc import TextNfc

_PIPELINES: tuple[Pipeline, ...] = (TextNfc(), HtmlText(), PdfText())


def pipeline_for(media_type: str) -> Pipeline | None:
    """The pipeline that normalizes `media_type`, or None (the source is registered without a view)."""
    for pipeline in _PIPELINES:
        if pipeline.accepts(media_type):
            return pipeline
    return None


def get_pipeline(name: str) -> Pipeline:
    """The pipeline called `name`; raises `NotFoundError` naming the installed ones."""
    for pipeline in _PIPELINES:
        if pipeline.name == name:
            return pipeline
    names = ", ".join(sorted(p.name for p in _PIPELINES))
    raise NotFoundError(f"no normalization pipeline named {name!r}", hint=f"installed: {names}")


def installed_pipelines() -> dict[str, str]:
    """Pipeline name → version, for every installed pipeline (sorted by name)."""
    return {p.name: p.version for p in sorted(_PIPELINES, key=lambda p: p.name)}
