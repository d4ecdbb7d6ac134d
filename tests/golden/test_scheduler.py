"""The scheduler's golden model: LFSR, nearest pivot with ties, reuse strings and cluster order."""

import numpy as np

from golden import Config
from golden.scheduler import cluster_order, lfsr_seed, lfsr_step, reuse_strings, schedule, work_weights


def test_lfsr_is_maximal():
    state, seen = lfsr_seed(1), set()
    for _ in range(1 << 16):
        seen.add(state)
        state = lfsr_step(state)
    assert len(seen) == (1 << 16) - 1


def test_nearest_pivot_with_ties_to_lower_cluster():
    cfg = Config(queue_depth=8, clusters=2, cluster_capacity=8, string_bits=4, cluster_rule="pivots")
    want, sizes = schedule([0b0000] * 8, [False] * 7 + [True], cfg)
    assert all(a.cluster == 0 for a in want) and sizes == [8]      # equal distances: cluster 0


def test_reuse_strings_and_order():
    states = np.array([[2, 2, 2, 2], [2, 1, 2, 2], [0, 2, 2, 0]])
    assert reuse_strings(states, 2) == [0b00, 0b10, 0b11]
    assert reuse_strings(states, 8) == [0b0000, 0b0010, 0b1001]
    cfg = Config(queue_depth=4, clusters=2, cluster_capacity=2, string_bits=4, cluster_rule="pivots")
    want, sizes = schedule([1, 1, 14, 14], [False, False, False, True], cfg)
    order = cluster_order(want, sizes)
    assert sorted(order.tolist()) == [0, 1, 2, 3]
    clusters = [want[i].cluster for i in order]
    assert clusters == sorted(clusters)


def test_weight_rule_sorts_each_batch_by_work(rng):
    """Under the weight rule a pair's string is the lanes its partner needs (2 a
    channel without reuse, 1 a nibble, 0 a full reuse, saturated), and each batch
    runs heaviest first, ties in queue order."""
    states = np.array([[2, 2, 2, 2], [2, 1, 2, 2], [0, 2, 2, 0], [0, 0, 0, 0]])
    assert work_weights(states, 16) == [0, 1, 4, 8]
    assert work_weights(states, 2) == [0, 1, 3, 3]                   # saturated to the string's bits
    cfg = Config(queue_depth=8, partition=(6, 6, 6), cluster_rule="weight")
    assert cfg.entry_bits == 4 and Config(partition=(6, 6, 6), cluster_rule="pivots").entry_bits == 16
    states = rng.integers(0, 3, (21, 6)).astype(np.int8)
    weights = work_weights(states, cfg.entry_bits)
    last = [False] * 20 + [True]
    want, sizes = schedule(weights, last, cfg)
    assert sizes == [8, 8, 5]
    order = cluster_order(want, sizes)
    start = 0
    for n in sizes:
        batch = order[start:start + n]
        assert sorted(batch.tolist()) == list(range(start, start + n))
        keys = [(-weights[i], i) for i in batch]
        assert keys == sorted(keys)
        start += n
    # No pivot cycles: the first rank a turn of the ring (8 entries) after the
    # batch fills, one a turn after it; the next batch fills after the last.
    assert want[0].cycle == 8 + 8 - 1 and want[1].cycle == 8 + 16 - 1
    assert want[8].cycle == 8 + 8 * 8 + 8 + 8 - 1


def test_a_rank_counts_the_heavier_and_the_equal_queued_before(rng):
    # The hardware's rule, counted entry by entry, against the sort that computes it.
    from golden.scheduler import weight_ranks
    for _ in range(50):
        w = rng.integers(0, 6, int(rng.integers(1, 40))).tolist()
        counted = [sum(v > x for v in w) + sum(v == x for v in w[:i]) for i, x in enumerate(w)]
        assert weight_ranks(w) == counted
