"""The channel window's golden rules (:mod:`golden.channel_window`)."""

import numpy as np
import pytest

from golden.channel_window import window_slots
from golden.matcher import match
from golden.pe_encoding import Mode


def _served(needs, mode, slots):
    """Check the slots against the PE's budget; return how often each (channel, PE) ran."""
    done = np.zeros(needs.shape, np.int64)
    for window, steps in slots:
        assert window == sorted(window) and len(set(window)) == len(window)
        lanes = np.zeros(needs.shape[1:], np.int64)
        count = np.zeros(needs.shape[1:], np.int64)
        for group, chans in steps.items():
            picked = [c for c in chans if c is not None]
            assert 1 <= len(picked) <= 2 and all(c in window for c in picked)
            assert picked == sorted(picked)                # window order
            for c in picked:
                pes = np.zeros(needs.shape[1:], bool)
                if mode == Mode.C:
                    pes[group, :] = True
                else:
                    pes[:, group] = True
                pes &= needs[c] > 0
                assert pes.any(), "a group took a channel none of its PEs needs"
                lanes += np.where(pes, needs[c], 0)
                count += pes
                done[c] += pes
        assert lanes.max(initial=0) <= 2 and count.max(initial=0) <= 2
    return done


def test_columns_choose_in_b_and_rows_in_c():
    # Two columns: column 0 needs channels 0 and 2 (one lane each), column 1
    # channel 1 (both lanes). The matcher needs three slots (no two fit in every
    # PE); with the window each column takes its own steps: one slot.
    needs = np.zeros((3, 1, 2), np.int64)
    needs[0, 0, 0] = needs[2, 0, 0] = 1
    needs[1, 0, 1] = 2
    slots = window_slots(needs, Mode.B, 4)
    assert slots == [([0, 1, 2], {0: (0, 2), 1: (1, None)})]
    assert len(match([0, 1, 2], needs.reshape(3, -1), 4)) == 2
    # The same needs in pass C, where the one row chooses for both its PEs: 0 and 1
    # fit (they use different PEs), 2 would be a second step in PE (0, 0) beside 0's
    # lane there too, but the row has taken two steps already.
    slots = window_slots(needs, Mode.C, 4)
    assert slots == [([0, 1, 2], {0: (0, 1)}), ([2], {0: (2, None)})]


def test_a_narrow_window_limits_the_choice():
    needs = np.zeros((4, 1, 2), np.int64)
    needs[:, 0, 0] = [0, 0, 2, 2]           # column 0: two full products late
    needs[:, 0, 1] = [2, 2, 0, 0]           # column 1: two full products early
    # Two channels a slot: column 0 sees its first channel only in the second slot.
    assert [s[1] for s in window_slots(needs, Mode.D, 2)] == [{1: (0, None)}, {0: (2, None), 1: (1, None)},
                                                              {0: (3, None)}]
    assert [s[1] for s in window_slots(needs, Mode.D, 4)] == [{0: (2, None), 1: (0, None)},
                                                              {0: (3, None), 1: (1, None)}]


@pytest.mark.parametrize("mode", [Mode.B, Mode.C, Mode.D])
@pytest.mark.parametrize("width", [2, 3, 4, 8])
def test_every_step_runs_once_within_the_budget(mode, width, rng):
    for _ in range(30):
        dg, rows, cols = rng.integers(1, 12), rng.integers(1, 5), rng.integers(1, 5)
        needs = rng.choice([0, 0, 1, 2], size=(dg, rows, cols))
        slots = window_slots(needs, mode, width)
        done = _served(needs, mode, slots)
        np.testing.assert_array_equal(done, (needs > 0).astype(np.int64))
        # Never more slots than channels with work: every slot serves its window's first.
        assert len(slots) <= int((needs > 0).reshape(dg, -1).any(axis=1).sum())
