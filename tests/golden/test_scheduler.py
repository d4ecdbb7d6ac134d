"""The scheduler's golden model: LFSR, nearest pivot with ties, reuse strings and cluster order."""

import numpy as np

from golden import Config
from golden.scheduler import cluster_order, lfsr_seed, lfsr_step, reuse_strings, schedule


def test_lfsr_is_maximal():
    state, seen = lfsr_seed(1), set()
    for _ in range(1 << 16):
        seen.add(state)
        state = lfsr_step(state)
    assert len(seen) == (1 << 16) - 1


def test_nearest_pivot_with_ties_to_lower_cluster():
    cfg = Config(queue_depth=8, clusters=2, cluster_capacity=8, string_bits=4)
    want, sizes = schedule([0b0000] * 8, [False] * 7 + [True], cfg)
    assert all(a.cluster == 0 for a in want) and sizes == [8]      # equal distances: cluster 0


def test_reuse_strings_and_order():
    states = np.array([[2, 2, 2, 2], [2, 1, 2, 2], [0, 2, 2, 0]])
    assert reuse_strings(states, 2) == [0b00, 0b10, 0b11]
    assert reuse_strings(states, 8) == [0b0000, 0b0010, 0b1001]
    cfg = Config(queue_depth=4, clusters=2, cluster_capacity=2, string_bits=4)
    want, sizes = schedule([1, 1, 14, 14], [False, False, False, True], cfg)
    order = cluster_order(want, sizes)
    assert sorted(order.tolist()) == [0, 1, 2, 3]
    clusters = [want[i].cluster for i in order]
    assert clusters == sorted(clusters)
