"""A channel-window engine's routing in the operand stage: the broadcast side
carries every window channel's bytes, the choosing side each group's own steps;
and each group's need bits of the channel pass A streams."""

from __future__ import annotations

from amaranth import Array, Cat, Const, Mux, Signal
from amaranth.lib import data

from golden.channel_window import row_groups
from golden.pe_encoding import Load, Mode
from golden.reuse import State

from ..dispatcher.channel_window import rows_choose
from ..dispatcher.matcher import lane_masks, pe_masks
from .buffers import word_layout

__all__ = ["window_operands", "window_need_bits"]


def window_operands(engine, m, s1, reads, array, load_of, use_x0, use_k0):
    """S1 of a channel-window engine: the broadcast side carries all ``W``
    channels' bytes, the choosing side (columns in B and D, rows in C) its
    own steps' bytes at positions 0 and 1 with their window positions."""
    cfg = engine.cfg
    R, C, W = cfg.rows, cfg.cols, engine.window
    by_rows = Signal()
    m.d.comb += by_rows.eq(rows_choose(s1.mode))
    q_words = [data.View(word_layout(engine.design, R), q.data) for q, _ in reads]
    k_words = [data.View(word_layout(engine.design, C), k.data) for _, k in reads]
    issued = s1.valid & s1.steps
    for i in range(R):
        es = [q_words[w][i] for w in range(W)]
        # The dense schedule's folded key: the row adder forms P0 + P1 (<= 127).
        fold = engine.dense & (es[0].state == State.FULL)
        a = [Mux(use_x0, e.x0, e.x1) for e in es]
        a[0] = Mux(fold, (es[0].x0 + es[0].x1)[:8], a[0])
        sq = [Mux(engine.dense, 0, e.state) for e in es]
        choice = s1.choice[i]
        row = array.row_in[i]
        for w in range(W):
            own = w < 2
            m.d.sync += [
                row.a[w].eq(Mux(by_rows, Array(a)[choice.sel[w]], a[w]) if own else a[w]),
                row.sq[w].eq(Mux(by_rows, Array(sq)[choice.sel[w]], sq[w]) if own else sq[w]),
            ]
        m.d.sync += [
            row.sel.eq(choice.sel),
            row.take.eq(Mux(issued & es[0].valid, Mux(by_rows, choice.take, 0b11), 0)),
            row.mode.eq(s1.mode),
            row.load.eq(Mux(s1.valid, load_of, Load.KEEP)),
            row.drain.eq(s1.valid & s1.drain),
        ]
    for j in range(C):
        es = [k_words[w][j] for w in range(W)]
        b = [Mux(use_k0, e.x0, e.x1) for e in es]
        sk = [e.state for e in es]
        choice = s1.choice[j]
        col = array.col_in[j]
        for w in range(W):
            own = w < 2
            m.d.sync += [
                col.b[w].eq(Mux(by_rows, b[w], Array(b)[choice.sel[w]]) if own else b[w]),
                col.sk[w].eq(Mux(by_rows, sk[w], Array(sk)[choice.sel[w]]) if own else sk[w]),
            ]
        m.d.sync += [col.sel.eq(choice.sel), col.take.eq(Mux(by_rows, 0b11, choice.take)),
                     array.col_valid[j].eq(es[0].valid)]


def window_need_bits(m, match, needs, cfg) -> None:
    """Each group's need bits of the channel in S1 (``needs.groups``), from the
    entry the dispatcher is being written."""
    R, C = cfg.rows, cfg.cols
    # Per group: a column needs the channel in B (D) when some PE of it has
    # work there, a row in C likewise; the matcher's masks over that entry
    # (an invalid row or column needs nothing).
    for p, mode in enumerate((Mode.B, Mode.C, Mode.D)):
        some, _ = pe_masks(m, match.wr_data, lane_masks(m, Const(mode, Mode), cfg.pe.kind),
                           R, C, f"needs_{'BCD'[p]}")
        if row_groups(mode):
            m.d.comb += [needs.groups[p][i].eq(some[i * C:(i + 1) * C].any()) for i in range(R)]
        else:
            m.d.comb += [needs.groups[p][j].eq(Cat(*(some[i * C + j] for i in range(R))).any())
                         for j in range(C)]
