"""The dispatcher's matcher (docs/design.md, "The data dispatcher"): lane pairing of channel steps.

It keeps, for every channel of the group, the reuse state of each valid row
and column of the tile group (written while pass A reads every channel; an
invalid row or column is stored as ``3`` and needs nothing). From them it
works out, for the pass being run, how many lanes each PE needs for a step
(:func:`golden.matcher.pe_needs`). Each cycle it looks at the next
``lookahead`` channels of the pass (the head and its candidates, held in
registers with their entries), and pairs the head with the first candidate
whose lanes fit beside the head's in every PE. The engine issues the head, and
the partner when there is one; the window closes up behind them and refills
from the rest of the pass's set. The ports are every dispatcher's
(:mod:`hw.dispatcher.dispatch`). The window is loaded on a pass's first slot, which
issues no step, from lists of each pass's lowest channels kept as pass A writes
the table (pass A's last channel, written that same cycle, joins from the write port).
"""

from __future__ import annotations

from amaranth import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data

from golden import dispatchers as models
from golden.config import Config
from golden.matcher import PAIRED_MODES, lanes_of

from .dispatch import Dispatcher, state_entry
from .prefix import lowest_of_pass, lowest_onehot, lowest_sets, one_hot, select

__all__ = ["Matcher", "INVALID", "state_table", "lane_masks", "pe_masks", "first_channels", "load_window"]

#: The state code of a row or column that does not exist in the tile group: it needs nothing.
INVALID = 3


def state_table(m, unit, channels: int, layout, bypass: bool = True) -> Array:
    """The table of ``unit`` (ports ``wr_en``, ``wr_chan``, ``wr_data``): one
    ``layout`` entry per channel, with the write bypassed to the lookup (so the
    channel written this cycle reads its new entry) unless ``bypass`` is off."""
    # Written (in pass A) before it is read, so it needs no reset.
    stored = Array(Signal(layout, name=f"states{c}", reset_less=True) for c in range(channels))
    with m.If(unit.wr_en):
        m.d.sync += stored[unit.wr_chan].eq(unit.wr_data)
    if not bypass:
        return stored
    table = Array(Signal(layout, name=f"entry{c}") for c in range(channels))
    for c in range(channels):
        m.d.comb += table[c].eq(Mux(unit.wr_en & (unit.wr_chan == c), unit.wr_data, stored[c]))
    return table


def lane_masks(m, mode, kind):
    """The lane table of the pass ``mode`` in a PE of ``kind`` (:func:`golden.matcher.lanes_of`) as two
    3x3 masks ``(some, whole)``: a PE with flags ``(sq, sk)`` uses some lane, or both."""
    some = [[Signal(name=f"some_{a}{b}") for b in range(3)] for a in range(3)]
    whole = [[Signal(name=f"whole_{a}{b}") for b in range(3)] for a in range(3)]
    with m.Switch(mode):
        for pass_ in PAIRED_MODES:
            lanes = lanes_of(pass_, kind)
            with m.Case(pass_):
                m.d.comb += [some[a][b].eq(int(lanes[a][b] >= 1)) for a in range(3) for b in range(3)]
                m.d.comb += [whole[a][b].eq(int(lanes[a][b] == 2)) for a in range(3) for b in range(3)]
        with m.Default():           # passes A and LINEAR: every PE takes both lanes
            m.d.comb += [x.eq(1) for row in some + whole for x in row]
    return some, whole


def pe_masks(m, entry, lanes, rows: int, cols: int, name: str):
    """``(some, whole)`` of one table entry under ``lanes`` (:func:`lane_masks`):
    one bit per PE, row-major."""
    some, whole = lanes
    # Each flag decoded once, as a signal: an expression would be emitted again at
    # every PE of its row or column.
    sq = [Signal(3, name=f"{name}_sq{i}") for i in range(rows)]
    sk = [Signal(3, name=f"{name}_sk{j}") for j in range(cols)]
    m.d.comb += [sq[i][a].eq(entry.sq[i] == a) for i in range(rows) for a in range(3)]
    m.d.comb += [sk[j][b].eq(entry.sk[j] == b) for j in range(cols) for b in range(3)]
    s, w = Signal(rows * cols, name=f"{name}_some"), Signal(rows * cols, name=f"{name}_whole")
    flags = [(a, b) for a in range(3) for b in range(3)]
    for i in range(rows):
        for j in range(cols):
            pick = Signal(len(flags), name=f"{name}_pick{i}_{j}")
            m.d.comb += pick.eq(Cat(*(sq[i][a] & sk[j][b] for a, b in flags)))
            m.d.comb += [
                s[i * cols + j].eq(Cat(*(p & some[a][b] for p, (a, b) in zip(pick, flags))).any()),
                w[i * cols + j].eq(Cat(*(p & whole[a][b] for p, (a, b) in zip(pick, flags))).any()),
            ]
    return s, w


def first_channels(m, unit, channels: int, count: int, name: str, bit: int) -> tuple[list, list, list, Signal]:
    """The first ``count`` channels written with need bit ``bit`` (``unit.wr_need``)
    since the last write of channel 0, this cycle's write included: the lowest of
    that pass's set, since pass A writes in channel order. Kept as the writes come,
    so the list is whole a cycle after pass A's last write, and the cycle of that
    write sees it through the bypass. Returns the list's registers and the list
    so (``valid`` and ``chan`` per place), which place this cycle's write takes
    (one-hot), and how many of its registers hold a channel. (The entries stay in the table: a list of them
    too would be 16 more flip-flops a place, and a deeper clock tree for all.)"""
    place = data.StructLayout({"valid": 1, "chan": range(max(2, channels))})
    kept = [Signal(place, name=f"{name}{k}") for k in range(count)]
    filled = Signal(range(count + 1), name=f"{name}_filled")
    now = [Signal(place, name=f"{name}{k}_now") for k in range(count)]
    hits = [Signal(name=f"{name}{k}_hit") for k in range(count)]
    restart = unit.wr_chan == 0
    at = Mux(restart, 0, filled)                     # where this write goes, if the list has room
    m.d.comb += [h.eq(unit.wr_en & unit.wr_need[bit] & (at == k)) for k, h in enumerate(hits)]
    m.d.comb += [n.eq(Mux(unit.wr_en & restart, 0, k)) for n, k in zip(now, kept)]
    for n, hit in zip(now, hits):
        with m.If(hit):
            m.d.comb += [n.valid.eq(1), n.chan.eq(unit.wr_chan)]
    with m.If(unit.wr_en):
        m.d.sync += [k.eq(n) for k, n in zip(kept, now)]
        m.d.sync += filled.eq(at + (unit.wr_need[bit] & (at < count)))
    return kept, now, hits, filled

def load_window(m, unit, firsts, table, window, beyond, layout):
    """The window's load on a pass's first slot (under ``m.If(opening)``): the pass's
    lowest channels from its list (:func:`first_channels`; pass B's for a pass that
    pairs nothing), their entries read from the table, or from the write port for
    the one written this cycle (pass A's last channel is written on pass B's first
    slot); the rest of the set (``recorded``) waits ``beyond``."""
    G, L = len(beyond), len(window)
    loaded = Const(0, G)
    for k in range(L):
        place = Signal.like(firsts[0][1][k], name=f"load{k}")
        kept = Signal(range(max(2, G)), name=f"load{k}_kept")
        hit = Signal(name=f"load{k}_hit")
        m.d.comb += [place.eq(firsts[0][1][k]), kept.eq(firsts[0][0][k].chan), hit.eq(firsts[0][2][k])]
        for mode, (regs, now, hits, _) in zip(PAIRED_MODES[1:], firsts[1:]):
            with m.If(unit.mode == mode):
                m.d.comb += [place.eq(now[k]), kept.eq(regs[k].chan), hit.eq(hits[k])]
        # The table is read at the registered place (the write's own entry comes
        # from the port), so that no read waits on the write's channel.
        stored = select(m, table, one_hot(kept, G), G, layout, f"load{k}_entry")
        m.d.sync += [window[k].valid.eq(place.valid), window[k].chan.eq(place.chan),
                     window[k].entry.eq(Mux(hit, unit.wr_data, stored))]
        loaded = loaded | Mux(place.valid, one_hot(place.chan, G), 0)
    m.d.sync += beyond.eq(unit.recorded & ~loaded)

class Matcher(Dispatcher):
    """Merge unit over a lookahead window of channel steps, the window held in registers.

    The window is the head and the next ``lookahead - 1`` channels of the pass,
    each with its table entry; the channels after it wait in ``beyond``, a bit
    each. In a slot, the head is paired with the first entry of the window whose
    lanes fit beside the head's in every PE; both leave, the entries behind
    close up, and the lowest one or two channels of ``beyond`` (with their
    entries) refill the back. So a slot's decision reads registers only, and the
    search through the set (``lowest_sets`` over ``group_width`` bits) runs
    beside it, to refill, instead of in series with it. The window is loaded on
    the pass's first slot, which therefore issues no step
    (:data:`golden.matcher.FILL_SLOTS`). It loads from registers too: pass A
    writes the table in channel order, so the first ``lookahead`` channels it
    writes with a pass's need bit (``wr_need``) are that pass's lowest, and three
    lists keep them as they come (:func:`first_channels`); the channel pass A
    writes last, a cycle after it streamed, joins there from the write port. (A
    search through the set on this slot was the block's longest path.)

    Unpaired passes (``single``) take the lowest channel of ``sets`` a slot,
    from the first slot on, as the in-order dispatcher does.

    Parameters
    ----------
    cfg : Config
        Takes ``group_width`` (table entries: the widest channel group), ``rows``
        and ``cols`` (states per entry), ``accumulators`` (the PE's lane table)
        and ``lookahead`` (the head and ``lookahead - 1`` candidates).

    Members
    -------
    (:class:`hw.dispatcher.dispatch.Dispatcher`'s, for one group reading up to two channels.)
    wr_en, wr_chan, wr_data, wr_need : In
        Write channel ``wr_chan``'s entry this cycle (``INVALID`` for a row or
        column the tile group does not have), and say which passes' sets hold it;
        channel 0 begins a tile group's table and lists.
    mode : In(Mode)
        The pass being run (B, C or D; any other pass pairs nothing, from pass B's list).
    single : In(1)
        Pair nothing: the lowest channel of ``sets`` alone, from the first slot.
    opening, advance, recorded : In
        Load the window (``opening``: the pass's list, and ``recorded`` without it
        beyond), or move it on when the slot issues (``advance``).
    found[0], chan[0] : Out
        The head: the lowest remaining channel (none on a paired pass's first slot).
    found[1], chan[1] : Out
        Its partner: the first entry of the window whose lanes fit beside the
        head's in every PE, if any (``chan[1]`` holds it only when ``found[1]``).
    choice : Out(choice_layout(2)).array(1)
        ``take`` is the head and the partner; ``sel`` is 0 and 1.
    rest, more : Out
        ``sets`` without the head and its partner, and whether the pass has steps left.
    """

    model = models.Matcher

    @staticmethod
    def storage_bits(cfg: Config) -> int:
        """Bits of the state table (2 bits per row and per column per channel)."""
        return cfg.group_width * state_entry(cfg.rows, cfg.cols).size

    def __init__(self, cfg: Config):
        super().__init__(cfg, width=2, groups=1)

    def elaborate(self, platform):
        m = Module()
        cfg = self.cfg
        G, R, C, L = cfg.group_width, cfg.rows, cfg.cols, cfg.lookahead
        layout = state_entry(R, C)
        table = state_table(m, self, G, layout, bypass=False)
        # The pass's lane table, registered: ``mode`` changes as a pass begins, and
        # its first slot only loads the window, so no decision waits on the decode.
        fresh = lane_masks(m, self.mode, cfg.pe.kind)
        lanes = tuple([[Signal(name=f"{x.name}_q") for x in row] for row in mask] for mask in fresh)
        for held_mask, mask in zip(lanes, fresh):
            m.d.sync += [q.eq(x) for q_row, row in zip(held_mask, mask) for q, x in zip(q_row, row)]
        held = data.StructLayout({"valid": 1, "chan": range(max(2, G)), "entry": layout})
        window = [Signal(held, name=f"win{k}") for k in range(L)]
        beyond = Signal(G)
        sets = self.sets[0]

        # The lowest L channels of each pass's set, kept as pass A writes the table
        # (in channel order, so the first L it writes with a pass's need bit are
        # that pass's lowest): a pass's first slot loads its window from them, and
        # no search through the set stands between a register and the window.
        firsts = [first_channels(m, self, G, L, f"first_{mode.name}", k) for k, mode in enumerate(PAIRED_MODES)]
        # The search that refills the window: the lowest one or two channels of
        # what waits beyond it, with their entries.
        ranks = []
        for k, (found, index, onehot) in enumerate(lowest_sets(m, beyond, G, min(L, 2), "refill")):
            ranked = Signal(held, name=f"rank{k}")
            m.d.comb += [ranked.valid.eq(found), ranked.chan.eq(index),
                         ranked.entry.eq(select(m, table, onehot, G, layout, f"rank{k}_entry"))]
            ranks.append((ranked, onehot))
        refill = [onehot for _, onehot in ranks]

        # The slot's pairing, from the window's registers alone: two steps fit when
        # neither takes both lanes of a PE the other uses at all; the first that fits wins.
        masks = [pe_masks(m, w.entry, lanes, R, C, f"win{k}") for k, w in enumerate(window)]
        head_some, head_whole = masks[0]
        fits = [Const(0)] + [w.valid & ~((head_whole & s) | (head_some & x)).any()
                             for w, (s, x) in zip(window[1:], masks[1:])]
        chosen = Signal(L, name="partner")               # one-hot window position of the partner
        m.d.comb += chosen.eq(lowest_onehot(Cat(*fits), L))
        pair = Signal()
        m.d.comb += pair.eq(chosen.any())
        partner = Signal(range(max(2, G)), name="partner_chan")
        for k in range(1, L):
            with m.If(chosen[k]):
                m.d.comb += partner.eq(window[k].chan)

        # The window a slot leaves: the head and the partner gone, the rest closed
        # up in order, the back refilled from beyond (which is empty unless the window was full).
        after = window[1:] + [ranks[0][0]] + ([ranks[1][0]] if L > 1 else [])
        moved = [Signal(held, name=f"moved{k}") for k in range(L)]
        for k in range(L):
            # Past the partner, everything moves up one more place.
            if L > 1:
                past = Cat(*(chosen[j] for j in range(1, min(k + 2, L)))).any()
                m.d.comb += moved[k].eq(Mux(past, after[k + 1], after[k]))
            else:
                m.d.comb += moved[k].eq(after[k])
        taken = refill[0] | Mux(pair, refill[1], 0) if L > 1 else refill[0]
        with m.If(self.opening):
            load_window(m, self, firsts, table, window, beyond, layout)
        with m.Elif(self.advance):
            m.d.sync += [w.eq(n) for w, n in zip(window, moved)]
            m.d.sync += beyond.eq(beyond & ~taken)

        # What the engine sees.
        single_found, single_head, single_rest, single_more = lowest_of_pass(m, self, G, "single")
        left = Mux(pair, window[2].valid if L > 2 else 0, window[1].valid if L > 1 else 0) | beyond.any()
        with m.If(self.single):
            m.d.comb += [self.found[0].eq(single_found), self.chan[0].eq(single_head),
                         self.rest[0].eq(single_rest), self.more.eq(single_more)]
        with m.Elif(self.opening):
            # Whether the pass has any step is known a slot later (from the window),
            # so the fill slot never waits on the channel pass A records last.
            m.d.comb += [self.rest[0].eq(sets), self.more.eq(1)]
        with m.Else():
            gone = one_hot(window[0].chan, G) | Mux(pair, one_hot(partner, G), 0)
            m.d.comb += [self.found[0].eq(window[0].valid), self.chan[0].eq(window[0].chan),
                         self.found[1].eq(pair), self.chan[1].eq(partner),
                         self.rest[0].eq(sets & ~gone), self.more.eq(left)]
        m.d.comb += [self.choice[0].take.eq(Cat(self.found[0], self.found[1])), self.choice[0].sel[1].eq(1)]
        return m
