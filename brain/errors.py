"""One error hierarchy for the whole tool.

Every failure a user can cause or meet is a `BrainError` subclass. Each family carries its documented
exit code as `exit_code` (a subclass inherits its family's; 70, a bug, for none); `cli/exit_codes.py`
names and documents the codes and the README lists them. Library code never exits, and foreign
exceptions are wrapped at the boundary with `raise ... from e`.
"""

from __future__ import annotations

from typing import ClassVar


class BrainError(Exception):
    """Base of every error the tool reports; `str(err)` is the one-line message for the user."""

    exit_code: ClassVar[int] = 70

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message if hint is None else f"{message} ({hint})")


class UsageError(BrainError):
    """The caller asked for something malformed: a bad argument, option, id or reference."""

    exit_code: ClassVar[int] = 3


class InvalidInputError(UsageError):
    """A value handed to the library violates the protocol (bad digest, actor id, payload...)."""


class CanonicalFormError(InvalidInputError):
    """A value cannot be serialized or parsed under `jcs/1` strict rules."""


class NotFoundError(BrainError):
    """A block, snapshot, tag or blob that was asked for does not exist (or a prefix is ambiguous)."""

    exit_code: ClassVar[int] = 4


class AmbiguousIdError(NotFoundError):
    """A short id prefix matches more than one candidate."""


class BrainUnreadableError(BrainError):
    """The brain directory cannot be read at all: missing, not a brain, or its pointers are broken."""

    exit_code: ClassVar[int] = 2


class NotABrainError(BrainUnreadableError):
    """The path is not a brain directory (no `oci-layout`, wrong version)."""


class IntegrityError(BrainUnreadableError):
    """Stored bytes do not hash to their name, or are not in canonical form."""


class ConflictError(BrainError):
    """The operation would clobber something: a held lock, a diverged tag, an existing brain."""

    exit_code: ClassVar[int] = 5


class LockTimeoutError(ConflictError):
    """Another writer holds the brain's lock and did not release it in time."""


class RefusedError(BrainError):
    """The protocol forbids the operation (e.g. dropping an episodic block, an invalid transition)."""

    exit_code: ClassVar[int] = 5


class UntrustedArtifactError(BrainError):
    """A pulled artifact or proposer output failed verification and was not adopted."""

    exit_code: ClassVar[int] = 6


class RemoteError(BrainError):
    """A registry or network endpoint failed: unreachable, refused credentials, bad status."""

    exit_code: ClassVar[int] = 7


class ProblemsFoundError(BrainError):
    """A check ran to completion and found problems (verify, `--strict` ingest)."""

    exit_code: ClassVar[int] = 1


class LifecycleRefusedError(RefusedError):
    """A drop, supersession, demotion or redaction the protocol or the policy forbids; nothing was written.

    `code` names the rule (e.g. `episodic-append-only`), `block` the block it is about, `detail` the reason;
    the message is one line naming the block and the fix.
    """

    def __init__(self, code: str, block: str, detail: str, fix: str) -> None:
        self.code = code
        self.block = block
        self.detail = detail
        super().__init__(f"{detail}; {fix}")
class ConfigFileError(UsageError):
    """The project config file (brain.toml, [tool.brain]) is not TOML, names an unknown key, has a wrong type."""
class SigningKeyError(UsageError):
    """A signing key cannot be used: not a key file, not Ed25519, or locked without its passphrase."""


class AgentError(RemoteError):
    """An ssh-agent cannot be reached, does not answer in time, or refuses to sign."""


class AgentKeyNotFoundError(NotFoundError):
    """The ssh-agent does not hold the key that was named."""
class NotRegularFileError(IntegrityError):
    """A FIFO, device, socket or directory stands where the store expects a regular file (damage, never waited on)."""


class LocalStorageError(BrainError):
    """The local filesystem refused a write: disk full, no inodes left, quota exceeded, read-only."""

    exit_code: ClassVar[int] = 8


class RedactedBytesRefusedError(RefusedError):
    """An artifact holds bytes this brain destroyed by redaction (§7.5): installing it would write them back
    (or leave a head whose members are gone), so it is refused and nothing of it is kept."""
