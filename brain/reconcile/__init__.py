"""Reconciling diverged histories (PROTOCOL §10.3-§10.6): pure planning, then one commit through the writer.

| module | job |
|---|---|
| `ancestor.py` | histories over all parents, the merge base, up to date / fast-forward, trust roots |
| `arithmetic.py` | per-module M = (B ∪ ⋃Xᵢ) \\ ⋃(B \\ Xᵢ) on sorted id lists |
| `index.py` | what judging asks of our head's ledger (`OurIndex`), over a full `Ledger` |
| `judge.py` | the gate on incoming blocks, competing supersessions, the cascade, withdrawn, record checks |
| `plan.py` | the whole plan and each strategy's attribution cost |
| `records.py` | the removal and supersession records written with the result |
| `state.py` | `boltzmann/reconcile.json` (§10.6), read as hostile input |
| `journal.py` | `boltzmann/history.jsonl`: who reconciled, why, every decision |
| `commit.py` | merge, squash, rebase and fast-forward through `brain.writer` |
| `operations.py` | the operations the CLI calls: merge, status, resolve, accept-removals, continue, abort |
"""
