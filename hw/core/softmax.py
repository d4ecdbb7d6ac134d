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
datapath serves both passes. That datapath is a pipeline of
:func:`golden.softmax.pipe_stages` registers, deep enough that each stage fits
the chip clock: the beat max is a registered tree, both products stay in
carry-save form for a register and are added in halves (:mod:`hw.core.adders`), and
the table's rounding shift is split into a shift and an increment. The divider
waits for the last exponents to reach the sum. Rows follow each other without a
gap, so a row takes ``3 * ceil(N / lanes) + quot_bits + pipe_stages(lanes)``
cycles (:func:`golden.softmax.softmax_cycles`).
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.config import Config, require_config
from golden.softmax import (
    FRAC_BITS,
    MAX_LEVELS_PER_STAGE,
    MULT_BITS,
    P_MAX,
    SHIFT_MAX,
    SUM_FAN_IN,
    exp_table,
    max_stages,
    pipe_stages,
    softmax_spec,
    sum_stages,
)

from .adders import compress, product_rows, select_add

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
        pipe = pipe_stages(lanes)

        phase = Signal(Phase)
        beat = Signal(range(max(2, beats)))
        last_beat = beat == beats - 1
        top = Signal(signed(cfg.acc_bits))
        recip = Signal(spec.quot_bits)
        rem = Signal(spec.sum_bits + 1)
        step = Signal(range(max(2, spec.quot_bits)))
        running = Signal()                       # the divider has taken its first step
        start = Signal()                         # the row's last exponents are in the sum

        # The pipeline never stalls (a stall enable on every stage register is a
        # net of hundreds of loads). Codes land in a FIFO with room for every
        # beat in flight, and NORM takes a beat only while it holds a credit: a
        # FIFO entry not yet promised to a beat in flight. The pipeline's depth
        # and the one entry the sink reads leave one to spare, so a sink that
        # never stalls never stalls the unit.
        depth = pipe + 2
        m.submodules.out_fifo = fifo = SyncFIFO(width=code_beat(cfg).size, depth=depth)
        credits = Signal(range(depth + 1), init=depth)
        m.d.comb += [
            self.phase.eq(phase),
            self.codes.valid.eq(fifo.r_rdy),
            self.codes.payload.eq(fifo.r_data),
            fifo.r_en.eq(self.codes.ready),
            # One expression: Amaranth emits it as a continuous assignment, which
            # Icarus evaluates at time 0 (a case block whose inputs never change stays X there).
            self.scores.ready.eq((phase == Phase.MAX) | (phase == Phase.SUM)
                                 | ((phase == Phase.NORM) & (credits != 0))),
        ]
        take = Signal()
        m.d.comb += take.eq(self.scores.valid & self.scores.ready)
        with m.If(take):
            m.d.sync += beat.eq(Mux(last_beat, 0, beat + 1))
        m.d.sync += credits.eq(credits - (take & (phase == Phase.NORM)) + (fifo.r_en & fifo.r_rdy))

        beat1, flow1 = self._row_max(m, take, phase, beat, last_beat, top)
        # Every later stage carries the beat's tag (_Pipeline).
        pipeline = _Pipeline(m, [flow1])
        exps = self._exponents(m, pipeline, beat1, top)
        total = self._sum_and_codes(m, pipeline, exps, recip, fifo, start, pipe)
        self._phases(m, phase, take, last_beat, total, rem, step, recip, running, start)
        return m

    def _row_max(self, m, take, phase, beat, last_beat, top):
        """Stage 1 (each beat as taken, and its tags), and the row's running
        maximum into ``top``. Returns the beat's scores and the tag its exponents follow."""
        cfg = self.cfg
        lanes, n = cfg.vector_lanes, cfg.tokens
        last_lanes = n - (-(-n // lanes) - 1) * lanes
        # Stage 1: the beat as taken, which lanes hold a score (past the row's
        # end, in its last beat, they do not), and what the beat is for.
        beat1 = [Signal(signed(cfg.acc_bits), name=f"beat1_{j}", reset_less=True) for j in range(lanes)]
        max1 = Signal(tag_layout(lanes), name="maxtag1")
        flow1 = Signal(tag_layout(lanes), name="tag1")
        lanes_on = Cat(*(Mux(last_beat, j < last_lanes, 1) for j in range(lanes)))
        with m.If(take):
            m.d.sync += [b.eq(self.scores.payload[j]) for j, b in enumerate(beat1)]
        m.d.sync += [
            max1.valid.eq(take & (phase == Phase.MAX)), max1.mark.eq(beat == 0), max1.on.eq(lanes_on),
            flow1.valid.eq(take & ((phase == Phase.SUM) | (phase == Phase.NORM))),
            flow1.norm.eq(phase == Phase.NORM), flow1.mark.eq((phase == Phase.SUM) & last_beat),
            flow1.on.eq(lanes_on),
        ]

        # The row max: a tree over the beat's lanes, MAX_LEVELS_PER_STAGE
        # comparisons between registers, then one comparison with the running
        # max (the first beat of a row, marked, starts it afresh).
        nodes = [(b, max1.on[j]) for j, b in enumerate(beat1)]
        mtag = max1
        for k in range(max_stages(lanes)):
            for _ in range(MAX_LEVELS_PER_STAGE):
                if len(nodes) > 1:
                    nodes = [_larger(*nodes[i:i + 2]) if i + 1 < len(nodes) else nodes[i]
                             for i in range(0, len(nodes), 2)]
            nodes = [(_reg(m, v, f"max{k + 2}_{i}", mtag.valid), _reg(m, ok, f"maxon{k + 2}_{i}", mtag.valid))
                     for i, (v, ok) in enumerate(nodes)]
            mtag = _reg(m, mtag, f"maxtag{k + 2}")
        ((beat_max, _),) = nodes
        with m.If(mtag.valid):
            m.d.sync += top.eq(Mux(mtag.mark | (beat_max > top), beat_max, top))

        return beat1, flow1

    def _exponents(self, m, pipeline, beat1, top):
        """The beat's exponents ``e`` (golden.softmax, steps 1-3), once the row max is in ``top``."""
        cfg, spec = self.cfg, self.spec
        lanes = cfg.vector_lanes
        stage, advance, tags = pipeline.stage, pipeline.advance, pipeline.tags
        # The beat waits for the row max: its last MAX beat reaches `top` one
        # register after the tree, and the first SUM beat follows it at once.
        scores = beat1
        for k in range(max_stages(lanes)):
            scores = stage(scores, f"beat{len(tags) + 1}")
            advance()
        # d = max - s >= 0.
        diff = stage([(top - s).as_unsigned()[:spec.diff_bits] for s in scores], f"d{len(tags) + 1}")
        advance()
        # d * mult + half, as two rows: the rounding half of the shift is one more
        # addend. W bits hold the sum exactly wherever the shift keeps anything
        # of it (a half beyond W bits only comes with a shift that leaves 0).
        width = spec.t_bits + 1
        half = ((Const(1, 1) << self.shift) >> 1)[:width]
        rows = [compress(m, product_rows(d, self.mult, width) + [half], width, f"dmtree_{j}")
                for j, d in enumerate(diff)]
        rows = [stage(pair, f"dm{len(tags) + 1}_{j}") for j, pair in enumerate(rows)]
        advance()
        # The carry-propagate add, in two halves a register apart.
        products = _split_add(m, rows, width, stage, tags, "dm")
        advance()
        products = [stage([p], f"dm{len(tags) + 1}_{j}")[0] for j, p in enumerate(products)]
        advance()
        # t = that >> shift: its fraction, and its whole part clamped (any whole
        # part past exp_bits gives e = 0).
        splits = []
        for p in products:
            t = Signal(width, name=f"t{len(tags)}")
            m.d.comb += t.eq(p >> self.shift)
            whole = Mux(t[FRAC_BITS + spec.int_bits:].any(), (1 << spec.int_bits) - 1,
                        t[FRAC_BITS:FRAC_BITS + spec.int_bits])
            splits.append(stage([whole, t[:FRAC_BITS]], f"split{len(tags) + 1}"))
        advance()
        # e = round(EXP[frac] / 2**whole) = ((EXP[frac] >> (whole - 1)) + 1) >> 1
        # for a whole part of 1 or more: the table and the shift here, the
        # rounding increment in the next stage.
        m.submodules.exp_rom = rom = Memory(shape=unsigned(spec.exp_bits + 1), depth=2 ** FRAC_BITS,
                                            init=[int(v) for v in exp_table(spec)])
        tables = []
        for j, (whole, frac) in enumerate(splits):
            port = rom.read_port(domain="comb")
            m.d.comb += port.addr.eq(frac)
            shifted = Mux(whole == 0, port.data, port.data >> (whole - 1)[:len(whole)])[:spec.exp_bits + 1]
            gone = (whole > spec.exp_bits) | ~tags[-1].on[j]
            tables.append(stage([shifted, whole == 0, gone], f"exp{len(tags) + 1}_{j}"))
        advance()
        exps = stage([Mux(gone, 0, Mux(exact, shifted, (shifted + 1) >> 1))[:spec.exp_bits + 1]
                      for shifted, exact, gone in tables], f"e{len(tags) + 1}")
        advance()

        return exps

    def _sum_and_codes(self, m, pipeline, exps, recip, fifo, start, pipe):
        """SUM adds the row's exponents into the row sum (returned); NORM writes
        each beat's codes ``e * r`` into ``fifo``."""
        cfg, spec = self.cfg, self.spec
        lanes = cfg.vector_lanes
        stage, advance, tags = pipeline.stage, pipeline.advance, pipeline.tags
        # SUM: the beat's exponents, SUM_FAN_IN at a time; NORM: e * r + half in
        # two rows, after as many registers. Then both add in halves.
        total_lo, total_hi = Signal(spec.sum_bits // 2), Signal(spec.sum_bits - spec.sum_bits // 2)
        sums, waiting = exps, exps
        sum_load = tags[-1].valid & ~tags[-1].norm
        norm_load = tags[-1].valid & tags[-1].norm
        for k in range(sum_stages(lanes)):
            sums = stage([sum(sums[i:i + SUM_FAN_IN], Const(0, spec.sum_bits))[:spec.sum_bits]
                          for i in range(0, len(sums), SUM_FAN_IN)], f"sum{len(tags) + 1}", sum_load)
            if k + 1 < sum_stages(lanes):
                waiting = stage(waiting, f"wait{len(tags) + 1}", norm_load)
            else:
                code_width = spec.recip_shift + P_MAX.bit_length()
                round_half = Const(1 << (spec.recip_shift - 1), code_width)
                waiting = [stage(compress(m, product_rows(e, recip, code_width) + [round_half], code_width,
                                          f"ertree_{j}"),
                                 f"er{len(tags) + 1}_{j}", norm_load) for j, e in enumerate(waiting)]
            advance()
            sum_load = tags[-1].valid & ~tags[-1].norm
            norm_load = tags[-1].valid & tags[-1].norm
        (lane_sum,) = sums
        lo = len(total_lo)
        low = Signal(lo + 1)
        m.d.comb += low.eq(total_lo + lane_sum[:lo])
        carry, lane_sum_hi = stage([low[lo], lane_sum[lo:]], f"sumhi{len(tags) + 1}", sum_load)
        with m.If(sum_load):
            m.d.sync += total_lo.eq(low[:lo])
        codes = data.Signal(code_beat(cfg))
        halves = _split_add(m, waiting, code_width, stage, tags, "er", load=norm_load)
        advance()
        for j, high in enumerate(halves):
            m.d.comb += codes[j].eq(high >> spec.recip_shift)
        last = tags[-1]
        assert len(tags) == pipe, (len(tags), pipe)
        with m.If(last.valid & ~last.norm):
            m.d.sync += total_hi.eq(total_hi + lane_sum_hi + carry)
        m.d.comb += [fifo.w_data.eq(codes), fifo.w_en.eq(last.valid & last.norm)]
        m.d.sync += start.eq(last.valid & last.mark)

        return total_lo, total_hi

    def _phases(self, m, phase, take, last_beat, total, rem, step, recip, running, start):
        """MAX, SUM, the divider's steps (``r``), then NORM, row after row; ``total``
        is the row sum's two halves."""
        spec = self.spec
        total_lo, total_hi = total
        total = Cat(total_lo, total_hi)
        with m.Switch(phase):
            with m.Case(Phase.MAX):
                with m.If(take & last_beat):
                    m.d.sync += [total_lo.eq(0), total_hi.eq(0), phase.eq(Phase.SUM)]
            with m.Case(Phase.SUM):
                with m.If(take & last_beat):
                    # The dividend's bits above the quotient's: 127 << recip_shift >> quot_bits.
                    m.d.sync += [rem.eq(P_MAX << (spec.recip_shift - spec.quot_bits)),
                                 step.eq(0), phase.eq(Phase.DIVIDE)]
            with m.Case(Phase.DIVIDE):
                # The divider starts once the row's last exponents have reached
                # the sum (the last row's final codes, which use the old r, left
                # before them): `pipe` cycles after the last SUM beat. Then one
                # restoring step a cycle (the dividend's low quot_bits bits are
                # 0), the first starting r afresh.
                # A carry-select subtraction: one ripple of all its bits is
                # longer than the cycle with the select and the enable behind it.
                trial = Signal(spec.sum_bits + 2)
                m.d.comb += trial.eq(select_add(m, rem << 1, ~Cat(total, Const(0, 2)), len(trial), "trial", 1))
                fits = ~trial[-1]
                with m.If(running | start):
                    m.d.sync += [rem.eq(Mux(fits, trial, rem << 1)),
                                 recip.eq((Mux(running, recip, 0) << 1) | fits),
                                 running.eq(1), step.eq(step + 1)]
                    with m.If(step == spec.quot_bits - 1):
                        m.d.sync += [phase.eq(Phase.NORM), running.eq(0)]
            with m.Case(Phase.NORM):
                with m.If(take & last_beat):
                    m.d.sync += phase.eq(Phase.MAX)


class _Pipeline:
    """The unit's stage registers after the first: every stage carries the beat's
    tag, and its registers load only for a beat (they hold otherwise, need no
    reset, and synthesis gates their clocks: an idle unit clocks little more
    than its tags)."""

    def __init__(self, m, tags: list):
        self.m, self.tags = m, tags

    def stage(self, values, name, load=None):
        load = self.tags[-1].valid if load is None else load
        return [_reg(self.m, v, f"{name}_{i}", load) for i, v in enumerate(values)]

    def advance(self):
        self.tags.append(_reg(self.m, self.tags[-1], f"tag{len(self.tags) + 1}"))


def tag_layout(lanes: int) -> data.StructLayout:
    """What travels with a beat down the pipeline: whether the stage holds one,
    whether it is NORM's (else SUM's, or MAX's in the max tree), a mark (the
    first beat of a row in the max tree; the last SUM beat of a row elsewhere),
    and which of its lanes hold a score."""
    return data.StructLayout({"valid": 1, "norm": 1, "mark": 1, "on": lanes})


def _reg(m, value, name, load=None):
    """``value`` one cycle later; with ``load``, only where ``load`` is high (a
    data register that holds otherwise, with no reset)."""
    r = Signal(value.shape(), name=name, reset_less=load is not None)
    with m.If(1 if load is None else load):
        m.d.sync += r.eq(value)
    return r


def _larger(a, b):
    """The larger of two (score, present) pairs; a lane that holds no score loses."""
    (x, x_on), (y, y_on) = a, b
    pick_y = y_on & (~x_on | (y > x))
    return Mux(pick_y, y, x), x_on | y_on


def _split_add(m, pairs, width, stage, tags, name, load=None):
    """Each pair of rows added in two stages: the low half in this one (its sum
    and carry registered by ``stage``, the high halves beside them), the high
    half in the next, whose combinational outputs the whole sums are."""
    lo = width // 2
    held = []
    for j, (x, y) in enumerate(pairs):
        low = Signal(lo + 1, name=f"{name}lo{len(tags)}_{j}")
        m.d.comb += low.eq(x[:lo] + y[:lo])
        held.append(stage([low[:lo], low[lo], x[lo:], y[lo:]], f"{name}half{len(tags) + 1}_{j}", load))
    return [Cat(low, (x + y + carry)[:width - lo]) for low, carry, x, y in held]
