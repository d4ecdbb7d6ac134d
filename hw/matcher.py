"""The dispatcher's matcher (docs/design.md, "The data dispatcher"): lane pairing of channel steps.

It keeps, for every channel of the group, the reuse state of each valid row
and column of the tile group (written while pass A reads every channel; an
invalid row or column is stored as ``3`` and needs nothing). From them it
works out, for the pass being run, how many lanes each PE needs for a step
(:func:`golden.matcher.pe_needs`). Each cycle it looks at the next
``lookahead`` channels of the pass's remaining set (the head and its
candidates, found by chained priority encoders), and pairs the head with the
first candidate whose lanes fit beside the head's in every PE. The engine
issues the head, and the partner when there is one, and keeps the set without
them (``rest``) for the next cycle; the ports are every dispatcher's
(:mod:`hw.dispatch`). A table write bypasses to the lookup in the same cycle, so the last
channel of pass A can be paired on the first cycle of B.
"""

from __future__ import annotations

from amaranth import Array, Cat, Const, Module, Mux, Signal, Value

from golden.config import Config
from golden.matcher import PAIRED_MODES, lanes_of

from .dispatch import Dispatcher, state_entry

__all__ = ["Matcher", "lowest_set", "lowest_sets", "lowest_onehot", "select", "INVALID", "state_entry", "state_table", "lane_masks", "pe_masks"]

#: The state code of a row or column that does not exist in the tile group: it needs nothing.
INVALID = 3


def lowest_set(m, vector, width, name):
    """(found, index) of the lowest set bit of ``vector``: a priority encoder."""
    index = Signal(range(max(2, width)), name=f"{name}_index")
    for k in reversed(range(width)):
        with m.If(vector[k]):
            m.d.comb += index.eq(k)
    return vector.any(), index


def lowest_onehot(vector, width: int) -> Value:
    """The lowest set bit of ``vector`` alone, one-hot (0 when none is set)."""
    return Cat(*(vector[j] & ~vector[:j].any() if j else vector[0] for j in range(width)))


def _saturating_sum(a, b, count: int):
    """Thermometer sum of two counts (thermometer codes of ``count`` bits), saturated:
    bit ``t - 1`` is ``a + b >= t``."""
    at_least = lambda x, t: Const(1, 1) if t == 0 else x[t - 1]
    return Cat(*(Cat(*(at_least(a, i) & at_least(b, t - i) for i in range(t + 1))).any()
                 for t in range(1, count + 1)))


def at_least(m, vector, width: int, count: int, name: str) -> Signal:
    """How many bits of ``vector`` are set, as a thermometer code saturated at
    ``count`` (bit ``t - 1``: at least ``t``), by a tree of log2(width) levels."""
    level = [Cat(vector[j], Const(0, count - 1)) if count > 1 else Cat(vector[j]) for j in range(width)]
    depth = 0
    while len(level) > 1:
        pairs = []
        for j in range(0, len(level) - 1, 2):
            node = Signal(count, name=f"{name}_sum{depth}_{j // 2}")
            m.d.comb += node.eq(_saturating_sum(level[j], level[j + 1], count))
            pairs.append(node)
        level = pairs + level[len(level) - len(level) % 2:]
        depth += 1
    total = Signal(count, name=f"{name}_at_least")
    m.d.comb += total.eq(level[0])
    return total


def lowest_sets(m, vector, width: int, count: int, name: str):
    """The lowest ``count`` set bits of ``vector``, all at once: per rank k, ``(found,
    index, onehot)``, as ``count`` priority encoders in series would give them.

    A bit is the k-th set one when k bits below it are set. The counts below every
    bit come from a prefix network of saturating counters (thermometer codes of
    ``count`` bits, log2(width) levels), so no rank waits on the one before it.
    """
    bits = [vector[j] for j in range(width)]
    # Inclusive prefix counts, by recursive doubling.
    prefix = [Cat(bit, Const(0, count - 1)) if count > 1 else Cat(bit) for bit in bits]
    d = 1
    while d < width:
        level = []
        for j in range(width):
            if j < d:
                level.append(prefix[j])
                continue
            # Each level is a signal of its own: as a nested expression it would grow by doubling.
            node = Signal(count, name=f"{name}_count{d}_{j}")
            m.d.comb += node.eq(_saturating_sum(prefix[j - d], prefix[j], count))
            level.append(node)
        prefix = level
        d *= 2
    out = []
    for k in range(count):
        onehot = Signal(width, name=f"{name}{k}_onehot")
        for j in range(width):
            below = prefix[j - 1] if j else Const(0, count)
            exactly_k = (below[k - 1] if k else Const(1, 1)) & (~below[k] if k < count else Const(1, 1))
            m.d.comb += onehot[j].eq(bits[j] & exactly_k)
        index = Signal(range(max(2, width)), name=f"{name}{k}_index")
        m.d.comb += index.eq(_encode(onehot, width))
        out.append((onehot.any(), index, onehot))
    return out


def _encode(onehot, width: int):
    # The index of a one-hot vector's set bit: bit b of it is the OR of the positions with bit b set.
    bits = max(1, (max(2, width) - 1).bit_length())
    return Cat(*(Cat(*(onehot[j] for j in range(width) if (j >> b) & 1)).any() if width > 1 << b else Const(0, 1)
                 for b in range(bits)))


def select(m, table, onehot, width: int, layout, name: str):
    """``table[j]`` for the one set bit ``j`` of ``onehot`` (zero when none): an AND-OR
    multiplexer, which waits on no index encoding."""
    entry = Signal(layout, name=name)
    flat = [table[j].as_value() for j in range(width)]
    acc = Const(0, len(flat[0]))
    for j in range(width):
        acc = acc | Mux(onehot[j], flat[j], 0)
    m.d.comb += entry.eq(acc)
    return entry


def state_table(m, unit, channels: int, layout) -> Array:
    """The table of ``unit`` (ports ``wr_en``, ``wr_chan``, ``wr_data``): one
    ``layout`` entry per channel, with the write bypassed to the lookup, so the
    channel written this cycle reads its new entry."""
    # Written (in pass A) before it is read, so it needs no reset.
    stored = Array(Signal(layout, name=f"states{c}", reset_less=True) for c in range(channels))
    with m.If(unit.wr_en):
        m.d.sync += stored[unit.wr_chan].eq(unit.wr_data)
    table = Array(Signal(layout, name=f"entry{c}") for c in range(channels))
    for c in range(channels):
        m.d.comb += table[c].eq(Mux(unit.wr_en & (unit.wr_chan == c), unit.wr_data, stored[c]))
    return table


def lane_masks(m, mode, accumulators: int):
    """The lane table of the pass ``mode`` (:func:`golden.matcher.lanes_of`) as two
    3x3 masks ``(some, whole)``: a PE with flags ``(sq, sk)`` uses some lane, or both."""
    some = [[Signal(name=f"some_{a}{b}") for b in range(3)] for a in range(3)]
    whole = [[Signal(name=f"whole_{a}{b}") for b in range(3)] for a in range(3)]
    with m.Switch(mode):
        for pass_ in PAIRED_MODES:
            lanes = lanes_of(pass_, accumulators)
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


class Matcher(Dispatcher):
    """Merge unit over a lookahead window of channel steps.

    Parameters
    ----------
    cfg : Config
        Takes ``group_width`` (table entries: the widest channel group), ``rows``
        and ``cols`` (states per entry), ``accumulators`` (the PE's lane table)
        and ``lookahead`` (the head and ``lookahead - 1`` candidates).

    Members
    -------
    (:class:`hw.dispatch.Dispatcher`'s, for one group reading up to two channels.)
    wr_en, wr_chan, wr_data : In
        Write channel ``wr_chan``'s entry this cycle (``INVALID`` for a row or
        column the tile group does not have).
    mode : In(Mode)
        The pass being run (B, C or D; any other pass pairs nothing).
    single : In(1)
        Pair nothing: the head alone.
    sets : In(group_width).array(1)
        The pass's channels still to issue, one bit each.
    found[0], chan[0] : Out
        The head: the lowest remaining channel.
    found[1], chan[1] : Out
        Its partner: the first candidate in the window whose lanes fit beside the
        head's in every PE, if any (``chan[1]`` holds it only when ``found[1]``).
    choice : Out(choice_layout(2)).array(1)
        ``take`` is the head and the partner; ``sel`` is 0 and 1.
    rest, more : Out
        The set without the head and its partner, and whether that leaves any.
    """

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
        table = state_table(m, self, G, layout)
        lanes = lane_masks(m, self.mode, cfg.accumulators)
        steps = self.sets[0]

        def masks(entry, name):
            return pe_masks(m, entry, lanes, R, C, name)

        # The window: head, then up to L-1 candidates, in channel order; every
        # rank found at once, and its entry read by its one-hot position.
        window = []
        for k, (found, idx, onehot) in enumerate(lowest_sets(m, steps, G, L, "win")):
            entry = select(m, table, onehot, G, layout, f"win{k}_entry")
            window.append((found, idx, onehot, *masks(entry, f"win{k}")))
        head_found, head, head_onehot, head_some, head_whole = window[0]
        m.d.comb += [self.found[0].eq(head_found), self.chan[0].eq(head)]

        # Two steps fit when neither takes both lanes of a PE the other uses at all.
        # The first compatible candidate wins: scan from the farthest back.
        second_ok = Signal()
        second_onehot = Signal(G)
        for found, idx, onehot, s, w in reversed(window[1:]):
            fits = ~((head_whole & s) | (head_some & w)).any()
            with m.If(head_found & found & fits):
                m.d.comb += [second_ok.eq(1), self.chan[1].eq(idx), second_onehot.eq(onehot)]
        pair = Signal()
        m.d.comb += pair.eq(second_ok & ~self.single)
        # What is left, from the ranks' one-hot codes (no index decode). Whether any is
        # left does not wait for it: more than two steps, or two and no partner.
        count = at_least(m, steps, G, 3, "steps")
        m.d.comb += [self.found[1].eq(pair),
                     self.choice[0].take.eq(Cat(head_found, pair)), self.choice[0].sel[1].eq(1),
                     self.rest[0].eq(steps & ~(head_onehot | Mux(pair, second_onehot, 0))),
                     self.more.eq(count[1] & (~pair | count[2]))]
        return m
