"""Priority encoders and prefix networks over bit vectors, the combinational pieces
the dispatchers are built of (:mod:`hw.dispatcher.matcher`, :mod:`hw.dispatcher.channel_window`,
:mod:`hw.dispatcher.in_order`): the lowest set bit, the lowest ``count`` set bits at once,
a saturating population count, a one-hot multiplexer and a one-hot decoder.

Each takes the module to add its logic to and a name for its signals, so that
the emitted Verilog names what it built; none keeps state.
"""

from __future__ import annotations

from amaranth import Cat, Const, Mux, Signal, Value

__all__ = ["lowest_set", "lowest_onehot", "at_least", "lowest_sets", "lowest_of_pass", "select", "one_hot"]


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


def lowest_of_pass(m, unit, width: int, name: str):
    """``(found, chan, rest, more)`` of the lowest channel in ``sets`` of a
    dispatcher ``unit``: one step a slot, in channel order. A prefix network of
    log2(width) levels finds it (a chain of ``width`` multiplexers would be the
    engine's longest path), and whether two or more are left is counted beside it."""
    sets = unit.sets[0]
    (some, index, onehot), = lowest_sets(m, sets, width, 1, name)
    return some, index, sets & ~onehot, at_least(m, sets, width, 2, name)[1]


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


def one_hot(index, width: int) -> Value:
    """``index`` as a one-hot vector of ``width`` bits."""
    return Cat(*(index == j for j in range(width)))
