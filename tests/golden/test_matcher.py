"""The matcher's golden pairing rules."""

import numpy as np

from golden.matcher import compatible, lanes_of, match, pe_needs
from golden.pe import Mode


def test_pe_needs_follow_the_lane_budget():
    sk = np.array([[2, 1, 0]])                      # one column, three channels
    assert pe_needs(Mode.B, np.zeros((1, 3)), sk).ravel().tolist() == [0, 1, 2]
    # Pass D: each PE by its own row and column; the 3-register PE recomputes (2, 2).
    sq = np.array([[2, 2, 2], [0, 0, 0]])
    assert pe_needs(Mode.D, sq, sk).tolist() == [[2, 0], [1, 1], [0, 2]]
    assert pe_needs(Mode.D, sq, sk, accumulators=4).tolist() == [[0, 0], [0, 1], [0, 2]]
    # Pass C in the exact PE: a partial row is one lane, whatever the column.
    assert pe_needs(Mode.C, np.array([[0, 1, 2]]), np.array([[0, 1, 2]]), 4).ravel().tolist() == [2, 1, 0]
    assert lanes_of(Mode.A).min() == 2


def test_match_pairs_first_compatible_within_lookahead():
    needs = np.array([[1, 1], [2, 0], [1, 0], [0, 2], [1, 1]])
    assert match(range(5), needs, 4) == [(0, 2), (1, 3), (4, None)]
    assert match(range(5), needs, 2) == [(0, None), (1, None), (2, 3), (4, None)]
    assert match(range(5), needs, 1) == [(c, None) for c in range(5)]
    assert compatible(needs[1], needs[3]) and not compatible(needs[0], needs[1])
