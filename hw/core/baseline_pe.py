"""The baseline MAC that Kaleido's PE augments (:mod:`hw.core.pe`): the same systolic
links and upward drain chain, one 8x8 multiplier and one accumulator, staged as
deep as the Kaleido PE so that both arrays keep one schedule."""

from __future__ import annotations

from amaranth import Module, Mux, Signal, signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.config import Config, require_config

from .pe import drain_link, drain_signature, stage

__all__ = ["baseline_row_layout", "BaselinePE"]

#: What travels along a row of baseline PEs.
baseline_row_layout = data.StructLayout({
    "a":     signed(8),
    "valid": 1,
    "clear": 1,            # start a new score: the accumulator restarts from this product
    "drain": 1,
})


class BaselinePE(wiring.Component):
    """The canonical output-stationary 8-bit MAC that Kaleido augments.

    ``acc <- (clear ? 0 : acc) + (valid ? a*b : 0)``; ``drain`` copies ``acc`` (as
    it was before this cycle) into the same upward drain chain as :class:`hw.core.pe.PE`.

    Parameters
    ----------
    cfg : Config
        Takes ``acc_bits``.
    acc_bits : int or None
        Overrides ``cfg.acc_bits`` (the formal equivalence proof sets it to the
        Kaleido PE's width).

    Members
    -------
    row_in, row_out : In / Out(baseline_row_layout)
        Operand and control from the left; registered to the right.
    col_in, col_out : In / Out(signed(8))
        Operand from above; registered downward.
    drain_in, drain_out : In / Out(drain_signature(acc_bits))
        The drain chain, as in :class:`PE`.
    acc : Out(signed(acc_bits))
        The accumulator, for tests and proofs.
    """

    def __init__(self, cfg: Config, acc_bits: int | None = None):
        self.cfg = require_config(cfg, self)
        self.acc_bits = cfg.acc_bits if acc_bits is None else acc_bits
        acc = signed(self.acc_bits)
        super().__init__({
            "row_in": In(baseline_row_layout), "row_out": Out(baseline_row_layout),
            "col_in": In(signed(8)), "col_out": Out(signed(8)),
            "drain_in": In(drain_signature(self.acc_bits)),
            "drain_out": Out(drain_signature(self.acc_bits)),
            "acc": Out(acc),
        })

    def elaborate(self, platform):
        m = Module()
        row, col = self.row_in, self.col_in
        m.d.sync += [self.row_out.eq(row), self.col_out.eq(col)]
        stages = self.cfg.pe_stages
        a, b, valid, clear, drain = row.a, col, row.valid, row.clear, row.drain
        if stages >= 3:
            # As the Kaleido PE does from three stages: multiply what it forwards, a
            # cycle late (the baseline has no decode to take out of the way; it
            # keeps the same latency, so the two arrays keep the same schedule).
            a, b, valid, clear, drain = (self.row_out.a, self.col_out, self.row_out.valid, self.row_out.clear,
                                         self.row_out.drain)
        if stages == 4:
            # And as its lanes do at four: the multiplier's operands registered (a
            # DSP block's input registers), loading only with a product.
            a_in, b_in = Signal(signed(8), name="mult_a", reset_less=True), Signal(signed(8), name="mult_b",
                                                                                  reset_less=True)
            with m.If(valid):
                m.d.sync += [a_in.eq(a), b_in.eq(b)]
            a, b = a_in, b_in
            valid, clear, drain = stage(m, 2, "wait", valid, clear, drain)
        acc = Signal(signed(self.acc_bits), reset_less=True)     # every score starts with a clear
        m.d.comb += self.acc.eq(acc)
        prod = Signal(signed(16))
        # No operand isolation here: the baseline's multiplier is idle only when the
        # whole PE is, and then (held operands) isolating it costs more than it saves:
        # measured at 198 MHz, a full MAC 57.9 pJ isolated against 49.9 pJ not.
        m.d.comb += prod.eq(Mux(valid, a * b, 0))
        valid_now = valid
        clear, drain, valid = stage(m, stages, "stage", clear, drain, valid)
        (prod,) = stage(m, stages, "stage_product", prod, enable=valid_now)
        if stages > 1:
            prod = Mux(valid, prod, 0)          # a held product is not this cycle's
        drain_link(m, self, acc, drain)
        with m.If(clear | valid):          # else it holds (a gated clock after synthesis)
            m.d.sync += acc.eq(Mux(clear, 0, acc) + prod)
        return m
