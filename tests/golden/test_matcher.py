"""The matcher's golden pairing rules."""

import numpy as np
import pytest

from golden.matcher import compatible, lanes_of, match, match_slots, pe_needs
from golden.pe_encoding import Mode


def test_pe_needs_follow_the_lane_budget():
    sk = np.array([[2, 1, 0]])                      # one column, three channels
    assert pe_needs(Mode.B, np.zeros((1, 3)), sk).ravel().tolist() == [0, 1, 2]
    # Pass D: each PE by its own row and column; the 3-register PE recomputes (2, 2).
    sq = np.array([[2, 2, 2], [0, 0, 0]])
    assert pe_needs(Mode.D, sq, sk).tolist() == [[2, 0], [1, 1], [0, 2]]
    assert pe_needs(Mode.D, sq, sk, kind=4).tolist() == [[0, 0], [0, 1], [0, 2]]
    # Pass C in the exact PE: a partial row is one lane, whatever the column.
    assert pe_needs(Mode.C, np.array([[0, 1, 2]]), np.array([[0, 1, 2]]), 4).ravel().tolist() == [2, 1, 0]
    assert lanes_of(Mode.A).min() == 2


def test_match_pairs_first_compatible_within_lookahead():
    needs = np.array([[1, 1], [2, 0], [1, 0], [0, 2], [1, 1]])
    assert match(range(5), needs, 4) == [(0, 2), (1, 3), (4, None)]
    assert match(range(5), needs, 2) == [(0, None), (1, None), (2, 3), (4, None)]
    assert match(range(5), needs, 1) == [(c, None) for c in range(5)]
    assert compatible(needs[1], needs[3]) and not compatible(needs[0], needs[1])


@pytest.mark.parametrize("pes", [1, 5, 16, 62, 63, 80])       # one word of PE masks, and more
def test_batched_slots_are_the_greedy_pairings(pes, rng):
    # match_slots keeps a sliding buffer instead of a list; it must issue what match() does.
    for lookahead in range(1, 7):
        dg = int(rng.integers(1, 24))
        needs = rng.choice(3, size=(30, dg, pes), p=[0.85, 0.1, 0.05])
        streamed = rng.random((30, dg)) < rng.random()
        want = [len(match(np.flatnonzero(streamed[s]), needs[s], lookahead)) for s in range(30)]
        assert match_slots(streamed, needs, lookahead).tolist() == want
