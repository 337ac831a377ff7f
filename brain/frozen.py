"""The base of every immutable pydantic model here: frozen (hashable, never changed after validation) and
refusing unknown fields, so a typo or a field from a newer writer is an error instead of being dropped."""

from __future__ import annotations

import inspect
from typing import Any

from pydantic import BaseModel, ConfigDict

try:  # pydantic's own initialiser of private attributes, to recognise it (a speed-up only: see below)
    from pydantic._internal._model_construction import init_private_attributes
except ImportError:  # pragma: no cover - another pydantic layout: models keep pydantic's initialisation
    init_private_attributes = None  # type: ignore[assignment]


class FrozenModel(BaseModel):
    """A frozen pydantic model that refuses unknown fields."""

    # Validators are built when a class is first used, not when its module is imported: a command imports
    # far more models than it validates (an unchanged re-ingest of 10,000 sources: -50 ms, 6% of its wall).
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # A model with private attributes (the caches of canonical bytes and digests) gets a `model_post_init`
        # that fills them; pydantic wraps each subclass's around its parent's, so a block three classes deep
        # ran it three times: half the cost of building a provenance block. When nothing but that
        # initialisation is in the chain (pydantic's, or ours for a parent) and every default is None (empty
        # caches), one dict does the same.
        if not cls.__private_attributes__ or init_private_attributes is None:
            return
        innermost = inspect.unwrap(cls.model_post_init)
        if innermost is not init_private_attributes and not getattr(innermost, _EMPTY_CACHES, False):
            return
        defaults = {name: attribute.get_default() for name, attribute in cls.__private_attributes__.items()}
        if any(value is not None for value in defaults.values()):
            return

        def empty_caches(self: BaseModel, context: Any, /) -> None:
            if self.__pydantic_private__ is None:
                object.__setattr__(self, "__pydantic_private__", dict(defaults))

        setattr(empty_caches, _EMPTY_CACHES, True)
        cls.model_post_init = empty_caches  # type: ignore[method-assign]


_EMPTY_CACHES = "_brain_empty_caches"  # marks the `model_post_init` above, which a subclass's chain may wrap


__all__ = ["FrozenModel"]
