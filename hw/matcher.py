"""The dispatcher's matcher (DESIGN.md §5.4): nibble-lane pairing of channel steps.

It keeps, for every channel of the group, what each column of the array needs
of the 8-bit column port in passes B and D (codes 0, 1, 2 for 0, 4, 8 bits;
written while pass A reads every channel, see :mod:`golden.matcher`). Each
cycle it looks at the next ``lookahead`` channels of the pass's remaining set
(the head and its candidates, found by chained priority encoders), and pairs
the head with the first candidate whose needs fit beside the head's in every
column. The engine issues the head, and the partner when there is one, and
removes them from the set. A table write bypasses to the lookup in the same
cycle, so the last channel of pass A can be paired on the first cycle of B.
"""

from __future__ import annotations

from amaranth import Array, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.config import Config, require_config

__all__ = ["Matcher", "lowest_set"]


def lowest_set(m, vector, width, name):
    """(found, index) of the lowest set bit of ``vector``: a priority encoder."""
    index = Signal(range(max(2, width)), name=f"{name}_index")
    for k in reversed(range(width)):
        with m.If(vector[k]):
            m.d.comb += index.eq(k)
    return vector.any(), index


class Matcher(wiring.Component):
    """Merge unit over a lookahead window of channel steps.

    Parameters
    ----------
    cfg : Config
        Takes ``group_width`` (table entries: the widest channel group), ``cols``
        (needs per entry) and ``lookahead`` (the head and ``lookahead - 1``
        candidates).

    Members
    -------
    wr_en, wr_chan : In(1), In(range(group_width + 1))
        Write channel ``wr_chan``'s entry of both tables this cycle.
    wr_b, wr_d : In(2 * cols)
        The entry for passes B and D: 2 bits per column (0, 4 or 8 bits of the port).
    use_d : In(1)
        Look up table D (pass D) instead of B.
    steps : In(group_width)
        The pass's channels still to issue, one bit each.
    head_valid, head, head_need : Out(1), Out(range(group_width + 1)), Out(2 * cols)
        The lowest remaining channel, and its needs.
    second_valid, second, second_need : Out(1), Out(range(group_width + 1)), Out(2 * cols)
        The first candidate in the window whose needs fit beside the head's, if any.
    """

    @staticmethod
    def storage_bits(cfg: Config) -> int:
        """Bits of the need tables (B and D, 2 bits per column per channel)."""
        return 2 * cfg.group_width * 2 * cfg.cols

    def __init__(self, cfg: Config):
        self.cfg = require_config(cfg, self)
        G, C = cfg.group_width, cfg.cols
        chan = range(max(2, G))
        super().__init__({
            "wr_en": In(1), "wr_chan": In(chan), "wr_b": In(2 * C), "wr_d": In(2 * C),
            "use_d": In(1),
            "steps": In(G),
            "head_valid": Out(1), "head": Out(chan), "head_need": Out(2 * C),
            "second_valid": Out(1), "second": Out(chan), "second_need": Out(2 * C),
        })

    def elaborate(self, platform):
        m = Module()
        cfg = self.cfg
        G, C, L = cfg.group_width, cfg.cols, cfg.lookahead
        # Tables are written (in pass A) before they are read, so they need no reset.
        table_b = Array(Signal(2 * C, name=f"need_b{c}", reset_less=True) for c in range(G))
        table_d = Array(Signal(2 * C, name=f"need_d{c}", reset_less=True) for c in range(G))
        with m.If(self.wr_en):
            m.d.sync += [table_b[self.wr_chan].eq(self.wr_b), table_d[self.wr_chan].eq(self.wr_d)]
        # Pick the pass's table once per entry, with the write bypassed in, so each window
        # entry needs one G:1 read instead of one per table.
        written = Mux(self.use_d, self.wr_d, self.wr_b)
        table = Array(Signal(2 * C, name=f"need{c}") for c in range(G))
        for c in range(G):
            m.d.comb += table[c].eq(Mux(self.wr_en & (self.wr_chan == c), written,
                                        Mux(self.use_d, table_d[c], table_b[c])))

        def need_of(c, name):
            need = Signal(2 * C, name=name)
            m.d.comb += need.eq(table[c])
            return need

        # The window: head, then up to L-1 candidates, in channel order.
        left = self.steps
        window = []
        for k in range(L):
            found, idx = lowest_set(m, left, G, f"win{k}")
            window.append((found, idx, need_of(idx, f"win{k}_need")))
            rest = Signal(G, name=f"left{k + 1}")
            m.d.comb += rest.eq(left & ~(Const(1, G) << idx))
            left = rest
        head_found, head, head_need = window[0]
        m.d.comb += [self.head_valid.eq(head_found), self.head.eq(head), self.head_need.eq(head_need)]

        def fits(a, b):
            ok = Const(1)
            for j in range(C):
                ok = ok & (a[2 * j:2 * j + 2] + b[2 * j:2 * j + 2] <= 2)
            return ok

        # The first compatible candidate wins: scan from the farthest back.
        for found, idx, need in reversed(window[1:]):
            with m.If(head_found & found & fits(head_need, need)):
                m.d.comb += [self.second_valid.eq(1), self.second.eq(idx), self.second_need.eq(need)]
        return m
