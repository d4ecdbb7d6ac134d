"""A dispatcher and a PE kind that no module of the project knows, added through
the registries alone (``tests/test_toys.py``).

The dispatcher issues one step a slot, the *highest* channel still to take, so
its order is its own while its slot count is the in-order one. The PE kind
computes a partial reuse whole: it reuses only full matches, so a partially
reused key costs both lanes in pass B instead of one. Both live in a module of
their own so that Dask's worker processes can import them."""

from __future__ import annotations

from amaranth import Const, Module, Signal

from golden.dispatchers import DispatcherModel, register
from golden.pe_contract import register as register_kind
from golden.pe_encoding import Mode
from golden.pe_kinds import PaperPE
from hw.dispatcher.dispatch import Dispatcher
from hw.dispatcher.dispatchers import register as register_unit

__all__ = ["Descending", "DescendingUnit", "WholeProducts"]


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


@register_kind
class WholeProducts(PaperPE):
    """The paper's PE and datapath, with partial reuse left unused: in every pass
    a partial state reads as no reuse (every state is still exact to treat so).
    A linear layer's partner passes run pass B's table, so its LINEAR pass must
    read the state as B does: the high part added there would be added twice."""
    name = "toy-whole"

    @classmethod
    def step_need(cls, mode, sq, sk):
        if mode in (Mode.A, Mode.B, Mode.C, Mode.D, Mode.LINEAR):
            sq, sk = (0 if s == 1 else s for s in (sq, sk))
        return super().step_need(mode, sq, sk)
