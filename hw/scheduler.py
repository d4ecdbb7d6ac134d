"""The dispatcher's scheduler (clustering unit), docs/design.md, "The data dispatcher".

Strings stream in (one per cycle while ``in_ready``) and fill a queue of
``queue_depth`` entries, or fewer when a string comes with ``in_last``. The
unit then picks one pivot per cycle with a 16-bit Galois LFSR, and assigns one
queued string per cycle to the cluster with the nearest pivot (Hamming
distance: XOR and a popcount adder tree), ties to the lower cluster, falling
back to the next nearest when a cluster already holds ``cluster_capacity``
strings. Each assignment appears on ``out_valid``/``out_cluster`` in queue
order. :mod:`golden.scheduler` is the same unit, cycle for cycle.

Under ``Config.cluster_rule = "weight"`` each string is a pair's work weight,
there are no pivots, and the unit ranks one queued weight per cycle against
the whole queue at once (heavier first, ties in queue order: a comparator per
entry and a popcount), which it gives as that string's cluster.
"""

from __future__ import annotations

from amaranth import Array, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.config import Config, require_config
from golden.scheduler import LFSR_TAPS, lfsr_seed

__all__ = ["Scheduler", "popcount_tree"]


def popcount_tree(m, bits, name):
    """Number of set bits of ``bits``, summed as a balanced adder tree."""
    level = [b for b in bits]
    depth = 0
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level) - 1, 2):
            s = Signal(range(len(bits) + 1), name=f"{name}_l{depth}_{i // 2}")
            m.d.comb += s.eq(level[i] + level[i + 1])
            nxt.append(s)
        if len(level) % 2:
            nxt.append(level[-1])
        level, depth = nxt, depth + 1
    return level[0]


class Scheduler(wiring.Component):
    """Clusters reuse strings into ``clusters`` queues.

    Parameters
    ----------
    cfg : Config
        Takes ``queue_depth``, ``clusters``, ``cluster_capacity``, ``string_bits``,
        ``cluster_rule`` and ``seed``; a queue entry is ``entry_bits`` wide.

    Members
    -------
    in_valid : In(1)
        ``in_string`` holds a string.
    in_ready : Out(1)
        The queue takes a string this cycle (it is filling).
    in_string : In(entry_bits)
        A reuse string: bit ``b`` is 0 when the pair fully reuses on the channels of bit ``b``;
        under the weight rule, the pair's work weight.
    in_last : In(1)
        ``in_string`` ends its batch: the queue stops filling and starts assigning.
    out_valid : Out(1)
        ``out_cluster`` is the next queued string's cluster, in queue order.
    out_cluster : Out(range(clusters))
        The cluster the string goes to; under the weight rule (``in_string``
        then holds a work weight) its rank in the batch, ``range(queue_depth)``.
    """

    @staticmethod
    def storage_bits(cfg: Config) -> int:
        """Bits of the string queue: what an SRAM macro could hold instead of flip-flops."""
        return cfg.queue_depth * cfg.entry_bits

    def __init__(self, cfg: Config):
        self.cfg = require_config(cfg, self)
        super().__init__({
            "in_valid": In(1), "in_ready": Out(1),
            "in_string": In(cfg.entry_bits), "in_last": In(1),
            "out_valid": Out(1), "out_cluster": Out(range(max(2, self.keys(cfg)))),
        })

    @staticmethod
    def keys(cfg: Config) -> int:
        """How many values a string's cluster takes: a cluster, or a rank in the batch."""
        return cfg.queue_depth if cfg.cluster_rule == "weight" else cfg.clusters

    def elaborate(self, platform):
        m = Module()
        cfg = self.cfg
        Q, W = cfg.queue_depth, cfg.entry_bits
        # Storage is written before it is read in every batch, so it needs no reset.
        queue = Array(Signal(W, name=f"queue{i}", reset_less=True) for i in range(Q))
        n = Signal(range(Q + 1))             # strings in the queue
        i = Signal(range(Q + 1))             # assignment (rank) position / pivot counter
        # One read port serves PIVOT (a drawn index) and ASSIGN or RANK (the next
        # string): they never read in the same cycle, so they share one Q:1 multiplexer.
        raddr = Signal(range(Q))
        rdata = Signal(W)
        m.d.comb += rdata.eq(queue[raddr])

        # `ready` is a register (high exactly in FILL) rather than a decode of the
        # FSM state, so that it is defined from time 0 in every simulator.
        ready = Signal(init=1)
        m.d.comb += self.in_ready.eq(ready)
        weight = cfg.cluster_rule == "weight"
        # The weight rule ranks the string at the head of the batch against every
        # queued one. Its value waits in a register, read from the queue a cycle
        # ahead, so the Q:1 read is off the path from the head to the rank.
        head = Signal(W, name="head", reset_less=True)
        # Which entries are queued (j < n) and which are ranked already (j < i), as
        # bit masks kept beside the counters: compared against the counters, every
        # one of the Q entries would wait on their fan-out before the rank's adder tree.
        queued, ranked = Signal(Q, name="queued"), Signal(Q, name="ranked")
        with m.FSM():
            with m.State("FILL"):
                with m.If(self.in_valid):
                    m.d.sync += [queue[n].eq(self.in_string), n.eq(n + 1)]
                    if weight:
                        m.d.sync += queued.bit_select(n, 1).eq(1)
                    with m.If(self.in_last | (n + 1 == Q)):
                        m.d.sync += [i.eq(0), ready.eq(0)]
                        if weight:
                            # The first string to rank is this one when the batch has one.
                            m.d.sync += head.eq(Mux(n == 0, self.in_string, queue[0]))
                        m.next = "RANK" if weight else "PIVOT"
            if weight:
                with m.State("RANK"):
                    self._rank(m, queue, n, i, raddr, rdata, ready, head, queued, ranked)
            else:
                self._cluster(m, n, i, raddr, rdata, ready)
        return m

    def _cluster(self, m, n, i, raddr, rdata, ready):
        # The paper's rule: one pivot a cycle, then one assignment a cycle.
        cfg = self.cfg
        Q, K, W = cfg.queue_depth, cfg.clusters, cfg.entry_bits
        pivots = [Signal(W, name=f"pivot{k}", reset_less=True) for k in range(K)]
        counts = [Signal(range(cfg.cluster_capacity + 1), name=f"count{k}") for k in range(K)]
        lfsr = Signal(16, init=lfsr_seed(cfg.seed))
        with m.State("PIVOT"):
            nxt = Signal(16)
            m.d.comb += nxt.eq(Mux(lfsr[0], (lfsr >> 1) ^ LFSR_TAPS, lfsr >> 1))
            index = Signal(range(Q))
            m.d.comb += index.eq((nxt * n) >> 16)
            m.d.sync += [lfsr.eq(nxt), i.eq(i + 1)]
            m.d.comb += raddr.eq(index)
            with m.Switch(i):
                for k in range(K):
                    with m.Case(k):
                        m.d.sync += pivots[k].eq(rdata)
            with m.If(i == K - 1):
                m.d.sync += i.eq(0)
                m.next = "ASSIGN"
        with m.State("ASSIGN"):
            m.d.comb += raddr.eq(i)
            s = rdata
            # Key of cluster k: (distance, k), with full clusters out of reach.
            keys = []
            for k in range(K):
                dist = popcount_tree(m, list(s ^ pivots[k]), f"dist{k}")
                key = Signal(range((W + 2) * K + 1), name=f"key{k}")
                full = counts[k] == cfg.cluster_capacity
                m.d.comb += key.eq(Mux(full, (W + 1) * K + k, dist * K + k))
                keys.append((key, Const(k, range(max(2, K)))))
            # Argmin by a tree of comparisons; keys are distinct, so ties cannot occur.
            while len(keys) > 1:
                nxt_keys = []
                for a in range(0, len(keys) - 1, 2):
                    (ka, ia), (kb, ib) = keys[a], keys[a + 1]
                    key = Signal.like(ka)
                    idx = Signal(range(max(2, K)))
                    m.d.comb += [key.eq(Mux(kb < ka, kb, ka)), idx.eq(Mux(kb < ka, ib, ia))]
                    nxt_keys.append((key, idx))
                if len(keys) % 2:
                    nxt_keys.append(keys[-1])
                keys = nxt_keys
            winner = keys[0][1]
            with m.Switch(winner):
                for k in range(K):
                    with m.Case(k):
                        m.d.sync += counts[k].eq(counts[k] + 1)
            self._emit(m, n, i, ready, winner, [c.eq(0) for c in counts])

    def _rank(self, m, queue, n, i, raddr, rdata, ready, head, queued, ranked):
        # Entry j goes before string i (``head``) when it is heavier, or as heavy and
        # earlier in the queue; only the n queued entries count. The next string is
        # read now, for the next cycle's head.
        Q = self.cfg.queue_depth
        m.d.comb += raddr.eq(i + 1)
        m.d.sync += [head.eq(rdata), ranked.bit_select(i, 1).eq(1)]
        before = []
        for j in range(Q):
            b = Signal(name=f"before{j}")
            m.d.comb += b.eq(queued[j] & ((queue[j] > head) | ((queue[j] == head) & ranked[j])))
            before.append(b)
        self._emit(m, n, i, ready, popcount_tree(m, before, "rank"), [queued.eq(0), ranked.eq(0)])

    def _emit(self, m, n, i, ready, cluster, clear=()):
        # String i's cluster (or rank) goes out; after the batch's last, fill again.
        m.d.comb += [self.out_valid.eq(1), self.out_cluster.eq(cluster)]
        m.d.sync += i.eq(i + 1)
        with m.If(i + 1 == n):
            m.d.sync += [n.eq(0), i.eq(0), ready.eq(1), *clear]
            m.next = "FILL"
