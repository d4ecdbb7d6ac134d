"""The softmax vector unit: rows of ``S~`` in, rows of ``P`` codes out (DESIGN.md §3).

It computes :mod:`golden.softmax` bit for bit, ``vector_lanes`` scores a cycle,
and holds no row: the source (the score buffer the array drains into) plays
each row three times, and the unit takes one pass over it per phase:

* ``MAX``: the row's maximum;
* ``SUM``: every score's ``e`` (exponent table, shifts), summed;
* ``DIVIDE``: the reciprocal ``r = (127 << recip_shift) // sum``, one quotient
  bit a cycle (a restoring divider; the input waits);
* ``NORM``: ``e`` again, times ``r``, rounded: the codes, one registered beat
  per input beat.

Recomputing ``e`` in ``NORM`` costs a second pass over the row instead of a row
buffer of ``N`` exponents: no memory at all in the unit, and the same exponent
datapath serves both passes. Rows follow each other without a gap, so a row
takes ``3 * ceil(N / lanes) + quot_bits`` cycles
(:func:`golden.softmax.softmax_cycles`).
"""

from __future__ import annotations

from amaranth import Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.config import Config, require_config
from golden.softmax import FRAC_BITS, MULT_BITS, P_MAX, SHIFT_MAX, exp_table, softmax_spec

__all__ = ["SoftmaxUnit", "Phase", "score_beat", "code_beat"]


class Phase(enum.Enum, shape=2):
    """Which pass over the current row the unit is taking."""

    MAX = 0
    SUM = 1
    DIVIDE = 2
    NORM = 3


def score_beat(cfg: Config) -> data.ArrayLayout:
    """One input beat: ``vector_lanes`` scores of ``acc_bits`` bits (lanes past the
    row's end are ignored)."""
    return data.ArrayLayout(signed(cfg.acc_bits), cfg.vector_lanes)


def code_beat(cfg: Config) -> data.ArrayLayout:
    """One output beat: ``vector_lanes`` codes ``0..127`` (0 past the row's end)."""
    return data.ArrayLayout(unsigned(P_MAX.bit_length()), cfg.vector_lanes)


class SoftmaxUnit(wiring.Component):
    """Row-wise integer softmax of rows of ``cfg.tokens`` scores.

    Parameters
    ----------
    cfg : Config
        Takes ``tokens`` (scores per row), ``acc_bits`` (score width) and
        ``vector_lanes``.

    Members
    -------
    mult : In(MULT_BITS)
        The exponent multiplier of :func:`golden.softmax.softmax_scale`; hold it
        for the whole head.
    shift : In(range(SHIFT_MAX + 1))
        Its shift.
    scores : In(stream.Signature(score_beat(cfg)))
        Each row three times over, ``ceil(N / lanes)`` beats a time, in order.
    codes : Out(stream.Signature(code_beat(cfg)))
        The row's codes, ``ceil(N / lanes)`` beats, during its third pass.
    phase : Out(Phase)
        Which pass of the row the unit takes (for a source that wants to know).
    """

    def __init__(self, cfg: Config):
        self.cfg = require_config(cfg, "SoftmaxUnit")
        self.spec = softmax_spec(cfg.tokens, cfg.acc_bits)
        super().__init__({
            "mult": In(MULT_BITS),
            "shift": In(range(SHIFT_MAX + 1)),
            "scores": In(stream.Signature(score_beat(cfg))),
            "codes": Out(stream.Signature(code_beat(cfg))),
            "phase": Out(Phase),
        })

    def elaborate(self, platform):
        m = Module()
        cfg, spec = self.cfg, self.spec
        lanes, n = cfg.vector_lanes, cfg.tokens
        beats = -(-n // lanes)
        last_lanes = n - (beats - 1) * lanes

        beat = Signal(range(max(2, beats)))
        last_beat = beat == beats - 1
        lane_on = [Mux(last_beat, j < last_lanes, 1) for j in range(lanes)]
        top = Signal(signed(cfg.acc_bits))
        total = Signal(spec.sum_bits)
        recip = Signal(spec.quot_bits)
        rem = Signal(spec.sum_bits + 1)
        step = Signal(range(max(2, spec.quot_bits + 1)))

        beat_in = self.scores.payload
        take = Signal()
        m.d.comb += take.eq(self.scores.valid & self.scores.ready)
        with m.If(take):
            m.d.sync += beat.eq(Mux(last_beat, 0, beat + 1))

        # The exponent datapath, one per lane (MAX does not use it; SUM and NORM do).
        table = exp_table(spec)
        m.submodules.exp_rom = rom = Memory(shape=unsigned(spec.exp_bits + 1), depth=len(table),
                                            init=[int(v) for v in table])
        exps = []
        for j in range(lanes):
            port = rom.read_port(domain="comb")
            d = Signal(spec.diff_bits, name=f"d{j}")
            t = Signal(spec.t_bits, name=f"t{j}")
            whole = Signal(spec.int_bits, name=f"whole{j}")
            e = Signal(spec.exp_bits + 1, name=f"e{j}")
            product = Signal(spec.t_bits, name=f"dm{j}")
            half = Signal(spec.t_bits, name=f"half{j}")
            m.d.comb += [
                d.eq(top - beat_in[j]),
                product.eq(d * self.mult),
                half.eq((Const(1, 1) << self.shift) >> 1),
                t.eq((product + half) >> self.shift),
                whole.eq(Mux(t[FRAC_BITS + spec.int_bits:].any(), (1 << spec.int_bits) - 1,
                             t[FRAC_BITS:FRAC_BITS + spec.int_bits])),
                port.addr.eq(t[:FRAC_BITS]),
            ]
            rounding = Signal(spec.exp_bits + 1, name=f"round{j}")
            m.d.comb += rounding.eq((Const(1, 1) << whole) >> 1)
            m.d.comb += e.eq(Mux((whole > spec.exp_bits) | ~lane_on[j], 0, (port.data + rounding) >> whole))
            exps.append(e)

        row_max = beat_in[0]
        for j in range(1, lanes):
            row_max = Mux(lane_on[j] & (beat_in[j] > row_max), beat_in[j], row_max)
        beat_sum = sum(exps[1:], exps[0])

        out_valid = Signal()
        m.d.comb += self.codes.valid.eq(out_valid)
        with m.If(self.codes.ready):
            m.d.sync += out_valid.eq(0)

        phase = Signal(Phase)
        # One expression rather than per-phase assignments: Amaranth emits it as a
        # continuous assignment, which Icarus evaluates at time 0 (a case block
        # whose inputs never change would stay X there).
        m.d.comb += [self.phase.eq(phase),
                     self.scores.ready.eq((phase != Phase.DIVIDE)
                                          & ((phase != Phase.NORM) | ~out_valid | self.codes.ready))]
        with m.Switch(phase):
            with m.Case(Phase.MAX):
                with m.If(take):
                    m.d.sync += top.eq(Mux((beat == 0) | (row_max > top), row_max, top))
                    with m.If(last_beat):
                        m.d.sync += [total.eq(0), phase.eq(Phase.SUM)]
            with m.Case(Phase.SUM):
                with m.If(take):
                    m.d.sync += total.eq(total + beat_sum)
                    with m.If(last_beat):
                        # The dividend's bits above the quotient's: 127 << recip_shift >> quot_bits.
                        m.d.sync += [rem.eq(P_MAX << (spec.recip_shift - spec.quot_bits)),
                                     step.eq(0), recip.eq(0), phase.eq(Phase.DIVIDE)]
            with m.Case(Phase.DIVIDE):
                # One restoring step a cycle; the dividend's low quot_bits bits are 0.
                trial = Signal(spec.sum_bits + 2)
                m.d.comb += trial.eq((rem << 1) - total)
                fits = ~trial[-1]
                m.d.sync += [rem.eq(Mux(fits, trial, rem << 1)), recip.eq((recip << 1) | fits),
                             step.eq(step + 1)]
                with m.If(step == spec.quot_bits - 1):
                    m.d.sync += phase.eq(Phase.NORM)
            with m.Case(Phase.NORM):
                with m.If(take):
                    for j in range(lanes):
                        scaled = exps[j] * recip + (1 << (spec.recip_shift - 1))
                        m.d.sync += self.codes.payload[j].eq(scaled >> spec.recip_shift)
                    m.d.sync += out_valid.eq(1)
                    with m.If(last_beat):
                        m.d.sync += phase.eq(Phase.MAX)
        return m
