"""Retrieval for agents: a local full-text index of a brain, search with verified evidence bundles,
associative expansion over the brain's edges, and reading a source's normalized view.

Imports `brain` only. The index is a sidecar (`retrieval.paths`), never packed or pushed, rebuilt on demand.
"""
