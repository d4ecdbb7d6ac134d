"""The attention engine: operand buffers, the pass controller, and an array.

This is the top that simulations run. This module holds the buffers and the
counters; the controller (S0) is :mod:`hw.core.sequencer`, the operand stage (S1)
:mod:`hw.core.operand_stage`, their shared layouts :mod:`hw.core.buffers`. Before ``start`` the operand buffers are
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

from amaranth import Cat, Module, Mux, Signal, Value, signed
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.config import Config, require_config
from golden.dispatchers import dispatcher_of
from golden.errors import ConfigError
from golden.reuse import State

from ..dispatcher.channel_window import group_count
from ..dispatcher.dispatch import DispatchSignature
from ..dispatcher.dispatchers import DISPATCHERS
from .array import BaselineArray, KaleidoArray
from .buffers import entry_bits, entry_layout, pair_entry, slot_layout, token_entry, word_layout
from .operand_stage import operand_stage
from .sequencer import GROUP_SLOTS, MAX_PARTNERS, NeedBits, Sequencer

__all__ = ["AttentionEngine", "pair_entry", "token_entry", "entry_layout", "word_layout", "entry_bits",
           "slot_layout",
           "GROUP_SLOTS", "MAX_PARTNERS", "COUNTER_BITS", "COUNTER_SETTLE"]

COUNTER_BITS = 48        # the cycle and lane-work counters: 2**48 cycles outlast any simulation
COUNTER_SETTLE = 2       # cycles after busy falls until the counters hold their final values


class RoutingError(ConfigError, TypeError):
    """A dispatcher whose signature the engine cannot route (a user's error: exit 2)."""


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
        through a :class:`hw.dispatcher.matcher.Matcher`, or the channel window where
        ``cfg.issue_window`` asks for one; without it, steps go one a slot
        (:class:`hw.dispatcher.in_order.InOrder`). The engine sees only the interface of
        :mod:`hw.dispatcher.dispatch` (:func:`golden.dispatchers.dispatcher_of` picks the unit).
    channels : int or None
        The most channels one pass (or dense tile) may stream, ``head_dim`` by
        default; the system top asks for more, so that one engine runs ``P V~``'s
        reduction over the keys too.

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
                 matcher: bool = False, channels: int | None = None):
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
        self.channels = channels or cfg.head_dim
        if self.channels < cfg.head_dim:
            raise ValueError(f"an engine streams at least head_dim ({cfg.head_dim}) channels, not {channels}")
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
        if name not in DISPATCHERS:
            raise ConfigError(f"dispatcher {name!r} has a golden model but no RTL component: register one "
                              f"with hw.dispatcher.dispatchers.register")
        match = DISPATCHERS[name](cfg)
        sig = match.signature
        # The engine routes by the unit's signature: one group (every row and column
        # takes the same steps, one or two a slot), or one a column or row.
        if not isinstance(sig, DispatchSignature) or sig.groups != (group_count(cfg) if sig.per_group else 1):
            match._MustUse__silence = True          # refused, so never elaborated
            raise RoutingError(f"dispatcher {name!r}: the engine routes one group, or one a column or row "
                            f"({group_count(cfg)}), not {sig!r}")
        m = Module()
        R, C = cfg.rows, cfg.cols
        eb = entry_bits(self.design)

        if kaleido:
            # Each buffer is two, as two SRAM macros would be: the values, and each
            # entry's reuse state and validity. The states feed the dispatcher's table
            # in the cycle they are read; with their own macro (and address register)
            # that read drives a twelfth of the word's fan-out, not all of it.
            qmem = _SplitBuffer(m, "qmem", R, self.q_words, self.q_wr_en, self.q_wr_addr, self.q_wr_data)
            kmem = _SplitBuffer(m, "kmem", C, self.k_words, self.k_wr_en, self.k_wr_addr, self.k_wr_data)
        else:
            m.submodules.qmem = qmem = Memory(shape=R * eb, depth=self.q_words, init=[])
            m.submodules.kmem = kmem = Memory(shape=C * eb, depth=self.k_words, init=[])
            qw, kw = qmem.write_port(), kmem.write_port()
            m.d.comb += [qw.en.eq(self.q_wr_en), qw.addr.eq(self.q_wr_addr), qw.data.eq(self.q_wr_data),
                         kw.en.eq(self.k_wr_en), kw.addr.eq(self.k_wr_addr), kw.data.eq(self.k_wr_data)]
        # The dispatcher picks each slot's channels (hw.dispatcher.dispatch): one read port per
        # side for each channel it may read in a slot.
        m.submodules[name.replace("-", "_")] = match
        port = _SplitReadPort if kaleido else _ReadPort
        reads = [(port(m, qmem, f"q_read{w}"), port(m, kmem, f"k_read{w}")) for w in range(sig.width)]
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
        operand_stage(self, m, s1, needs, reads, match, array)
        self._counters(m, array)
        return m

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


#: The fields of a Kaleido buffer entry its value macro holds; the rest (its
#: reuse state and validity) are the flag macro's.
_VALUE_FIELDS = ("x0", "x1")


def _field_bits(values: bool) -> list[tuple[int, int]]:
    """``(offset, width)`` of ``pair_entry``'s value fields (or the others), in its order."""
    return [(f.offset, f.width) for name, f in pair_entry if (name in _VALUE_FIELDS) == values]


class _SplitBuffer:
    """A Kaleido operand buffer as two memories written together: ``values`` (each
    entry's ``x0`` and ``x1``) and ``flags`` (its state and validity)."""

    def __init__(self, m, name: str, entries: int, depth: int, en, addr, word):
        eb = pair_entry.size
        self.entries = entries
        self.value_bits, self.flag_bits = _field_bits(True), _field_bits(False)
        # A read port puts each entry back together as values, then flags.
        offsets = [o for o, _ in self.value_bits + self.flag_bits]
        assert offsets == sorted(offsets)
        self.parts = []
        for part, bits in (("values", self.value_bits), ("flags", self.flag_bits)):
            width = entries * sum(w for _, w in bits)
            mem = Memory(shape=width, depth=depth, init=[])
            m.submodules[f"{name}_{part}"] = mem
            w = mem.write_port()
            m.d.comb += [w.en.eq(en), w.addr.eq(addr),
                         w.data.eq(Cat(*(word[e * eb + o:e * eb + o + n] for e in range(entries) for o, n in bits)))]
            self.parts.append(mem)


class _SplitReadPort:
    """A read port of a :class:`_SplitBuffer`, each memory timed as :class:`_ReadPort`
    and its address registered apart: ``data`` is the whole word, reassembled."""

    def __init__(self, m, buffer: _SplitBuffer, name: str):
        values, flags = (mem.read_port(domain="comb") for mem in buffer.parts)
        self.addr = Signal.like(values.addr, name=f"{name}_addr")
        held = Signal.like(values.addr, name=f"{name}_addr_q")
        # Held inverted, so that synthesis does not merge the two address registers
        # back into one (it merges flip-flops with the same input) and its fan-out.
        held_n = Signal.like(values.addr, name=f"{name}_flags_addr_qn")
        m.d.sync += [held.eq(self.addr), held_n.eq(~self.addr)]
        m.d.comb += [values.addr.eq(held), flags.addr.eq(~held_n)]
        vb, fb = sum(w for _, w in buffer.value_bits), sum(w for _, w in buffer.flag_bits)
        self.data = Cat(*(Cat(values.data[e * vb:(e + 1) * vb], flags.data[e * fb:(e + 1) * fb])
                          for e in range(buffer.entries)))


def _present(word) -> Value:
    """Which reuse states (bit ``v``: :class:`golden.reuse.State` ``v``) the valid
    entries of a buffer word hold."""
    return Cat(*(Cat(*(e.valid & (e.state == v) for e in word)).any() for v in range(len(State))))
