"""The softmax vector unit: rows of ``S~`` in, rows of ``P`` codes out (docs/concepts.md, "Reuse states").

It computes :mod:`golden.softmax` bit for bit, ``vector_lanes`` scores a cycle,
and holds no row: the source (the score buffer the array drains into) plays
each row three times, and the unit takes one pass over it per phase:

* ``MAX``: the row's maximum;
* ``SUM``: every score's ``e`` (exponent table, shifts), summed;
* ``DIVIDE``: the reciprocal ``r = (127 << recip_shift) // sum``, one quotient
  bit a cycle (a restoring divider; the input waits);
* ``NORM``: ``e`` again, times ``r``, rounded: the codes, one beat per input
  beat.

Recomputing ``e`` in ``NORM`` costs a second pass over the row instead of a row
buffer of ``N`` exponents: no memory at all in the unit, and the same exponent
datapath serves both passes. That datapath is a pipeline of ``PIPE_STAGES``
registers (``d * mult``; its rounding shift; table and shift; then the sum or the
product), so its two multipliers and two barrel shifters are not one path; the divider waits for the last
exponents to reach the sum. Rows follow each other without a gap, so a row
takes ``3 * ceil(N / lanes) + quot_bits + PIPE_STAGES`` cycles
(:func:`golden.softmax.softmax_cycles`).
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.config import Config, require_config
from golden.softmax import FRAC_BITS, MULT_BITS, P_MAX, PIPE_STAGES, SHIFT_MAX, exp_table, softmax_spec

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

        phase = Signal(Phase)
        beat = Signal(range(max(2, beats)))
        last_beat = beat == beats - 1
        top = Signal(signed(cfg.acc_bits))
        total = Signal(spec.sum_bits)
        recip = Signal(spec.quot_bits)
        rem = Signal(spec.sum_bits + 1)
        step = Signal(range(max(2, spec.quot_bits)))
        running = Signal()                       # the divider has taken its first step
        # The pipeline never stalls (a stall enable on every stage register is a
        # net of hundreds of loads). Codes land in a FIFO with room for every
        # beat in flight, and NORM takes a beat only while there is room left:
        # PIPE_STAGES in flight and the one the sink reads leave one to spare, so
        # a sink that never stalls never stalls the unit.
        m.submodules.out_fifo = fifo = SyncFIFO(width=code_beat(cfg).size, depth=PIPE_STAGES + 2)
        valid = [Signal(name=f"valid{k}") for k in range(1, PIPE_STAGES + 1)]
        norm = [Signal(name=f"norm{k}") for k in range(1, PIPE_STAGES + 1)]
        in_flight = sum((ok & is_norm for ok, is_norm in zip(valid, norm)), Const(0, range(PIPE_STAGES + 1)))
        room = Signal()
        m.d.comb += [
            room.eq(fifo.level + in_flight < fifo.depth),
            self.phase.eq(phase),
            self.codes.valid.eq(fifo.r_rdy),
            self.codes.payload.eq(fifo.r_data),
            fifo.r_en.eq(self.codes.ready),
            # One expression: Amaranth emits it as a continuous assignment, which
            # Icarus evaluates at time 0 (a case block whose inputs never change stays X there).
            self.scores.ready.eq((phase == Phase.MAX) | (phase == Phase.SUM) | ((phase == Phase.NORM) & room)),
        ]
        piped = (phase == Phase.SUM) | (phase == Phase.NORM)
        beat_in = self.scores.payload
        take = Signal()
        m.d.comb += take.eq(self.scores.valid & self.scores.ready)
        with m.If(take):
            m.d.sync += beat.eq(Mux(last_beat, 0, beat + 1))
        # Lanes past the row's end (in its last beat) take no part.
        lane_on = [Mux(last_beat, j < last_lanes, 1) for j in range(lanes)]

        # Stage 0 (the input beat): d * mult. Stage 1: t = (that + half) >> shift,
        # split into whole and fraction. Stage 2: the table and the shift, e.
        # Stage 3: the row sum (SUM) or e * r, rounded, into the output FIFO
        # (NORM). Each stage register carries a valid bit and whether it is NORM's.
        m.submodules.exp_rom = rom = Memory(shape=unsigned(spec.exp_bits + 1), depth=2 ** FRAC_BITS,
                                            init=[int(v) for v in exp_table(spec)])
        m.d.sync += [valid[0].eq(take & piped), norm[0].eq(phase == Phase.NORM)]
        m.d.sync += [valid[k].eq(valid[k - 1]) for k in range(1, PIPE_STAGES)]
        m.d.sync += [norm[k].eq(norm[k - 1]) for k in range(1, PIPE_STAGES)]
        exps = []
        for j in range(lanes):
            scaled1 = Signal(spec.t_bits + 1, name=f"dm1_{j}")
            on = [Signal(name=f"on{k}_{j}") for k in (1, 2)]
            whole2 = Signal(spec.int_bits, name=f"whole2_{j}")
            frac2 = Signal(FRAC_BITS, name=f"frac2_{j}")
            t = Signal(spec.t_bits, name=f"t{j}")
            e3 = Signal(spec.exp_bits + 1, name=f"e3_{j}")
            port = rom.read_port(domain="comb")
            e = Signal(spec.exp_bits + 1, name=f"e{j}")
            m.d.comb += [
                t.eq((scaled1 + ((Const(1, 1) << self.shift) >> 1)) >> self.shift),
                port.addr.eq(frac2),
                e.eq(Mux((whole2 > spec.exp_bits) | ~on[1], 0,
                         (port.data + ((Const(1, 1) << whole2) >> 1)) >> whole2)),
            ]
            m.d.sync += [
                scaled1.eq((top - beat_in[j]) * self.mult),
                on[0].eq(lane_on[j]),
                whole2.eq(Mux(t[FRAC_BITS + spec.int_bits:].any(), (1 << spec.int_bits) - 1,
                              t[FRAC_BITS:FRAC_BITS + spec.int_bits])),
                frac2.eq(t[:FRAC_BITS]),
                on[1].eq(on[0]),
                e3.eq(e),
            ]
            exps.append(e3)
        last = PIPE_STAGES - 1
        with m.If(valid[last] & ~norm[last]):
            m.d.sync += total.eq(total + sum(exps[1:], exps[0]))
        codes = data.Signal(code_beat(cfg))
        for j in range(lanes):
            scaled = exps[j] * recip + (1 << (spec.recip_shift - 1))
            m.d.comb += codes[j].eq(scaled >> spec.recip_shift)
        m.d.comb += [fifo.w_data.eq(codes), fifo.w_en.eq(valid[last] & norm[last])]

        row_max = beat_in[0]
        for j in range(1, lanes):
            row_max = Mux(lane_on[j] & (beat_in[j] > row_max), beat_in[j], row_max)

        with m.Switch(phase):
            with m.Case(Phase.MAX):
                with m.If(take):
                    m.d.sync += top.eq(Mux((beat == 0) | (row_max > top), row_max, top))
                    with m.If(last_beat):
                        m.d.sync += [total.eq(0), phase.eq(Phase.SUM)]
            with m.Case(Phase.SUM):
                with m.If(take & last_beat):
                    # The dividend's bits above the quotient's: 127 << recip_shift >> quot_bits.
                    m.d.sync += [rem.eq(P_MAX << (spec.recip_shift - spec.quot_bits)),
                                 step.eq(0), phase.eq(Phase.DIVIDE)]
            with m.Case(Phase.DIVIDE):
                # The divider starts once the pipeline is empty: the row's last
                # exponents have reached the sum, and the last row's final codes,
                # which use the old r, have left. Without stalls that takes
                # PIPE_STAGES cycles. Then one restoring step a cycle (the
                # dividend's low quot_bits bits are 0), the first starting r afresh.
                drained = ~Cat(*valid).any()
                trial = Signal(spec.sum_bits + 2)
                m.d.comb += trial.eq((rem << 1) - total)
                fits = ~trial[-1]
                with m.If(running | drained):
                    m.d.sync += [rem.eq(Mux(fits, trial, rem << 1)),
                                 recip.eq((Mux(running, recip, 0) << 1) | fits),
                                 running.eq(1), step.eq(step + 1)]
                    with m.If(step == spec.quot_bits - 1):
                        m.d.sync += [phase.eq(Phase.NORM), running.eq(0)]
            with m.Case(Phase.NORM):
                with m.If(take & last_beat):
                    m.d.sync += phase.eq(Phase.MAX)
        return m
