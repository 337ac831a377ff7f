"""The corpus brain and the CLI runner of the retrieval tests, for the embedding tests."""

from tests.retrieval.conftest import brain, corpus_brain, corpus_brain_master  # noqa: F401
