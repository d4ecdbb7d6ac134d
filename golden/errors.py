"""The error a design point that cannot be built raises."""

from __future__ import annotations

__all__ = ["ConfigError"]


class ConfigError(ValueError):
    """A design point that cannot be built; the message is meant for a user."""
