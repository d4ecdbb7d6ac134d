"""The augmented PE of a channel-window array (``Config.issue_window``).

With a channel window, the columns (passes B, D) or the rows (pass C) choose
their own steps from the ``W`` channels of a slot (:mod:`golden.channel_window`).
So the ports that broadcast carry all ``W`` channels: the row port in B and D,
the column port in C, while the choosing side carries its one or two steps'
bytes and their window positions (``sel``). Each PE picks its step operands
from the broadcast bytes by the choosing side's ``sel`` and hands them to an
unchanged :class:`hw.core.pe.PE`, whose proofs therefore still hold; its own
pass-through registers go unused (the wrapper passes the wide ports on).

A pass that streams one channel a slot (A, LINEAR, the dense schedule, an
unpaired pass) puts it at position 0 with ``sel = 0``. A PE's steps are those
both ports mark: ``row.take & col.take`` (the side that does not choose marks
both, or none for a row that does not exist).
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal, signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.config import Config, require_config
from golden.pe_encoding import Load, Mode
from golden.reuse import State

from ..dispatcher.channel_window import rows_choose
from .pe import LANES, PE, drain_signature

__all__ = ["window_row_layout", "window_col_layout", "WindowPE"]


def window_row_layout(width: int) -> data.StructLayout:
    """What travels along a row of a ``width``-channel window array."""
    return data.StructLayout({
        "a":     data.ArrayLayout(signed(8), width),   # row operands; pass C: the row's steps in 0, 1
        "sq":    data.ArrayLayout(State, width),       # their reuse states
        "sel":   data.ArrayLayout(range(width), 2),    # pass C: the column bytes the row's steps take
        "take":  2,                                    # steps the row takes (pass C) or admits
        "mode":  Mode,
        "load":  Load,
        "drain": 1,
    })


def window_col_layout(width: int) -> data.StructLayout:
    """What travels down a column of a ``width``-channel window array."""
    return data.StructLayout({
        "b":     data.ArrayLayout(8, width),           # column operands; B, D: the column's steps in 0, 1
        "sk":    data.ArrayLayout(State, width),
        "sel":   data.ArrayLayout(range(width), 2),    # B, D: the row bytes the column's steps take
        "take":  2,                                    # steps the column takes (B, D) or admits
    })


class WindowPE(wiring.Component):
    """A :class:`hw.core.pe.PE` behind a channel window's step select.

    Parameters
    ----------
    cfg : Config
        Takes ``issue_window`` and what :class:`hw.core.pe.PE` takes.

    Members
    -------
    row_in, row_out : In / Out(window_row_layout(W))
        The row port from the left; registered to the right.
    col_in, col_out : In / Out(window_col_layout(W))
        The column port from above; registered downward.
    drain_in, drain_out, r0.., lanes, split, acc_en
        The inner PE's, as :class:`hw.core.pe.PE` documents them.
    """

    def __init__(self, cfg: Config):
        self.cfg = require_config(cfg, self)
        W = cfg.issue_window
        self.pe = PE(cfg)
        acc = signed(cfg.pe_acc_bits)
        regs = {f"r{k}": Out(acc) for k in range(cfg.accumulators)}
        super().__init__({
            "row_in": In(window_row_layout(W)), "row_out": Out(window_row_layout(W)),
            "col_in": In(window_col_layout(W)), "col_out": Out(window_col_layout(W)),
            "drain_in": In(drain_signature(cfg.pe_acc_bits)),
            "drain_out": Out(drain_signature(cfg.pe_acc_bits)),
            **regs,
            "lanes": Out(LANES), "split": Out(1), "acc_en": Out(LANES * cfg.accumulators),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.pe = pe = self.pe
        row, col = self.row_in, self.col_in
        m.d.sync += [self.row_out.eq(row), self.col_out.eq(col)]
        by_rows = Signal()
        m.d.comb += by_rows.eq(rows_choose(row.mode))
        # The choosing side's steps sit at positions 0 and 1; the other side's
        # bytes are picked by the chooser's window positions.
        for k in range(2):
            m.d.comb += [
                pe.row_in[f"a{k}"].eq(Mux(by_rows, row.a[k], row.a[col.sel[k]])),
                pe.row_in[f"sq{k}"].eq(Mux(by_rows, row.sq[k], row.sq[col.sel[k]])),
                pe.col_in[f"b{k}"].eq(Mux(by_rows, col.b[row.sel[k]], col.b[k])),
                pe.col_in[f"sk{k}"].eq(Mux(by_rows, col.sk[row.sel[k]], col.sk[k])),
            ]
        m.d.comb += [pe.row_in.mode.eq(row.mode), pe.row_in.load.eq(row.load), pe.row_in.drain.eq(row.drain),
                     pe.row_in.steps.eq(row.take & col.take), pe.col_in.steps.eq(row.take & col.take)]
        wiring.connect(m, wiring.flipped(self.drain_in), pe.drain_in)
        wiring.connect(m, pe.drain_out, wiring.flipped(self.drain_out))
        m.d.comb += [getattr(self, f"r{k}").eq(getattr(pe, f"r{k}")) for k in range(self.cfg.accumulators)]
        m.d.comb += [self.lanes.eq(pe.lanes), self.split.eq(pe.split), self.acc_en.eq(pe.acc_en)]
        return m
