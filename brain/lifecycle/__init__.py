"""The lifecycle of members (§3.7, §7.2-§7.5): what a drop cascades to, which records a drop, supersession,
demotion or redaction writes, and which blocks stay accessible. Pure logic, one job per module; the only
write path stays `brain.writer`.

| module | job |
|---|---|
| `accessibility.py` | §7.2: accessible = not demoted and not the loser of a supersession whose winner is a member |
| `cascade.py` | transitive reach over a dependency graph (evidence and structural edges) |
| `graph.py` | the `DependencyGraph` protocol, and its adapter over a full `Ledger` |
| `records.py` | the exact `removal`, `supersession` and `demotion` records (§3.5, §7.3) |
| `drop.py` | planning a drop: refusals, the cascade per module, the removal records |
| `stance.py` | planning a supersession or demotion: refusals and the record |
| `redact.py` | planning a redaction: which blocks and blobs are destroyed |
| `reachability.py` | which blobs the retained snapshots reach (prune) |
"""
