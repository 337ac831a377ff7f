"""Fixtures of the ingest tests that need a whole ingested brain: the corpus brain of the retrieval tests."""

from tests.retrieval.conftest import corpus_brain, corpus_brain_master  # noqa: F401 - fixtures
