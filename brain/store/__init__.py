"""The only filesystem code of the core: atomic writes, blobs, the OCI layout, the head and the lock."""

from brain.store.atomic import atomic_write, atomic_write_stream, sync_tree
from brain.store.blobs import BlobStore
from brain.store.head import Head, Origin, read_head, write_head
from brain.store.layout import Descriptor, ImageIndex, Layout
from brain.store.lock import WriterLock

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
