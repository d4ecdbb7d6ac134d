"""Every dispatcher's component by name (each a :class:`hw.dispatch.Dispatcher`).

The names, and which one a design point has, are :mod:`golden.dispatchers`'
(whose slot model of each the engine's cycles must equal)."""

from __future__ import annotations

from golden.dispatchers import dispatcher_of

from .channel_window import ChannelWindow
from .in_order import InOrder
from .matcher import Matcher

__all__ = ["DISPATCHERS", "dispatcher_of"]

#: name -> component class, under the names of :data:`golden.dispatchers.DISPATCHERS`.
DISPATCHERS = {
    "in-order": InOrder,              # one channel a slot
    "matcher": Matcher,               # golden.matcher
    "channel-window": ChannelWindow,  # golden.channel_window
}

