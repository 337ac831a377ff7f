"""The one error a proposer raises: a coded failure ingest reports per source before moving on."""

from __future__ import annotations

from brain.errors import BrainError

# The codes ingest reports; a third-party proposer should raise one of these.
PROPOSER_ERROR_CODES = frozenset(
    {"proposer-timeout", "proposer-crashed", "proposer-garbage", "proposer-http", "proposer-refused"}
)


class ProposerError(BrainError):
    """A proposer failed on one source: `code` says how (`proposer-timeout`, ...), `detail` says why."""

    def __init__(self, code: str, detail: str) -> None:
        self.code = code
        self.detail = detail
        super().__init__(f"{code}: {detail}")
