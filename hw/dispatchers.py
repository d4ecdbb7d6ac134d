"""Every dispatcher by name (each a :class:`hw.dispatch.Dispatcher`), and which one
an engine has."""

from __future__ import annotations

from golden.config import Config

from .channel_window import ChannelWindow
from .in_order import InOrder
from .matcher import Matcher

__all__ = ["DISPATCHERS", "dispatcher_of"]

#: name -> component class; the golden model of each is named in its docstring.
DISPATCHERS = {
    "in-order": InOrder,              # golden.cycle_model's natural order
    "matcher": Matcher,               # golden.matcher
    "channel-window": ChannelWindow,  # golden.channel_window
}


def dispatcher_of(cfg: Config, matcher: bool) -> str:
    """The dispatcher of an engine: in order without a matcher; with one, the
    channel window where ``cfg.issue_window`` asks for it, else the matcher."""
    if not matcher:
        return "in-order"
    return "channel-window" if cfg.issue_window else "matcher"
