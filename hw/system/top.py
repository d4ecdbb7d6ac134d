"""The system top: the attention engine and the softmax unit behind an AXI4-Lite
register port and an AXI4 DMA, with the scratchpads between (docs/system.md).

A host writes the register map of :mod:`hw.system.regmap` and sets ``CTRL.start``:

* ``Op.ENGINE``: the DMA reads the Q image (``Q_LEN`` buffer words from
  ``SRC_ADDR``) and the K image into the engine's operand buffers, the engine
  runs with the group settings, dense/unpaired/linear flags of the registers,
  and every score it drains lands in the result scratchpad; the DMA then writes
  the ``OUT_LEN`` drained rows (``C`` scores a row, one 32-bit word a score) to
  ``DST_ADDR``. A drained row is what the accumulation buffer adds up, so the
  host (:mod:`hw.host.host_driver`) sums them into ``S~`` (or ``Y~``, ``O~``) with
  :mod:`golden`'s own map of where each partial score belongs: the reuse
  arithmetic stays in :mod:`golden` and the engine.
* ``Op.SOFTMAX``: ``OUT_LEN`` rows of scores (``tokens`` 32-bit words a row,
  padded to whole beats of the unit) stream through the softmax unit three
  times each, as it asks, and its P codes go to ``DST_ADDR``, one word a code.

A word of a buffer is ``ceil(bits / 32)`` bus beats, least significant first;
the ``BEATS`` register says how many. The top checks every setting before it
moves a byte (``STATUS.error``, :class:`hw.system.regmap.Error`), raises ``done`` and,
if enabled, ``irq`` when a run ends, and counts what a run cost.

The drained scores leave each column on cycles of one parity per drain
(:mod:`golden.drain`): the capture keeps, per column, one row count per parity
and gives each drain the next row block of the scratchpad when its first score
arrives, which is the order the accumulation buffer sums them in.
"""

from __future__ import annotations

from typing import NamedTuple

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import Out

from golden.config import Config, require_config
from golden.errors import ConfigError
from golden.head_cycles import pv_config

from ..core.buffers import entry_bits
from ..core.engine import COUNTER_SETTLE, AttentionEngine
from ..core.sequencer import GROUP_SLOTS, MAX_PARTNERS
from ..core.softmax import SoftmaxUnit
from .axi import BEAT_BYTES, BUS_BITS, AXI4LiteSignature, AXI4Signature
from .axil_slave import AxiLiteSlave
from .dma import Dma
from .regmap import BEATS, CTRL, DESIGN, MAGIC, OP, SHAPE, SOFTMAX, STATUS, Error, GroupReg, Op, Reg, group_reg

__all__ = ["SystemTop", "TOP_WORDS", "TOP_ROWS", "REG_ADDR_BITS", "CHECK_CYCLES", "MAX_TOP_TOKENS", "top_beats"]

TOP_WORDS = 64              # words of each operand buffer of an emitted top
TOP_ROWS = 256              # drained rows the result scratchpad holds
REG_ADDR_BITS = 8           # the register port decodes 256 bytes
CHECK_CYCLES = 3            # a start's check: its sums registered, then its error, then the decision


class Phase(enum.Enum, shape=4):
    IDLE = 0
    CHECK = 1               # the settings are checked, CHECK_CYCLES cycles
    Q_GO = 2                # the DMA is told to read the Q image
    LOAD_Q = 3
    K_GO = 4
    LOAD_K = 5
    RUN_GO = 6              # the engine is started
    RUN = 7
    SETTLE = 8              # its counters settle
    WR_GO = 9
    WRITE = 10              # the drained rows go out
    SM_START = 11           # softmax: the write of every code is started
    SM_GO = 12              # one read of one row
    SM_READ = 13
    SM_DRAIN = 14           # the last codes go out



class _Run(NamedTuple):
    """What the top keeps of a run, made once an elaboration and handed to the parts
    that read or set it."""
    phase: Signal                #: where the run is (:class:`Phase`)
    r: dict                      #: the registers, by name (``group``: one dict a channel group)
    error: Signal                #: the run's :class:`Error`
    done: Signal                 #: STATUS.done
    busy_start: Signal           #: a start came while busy
    counters: dict               #: the bus and run counters, by name
    check_wait: Signal           #: cycles of ``CHECK`` left before it decides

def _pack(m, layout, **fields):
    """A register's read value: ``fields`` placed by ``layout`` (the others read 0)."""
    word = Signal(layout)
    m.d.comb += [getattr(word, name).eq(value) for name, value in fields.items()]
    return word.as_value()


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


#: The most tokens a head may have on a system top (see :meth:`SystemTop._validate`).
MAX_TOP_TOKENS = (1 << 15) - 1


def _engine_config(cfg: Config) -> Config:
    """The engine's design point: its accumulators cover ``Q K^T`` and ``P V~`` alike."""
    pv = pv_config(cfg)
    return cfg.with_(acc_bits=max(cfg.acc_bits, pv.acc_bits), pe_acc_bits=max(cfg.pe_acc_bits, pv.pe_acc_bits))


def _score_bits(engine_cfg: Config, design: str) -> int:
    """The width of a drained score: a Kaleido PE's register, or the baseline's accumulator."""
    return engine_cfg.pe_acc_bits if design == "kaleido" else engine_cfg.acc_bits


def top_beats(cfg: Config, design: str) -> dict:
    """Bus beats of a Q word, a K word, a drained row (``BEATS``) and a softmax row
    (``tokens`` rounded up to whole beats of the unit)."""
    eb = entry_bits(design)
    return {"q": _ceil(cfg.rows * eb, BUS_BITS), "k": _ceil(cfg.cols * eb, BUS_BITS), "out": cfg.cols,
            "row": _ceil(cfg.tokens, cfg.vector_lanes) * cfg.vector_lanes}


class SystemTop(wiring.Component):
    """Registers, DMA, scratchpads, the attention engine and the softmax unit.

    Parameters
    ----------
    cfg : Config
        The design point: the engine's (its variant's dispatcher included) and
        the softmax unit's (``tokens`` a row, ``vector_lanes``).
    design : "kaleido" or "baseline"
    q_words, k_words : int
        Words of the operand buffers.
    out_rows : int
        Drained rows the result scratchpad holds (``C`` scores each).

    Members
    -------
    s_axil : Out(AXI4LiteSignature(REG_ADDR_BITS))
        The register port (slave).
    m_axi : Out(AXI4Signature())
        The DMA's port (master).
    irq : Out(1)
        ``STATUS.done`` while ``CTRL.irq_enable`` is set.
    """

    def __new__(cls, cfg: Config, design: str = "kaleido", q_words: int = TOP_WORDS, k_words: int = TOP_WORDS,
                out_rows: int = TOP_ROWS):
        # A design point the top refuses is refused before the object exists: an
        # elaboratable that is made and never elaborated warns when it is collected.
        cls._validate(cfg, design, q_words, k_words, out_rows)
        return super().__new__(cls, src_loc_at=1)

    def __init__(self, cfg: Config, design: str = "kaleido", q_words: int = TOP_WORDS, k_words: int = TOP_WORDS,
                 out_rows: int = TOP_ROWS):
        self.cfg, self.design = cfg, design
        self.q_words, self.k_words, self.out_rows = q_words, k_words, out_rows
        self.matcher = design == "kaleido" and cfg.dispatch.parts[1]
        # One engine runs Q K^T (head_dim channels a pass) and P V~ (a reduction over
        # the tokens): its channel range and accumulators cover both.
        self.channels = max(cfg.head_dim, cfg.tokens)
        self.engine_cfg = _engine_config(cfg)
        self.score_bits = _score_bits(self.engine_cfg, design)
        self.beats = top_beats(cfg, design)
        super().__init__({"s_axil": Out(AXI4LiteSignature(REG_ADDR_BITS)), "m_axi": Out(AXI4Signature()),
                          "irq": Out(1)})

    @classmethod
    def _validate(cls, cfg, design, q_words, k_words, out_rows) -> None:
        require_config(cfg, cls.__name__)
        if design not in ("kaleido", "baseline"):
            raise ValueError(f"design must be 'kaleido' or 'baseline', not {design!r}")
        for name, v in (("q_words", q_words), ("k_words", k_words), ("out_rows", out_rows)):
            if not 1 <= v < 1 << 16:
                raise ValueError(f"{name} must be 1..65535, not {v}")
        score_bits = _score_bits(_engine_config(cfg), design)
        if max(score_bits, cfg.acc_bits) > BUS_BITS:
            raise ConfigError(f"scores of {score_bits} bits do not fit a {BUS_BITS}-bit word")
        beats = top_beats(cfg, design)
        fields = {"rows": cfg.rows, "cols": cfg.cols, "lanes": cfg.vector_lanes}
        for name, v in fields.items():
            if v >= 1 << DESIGN[name].width:
                raise ConfigError(f"{name} {v} does not fit the DESIGN register's {DESIGN[name].width}-bit field "
                                  f"(at most {(1 << DESIGN[name].width) - 1}), whence the driver reads the top's shape")
        if max(beats["q"], beats["k"], beats["out"]) > 255 or cfg.tokens >= 1 << 16:
            raise ConfigError("a buffer word of more than 255 beats, or rows of 65,536 tokens or more, "
                              "exceed the registers that report them")
        if cfg.tokens > MAX_TOP_TOKENS:
            # The engine streams P V~'s keys as channels: its channel sets, a bit a token
            # for each of the two steps it looks at, would pass Amaranth's 65,535 bits a value.
            raise ConfigError(f"a system top holds at most {MAX_TOP_TOKENS:,} tokens a head, not {cfg.tokens:,}: "
                              f"its engine's channel sets (two bits a token) would exceed the 65,535 bits "
                              f"a value may have")

    # -- the parts ------------------------------------------------------------------------

    def elaborate(self, platform):
        m = Module()
        cfg = self.cfg
        m.submodules.regs = regs = AxiLiteSlave(REG_ADDR_BITS)
        m.submodules.dma = dma = Dma()
        m.submodules.engine = engine = AttentionEngine(self.engine_cfg, self.design, self.q_words, self.k_words,
                                                       self.matcher, self.channels)
        m.submodules.softmax = soft = SoftmaxUnit(cfg)
        wiring.connect(m, wiring.flipped(self.s_axil), regs.bus)
        wiring.connect(m, dma.bus, wiring.flipped(self.m_axi))

        phase = Signal(Phase)
        r = self._registers()
        error = Signal(Error)
        done = Signal()
        busy_start = Signal()          # a start came while busy
        counters = {n: Signal(32, name=n) for n in ("run_cycles", "read_beats", "write_beats", "bus_wait")}
        run = _Run(phase, r, error, done, busy_start, counters, Signal(range(CHECK_CYCLES), name="check_wait"))
        self._register_port(m, regs, engine, run)
        banks, drained = self._capture(m, engine, run)
        read_failed = self._load(m, dma, engine, soft, phase)
        self._control(m, dma, engine, self._checks(m, r), run, drained, read_failed)
        self._unload(m, dma, soft, banks, run)
        self._count(m, dma, run)
        self._engine_settings(m, engine, r)
        m.d.comb += [soft.mult.eq(r["mult"]), soft.shift.eq(r["shift"])]
        m.d.comb += self.irq.eq(done & r["irq_enable"])
        return m

    def _registers(self) -> dict:
        r = {name: Signal(32, name=f"reg_{name}") for name in
             ("src", "kaddr", "dst", "q_len", "k_len", "out_len", "groups")}
        r.update(irq_enable=Signal(name="reg_irq_enable"), op=Signal(2, name="reg_op"),
                 dense=Signal(name="reg_dense"), unpaired=Signal(name="reg_unpaired"),
                 linear=Signal(name="reg_linear"), mult=Signal(16, name="reg_mult"), shift=Signal(6, name="reg_shift"))
        r["group"] = [{f.name.lower(): Signal(32, name=f"reg_g{g}_{f.name.lower()}") for f in GroupReg}
                      for g in range(GROUP_SLOTS)]
        return r

    @staticmethod
    def _plain(r):
        """(offset, register) of every register (of ``r``) written and read whole."""
        pairs = [(Reg.SRC_ADDR, r["src"]), (Reg.K_ADDR, r["kaddr"]), (Reg.DST_ADDR, r["dst"]),
                 (Reg.Q_LEN, r["q_len"]), (Reg.K_LEN, r["k_len"]), (Reg.OUT_LEN, r["out_len"]),
                 (Reg.GROUPS, r["groups"])]
        for g, regs in enumerate(r["group"]):
            pairs += [(group_reg(g, f), regs[f.name.lower()]) for f in GroupReg]
        return pairs

    def _register_port(self, m, regs, engine, run):
        cfg, r, b = self.cfg, run.r, self.beats
        idle = run.phase == Phase.IDLE
        word = regs.wr_data
        ctrl, status, op, soft = (data.View(layout, word[:layout.size]) for layout in (CTRL, STATUS, OP, SOFTMAX))
        with m.If(regs.wr_en):
            with m.Switch(regs.wr_addr):
                for offset, reg in self._plain(r):
                    with m.Case(offset):
                        m.d.sync += reg.eq(word)
                with m.Case(Reg.CTRL):
                    m.d.sync += r["irq_enable"].eq(ctrl.irq_enable)
                    with m.If(ctrl.start & idle):
                        m.d.sync += [run.phase.eq(Phase.CHECK), run.done.eq(0), run.error.eq(Error.NONE),
                                     run.busy_start.eq(0), run.check_wait.eq(CHECK_CYCLES - 1)]
                        m.d.sync += [c.eq(0) for c in run.counters.values()]
                    with m.Elif(ctrl.start):
                        m.d.sync += run.busy_start.eq(1)
                with m.Case(Reg.STATUS):
                    with m.If(status.done):
                        m.d.sync += run.done.eq(0)
                with m.Case(Reg.OP):
                    m.d.sync += [r["op"].eq(op.op), r["dense"].eq(op.dense), r["unpaired"].eq(op.unpaired),
                                 r["linear"].eq(op.linear)]
                with m.Case(Reg.SOFTMAX):
                    m.d.sync += [r["mult"].eq(soft.mult), r["shift"].eq(soft.shift)]
        c = run.counters
        read = {Reg.ID: Const(MAGIC, 32),
                Reg.DESIGN: DESIGN.const({"kaleido": self.design == "kaleido", "pairs": bool(self.matcher),
                                          "rows": cfg.rows, "cols": cfg.cols, "lanes": cfg.vector_lanes}).as_value(),
                Reg.Q_WORDS: Const(self.q_words, 32),
                Reg.K_WORDS: Const(self.k_words, 32), Reg.OUT_ROWS: Const(self.out_rows, 32),
                Reg.SHAPE: SHAPE.const({"channels": cfg.head_dim, "tokens": cfg.tokens}).as_value(),
                Reg.BEATS: BEATS.const({n: b[n] for n in ("q", "k", "out")}).as_value(),
                Reg.CTRL: _pack(m, CTRL, irq_enable=r["irq_enable"]),
                Reg.STATUS: _pack(m, STATUS, busy=~idle, done=run.done, error=run.error),
                Reg.OP: _pack(m, OP, op=r["op"], dense=r["dense"], unpaired=r["unpaired"], linear=r["linear"]),
                Reg.SOFTMAX: _pack(m, SOFTMAX, mult=r["mult"], shift=r["shift"]),
                Reg.CYCLES_LO: engine.cycles[:32], Reg.CYCLES_HI: engine.cycles[32:],
                Reg.WORK_LO: engine.lane_work[:32], Reg.WORK_HI: engine.lane_work[32:],
                Reg.RUN_CYCLES: c["run_cycles"], Reg.READ_BEATS: c["read_beats"],
                Reg.WRITE_BEATS: c["write_beats"], Reg.BUS_WAIT: c["bus_wait"]}
        read.update(self._plain(r))
        with m.Switch(regs.rd_addr):
            for offset, value in read.items():
                with m.Case(offset):
                    m.d.comb += regs.rd_data.eq(value)

    # -- what a start checks ----------------------------------------------------------------

    def _checks(self, m, r) -> dict:
        """Per op, the first error the settings in ``r`` give (Error.NONE if none).

        Pipelined over :data:`CHECK_CYCLES`: the products and sums are registered,
        then the error; the ``CHECK`` phase waits for both. In one cycle the check was
        both tops' slowest path on an FPGA (a multiply, an add, a compare and an
        OR of some forty terms), and a start pays the two cycles once. The settings
        cannot change under it: the host wrote them before ``CTRL.start``."""
        b = self.beats

        def staged(value, name):
            reg = Signal(value.shape(), name=f"check_{name}")
            m.d.sync += reg.eq(value)
            return reg

        engine_size = [~r["q_len"].any(), r["q_len"] > self.q_words, ~r["k_len"].any(), r["k_len"] > self.k_words,
                       ~r["out_len"].any(), r["out_len"] > self.out_rows,
                       ~r["groups"].any(), r["groups"] > GROUP_SLOTS]
        tiles = max(self.q_words, self.k_words).bit_length()
        chan = self.channels.bit_length()
        for g, regs in enumerate(r["group"]):
            used = r["groups"] > g
            dg = regs["dg"][:chan]
            runs = Mux(r["linear"] & (regs["partners"] > 1), regs["partners"][:2], 1)
            q_last = staged(regs["q_base"] + regs["q_tiles"][:tiles] * dg, f"g{g}_q_last")
            k_last = staged(regs["k_base"] + regs["k_tiles"][:tiles] * dg * runs, f"g{g}_k_last")
            wrong = [~regs["dg"].any(), regs["dg"] > self.channels, ~regs["q_tiles"].any(), ~regs["k_tiles"].any(),
                     regs["q_tiles"] > self.q_words, regs["k_tiles"] > self.k_words,
                     regs["partners"] > MAX_PARTNERS, q_last > r["q_len"], k_last > r["k_len"]]
            engine_size += [used & w for w in wrong]
        q_end = staged(r["src"] + r["q_len"][:16] * (b["q"] * BEAT_BYTES), "q_end")
        k_end = staged(r["kaddr"] + r["k_len"][:16] * (b["k"] * BEAT_BYTES), "k_end")
        out_end = staged(r["dst"] + r["out_len"][:16] * (b["out"] * BEAT_BYTES), "out_end")
        rows_bytes = r["out_len"][:16] * (b["row"] * BEAT_BYTES)
        s_end, p_end = staged(r["src"] + rows_bytes, "s_end"), staged(r["dst"] + rows_bytes, "p_end")

        def overlap(a, a_end, c, c_end):
            return (a < c_end) & (c < a_end)

        aligned = ~Cat(r["src"][:2], r["kaddr"][:2], r["dst"][:2]).any()
        engine_addr = [~aligned, q_end[32:].any(), k_end[32:].any(), out_end[32:].any(),
                       overlap(r["dst"], out_end, r["src"], q_end), overlap(r["dst"], out_end, r["kaddr"], k_end)]
        soft_addr = [~aligned, s_end[32:].any(), p_end[32:].any(), overlap(r["dst"], p_end, r["src"], s_end)]
        out = {}
        for op, size, addr in ((Op.ENGINE, engine_size, engine_addr), (Op.SOFTMAX, [~r["out_len"].any(),
                                                                                   r["out_len"][16:].any()],
                                                                       soft_addr)):
            err = Signal(Error, name=f"check_{op.name.lower()}")
            m.d.sync += err.eq(Mux(Cat(*size).any(), Error.SIZE, Mux(Cat(*addr).any(), Error.ADDRESS, Error.NONE)))
            out[op] = err
        return out

    # -- the run ------------------------------------------------------------------------------

    @staticmethod
    def _finish(m, run, error) -> None:
        """End the run: back to IDLE, ``done`` raised, its error (or a start's while busy)."""
        m.d.sync += [run.phase.eq(Phase.IDLE), run.done.eq(1),
                     run.error.eq(Mux((error == Error.NONE) & run.busy_start, Error.BUSY, error))]

    def _control(self, m, dma, engine, checks, run, drained, read_failed):
        """The run's phases; ``drained``: the rows the result scratchpad has taken,
        ``read_failed``: a softmax row's read failed."""
        r, b, phase = run.r, self.beats, run.phase
        settle = Signal(range(COUNTER_SETTLE + 1))
        sm_row = Signal(16), Signal(2)          # softmax: the row, and its pass
        row_addr = Signal(32)
        m.d.comb += [dma.rd_addr.eq(Mux(phase == Phase.Q_GO, r["src"], Mux(phase == Phase.K_GO, r["kaddr"],
                                                                              row_addr))),
                     dma.rd_beats.eq(Mux(phase == Phase.Q_GO, r["q_len"][:16] * b["q"],
                                         Mux(phase == Phase.K_GO, r["k_len"][:16] * b["k"], b["row"]))),
                     dma.wr_addr.eq(r["dst"]),
                     dma.wr_beats.eq(Mux(phase == Phase.WR_GO, r["out_len"][:16] * b["out"],
                                         r["out_len"][:16] * b["row"]))]
        with m.Switch(phase):
            with m.Case(Phase.CHECK):
                with m.If(run.check_wait != 0):
                    m.d.sync += run.check_wait.eq(run.check_wait - 1)
                with m.Elif(r["op"] == Op.ENGINE):
                    with m.If(checks[Op.ENGINE] != Error.NONE):
                        self._finish(m, run, checks[Op.ENGINE])
                    with m.Else():
                        m.d.sync += phase.eq(Phase.Q_GO)
                with m.Elif(r["op"] == Op.SOFTMAX):
                    with m.If(checks[Op.SOFTMAX] != Error.NONE):
                        self._finish(m, run, checks[Op.SOFTMAX])
                    with m.Else():
                        m.d.sync += phase.eq(Phase.SM_START)
                with m.Else():
                    self._finish(m, run, Error.OP)
            for go, load, after in ((Phase.Q_GO, Phase.LOAD_Q, Phase.K_GO), (Phase.K_GO, Phase.LOAD_K, Phase.RUN_GO)):
                with m.Case(go):
                    m.d.comb += dma.rd_start.eq(1)
                    m.d.sync += phase.eq(load)
                with m.Case(load):
                    with m.If(~dma.rd_busy):
                        with m.If(dma.rd_error):
                            self._finish(m, run, Error.READ)
                        with m.Else():
                            m.d.sync += phase.eq(after)
            with m.Case(Phase.RUN_GO):
                m.d.comb += engine.start.eq(1)
                m.d.sync += phase.eq(Phase.RUN)
            with m.Case(Phase.RUN):
                with m.If(~engine.busy):
                    m.d.sync += [phase.eq(Phase.SETTLE), settle.eq(COUNTER_SETTLE)]
            with m.Case(Phase.SETTLE):
                m.d.sync += settle.eq(settle - 1)
                with m.If(settle == 1):
                    with m.If(drained != r["out_len"]):
                        self._finish(m, run, Error.COUNT)
                    with m.Else():
                        m.d.sync += phase.eq(Phase.WR_GO)
            with m.Case(Phase.WR_GO):
                m.d.comb += dma.wr_start.eq(1)
                m.d.sync += phase.eq(Phase.WRITE)
            with m.Case(Phase.WRITE):
                with m.If(~dma.wr_busy):
                    self._finish(m, run, Mux(dma.wr_error, Error.WRITE, Error.NONE))
            self._softmax_control(m, dma, row_addr, sm_row, run, read_failed)

    def _softmax_control(self, m, dma, row_addr, sm_row, run, read_failed):
        """Each row read three times (the unit holds no row), while one write takes every
        code; ``sm_row``: the row, and its pass."""
        r, phase = run.r, run.phase
        row, passes = sm_row
        with m.Case(Phase.SM_START):
            m.d.comb += dma.wr_start.eq(1)
            m.d.sync += [phase.eq(Phase.SM_GO), row.eq(0), passes.eq(0), row_addr.eq(r["src"])]
        with m.Case(Phase.SM_GO):
            m.d.comb += dma.rd_start.eq(1)
            m.d.sync += phase.eq(Phase.SM_READ)
        with m.Case(Phase.SM_READ):
            with m.If(~dma.rd_busy):
                last_pass = passes == 2
                m.d.sync += passes.eq(Mux(last_pass, 0, passes + 1))
                with m.If(last_pass):
                    m.d.sync += [row.eq(row + 1), row_addr.eq(row_addr + self.beats["row"] * BEAT_BYTES)]
                with m.If(last_pass & (row + 1 == r["out_len"][:16])):
                    m.d.sync += phase.eq(Phase.SM_DRAIN)
                with m.Else():
                    m.d.sync += phase.eq(Phase.SM_GO)
        with m.Case(Phase.SM_DRAIN):
            with m.If(~dma.wr_busy):
                error = Mux(dma.wr_error, Error.WRITE, Mux(read_failed, Error.READ, Error.NONE))
                self._finish(m, run, error)

    def _load(self, m, dma, engine, soft, phase):
        """Bus beats into buffer words (Q, K) or softmax beats: beat 0 is the least
        significant. Returns whether a softmax row's read failed."""
        b, lanes = self.beats, self.cfg.vector_lanes
        most = max(b["q"], b["k"], lanes)
        held = Signal(max(1, (most - 1) * BUS_BITS))          # the word's earlier beats, newest on top
        got = Signal(range(most + 1))
        beat = dma.rd_data
        loading_q, loading_k = phase == Phase.LOAD_Q, phase == Phase.LOAD_K
        softmax = (phase == Phase.SM_GO) | (phase == Phase.SM_READ)
        need = Mux(loading_q, b["q"], Mux(loading_k, b["k"], lanes))

        def word(beats: int):
            return Cat(held[len(held) - (beats - 1) * BUS_BITS:] if beats > 1 else Const(0, 0), beat.payload)

        last = got == need - 1
        m.d.comb += beat.ready.eq(~softmax | ~last | soft.scores.ready)
        with m.If(beat.valid & beat.ready):
            m.d.sync += [held.eq(Cat(held[BUS_BITS:], beat.payload)) if most > 1 else [],
                         got.eq(Mux(last, 0, got + 1))]
        addr = Signal(16)
        with m.If((phase == Phase.Q_GO) | (phase == Phase.K_GO) | (phase == Phase.SM_START)):
            m.d.sync += [addr.eq(0), got.eq(0)]
        take = beat.valid & beat.ready & last
        with m.If(take & (loading_q | loading_k)):
            m.d.sync += addr.eq(addr + 1)
        m.d.comb += [engine.q_wr_en.eq(take & loading_q), engine.q_wr_addr.eq(addr),
                     engine.q_wr_data.eq(word(b["q"])),
                     engine.k_wr_en.eq(take & loading_k), engine.k_wr_addr.eq(addr),
                     engine.k_wr_data.eq(word(b["k"])),
                     soft.scores.valid.eq(softmax & beat.valid & last)]
        scores = word(lanes)
        acc = self.cfg.acc_bits
        for i in range(lanes):
            m.d.comb += soft.scores.payload[i].eq(scores[i * BUS_BITS:i * BUS_BITS + acc])
        read_failed = Signal()
        with m.If(phase == Phase.SM_START):
            m.d.sync += read_failed.eq(0)
        with m.Elif(softmax & dma.rd_error):
            m.d.sync += read_failed.eq(1)
        return read_failed

    def _capture(self, m, engine, run):
        """Each column's drained scores into its bank of the result scratchpad, a drain a row block.

        Returns the banks and the rows column 0 has taken (a drain takes ``R``)."""
        cfg, R = self.cfg, self.cfg.rows
        depth = self.out_rows
        parity = Signal()                            # the cycle's parity: a drain keeps to one
        m.d.sync += parity.eq(~parity)
        running = run.phase == Phase.RUN_GO
        banks = []
        drained = None
        for j in range(cfg.cols):
            bank = Memory(shape=self.score_bits, depth=depth, init=[])
            m.submodules[f"result{j}"] = bank
            banks.append(bank)
            port = bank.write_port()
            rows = [Signal(range(R), name=f"c{j}_row{p}") for p in range(2)]       # scores of the drain so far
            base = [Signal(range(depth + R), name=f"c{j}_base{p}") for p in range(2)]   # its first row
            nxt = Signal(16, name=f"c{j}_next")                                      # the next drain's first row
            valid = engine.out_valid[j]
            row = Mux(parity, rows[1], rows[0])
            first = row == 0
            at = Mux(first, nxt, Mux(parity, base[1], base[0])) + row
            with m.If(running):
                m.d.sync += [nxt.eq(0), rows[0].eq(0), rows[1].eq(0)]
            with m.Elif(valid):
                with m.If(first):
                    m.d.sync += nxt.eq(nxt + R)
                for p in range(2):
                    with m.If(parity == p):
                        m.d.sync += rows[p].eq(Mux(rows[p] == R - 1, 0, rows[p] + 1))
                        with m.If(first):
                            m.d.sync += base[p].eq(nxt)
            # A drain past the scratchpad is not written; the row count then disagrees with OUT_LEN.
            m.d.comb += [port.en.eq(valid & (at < run.r["out_len"]) & (at < depth)), port.addr.eq(at),
                         port.data.eq(engine.out[j])]
            if j == 0:
                drained = nxt
        return banks, drained

    def _unload(self, m, dma, soft, banks, run):
        """The result rows (engine) or the codes (softmax) into 32-bit bus beats, one value a beat."""
        cfg, phase = self.cfg, run.phase
        out = dma.wr_data
        row = Signal(16)
        col = Signal(range(max(cfg.cols, cfg.vector_lanes) + 1))
        # Registered reads, so that an FPGA flow maps the scratchpad to block RAM:
        # each port is given the row the next cycle reads, and holds it then.
        row_next = Signal(16)
        reads = [bank.read_port() for bank in banks]
        scores = Signal(self.score_bits)
        for j, port in enumerate(reads):
            m.d.comb += port.addr.eq(row_next)
            with m.If(col == j):
                m.d.comb += scores.eq(port.data)
        code = Signal(8)
        for i in range(cfg.vector_lanes):
            with m.If(col == i):
                m.d.comb += code.eq(soft.codes.payload[i])
        writing = phase == Phase.WRITE
        softmax = (phase == Phase.SM_GO) | (phase == Phase.SM_READ) | (phase == Phase.SM_DRAIN)
        last = Mux(writing, col == cfg.cols - 1, col == cfg.vector_lanes - 1)
        m.d.comb += [out.valid.eq(Mux(writing, row < run.r["out_len"][:16], softmax & soft.codes.valid)),
                     out.payload.eq(Mux(writing, Cat(scores, scores[-1].replicate(BUS_BITS - self.score_bits)),
                                        code)),
                     soft.codes.ready.eq(softmax & out.ready & last)]
        m.d.comb += row_next.eq(row)
        m.d.sync += row.eq(row_next)
        with m.If((phase == Phase.WR_GO) | (phase == Phase.SM_START)):
            m.d.comb += row_next.eq(0)
            m.d.sync += col.eq(0)
        with m.Elif(out.valid & out.ready):
            m.d.sync += col.eq(Mux(last, 0, col + 1))
            with m.If(last & writing):
                m.d.comb += row_next.eq(row + 1)

    @staticmethod
    def _count(m, dma, run):
        c, bus = run.counters, dma.bus
        wait = ((bus.arvalid & ~bus.arready) | (bus.rready & ~bus.rvalid) | (bus.awvalid & ~bus.awready)
                | (bus.wvalid & ~bus.wready) | (bus.bready & ~bus.bvalid))
        with m.If((run.phase != Phase.IDLE) & (run.phase != Phase.CHECK)):
            m.d.sync += [c["run_cycles"].eq(c["run_cycles"] + 1), c["bus_wait"].eq(c["bus_wait"] + wait)]
        with m.If(dma.rd_data.valid & dma.rd_data.ready):
            m.d.sync += c["read_beats"].eq(c["read_beats"] + 1)
        with m.If(dma.wr_data.valid & dma.wr_data.ready):
            m.d.sync += c["write_beats"].eq(c["write_beats"] + 1)

    def _engine_settings(self, m, engine, r):
        m.d.comb += engine.groups.eq(r["groups"])
        for g, regs in enumerate(r["group"]):
            m.d.comb += [engine.dg[g].eq(regs["dg"]), engine.q_tiles[g].eq(regs["q_tiles"]),
                         engine.k_tiles[g].eq(regs["k_tiles"]), engine.q_base[g].eq(regs["q_base"]),
                         engine.k_base[g].eq(regs["k_base"])]
            if self.design == "kaleido":
                m.d.comb += engine.partners[g].eq(regs["partners"])
        if self.design == "kaleido":
            m.d.comb += [engine.dense.eq(r["dense"]), engine.unpaired.eq(r["unpaired"]),
                         engine.linear.eq(r["linear"])]
