"""Shared fixtures for the whole suite."""

from __future__ import annotations

from tests.registry import auth_registry, faulty_proxy, registry  # noqa: F401 - registry fixtures (see tests/registry.py)
