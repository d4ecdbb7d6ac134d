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
there are no pivots, and the unit ranks the queued weights one after another
(heavier first, ties in queue order), each rank given as that string's
cluster. It does so with one comparator: the queue is a ring of shift
registers that strings enter at one end, and each string's rank takes one
turn of the ring (``queue_depth`` cycles), in which every queued weight passes
the comparator once. The engine needs a whole channel group's clusters before
it starts the group (:func:`golden.cycle_model.scheduler_lead`), and works on
a group far longer than the ring ranks the next one, so a slow ranker costs
its first group's ranking and little else.
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
        if self.cfg.cluster_rule == "weight":
            return self._ring()
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
        with m.FSM():
            with m.State("FILL"):
                with m.If(self.in_valid):
                    m.d.sync += [queue[n].eq(self.in_string), n.eq(n + 1)]
                    with m.If(self.in_last | (n + 1 == Q)):
                        m.d.sync += [i.eq(0), ready.eq(0)]
                        m.next = "PIVOT"
            self._cluster(m, n, i, raddr, rdata, ready)
        return m

    def _ring(self):
        # The weight rule. Strings shift into the ring at its top (entry Q - 1) as
        # they arrive, so after a batch of n the first string sits at Q - n and the
        # last at Q - 1. Ranking, the ring turns once a cycle (the top takes the
        # bottom), so at step t of a turn the bottom entry holds what sat at t when
        # the batch filled: string t - (Q - n), for t from Q - n on. Every entry
        # moves the same way in both phases, so each is a plain register behind one
        # gated clock, with no write decode and no Q:1 read.
        m = Module()
        cfg = self.cfg
        Q, W = cfg.queue_depth, cfg.entry_bits
        ring = [Signal(W, name=f"ring{j}", reset_less=True) for j in range(Q)]
        n = Signal(range(Q + 1))                # strings in the batch
        i = Signal(range(Q + 1))                # the string being ranked
        t = Signal(range(Q))                    # step of the ring's turn
        # `first` and `own` could be worked out from n and i each cycle; they are
        # registers so that the step counter's comparisons below wait on no adder.
        first = Signal(range(Q + 1))            # Q - n: the step the batch's first string is at the bottom
        own = Signal(range(2 * Q + 1))          # first + i: the step string i is at the bottom
        rank = Signal(range(Q + 1))             # entries found ahead of string i so far this turn
        head = Signal(W, name="head", reset_less=True)      # string i's weight
        after = Signal(W, name="after", reset_less=True)    # string i + 1's, met on the way
        ready = Signal(init=1)
        m.d.comb += self.in_ready.eq(ready)

        shift = Signal()
        top = Signal(W)
        m.d.comb += top.eq(Mux(ready, self.in_string, ring[0]))
        with m.If(shift):
            m.d.sync += [ring[j].eq(ring[j + 1]) for j in range(Q - 1)]
            m.d.sync += ring[Q - 1].eq(top)

        bottom = ring[0]
        # A queued string j goes before string i when it is heavier, or as heavy
        # and earlier in the queue; steps before `first` hold no string of the batch.
        queued = t >= first
        ahead = Signal()
        m.d.comb += ahead.eq(queued & ((bottom > head) | ((bottom == head) & (t < own))))
        with m.FSM():
            with m.State("FILL"):
                with m.If(self.in_valid):
                    m.d.comb += shift.eq(1)
                    m.d.sync += n.eq(n + 1)
                    with m.If(n == 0):
                        m.d.sync += head.eq(self.in_string)         # the first string ranks first
                    with m.If(self.in_last | (n + 1 == Q)):
                        m.d.sync += [i.eq(0), t.eq(0), rank.eq(0), ready.eq(0),
                                     first.eq(Q - 1 - n), own.eq(Q - 1 - n)]
                        m.next = "RANK"
            with m.State("RANK"):
                m.d.comb += shift.eq(1)
                m.d.sync += [t.eq(t + 1), rank.eq(rank + ahead)]
                with m.If(t == own + 1):
                    m.d.sync += after.eq(bottom)
                with m.If(t == Q - 1):
                    # The turn is over: string i's rank goes out, string i + 1 ranks next.
                    m.d.comb += [self.out_valid.eq(1), self.out_cluster.eq(rank + ahead)]
                    # (The last string of a full ring reaches the bottom at this very step.)
                    m.d.sync += [i.eq(i + 1), own.eq(own + 1), rank.eq(0), t.eq(0),
                                 head.eq(Mux(t == own + 1, bottom, after))]
                    with m.If(i + 1 == n):
                        m.d.sync += [n.eq(0), i.eq(0), ready.eq(1)]
                        m.next = "FILL"
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

    def _emit(self, m, n, i, ready, cluster, clear=()):
        # String i's cluster (or rank) goes out; after the batch's last, fill again.
        m.d.comb += [self.out_valid.eq(1), self.out_cluster.eq(cluster)]
        m.d.sync += i.eq(i + 1)
        with m.If(i + 1 == n):
            m.d.sync += [n.eq(0), i.eq(0), ready.eq(1), *clear]
            m.next = "FILL"
