"""A registry manifest known to hold redacted bytes (the shape `redact` and `push` report; no network here)."""

from __future__ import annotations

from brain.frozen import FrozenModel
from brain.identity import OciDigest


class RemoteCopy(FrozenModel):
    """A registry manifest known to hold redacted bytes, and the command that deletes it there."""

    repository: str
    tag: str | None
    digest: OciDigest | None
    snapshot: OciDigest
    known_from: str
    delete: str

    @property
    def where(self) -> str:
        """`repository[:tag][@digest]`."""
        return self.repository + (f":{self.tag}" if self.tag else "") + (f"@{self.digest}" if self.digest else "")

    def line(self) -> str:
        """How `redact` and `push` print it: where, which snapshot, how it is known, and the delete command."""
        return (f"{self.where} still holds redacted bytes (snapshot {self.snapshot.short}, {self.known_from}); "
                f"the registry is not ours to erase: {self.delete}")
