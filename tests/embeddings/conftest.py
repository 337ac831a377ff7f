"""The corpus brain and the CLI runner of the retrieval tests, for the embedding tests; each test starts with
the process state of fusion (clients, query vectors, checked indexes) that a new process has."""

from collections.abc import Iterator

import pytest

from retrieval import fusion
from tests.retrieval.conftest import brain, corpus_brain, corpus_brain_master  # noqa: F401


@pytest.fixture(autouse=True)
def _new_process() -> Iterator[None]:
    fusion.forget()
    yield
    fusion.forget()
