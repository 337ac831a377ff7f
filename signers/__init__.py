"""Signers: Ed25519 keys that sign snapshots, from an OpenSSH key file or an ssh-agent (§9.1).

At the `ingest`/`oci` level: this package reads key files and talks to a unix socket, which the core
(`brain/`) never does. It depends on `brain` only. The private key never leaves a signer object: it is
not logged, not put in an error and never written anywhere.
"""

from signers.resolve import open_signer

__all__ = ["open_signer"]
