"""The in-order dispatcher (variants without a matcher): one step a slot, the
lowest channel still to take, in channel order; no table."""

from __future__ import annotations

from amaranth import Module

from golden import dispatchers as models
from golden.config import Config

from .dispatch import Dispatcher
from .prefix import lowest_of_pass

__all__ = ["InOrder"]


class InOrder(Dispatcher):
    """One step a slot, in channel order: a priority encoder over the pass's set.

    Parameters
    ----------
    cfg : Config
        Takes ``group_width``, ``rows`` and ``cols`` (the interface's widths).

    Members
    -------
    (:class:`hw.dispatcher.dispatch.Dispatcher`'s, for one group reading one channel; it
    keeps no table nor registers, so it reads only ``sets``.)
    """

    model = models.InOrder

    def __init__(self, cfg: Config):
        super().__init__(cfg, width=1, groups=1)

    def elaborate(self, platform):
        m = Module()
        G = self.cfg.group_width
        found, first, rest, more = lowest_of_pass(m, self, G, "left")
        m.d.comb += [self.found[0].eq(found), self.chan[0].eq(first), self.choice[0].take.eq(found),
                     self.rest[0].eq(rest), self.more.eq(more)]
        return m
