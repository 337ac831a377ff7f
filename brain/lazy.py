"""Package exports that load on first use (PEP 562), so importing one light module of a package does not load
what its `__init__` re-exports."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(package: str, sources: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module `__getattr__` and `__dir__` of `package`, whose export `name` is defined in `sources[name]`."""
    namespace = import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        source = sources.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(source), name)
        namespace[name] = value  # once: later lookups do not come here
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *sources})

    return __getattr__, __dir__
