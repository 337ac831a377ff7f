"""The review UI at `/ui/` on `brain serve --http`: server-rendered Jinja2 pages, usable without JavaScript."""

from serve.ui.pages import ReviewUI

__all__ = ["ReviewUI"]
