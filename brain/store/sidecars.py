"""Every file under a brain's `boltzmann/` directory, named in one place, with its rules.

The protocol defines only `boltzmann/head.json` (§5.5); everything else there is local state of this
implementation: never packed, pushed or trusted by another brain. Each entry says who writes it, in what
format, how (all writes go through `brain.store.atomic`; appends are named as such), what a reader may
believe of it, and whether deleting it loses anything. `docs/DESIGN.md` shows this table
(`markdown_table()`), and `tests/test_sidecars.py` checks that the table, this registry and the files
the code writes agree.

Modules that read or write a sidecar take its path from here (`HEAD.parts`, `LAYERS.path(root)`), so
a new sidecar is one new entry: its owner, format and rules are reviewed in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DIRECTORY = "boltzmann"


@dataclass(frozen=True)
class Sidecar:
    """One file (or directory of files) under `boltzmann/`."""

    parts: tuple[str, ...]
    """Its path relative to the brain root, e.g. `("boltzmann", "head.json")`."""
    owner: str
    """The module that writes it."""
    format: str
    write: str
    """How it is written: atomic replace (fsynced or not), or append; and under which lock."""
    trust: str
    """What a reader may believe of it."""
    deletable: bool
    """Whether deleting it loses nothing a later command cannot rebuild."""
    why: str
    """What deleting it costs, or why it is safe."""
    directory: bool = False

    @property
    def name(self) -> str:
        """`boltzmann/...`, as the docs and messages spell it."""
        return "/".join(self.parts) + ("/" if self.directory else "")

    def path(self, root: Path | str) -> Path:
        """Its path inside the brain at `root`."""
        return Path(root).joinpath(*self.parts)

    def covers(self, relative: str) -> bool:
        """Whether `relative` (a path under the brain root, `/`-separated) is this file or inside this directory."""
        own = "/".join(self.parts)
        return relative == own or (self.directory and relative.startswith(own + "/"))


HEAD = Sidecar(
    ("boltzmann", "head.json"),
    owner="brain.store.head",
    format="JCS `head` document (§5.5): the snapshot digest, retained list, origin",
    write="atomic replace, fsynced, the last step of every commit, under the writer lock",
    trust="names the current snapshot; readers load and check the snapshot it names",
    deletable=False,
    why="the brain is then empty: its history is unreachable until the head is restored",
)
REFS = Sidecar(
    ("boltzmann", "refs.json"),
    owner="brain.branches.refs (branch, checkout, pull, commits onto another branch)",
    format="JCS `refs` document (§10.2): branches -> snapshot, tag, reference, origin; current; switching",
    write="atomic replace, fsynced, under the writer lock; a checkout writes it before and after head.json",
    trust="hostile until read strictly; every branch snapshot is checked to be a stored snapshot before use",
    deletable=False,
    why="every branch but the current one is forgotten (their snapshots stay stored until pruned)",
)
LOCK = Sidecar(
    ("boltzmann", "lock"),
    owner="brain.store.lock",
    format="JSON holder info (host, pid, actor, time)",
    write="created once, `flock`ed by the writer; holder info rewritten in place while the lock is held",
    trust="only the `flock` counts; the holder info only names who a waiting writer waits for",
    deletable=True,
    why="recreated by the next writer (delete it only while no writer runs)",
)
TOMBSTONES = Sidecar(
    ("boltzmann", "tombstones.json"),
    owner="brain.lifecycle.destroy (redact; read by brain.store.blobs, brain.verify.resolvability)",
    format="JSON: destroyed blob digest (hex) -> reason",
    write="atomic replace, fsynced, before the redacted bytes are deleted, under the writer lock",
    trust="local record of what this brain destroyed on purpose; a pulled tombstone is checked first (§7.5)",
    deletable=False,
    why="verify would report the redacted blobs as missing, and a later ingest or pull could store them again",
)
REDACTION = Sidecar(
    ("boltzmann", "redaction.json"),
    owner="brain.store.redaction (redact; read by every writer, verify, pack, push)",
    format="JSON: an unfinished redaction's parent head, tombstones, and digests to destroy (hex -> reason)",
    write="atomic replace, fsynced, before the redaction's snapshot moves the head, under the writer lock; "
    "removed once every byte is destroyed",
    trust="local intent: while present the redaction is unfinished (verify reports it, writers, pack and push "
    "refuse; `brain redact --resume` completes it)",
    deletable=False,
    why="an interrupted redaction would then leave the redacted bytes in blobs, packed layers and caches",
)
FINGERPRINTS = Sidecar(
    ("boltzmann", "fingerprints.json"),
    owner="ingest.fingerprints",
    format='JSON `{"format": "brain.fingerprints/1", "entries": {path: row}}`',
    write="atomic replace, fsynced, after each checkpoint's commit, under the writer lock",
    trust="a cache: a hit is used only if its block is a member and its pipeline version is installed",
    deletable=True,
    why="the next ingest re-reads and re-hashes unchanged sources",
)
CACHE = Sidecar(
    ("boltzmann", "cache"),
    owner="ingest (the caches below)",
    format="directory",
    write="created on first use",
    trust="caches only",
    deletable=True,
    why="everything in it is rebuilt on demand (a redaction deletes it: it may quote redacted text)",
    directory=True,
)
PROPOSALS = Sidecar(
    ("boltzmann", "cache", "proposals.log"),
    owner="ingest.cache",
    format="append-only lines `<key> <entry JSON>`",
    write="appended under the writer lock, not fsynced: a cache (a torn last line is a miss)",
    trust="a cache: an entry is re-validated against its task before use",
    deletable=True,
    why="the next ingest asks the proposer again (the records' task ids still say what was answered)",
)
LINEAGE = Sidecar(
    ("boltzmann", "cache", "lineage.log"),
    owner="ingest.lineage",
    format="JSON lines: a format line, facts, and a marker per commit",
    write="appended after each commit, or atomically rewritten (not fsynced): a cache, under the writer lock",
    trust="used only if its last marker names the snapshot and every count matches; readers intersect with members",
    deletable=True,
    why="the next run that needs it rebuilds it from the ledger once",
)
LAYERS = Sidecar(
    ("boltzmann", "layers.json"),
    owner="oci.layer_cache",
    format="JSON: layer contents key -> layer digest, size, member facts",
    write="atomic replace, not fsynced: a cache",
    trust="a hint: an entry is used only after the layer blob it names re-hashes to its digest",
    deletable=True,
    why="the next pack re-compresses unchanged modules",
)
SEARCH = Sidecar(
    ("boltzmann", "search"),
    owner="retrieval (search index; `retrieval.paths`)",
    format="directory: the SQLite FTS5 index (`index.sqlite` and its `-wal`/`-shm` companions; `rebuild.lock`, "
           "held while it is rebuilt)",
    write="rebuilt or updated by `brain search`/`brain serve`",
    trust="a cache of the current snapshot's text; rebuilt when missing, stale, torn or corrupt",
    deletable=True,
    why="the next search rebuilds it (a redaction deletes it: it may quote redacted text)",
    directory=True,
)
PUSHES = Sidecar(
    ("boltzmann", "pushes.json"),
    owner="oci.push_log (push)",
    format='JSON `{"format": "brain.pushes/1", "pushes": [{repository, tag, digest, snapshot, at}]}`',
    write="atomic replace, fsynced, after each successful push, under the writer lock",
    trust="a record of what this brain published: read to name remote copies of redacted bytes, never to decide",
    deletable=True,
    why="only the list of remote copies a redaction names gets shorter (tags still found through the registry)",
)
SIGNATURES = Sidecar(
    ("boltzmann", "signatures.json"),
    owner="brain.store.authn_files (sign, pull)",
    format="JCS index: snapshot digest -> signature record digests (the records are blobs, §9.3)",
    write="atomic replace, fsynced, under the writer lock",
    trust="an index: every record it names is a blob re-verified before use",
    deletable=False,
    why="the brain no longer knows its signatures: they must be added (or pulled) again",
)
TRUST = Sidecar(
    ("boltzmann", "trust.json"),
    owner="brain.store.authn_files (trust, pull)",
    format="JCS `TrustPin` (§9.5): the trust root this consumer accepts",
    write="atomic replace, fsynced, under the writer lock",
    trust="the consumer's own decision: the pin pulls are checked against",
    deletable=False,
    why="the pin is lost: the next pull trusts on first use again",
)
REMOTES = Sidecar(
    ("boltzmann", "remotes.json"),
    owner="brain.store.authn_files (pull)",
    format="JCS `RemoteMemory` (§9.5): references once pulled signed, with the snapshot",
    write="atomic replace, fsynced, under the writer lock",
    trust="the consumer's own memory (keys normalized, `oci.reference`): a brain once pulled signed refuses "
    "heads that do not authenticate against its trust root, whatever the reference",
    deletable=False,
    why="downgrade protection for those references is lost",
)
RECONCILE = Sidecar(
    ("boltzmann", "reconcile.json"),
    owner="brain.reconcile.state (merge, reconcile)",
    format="JCS reconciliation state (§10.6): theirs, ancestor, strategy, actor, reason, head, resolutions",
    write="atomic replace, fsynced, under the writer lock; deleted (never emptied) when the reconciliation ends",
    trust="hostile until parsed: strict JSON, exact §10.6 shape, canonical bytes; an empty file reads as absent",
    deletable=False,
    why="the halted reconciliation's answers are lost (the merge can be run again); "
        "while it exists every write is refused",
)
HISTORY = Sidecar(
    ("boltzmann", "history.jsonl"),
    owner="brain.reconcile.journal (merge, reconcile continue)",
    format="JSON lines: per reconciliation snapshot, who asked, why, and every admit/reject/prefer decision",
    write="atomic replace (read, add one line), fsynced, before the head moves, under the writer lock",
    trust="local memory only: `brain log` shows a line only for a snapshot in the history it walks",
    deletable=False,
    why="who reconciled, why, and the admit/reject decisions are recorded nowhere else (§10.8 item 3)",
)
TRUST_LOG = Sidecar(
    ("boltzmann", "trust-log.jsonl"),
    owner="brain.store.authn_files (pull --re-root)",
    format="JSON lines: one object per explicit re-root (time, reference, snapshot, previous and new trust root)",
    write="atomic replace (the lines so far plus one), fsynced, under the writer lock",
    trust="the consumer's own audit record of the trust roots it chose to leave; never read for a decision",
    deletable=False,
    why="the record of when and why this brain changed authority is lost",
)

SIDECARS: tuple[Sidecar, ...] = (
    HEAD,
    REFS,
    LOCK,
    TOMBSTONES,
    REDACTION,
    FINGERPRINTS,
    CACHE,
    PROPOSALS,
    LINEAGE,
    LAYERS,
    SEARCH,
    PUSHES,
    SIGNATURES,
    TRUST,
    REMOTES,
    RECONCILE,
    HISTORY,
    TRUST_LOG,
)


def sidecar_for(relative: str) -> Sidecar | None:
    """The entry naming `relative` (a `/`-separated path under the brain root), the most specific one first."""
    for sidecar in sorted(SIDECARS, key=lambda s: -len(s.parts)):
        if sidecar.covers(relative):
            return sidecar
    return None


def markdown_table() -> str:
    """The table `docs/DESIGN.md` shows: one row per sidecar."""
    rows = [
        "| file | owner | format | write rule | trust rule | safe to delete? |",
        "|---|---|---|---|---|---|",
    ]
    for s in SIDECARS:
        verdict = ("yes: " if s.deletable else "**no**: ") + s.why
        rows.append(f"| `{s.name}` | {s.owner} | {s.format} | {s.write} | {s.trust} | {verdict} |")
    return "\n".join(rows) + "\n"


__all__ = [
    "CACHE",
    "DIRECTORY",
    "FINGERPRINTS",
    "HEAD",
    "HISTORY",
    "LAYERS",
    "LINEAGE",
    "LOCK",
    "PROPOSALS",
    "PUSHES",
    "RECONCILE",
    "REDACTION",
    "REFS",
    "REMOTES",
    "SEARCH",
    "SIDECARS",
    "SIGNATURES",
    "TOMBSTONES",
    "TRUST",
    "TRUST_LOG",
    "Sidecar",
    "markdown_table",
    "sidecar_for",
]
