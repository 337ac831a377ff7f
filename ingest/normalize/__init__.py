"""Normalization: deterministic text views of sources (`text-nfc`, `html-text`, `pdf-text`)."""

from __future__ import annotations

from ingest.normalize.base import (
    MAX_TEXT_BYTES,
    NormalizationError,
    NormalizedOutput,
    Pipeline,
)
from ingest.normalize.html_text import HtmlText
from ingest.normalize.pdf_text import PdfText
from ingest.normalize.registry import get_pipeline, installed_pipelines, pipeline_for
from ingest.normalize.text_nfc import TextNfc

__all__ = [
    "MAX_TEXT_BYTES",
    "HtmlText",
    "NormalizationError",
    "NormalizedOutput",
    "PdfText",
    "Pipeline",
    "TextNfc",
    "get_pipeline",
    "installed_pipelines",
    "pipeline_for",
]
