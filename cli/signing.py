"""Signing from the command line: `--sign-with KEY`, the passphrase prompt, trust-key specs, and the
one helper every writing command calls (`SigningPlan`): check the key's scopes before anything is
written, then sign the new head once the command has moved it.

Writing commands use it in three lines::

    plan = SigningPlan.prepare(brain, sign_with, needed={TrustScope.INGEST, TrustScope.COMMIT}, what="ingest")
    ...  # write
    signed = plan.sign_new_head(context)   # None when nothing was signed
"""

from __future__ import annotations

import functools
import getpass
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from pydantic import BaseModel, create_model

from brain.authn.keys import KeyFormatError, PublicKey, parse_public_key_line
from brain.brain import Brain
from brain.errors import InvalidInputError, SigningKeyError
from brain.head_signing import HeadSigning, SignedHead
from brain.identity import actor_id_problem
from brain.snapshot import TrustKey, TrustScope
from brain.store.user_files import KIB, read_user_file
from cli.context import CliContext

if TYPE_CHECKING:
    # Deciding and signing (`brain.authenticity`, `brain.authn.signer`) pull in the whole authentication
    # stack and `cryptography`: imported when a key is given, not by every command that offers `--sign-with`.
    from brain.authn.signer import Signer

PASSPHRASE_ENV = "BRAIN_SIGNING_PASSPHRASE"
MAX_KEY_FILE_BYTES = 16 * KIB
DEFAULT_SCOPES = (TrustScope.INGEST, TrustScope.COMMIT, TrustScope.GOVERN)

SignWithOption = Annotated[
    str | None,
    typer.Option(
        "--sign-with",
        envvar="BRAIN_SIGN_WITH",
        metavar="KEY",
        help="Sign the snapshot this makes: an Ed25519 private key file, or a key in ssh-agent named by its "
        ".pub file, public key or SHA256: fingerprint.",
    ),
]


def passphrase_for(path: Path) -> bytes | None:
    """$BRAIN_SIGNING_PASSPHRASE if set, else a prompt on a terminal, else None (the key is then refused)."""
    value = os.environ.get(PASSPHRASE_ENV)
    if value is not None:
        return value.encode("utf-8")
    if sys.stdin.isatty() and sys.stderr.isatty():
        return getpass.getpass(f"Passphrase for {path}: ").encode("utf-8")
    return None


def load_signer(spec: str) -> Signer:
    """The signer `--sign-with` names."""
    from signers import open_signer

    return open_signer(spec, passphrase_for)


@dataclass
class SigningPlan:
    """`--sign-with` for a writing command: the library's `HeadSigning` with the key the option names."""

    signing: HeadSigning

    @classmethod
    def prepare(cls, brain: Brain, sign_with: str | None, needed: set[TrustScope], what: str) -> SigningPlan:
        """Load the signer and refuse (writing nothing) a key the trust root does not grant `needed`."""
        plan = cls.load(brain, sign_with)
        plan.require(needed, what)
        return plan

    @classmethod
    def load(cls, brain: Brain, sign_with: str | None) -> SigningPlan:
        """Load the signer only (for a command that learns the scopes it needs from its plan: then `require`)."""
        return cls(HeadSigning.load(brain, None if sign_with is None else load_signer(sign_with)))

    def require(self, needed: set[TrustScope], what: str) -> None:
        """Refuse a key the head's trust root does not grant `needed` (call before writing anything)."""
        self.signing.require(needed, what)

    def sign_new_head(self, context: CliContext) -> SignedHead | None:
        """Sign the head if the command moved it (claiming the scopes §9.6 requires); None otherwise."""
        return self.signing.sign_new_head(lock_timeout=context.lock_timeout, on_wait=context.wait_note())


R = TypeVar("R", bound=BaseModel)


@functools.cache
def _signed_model(base: type[BaseModel]) -> type[BaseModel]:
    model: type[BaseModel] = create_model(f"Signed{base.__name__}", __base__=base, signed=(SignedHead, ...))
    return model


def with_signature(result: R, signed: SignedHead | None) -> R:
    """`result` plus a `signed` member naming the record over the snapshot it made (unchanged when nothing was signed,
    so a command's JSON keeps its shape without --sign-with)."""
    if signed is None:
        return result
    return _signed_model(type(result))(**dict(result), signed=signed)  # type: ignore[return-value]


_SPEC = re.compile(
    r"^(?P<key>.+?)(?:=(?P<scopes>[a-z:]+(?:,[a-z:]+)*))?(?:@(?P<subject>[^=@\s]+(?:@[^=@\s]+)?))?$", re.DOTALL
)


def read_public_key(text: str) -> PublicKey:
    """A public key given as text (`ssh-ed25519 AAAA...`) or as a `.pub` file."""
    candidate = text.strip()
    if not candidate.startswith("ssh-"):
        path = Path(candidate).expanduser()
        try:
            candidate = read_user_file(
                path, "public key file", MAX_KEY_FILE_BYTES, error=SigningKeyError
            ).decode("utf-8")
        except FileNotFoundError:
            raise SigningKeyError(
                f"no public key file at {path}", hint="give 'ssh-ed25519 AAAA...' or a .pub file"
            ) from None
        except (OSError, UnicodeDecodeError) as e:
            raise SigningKeyError(f"cannot read public key file {path}: {e}") from None
    try:
        return parse_public_key_line(candidate)
    except KeyFormatError as e:
        raise SigningKeyError(f"{text.strip()[:60]!r}: {e.message}") from None


def parse_trust_key_spec(spec: str, since: int = 1) -> TrustKey:
    """`PUBKEY[=SCOPES][@SUBJECT]` as a trust-root entry (scopes default to ingest, commit, govern)."""
    match = _SPEC.match(spec.strip())
    if match is None:
        raise InvalidInputError(f"--trust-key {spec!r}: expected PUBKEY[=SCOPES][@SUBJECT]")
    key = read_public_key(match["key"])
    scopes: tuple[TrustScope, ...] = DEFAULT_SCOPES
    if match["scopes"]:
        try:
            scopes = tuple(dict.fromkeys(TrustScope(s) for s in match["scopes"].split(",")))
        except ValueError:
            valid = ", ".join(s.value for s in TrustScope)
            raise InvalidInputError(f"--trust-key {spec!r}: unknown scope", hint=f"scopes are: {valid}") from None
    subject = match["subject"]
    if subject is not None and (problem := actor_id_problem(subject)) is not None:
        raise InvalidInputError(f"--trust-key subject {subject!r} is not an actor id: {problem}")
    return TrustKey(key=key.text, scopes=scopes, since=since, subject=subject)


__all__ = ["SignWithOption", "SignedHead", "SigningPlan", "load_signer", "parse_trust_key_spec"]
