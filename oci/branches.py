"""Branches on a registry (§10.1): the tags of a repository that decode to branch names."""

from __future__ import annotations

from brain.branches.names import DEFAULT_MAIN_TAG, decode_tag
from brain.frozen import FrozenModel
from oci.remote_tags import list_tags
from oci.transport import RegistryClient


class RemoteBranch(FrozenModel):
    """One branch a repository publishes: its name and the tag it is published under."""

    name: str
    tag: str


class RemoteBranches(FrozenModel):
    """`brain branch --remote REF`: the repository, main's tag used to decode, and its branches by name."""

    repository: str
    main_tag: str
    branches: list[RemoteBranch]


def remote_branches(client: RegistryClient, main_tag: str = DEFAULT_MAIN_TAG) -> RemoteBranches:
    """The branches `client`'s repository publishes: every tag that decodes to a branch name (others are skipped)."""
    found = {}
    for tag in list_tags(client):
        name = decode_tag(tag, main_tag)
        if name is not None:
            found[name] = RemoteBranch(name=name, tag=tag)
    reference = client.reference
    return RemoteBranches(
        repository=f"{reference.registry}/{reference.repository}",
        main_tag=main_tag,
        branches=[found[name] for name in sorted(found)],
    )


__all__ = ["RemoteBranch", "RemoteBranches", "remote_branches"]
