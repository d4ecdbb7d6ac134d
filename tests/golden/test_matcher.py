"""The matcher's golden pairing rules."""

import numpy as np

from golden.matcher import column_needs, compatible, match
from golden.pe import Mode


def test_column_needs_follow_the_port_budget():
    sk = np.array([[2, 1, 0]])                      # one column, three channels
    assert column_needs(Mode.B, np.zeros((1, 3)), sk).ravel().tolist() == [0, 1, 2]
    sq_all2 = np.full((2, 3), 2)
    sq_mixed = np.array([[2, 2, 2], [0, 0, 0]])
    assert column_needs(Mode.D, sq_all2, sk).ravel().tolist() == [2, 1, 0]
    assert column_needs(Mode.D, sq_mixed, sk).ravel().tolist() == [2, 2, 2]
    assert column_needs(Mode.D, np.zeros((2, 3)), sk).ravel().tolist() == [0, 1, 2]


def test_match_pairs_first_compatible_within_lookahead():
    needs = np.array([[1, 1], [2, 0], [1, 0], [0, 2], [1, 1]])
    assert match(range(5), needs, 4) == [(0, 2), (1, 3), (4, None)]
    assert match(range(5), needs, 2) == [(0, None), (1, None), (2, 3), (4, None)]
    assert match(range(5), needs, 1) == [(c, None) for c in range(5)]
    assert compatible(needs[1], needs[3]) and not compatible(needs[0], needs[1])
