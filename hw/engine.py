"""The attention engine: operand buffers, the pass controller, and an array.

This is the top that simulations run. This module holds the buffers, the
operand stage (S1) and the counters; the controller (S0) is :mod:`hw.sequencer`. Before ``start`` the operand buffers are
filled through their write ports (one word per channel per tile: a word holds
the entries of all R rows, or all C columns); the controller then runs every
tile group of every channel group on its own and drains each finished score,
and the testbench's accumulation buffer adds the partial scores up.

Kaleido (``design="kaleido"``): a buffer entry is a pair, ``x0`` (8 bits, the
reference), ``x1`` (8, the approximated partner), ``s`` (2, its state) and a
valid bit. For each tile group the controller runs the passes A-D of
docs/design.md, "How the PE works":

* A streams every channel of the group, and while doing so records three
  per-channel bits: some valid column has ``sk != 2`` (pass B needs the
  channel), some valid row has ``sq != 2`` (pass C needs it), and some valid
  PE needs work in pass D;
* B, C and D stream only the channels their bit marks, found with a priority
  encoder, so a channel every PE skips costs nothing. A channel some PEs skip
  leaves those PEs idle, and a nibble product takes a whole step (variant
  ``pe``: natural order, no pairing). With a matcher (``pe-m``, ``full``) a
  slot of B, C or D may carry two channels, on both bytes of the row and the
  column ports, where every PE's lanes fit (:mod:`golden.matcher`); such a
  pass's first slot issues no step, while the matcher loads its window.

Baseline (``design="baseline"``): an entry is a token's value and a valid bit;
each tile streams all D channels.

A pass (and a baseline tile) lasts as long as its work, one slot at least:
its first slot carries its hand-over and the drain of the score the previous
pass finished; one final slot drains the last score. A drain waits, one empty
slot at a time, only while the last drain of its slot's parity is fewer than
``2R`` slots ago (:mod:`golden.drain`, which the cycle model shares).

Linear layers (Kaleido, ``linear = 1``; :mod:`golden.windows`): the Q buffer
holds outputs' weights, the K buffer windows, one run of a group's channels
per partner (``x0`` the window's reference, ``x1`` that partner's ``x~``,
``state`` the window's). A tile group is a LINEAR pass over every channel, then
one pass B per partner (``partners[g]``) on that partner's words, over the
channels pass LINEAR found some window not fully reused in (all of them for
a partner beyond the PE's registers); the hand-overs are R1, R2, R1.

Dense schedule (Kaleido, ``dense = 1``): the buffers hold tokens of ``Q~`` and
``K~`` (``x0``, state 0) tiled like the baseline's, the controller runs one pass
A of all ``D`` channels per tile and drains R0, exactly as the baseline engine
does. The driver picks it when the cycle model says passes A-D would be slower
(:func:`golden.cycle_model.kaleido_cycles`), so Kaleido is never slower than the
baseline array on the same PEs' count. The cycle count runs from the cycle
after ``start`` to the cycle the last score leaves the array, fill and drain
included; :mod:`golden.cycle_model` predicts it exactly.

A dense row entry whose state is ``FULL`` is a **folded key** of ``P V~``
(:mod:`golden.pv_tiles`): its row operand is ``x0 + x1``, the two keys' codes
added where they enter the array (the shared multiply ``(P0 + P1) V0``); the
image guarantees the sum is at most 127. The PE sees a plain pass-A product.
"""

from __future__ import annotations

from amaranth import Array, Cat, Const, Module, Mux, Signal, Value, signed
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.channel_window import row_groups
from golden.config import Config, require_config
from golden.pe import Load, Mode
from golden.reuse import State

from .array import BaselineArray, KaleidoArray
from .channel_window import group_count, rows_choose
from .dispatch import DispatchSignature, choice_layout
from .dispatchers import DISPATCHERS, dispatcher_of
from .matcher import INVALID, lane_masks, pe_masks
from .sequencer import GROUP_SLOTS, MAX_PARTNERS, NeedBits, Sequencer, routing

__all__ = ["AttentionEngine", "pair_entry", "token_entry", "entry_layout", "word_layout", "entry_bits",
           "slot_layout",
           "GROUP_SLOTS", "MAX_PARTNERS", "COUNTER_BITS", "COUNTER_SETTLE"]

COUNTER_BITS = 48        # the cycle and lane-work counters: 2**48 cycles outlast any simulation
COUNTER_SETTLE = 2       # cycles after busy falls until the counters hold their final values


#: One entry of the Kaleido engine's buffers: a pair's two values on one channel,
#: the partner's reuse state there (golden.reuse codes), and whether the pair exists.
pair_entry = data.StructLayout({"x0": signed(8), "x1": signed(8), "state": State, "valid": 1})

#: One entry of the baseline engine's buffers: a token's value on one channel.
token_entry = data.StructLayout({"x": signed(8), "valid": 1})


def slot_layout(channels: int, cols: int, window: int = 0, groups: int = 0) -> data.StructLayout:
    """What the sequencer (S0) hands the operand stage (S1) about one slot
    (with a channel window of ``window`` channels, each of ``groups``' steps)."""
    extra = {"choice": data.ArrayLayout(choice_layout(window), groups)} if window else {}
    return data.StructLayout({
        "valid": 1,                       # the slot issues (a step, a drain, or both)
        "steps": 1,                       # it carries a channel step
        "pair": 1,                        # and a second, paired one (matcher)
        "first": 1,                       # the first slot of a pass: its hand-over
        "drain": 1,                       # it drains the previous pass's score
        "flush": 1,                       # the final drain slot
        "mode": Mode,                     # the pass
        "part": range(3),                 # linear: which partner a pass B serves
        "chan": range(max(2, channels)),  # the step's channel
        **extra,
    })


def entry_layout(design: str) -> data.StructLayout:
    """The buffer entry of ``design``."""
    return pair_entry if design == "kaleido" else token_entry


def word_layout(design: str, entries: int) -> data.ArrayLayout:
    """One buffer word: a channel of a tile, ``entries`` (rows or columns) entries."""
    return data.ArrayLayout(entry_layout(design), entries)


def entry_bits(design: str) -> int:
    """Bits of one buffer entry."""
    return entry_layout(design).size


class AttentionEngine(wiring.Component):
    """Operand buffers, controller and array for ``Q K^T``.

    Parameters
    ----------
    cfg : Config
        Takes ``rows``, ``cols``, ``pe_acc_bits`` (Kaleido) or ``acc_bits`` (baseline),
        ``head_dim`` (the most channels one pass streams) and ``group_width`` (the
        channels a Kaleido pass B-D chooses from).
    design : "kaleido" or "baseline"
    q_words, k_words : int
        Depth of the two operand buffers (words of one channel of one tile).
    matcher : bool
        Pair channel steps of passes B, C and D (variants ``pe-m`` and ``full``)
        through a :class:`hw.matcher.Matcher`, or the channel window where
        ``cfg.issue_window`` asks for one; without it, steps go one a slot
        (:class:`hw.in_order.InOrder`). The engine sees only the interface of
        :mod:`hw.dispatch` (:func:`golden.dispatchers.dispatcher_of` picks the unit).

    Members
    -------
    q_wr_en, q_wr_addr, q_wr_data : In
        Write one word of the Q buffer: a channel of a row tile, the bits of a
        ``word_layout(design, rows)`` (``rows`` entries of ``pair_entry`` or ``token_entry``).
    k_wr_en, k_wr_addr, k_wr_data : In
        Likewise for the K buffer (``cols`` entries a word).
    groups : In(range(GROUP_SLOTS + 1))
        Channel groups to run.
    dg, q_tiles, k_tiles, q_base, k_base : In(...).array(GROUP_SLOTS)
        Per group: its channels, its Q and K tile counts, and its first word in each buffer.
    dense : In(1)
        Kaleido only: run the dense schedule (one pass A of all ``dg[0]`` channels per
        tile, buffers holding tokens) instead of passes A-D. A row entry in state
        ``FULL`` then multiplies ``x0 + x1`` (a folded key of ``P V~``).
    linear : In(1)
        Kaleido only: run a linear layer's windows (a LINEAR pass, then pass B per
        partner) instead of passes A-D; ``dense`` takes precedence.
    partners : In(range(MAX_PARTNERS + 1)).array(GROUP_SLOTS)
        Kaleido, linear only: per group, the partners of each window's reference.
    unpaired : In(1)
        Kaleido only: bypass the matcher's pairing (one step per slot, natural order);
        no effect without a matcher. The driver sets it where pairing would not pay.
    start : In(1)
        Begin (one cycle); ``cycles`` counts from the next.
    busy : Out(1)
        Running, from ``start`` until the last score has left.
    out, out_valid : Out(signed(score bits)).array(cols), Out(1).array(cols)
        Each column's drain: a finished (partial) score, for the accumulation buffer.
    cycles, lane_work : Out(COUNTER_BITS)
        Cycles since ``start``, and lane work done, for the cycle and utilization
        figures; final :data:`COUNTER_SETTLE` cycles after ``busy`` falls.
    """

    def __init__(self, cfg: Config, design: str = "kaleido", q_words: int = 64, k_words: int = 64,
                 matcher: bool = False):
        require_config(cfg, self)
        if design not in ("kaleido", "baseline"):
            raise ValueError(f"design must be 'kaleido' or 'baseline', not {design!r}")
        if matcher and design != "kaleido":
            raise ValueError("only the Kaleido design has a matcher")
        self.matcher = matcher
        # A channel window (Config.issue_window) takes the matcher's place; an
        # engine without a matcher has none and streams one step a slot.
        self.window = cfg.issue_window if matcher else 0
        if cfg.issue_window and not matcher:
            cfg = cfg.with_(issue_window=0)
        if q_words < 1 or k_words < 1:
            raise ValueError("operand buffers need at least one word")
        self.cfg, self.design = cfg, design
        self.q_words, self.k_words = q_words, k_words
        R, C = cfg.rows, cfg.cols
        eb = entry_bits(design)
        # A pass streams at most one channel group, a dense tile all D channels
        # (the baseline's, and Kaleido's dense schedule).
        self.channels = cfg.head_dim
        chan = range(self.channels + 1)
        dense = ({"dense": In(1), "unpaired": In(1), "linear": In(1),
                  "partners": In(range(MAX_PARTNERS + 1)).array(GROUP_SLOTS)}
                 if design == "kaleido" else {})
        super().__init__({
            "q_wr_en": In(1), "q_wr_addr": In(range(q_words)), "q_wr_data": In(R * eb),
            "k_wr_en": In(1), "k_wr_addr": In(range(k_words)), "k_wr_data": In(C * eb),
            "groups": In(range(GROUP_SLOTS + 1)),
            "dg": In(chan).array(GROUP_SLOTS),
            "q_tiles": In(range(q_words + 1)).array(GROUP_SLOTS),
            "k_tiles": In(range(k_words + 1)).array(GROUP_SLOTS),
            "q_base": In(range(q_words)).array(GROUP_SLOTS),
            "k_base": In(range(k_words)).array(GROUP_SLOTS),
            **dense,
            "start": In(1),
            "busy": Out(1),
            "out": Out(signed(cfg.pe_acc_bits if design == "kaleido" else cfg.acc_bits)).array(C),
            "out_valid": Out(1).array(C),
            "cycles": Out(COUNTER_BITS),
            "lane_work": Out(COUNTER_BITS),
        })

    def elaborate(self, platform):
        cfg, kaleido = self.cfg, self.design == "kaleido"
        name = dispatcher_of(cfg, self.matcher)
        match = DISPATCHERS[name](cfg)
        sig = match.signature
        # The engine routes by the unit's signature: one group (every row and column
        # takes the same steps, one or two a slot), or one a column or row.
        if not isinstance(sig, DispatchSignature) or sig.groups != (group_count(cfg) if sig.per_group else 1):
            match._MustUse__silence = True          # refused, so never elaborated
            raise TypeError(f"dispatcher {name!r}: the engine routes one group, or one a column or row "
                            f"({group_count(cfg)}), not {sig!r}")
        m = Module()
        R, C = cfg.rows, cfg.cols
        eb = entry_bits(self.design)

        m.submodules.qmem = qmem = Memory(shape=R * eb, depth=self.q_words, init=[])
        m.submodules.kmem = kmem = Memory(shape=C * eb, depth=self.k_words, init=[])
        qw, kw = qmem.write_port(), kmem.write_port()
        m.d.comb += [qw.en.eq(self.q_wr_en), qw.addr.eq(self.q_wr_addr), qw.data.eq(self.q_wr_data),
                     kw.en.eq(self.k_wr_en), kw.addr.eq(self.k_wr_addr), kw.data.eq(self.k_wr_data)]
        # The dispatcher picks each slot's channels (hw.dispatch): one read port per
        # side for each channel it may read in a slot.
        m.submodules[name.replace("-", "_")] = match
        reads = [(_ReadPort(m, qmem, f"q_read{w}"), _ReadPort(m, kmem, f"k_read{w}")) for w in range(sig.width)]
        needs = NeedBits(group_count(cfg), cfg.group_width)
        if kaleido:
            # Beside each buffer, a plane of 3 bits a word: which reuse states its
            # valid entries hold, worked out as the word is written. The controller
            # reads it as pass A streams, so a channel's need bits are recorded in
            # the cycle it issues, not a cycle later from the word the operand stage reads.
            for side, memory, words, data_in, en, addr in (
                    ("q", qmem, self.q_words, self.q_wr_data, self.q_wr_en, self.q_wr_addr),
                    ("k", kmem, self.k_words, self.k_wr_data, self.k_wr_en, self.k_wr_addr)):
                plane = Memory(shape=len(State), depth=words, init=[])
                m.submodules[f"{side}_states"] = plane
                port = plane.write_port()
                word = data.View(word_layout(self.design, R if side == "q" else C), data_in)
                m.d.comb += [port.en.eq(en), port.addr.eq(addr), port.data.eq(_present(word))]
                setattr(needs, f"{side}_plane", plane.read_port(domain="comb"))

        array = KaleidoArray(cfg) if kaleido else BaselineArray(cfg)
        m.submodules.array = array
        for j in range(C):
            m.d.comb += [self.out[j].eq(array.drain[j].score), self.out_valid[j].eq(array.drain[j].valid)]

        s1 = Signal(slot_layout(self.channels, C, self.window, group_count(cfg)), name="s1")
        Sequencer(self, m, s1, needs, reads, match).build()
        self._operand_stage(m, s1, needs, reads, match, array)
        self._counters(m, array)
        return m

    def _operand_stage(self, m, s1, needs, reads, match, array):
        """S1: the slot's buffer words become the array's edge bundles (operands,
        flags, hand-over, drain); in pass A it also computes the need bits."""
        cfg, kaleido = self.cfg, self.design == "kaleido"
        R, C = cfg.rows, cfg.cols
        per_group, paired = routing(match)
        (qr, kr), *partner = reads
        s1_valid, s1_steps, s1_first, s1_drain = s1.valid, s1.steps, s1.first, s1.drain
        s1_pass, s1_flush, s1_pair, s1_c = s1.mode, s1.flush, s1.pair, s1.chan
        a_in_s1 = needs.a_in_s1
        q_word = data.View(word_layout(self.design, R), qr.data)
        k_word = data.View(word_layout(self.design, C), kr.data)
        rows = [q_word[i] for i in range(R)]
        cols = [k_word[j] for j in range(C)]
        # Hand-overs: A (and LINEAR) start afresh; B takes T1 (linear: partners 1 and 3
        # from R1, partner 2 from R2); C takes T2; D takes T3.
        takes_r2 = (s1_pass == Mode.C) | ((s1_pass == Mode.B) & (s1.part == 1))
        load_of = Mux(s1_flush, Load.CLEAR,
                      Mux(s1_first, Mux((s1_pass == Mode.A) | (s1_pass == Mode.LINEAR), Load.CLEAR,
                                        Mux(takes_r2, Load.R2, Load.R1)), Load.KEEP))
        if kaleido:
            qv = [e.valid for e in rows]
            kv = [e.valid for e in cols]
            sq = [e.state for e in rows]
            sk = [e.state for e in cols]
            use_x0 = (s1_pass == Mode.A) | (s1_pass == Mode.B) | (s1_pass == Mode.LINEAR)
            use_k0 = (s1_pass == Mode.A) | (s1_pass == Mode.C) | (s1_pass == Mode.LINEAR)
            if paired:
                qr2, kr2 = partner[0]
                q_word2 = data.View(word_layout(self.design, R), qr2.data)
                k_word2 = data.View(word_layout(self.design, C), kr2.data)
            rows2 = [q_word2[i] for i in range(R)] if paired else rows
            cols2 = [k_word2[j] for j in range(C)] if paired else cols
            if per_group:
                self._window_operands(m, s1, reads, array, load_of, use_x0, use_k0)
            for i, (e, e2) in enumerate(zip(rows, rows2) if not per_group else ()):
                steps = Mux(s1_pair, 3, 1)
                # The dense schedule's folded key: the row adder forms P0 + P1 (<= 127).
                fold = self.dense & (e.state == State.FULL)
                a0 = Mux(fold, (e.x0 + e.x1)[:8], Mux(use_x0, e.x0, e.x1))
                m.d.sync += [
                    array.row_in[i].a0.eq(a0),
                    array.row_in[i].a1.eq(Mux(s1_pair, Mux(use_x0, e2.x0, e2.x1), 0)),
                    array.row_in[i].sq0.eq(Mux(self.dense, 0, sq[i])),
                    array.row_in[i].sq1.eq(Mux(s1_pair, e2.state, 0)),
                    array.row_in[i].mode.eq(s1_pass),
                    array.row_in[i].steps.eq(Mux(s1_valid & s1_steps & qv[i], steps, 0)),
                    array.row_in[i].load.eq(Mux(s1_valid, load_of, Load.KEEP)),
                    array.row_in[i].drain.eq(s1_valid & s1_drain),
                ]
            # A paired slot carries each step's column operand on its own byte.
            for j, (e, e2) in enumerate(zip(cols, cols2) if not per_group else ()):
                m.d.sync += [
                    array.col_in[j].b0.eq(Mux(use_k0, e.x0, e.x1)),
                    array.col_in[j].b1.eq(Mux(s1_pair, Mux(use_k0, e2.x0, e2.x1), 0)),
                    array.col_in[j].sk0.eq(sk[j]),
                    array.col_in[j].sk1.eq(Mux(s1_pair, e2.state, 0)),
                    array.col_valid[j].eq(kv[j]),
                ]
            # The dispatcher keeps every row's and column's state (the in-order one ignores them).
            m.d.comb += [match.wr_en.eq(a_in_s1), match.wr_chan.eq(s1_c)]
            m.d.comb += [match.wr_data.sq[i].eq(Mux(qv[i], sq[i], INVALID)) for i in range(R)]
            m.d.comb += [match.wr_data.sk[j].eq(Mux(kv[j], sk[j], INVALID)) for j in range(C)]
            if per_group:
                # Per group: a column needs the channel in B (D) when some PE of it has
                # work there, a row in C likewise; the matcher's masks over that entry
                # (an invalid row or column needs nothing).
                for p, mode in enumerate((Mode.B, Mode.C, Mode.D)):
                    some, _ = pe_masks(m, match.wr_data, lane_masks(m, Const(mode, Mode), cfg.accumulators),
                                       R, C, f"needs_{'BCD'[p]}")
                    if row_groups(mode):
                        m.d.comb += [needs.groups[p][i].eq(some[i * C:(i + 1) * C].any()) for i in range(R)]
                    else:
                        m.d.comb += [needs.groups[p][j].eq(Cat(*(some[i * C + j] for i in range(R))).any())
                                     for j in range(C)]
        else:
            for i, e in enumerate(rows):
                m.d.sync += [
                    array.row_in[i].a.eq(e.x),
                    array.row_in[i].valid.eq(s1_valid & s1_steps & e.valid),
                    array.row_in[i].clear.eq(s1_valid & (s1_first | s1_flush)),
                    array.row_in[i].drain.eq(s1_valid & s1_drain),
                ]
            for j, e in enumerate(cols):
                m.d.sync += [array.col_in[j].eq(e.x), array.col_valid[j].eq(e.valid)]

    def _window_operands(self, m, s1, reads, array, load_of, use_x0, use_k0):
        """S1 of a channel-window engine: the broadcast side carries all ``W``
        channels' bytes, the choosing side (columns in B and D, rows in C) its
        own steps' bytes at positions 0 and 1 with their window positions."""
        cfg = self.cfg
        R, C, W = cfg.rows, cfg.cols, self.window
        by_rows = Signal()
        m.d.comb += by_rows.eq(rows_choose(s1.mode))
        q_words = [data.View(word_layout(self.design, R), q.data) for q, _ in reads]
        k_words = [data.View(word_layout(self.design, C), k.data) for _, k in reads]
        issued = s1.valid & s1.steps
        for i in range(R):
            es = [q_words[w][i] for w in range(W)]
            # The dense schedule's folded key: the row adder forms P0 + P1 (<= 127).
            fold = self.dense & (es[0].state == State.FULL)
            a = [Mux(use_x0, e.x0, e.x1) for e in es]
            a[0] = Mux(fold, (es[0].x0 + es[0].x1)[:8], a[0])
            sq = [Mux(self.dense, 0, e.state) for e in es]
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

    def _counters(self, m, array):
        """The cycle and lane-work counters, from the cycle after ``start`` while busy.

        They are performance counters, read once a run is over, so they are
        pipelined off the chip clock's paths: the array's lane count is
        registered before it is added, and each counter is two halves with the
        low half's carry registered into the high one. Both settle two cycles
        after ``busy`` falls (:data:`COUNTER_SETTLE`), which is when a bench reads them."""
        clear = Signal()
        m.d.comb += clear.eq(self.start & ~self.busy)
        work, counting = Signal.like(array.lane_work), Signal()
        m.d.sync += [work.eq(Mux(self.busy, array.lane_work, 0)), counting.eq(self.busy)]
        _split_counter(m, self.cycles, self.busy, clear, "cycles")
        _split_counter(m, self.lane_work, Mux(counting, work, 0), clear, "lane_work")


def _split_counter(m, total, add, clear, name: str) -> None:
    """``total`` += ``add`` every cycle (0 on ``clear``), as two halves: the carry
    out of the low half reaches the high half a cycle later."""
    half = len(total) // 2
    low, high = Signal(half, name=f"{name}_low"), Signal(len(total) - half, name=f"{name}_high")
    carry = Signal(name=f"{name}_carry")
    wide = Signal(half + 1, name=f"{name}_sum")
    m.d.comb += [wide.eq(low + add), total.eq(Cat(low, high))]
    with m.If(clear):
        m.d.sync += [low.eq(0), high.eq(0), carry.eq(0)]
    with m.Else():
        m.d.sync += [low.eq(wide[:half]), carry.eq(wide[half]), high.eq(high + carry)]


class _ReadPort:
    """One read port of an operand buffer, timed as an SRAM macro's: the address is
    registered at the clock edge (the macro's input register) and the word comes
    out during the next cycle. The cycle it arrives in is a synchronous read
    port's; but the sequencer's path ends at the address register, and the
    word's decoder (here a multiplexer over the buffer's flip-flops) stands at
    the head of the operand stage instead of the end of the sequencer's."""

    def __init__(self, m, memory, name: str):
        port = memory.read_port(domain="comb")
        self.addr = Signal.like(port.addr, name=f"{name}_addr")
        held = Signal.like(port.addr, name=f"{name}_addr_q")
        m.d.sync += held.eq(self.addr)
        m.d.comb += port.addr.eq(held)
        self.data = port.data


def _present(word) -> Value:
    """Which reuse states (bit ``v``: :class:`golden.reuse.State` ``v``) the valid
    entries of a buffer word hold."""
    return Cat(*(Cat(*(e.valid & (e.state == v) for e in word)).any() for v in range(len(State))))
