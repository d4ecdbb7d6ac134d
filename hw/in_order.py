"""The in-order dispatcher (variants without a matcher): one step a slot, the
lowest channel still to take, in channel order; no table."""

from __future__ import annotations

from amaranth import Module, Signal

from golden.config import Config

from .dispatch import Dispatcher
from .matcher import at_least, lowest_onehot, lowest_set

__all__ = ["InOrder"]


class InOrder(Dispatcher):
    """One step a slot, in channel order: a priority encoder over the pass's set.

    Parameters
    ----------
    cfg : Config
        Takes ``group_width``, ``rows`` and ``cols`` (the interface's widths).

    Members
    -------
    (:class:`hw.dispatch.Dispatcher`'s, for one group reading one channel; it
    keeps no table, so the write ports and ``mode`` and ``single`` are unused.)
    """

    def __init__(self, cfg: Config):
        super().__init__(cfg, width=1, groups=1)

    def elaborate(self, platform):
        m = Module()
        G = self.cfg.group_width
        found, first = lowest_set(m, self.sets[0], G, "left")
        taken = Signal(G)                     # one-hot, beside the index: no decode in series
        m.d.comb += taken.eq(lowest_onehot(self.sets[0], G))
        m.d.comb += [self.found[0].eq(found), self.chan[0].eq(first),
                     self.choice[0].take.eq(found),
                     self.rest[0].eq(self.sets[0] & ~taken),
                     # Some are left when two or more were given: counted beside the
                     # encoder, not after the one taken is struck out.
                     self.more.eq(at_least(m, self.sets[0], G, 2, "left")[1])]
        return m
