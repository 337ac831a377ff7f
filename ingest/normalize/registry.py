"""The installed normalization pipelines, by media type and by name.

`brain ingest` asks `pipeline_for(media_type)`; `brain verify --deep` re-runs the pipeline a
`normalization` record names (`get_pipeline(name)`) and compares versions via `installed_pipelines()`.

Recorded names may be composed and parameterized: `gzip+man-text` (the content of a gzip file through
`man-text`), `text-nfc;charset=cp1252` (a legacy encoding, decoded with exactly that codec on a re-run).
`get_pipeline` builds the pipeline such a name describes; `installed_pipelines()` lists the base and
composed names and answers for parameterized ones too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from brain.errors import NotFoundError
from ingest.normalize.base import Pipeline
from ingest.normalize.charset import codec_name
from ingest.normalize.gzip_text import PREFIX, GzipText
from ingest.normalize.html_text import HtmlText
from ingest.normalize.man_text import ManText
from ingest.normalize.pdf_text import PdfText
from ingest.normalize.text_nfc import TextNfc

_TEXT: tuple[TextNfc | HtmlText | ManText, ...] = (TextNfc(), HtmlText(), ManText())


def _text_pipeline_for(media_type: str) -> TextNfc | HtmlText | ManText | None:
    """What normalizes the content of a gzip file: a text pipeline (a PDF is read from files, a gzip is not nested)."""
    return next((p for p in _TEXT if p.accepts(media_type)), None)


_PIPELINES: tuple[Pipeline, ...] = (*_TEXT, PdfText(), GzipText(sniff=_text_pipeline_for))
_TEXT_CLASSES = {p.name: type(p) for p in _TEXT}


def pipeline_for(media_type: str) -> Pipeline | None:
    """The pipeline that normalizes `media_type`, or None (the source is registered without a view)."""
    for pipeline in _PIPELINES:
        if pipeline.accepts(media_type):
            return pipeline
    return None


def _parse(name: str) -> tuple[bool, str, dict[str, str]] | None:
    """`(gzipped, base name, parameters)` of a recorded name, or None when it names nothing installed."""
    base, *pairs = name.split(";")
    parameters = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key != "charset" or codec_name(value) != value:
            return None
        parameters[key] = value
    gzipped = base.startswith(PREFIX)
    base = base.removeprefix(PREFIX)
    if base in _TEXT_CLASSES or (base == "pdf-text" and not gzipped and not parameters):
        return gzipped, base, parameters
    return None


def get_pipeline(name: str) -> Pipeline:
    """The pipeline a recorded name describes; raises `NotFoundError` naming the installed ones."""
    parsed = _parse(name)
    if parsed is None:
        names = ", ".join(sorted(installed_pipelines()))
        raise NotFoundError(f"no normalization pipeline named {name!r}", hint=f"installed: {names}")
    gzipped, base, parameters = parsed
    if not gzipped and not parameters:
        return next(p for p in _PIPELINES if p.name == base)
    inner = _TEXT_CLASSES[base](charset=parameters.get("charset"))
    return GzipText(inner) if gzipped else inner


class _Installed(Mapping[str, str]):
    """Pipeline name → version; lists base and composed names, and also answers for parameterized ones."""

    def __init__(self) -> None:
        plain = {p.name: p.version for p in _PIPELINES if not isinstance(p, GzipText)}
        composed = {PREFIX + p.name: GzipText(p).version for p in _TEXT}
        self._names = dict(sorted((plain | composed).items()))

    def __getitem__(self, name: str) -> str:
        parsed = _parse(name)
        if parsed is None:
            raise KeyError(name)
        gzipped, base, _ = parsed
        return self._names[PREFIX + base if gzipped else base]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def installed_pipelines() -> Mapping[str, str]:
    """Pipeline name → version, for every installed pipeline (sorted by name; parameterized names resolve)."""
    return _Installed()
