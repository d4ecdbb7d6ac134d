"""The dispatcher's scheduler (clustering unit), DESIGN.md §5.4: golden model.

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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import Config

__all__ = ["LFSR_TAPS", "lfsr_step", "lfsr_seed", "Assignment", "schedule", "reuse_strings",
           "cluster_order"]

LFSR_TAPS = 0xB400


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
    out, sizes = [], []
    state = lfsr_seed(cfg.seed)
    cycle, i, n_total = 0, 0, len(strings)
    mask = (1 << cfg.string_bits) - 1
    if n_total and not last[-1]:
        raise ValueError("the final string of a stream must carry last")
    while i < n_total:
        batch = []
        while i < n_total and len(batch) < cfg.queue_depth:
            batch.append(strings[i] & mask)
            i += 1
            if last[i - 1]:
                break
        n = len(batch)
        sizes.append(n)
        cycle += n                                    # fill
        pivots = []
        for _ in range(cfg.clusters):                 # one pivot per cycle
            state = lfsr_step(state)
            pivots.append(batch[(state * n) >> 16])
        cycle += cfg.clusters
        counts = [0] * cfg.clusters
        for s in batch:                               # one assignment per cycle
            keys = sorted((bin(s ^ p).count("1"), k) for k, p in enumerate(pivots))
            k = next(k for _, k in keys if counts[k] < cfg.cluster_capacity)
            counts[k] += 1
            out.append(Assignment(k, cycle))
            cycle += 1
    return out, sizes


def reuse_strings(states: np.ndarray, string_bits: int) -> list[int]:
    """Reuse strings of pairs from their partner states ``[P, Dg]`` (see module doc)."""
    P, dg = states.shape
    bits = np.zeros((P, string_bits), bool)
    not_full = states != 2
    for b in range(min(string_bits, dg)):
        bits[:, b] = not_full[:, b::string_bits].any(axis=1)
    weights = 1 << np.arange(string_bits, dtype=np.int64)
    return [int(v) for v in (bits.astype(np.int64) * weights).sum(axis=1)]


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
