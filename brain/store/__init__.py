"""The only filesystem code of the core: atomic writes, blobs, the OCI layout, the head and the lock.

The exports load on first use (PEP 562), so importing one light module of the package (`brain.store.user_files`,
`brain.store.oserrors`) does not load the blob store and the pydantic models of the head and the layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brain.lazy import lazy_exports

if TYPE_CHECKING:
    from brain.store.atomic import atomic_write, atomic_write_stream, sync_tree
    from brain.store.blobs import BlobStore
    from brain.store.head import Head, Origin, read_head, write_head
    from brain.store.layout import Descriptor, ImageIndex, Layout
    from brain.store.lock import WriterLock

_EXPORTED_FROM = {
    "BlobStore": "brain.store.blobs",
    "Descriptor": "brain.store.layout",
    "Head": "brain.store.head",
    "ImageIndex": "brain.store.layout",
    "Layout": "brain.store.layout",
    "Origin": "brain.store.head",
    "WriterLock": "brain.store.lock",
    "atomic_write": "brain.store.atomic",
    "atomic_write_stream": "brain.store.atomic",
    "read_head": "brain.store.head",
    "sync_tree": "brain.store.atomic",
    "write_head": "brain.store.head",
}

__all__ = [
    "BlobStore",
    "Descriptor",
    "Head",
    "ImageIndex",
    "Layout",
    "Origin",
    "WriterLock",
    "atomic_write",
    "atomic_write_stream",
    "read_head",
    "sync_tree",
    "write_head",
]

if not TYPE_CHECKING:  # type checkers see the imports above, and no name that is not one of them
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTED_FROM)
