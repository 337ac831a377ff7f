"""`verify --deep`'s renormalizer (`brain.verify` `Renormalizer`): the normalization pipelines `ingest` installs."""

from __future__ import annotations

from pathlib import Path


class InstalledPipelines:
    """Re-runs a recorded normalization pipeline on a source file, with the version installed here."""

    def installed_version(self, pipeline: str) -> str | None:
        """The installed version of `pipeline`, or None."""
        from ingest.normalize import installed_pipelines

        return installed_pipelines().get(pipeline)

    def normalize(self, pipeline: str, source: Path) -> bytes:
        """The view bytes of the file at `source`."""
        from ingest.normalize import get_pipeline

        return get_pipeline(pipeline).normalize(source).data


__all__ = ["InstalledPipelines"]
