"""The dispatcher's ablation (docs/concepts.md, "Dispatcher variants"): which of
the scheduler and the matcher (or the channel window in the matcher's place) each
variant has, as ``(scheduler, matcher)``. ``full`` has both, ``pe`` neither.

Below every registry, so that a registry can keep these names for the variants."""

from __future__ import annotations

__all__ = ["VARIANTS"]

VARIANTS = {"pe": (False, False), "pe-sh": (True, False), "pe-m": (False, True), "full": (True, True)}
