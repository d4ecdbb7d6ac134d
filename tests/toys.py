"""A dispatcher that no module of the project knows, added through the registries
alone (``tests/test_toys.py``): it issues one step a slot, the *highest* channel
still to take, so its order is its own while its slot count is the in-order one.
It lives in a module of its own so that Dask's worker processes can import it."""

from __future__ import annotations

from amaranth import Const, Module, Signal

from golden.dispatchers import DispatcherModel, register
from hw.dispatch import Dispatcher
from hw.dispatchers import register as register_unit

__all__ = ["Descending", "DescendingUnit"]


@register
class Descending(DispatcherModel):
    """In the matcher's place, one channel a slot, from the top down: a pass takes
    a slot per channel it streams, as in order."""
    name = "toy-descending"

    @staticmethod
    def slots(chans, needs, mode, cfg):
        return len(chans)


@register_unit
class DescendingUnit(Dispatcher):
    """A priority encoder from the top of the pass's set; no table."""

    model = Descending

    def __init__(self, cfg):
        super().__init__(cfg, width=1, groups=1)

    def elaborate(self, platform):
        m = Module()
        G = self.cfg.group_width
        sets = self.sets[0]
        top = Signal(range(max(2, G)))
        for c in range(G):              # the last one set wins: the highest
            with m.If(sets[c]):
                m.d.comb += top.eq(c)
        rest = Signal(G)
        m.d.comb += [rest.eq(sets & ~(Const(1, G) << top)),
                     self.found[0].eq(sets.any()), self.chan[0].eq(top), self.choice[0].take.eq(sets.any()),
                     self.rest[0].eq(rest), self.more.eq(rest.any())]
        return m
