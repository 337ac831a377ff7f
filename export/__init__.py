"""Export a brain to RAG frameworks: JSONL and Markdown files, and a read-only Python API.

    import export
    kb = export.open("brain")
    for record in kb.records():          # KnowledgeRecord: id, type, title, text, subject, evidence, ...
        ...
    kb.show("docs/setup.md")             # a block by id, prefix, or a source by its origin
    kb.evidence(record.id)               # the block and the sources it cites, with their text

See docs/export.md for LangChain and LlamaIndex retrievers built on it.
"""

from __future__ import annotations

from export.reader import BrainReader, EvidenceBundle, open
from export.records import Evidence, KnowledgeRecord

__all__ = ["BrainReader", "Evidence", "EvidenceBundle", "KnowledgeRecord", "open"]
