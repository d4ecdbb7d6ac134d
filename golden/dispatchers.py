"""Every dispatcher's slot model by name, and which one a design point has.

A dispatcher decides which channel steps a pass of B, C or D issues in each slot.
Its model here answers one question, how many slots a pass takes, from the
channels the pass streams and the lanes each PE needs for each of them. The RTL
of each is the component of the same name in :mod:`hw.dispatchers`; adding a
dispatcher means its golden module, its hw module and one entry in each registry.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .channel_window import window_slots
from .config import Config
from .matcher import match, paired_pass_slots

__all__ = ["DISPATCHERS", "dispatcher_of", "dispatched_slots"]


def _in_order(chans, needs, mode: int, cfg: Config) -> int:
    # One channel a slot, in channel order: what a pass streams, it issues (no lanes read).
    return len(chans)


def _matcher(chans, needs, mode: int, cfg: Config) -> int:
    # The matcher pairs steps for every PE at once, so it reads the PEs as one row;
    # it fills its window on the pass's first slot.
    lanes = np.asarray(needs())
    return paired_pass_slots(len(match(chans, lanes.reshape(len(lanes), -1), cfg.lookahead)))


def _channel_window(chans, needs, mode: int, cfg: Config) -> int:
    # Each column (B, D) or row (C) takes its own steps from the window.
    return len(window_slots(np.asarray(needs()), mode, cfg.issue_window))


#: name -> slots of one pass: ``f(chans, needs, mode, cfg)``, where ``chans`` are the
#: channels the pass streams and ``needs()`` gives each valid PE's lanes per channel
#: of the group, ``[Dg, Rv, Cv]`` (0: no work; a channel outside ``chans`` needs none).
#: A function, not the array: the in-order dispatcher never reads it, and it costs
#: the cycle model a fifth of its time to build.
DISPATCHERS: dict[str, Callable[..., int]] = {
    "in-order": _in_order,                  # natural channel order
    "matcher": _matcher,                    # golden.matcher
    "channel-window": _channel_window,      # golden.channel_window
}


def dispatcher_of(cfg: Config, matcher: bool) -> str:
    """The dispatcher of an engine: in order without a matcher; with one, the
    channel window where ``cfg.issue_window`` asks for it, else the matcher."""
    if not matcher:
        return "in-order"
    return "channel-window" if cfg.issue_window else "matcher"


def dispatched_slots(chans, needs: Callable[[], np.ndarray], mode: int, cfg: Config, matcher: bool = True) -> int:
    """Slots one paired pass (B, C or D) takes under the design point's dispatcher
    (``needs``: as :data:`DISPATCHERS` says)."""
    return DISPATCHERS[dispatcher_of(cfg, matcher)](chans, needs, mode, cfg)
