"""Branches (§10.1-§10.2): names and their tags, `boltzmann/refs.json`, and the operations on them.

`names` and `refs` are pure (and importable by `brain.store.head` without a cycle: keep this file free of
imports); `operations` lists, creates, deletes and checks out branches of a `Brain`.
"""
