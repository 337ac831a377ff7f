"""Retrieval for agents: a local full-text index of a brain, search with verified evidence bundles,
associative expansion over the brain's edges, and reading a source's normalized view.

Imports `brain` only. The index is a sidecar (`retrieval.paths`), never packed or pushed, rebuilt on demand.
"""

DEFAULT_LIMIT = 10
"""How many matches a search returns unless told: here, so that `brain search --help` can show it without
loading the search engine (`retrieval.query` re-exports it)."""
