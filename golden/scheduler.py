"""The dispatcher's scheduler (clustering unit), docs/design.md, "The data dispatcher": golden model.

Tokens (here: pairs) are described by *reuse strings*: bit ``b`` is 0 when
the pair's partner fully reuses its reference on every channel ``c`` of the
group with ``c % string_bits == b``, and 1 otherwise. Strings are clustered in
batches of up to ``queue_depth``:

1. **pivots** - a 16-bit Galois LFSR (taps 0xB400, maximal length; started at
   ``seed``, or 0xACE1 for a zero seed) steps once per cluster, and pivot ``k``
   is the string at index ``(state * n) >> 16`` of the ``n`` queued strings.
   Pivots may repeat.
2. **assignment** - in queue order, each string goes to the cluster whose pivot
   is nearest in Hamming distance, ties to the lower cluster, skipping
   clusters that already hold ``cluster_capacity`` strings.

The hardware takes one cycle per string to fill the queue, one per cluster to
pick pivots and one per string to assign; a stream may end a batch early
(``last``). :func:`schedule` gives each assignment with the cycle it appears
on, counted from the first string's cycle, which the RTL must match exactly.

``Config.cluster_rule = "weight"`` (not the paper's; issue 9) replaces the
pivots. A pass of B, C or D lasts as long as its busiest column or row, and a
column's work in pass B (a row's in C) is the lanes its pair's partner still
needs: so pairs of alike *amount* of work, not of alike reuse pattern, belong
in one tile. Each queue entry is then the pair's **work weight** (lanes its
partner needs over the group: 2 a channel it does not reuse, 1 a nibble
reuse, 0 a full reuse; :func:`work_weights`), and each entry's "cluster" is its
**rank** in the batch (heavier first, ties in queue order; :func:`weight_ranks`):
a cluster of one, so :func:`cluster_order` sorts the batch by weight. It takes
one cycle per string to fill, no pivots, and one turn of its ring of
``queue_depth`` entries per string to rank (:func:`rank_cycles`): the ring
moves every queued weight past one comparator, so string ``i``'s rank appears
``(i + 1) * queue_depth - 1`` cycles after the batch fills.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import CLUSTER_RULES, Config
from .reuse import State

__all__ = ["LFSR_TAPS", "CLUSTER_RULES", "PARTNER_LANES", "lfsr_step", "lfsr_seed", "Assignment", "schedule",
           "rank_cycles", "batch_sizes",
           "reuse_strings", "work_weights", "weight_ranks", "cluster_order", "operand_stream", "cluster_tables"]

LFSR_TAPS = 0xB400

#: Lanes of a channel a partner in each reuse state still needs (the weight rule),
#: indexed by :class:`golden.reuse.State`.
PARTNER_LANES = np.array([{State.COMPUTE: 2, State.PARTIAL: 1, State.FULL: 0}[s] for s in State], np.int64)


def lfsr_seed(seed: int) -> int:
    return (seed & 0xFFFF) or 0xACE1


def lfsr_step(state: int) -> int:
    """One step of the 16-bit Galois LFSR."""
    lsb = state & 1
    state >>= 1
    return state ^ LFSR_TAPS if lsb else state


@dataclass(frozen=True)
class Assignment:
    cluster: int
    cycle: int


def schedule(strings: list[int], last: list[bool], cfg: Config) -> tuple[list[Assignment], list[int]]:
    """Cluster ``strings`` (``last[i]`` ends a batch after string ``i``; the
    stream's final string must carry it, as the hardware waits for it).

    Returns the assignments, in string order, and the batch sizes.
    """
    out = []
    state = lfsr_seed(cfg.seed)
    cycle, start = 0, 0
    mask = (1 << cfg.entry_bits) - 1
    sizes = batch_sizes(last, cfg.queue_depth)
    for n in sizes:
        batch = [s & mask for s in strings[start:start + n]]
        start += n
        cycle += n                                    # fill
        if cfg.cluster_rule == "weight":
            turn = rank_cycles(cfg)
            for i, k in enumerate(weight_ranks(batch)):     # one turn of the ring per string
                out.append(Assignment(k, cycle + (i + 1) * turn - 1))
            cycle += n * turn
            continue
        pivots = []
        for _ in range(cfg.clusters):                 # one pivot per cycle
            state = lfsr_step(state)
            pivots.append(batch[(state * n) >> 16])
        cycle += cfg.clusters
        clusters = _nearest_pivots(batch, pivots, cfg.cluster_capacity)
        for k in clusters:                            # one assignment (rank) per cycle
            out.append(Assignment(k, cycle))
            cycle += 1
    return out, sizes


def rank_cycles(cfg: Config) -> int:
    """Cycles the weight rule takes to rank one string: a turn of its ring."""
    return cfg.queue_depth


def _nearest_pivots(batch: list[int], pivots: list[int], capacity: int) -> list[int]:
    # Each string's nearest pivot with room, ties to the lower cluster.
    counts = [0] * len(pivots)
    out = []
    for s in batch:
        keys = sorted((bin(s ^ p).count("1"), k) for k, p in enumerate(pivots))
        k = next(k for _, k in keys if counts[k] < capacity)
        counts[k] += 1
        out.append(k)
    return out


def weight_ranks(weights: list[int]) -> list[int]:
    """Rank of each weight in its batch: heavier first, equal weights in queue order.

    The hardware counts, for each entry, the heavier entries and the equal ones
    queued before it; that count is the entry's place in a stable sort by
    descending weight, which is how it is computed here (a 480p head streams
    50,000 entries per operand through it)."""
    order = np.argsort(-np.asarray(weights, np.int64), kind="stable")
    ranks = np.empty(len(weights), np.int64)
    ranks[order] = np.arange(len(weights))
    return ranks.tolist()


def batch_sizes(last: list[bool], depth: int) -> list[int]:
    """How a stream splits into batches: at ``depth`` strings, or after a ``last``."""
    if last and not last[-1]:
        raise ValueError("the final string of a stream must carry last")
    sizes, n = [], 0
    for flag in last:
        n += 1
        if flag or n == depth:
            sizes.append(n)
            n = 0
    return sizes


def reuse_strings(states: np.ndarray, string_bits: int) -> list[int]:
    """Reuse strings of pairs from their partner states ``[P, Dg]`` (see module doc)."""
    P, dg = states.shape
    bits = np.zeros((P, string_bits), bool)
    not_full = states != State.FULL
    for b in range(min(string_bits, dg)):
        bits[:, b] = not_full[:, b::string_bits].any(axis=1)
    weights = 1 << np.arange(string_bits, dtype=np.int64)
    return [int(v) for v in (bits.astype(np.int64) * weights).sum(axis=1)]


def work_weights(states: np.ndarray, bits: int) -> list[int]:
    """Work weights of pairs from their partner states ``[P, Dg]``: the lanes a
    partner needs over the group (2 a channel it does not reuse, 1 a nibble, 0 a
    full reuse), saturated to ``bits`` (``Config.entry_bits``, which a group of
    the design point never reaches; see module doc)."""
    lanes = PARTNER_LANES[states.astype(np.int64)].sum(axis=1)
    return [int(v) for v in np.minimum(lanes, (1 << bits) - 1)]


def cluster_order(assignments: list[Assignment], batch_sizes: list[int]) -> np.ndarray:
    """Order of the pairs after clustering: batch by batch, cluster by cluster,
    queue order within a cluster (a stable sort)."""
    order, start = [], 0
    clusters = np.array([a.cluster for a in assignments])
    for n in batch_sizes:
        idx = np.arange(start, start + n)
        order.extend(idx[np.argsort(clusters[start:start + n], kind="stable")])
        start += n
    return np.array(order, dtype=np.int64)



def operand_stream(tables, cfg: Config) -> tuple[list[int], list[bool]]:
    """The string stream of one operand: every group's pairs in order, the last
    pair of each group ending its batch (clusters never mix groups). The strings
    are reuse strings, or work weights under the weight rule."""
    strings, last = [], []
    key = work_weights if cfg.cluster_rule == "weight" else reuse_strings
    for t in tables:
        s = key(t.state, cfg.entry_bits)
        strings += s
        last += [False] * (len(s) - 1) + [True]
    return strings, last


def cluster_tables(tables, cfg: Config, assignments: list[Assignment] | None = None):
    """Pair tables reordered by the scheduler's clusters (variants pe-sh, full).

    ``assignments`` are the scheduler's, from the RTL; by default the golden
    model's.
    """
    strings, last = operand_stream(tables, cfg)
    if assignments is None:
        assignments, _ = schedule(strings, last, cfg)
    order = cluster_order(assignments, batch_sizes(last, cfg.queue_depth))
    out, start = [], 0
    for t in tables:
        out.append(t.take(order[start:start + t.pairs] - start))
        start += t.pairs
    return out
