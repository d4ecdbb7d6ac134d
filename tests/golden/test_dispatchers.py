"""golden/dispatchers.py: each dispatcher's slot model, and which one a design point has."""

import numpy as np
import pytest

from golden import Config
from golden.channel_window import window_slots
from golden.dispatchers import DISPATCHERS, dispatched_slots, dispatcher_of
from golden.matcher import FILL_SLOTS, match
from golden.pe import Mode


def test_a_design_point_picks_its_dispatcher():
    assert dispatcher_of(Config(), False) == "in-order"
    assert dispatcher_of(Config(), True) == "matcher"
    assert dispatcher_of(Config(issue_window=4), True) == "channel-window"
    assert dispatcher_of(Config(issue_window=4), False) == "in-order"
    assert set(DISPATCHERS) == {"in-order", "matcher", "channel-window"}


@pytest.mark.parametrize("mode", [Mode.B, Mode.C, Mode.D])
def test_each_model_counts_the_slots_of_its_module(rng, mode):
    """On random lanes ([Dg, Rv, Cv]), each registry entry gives the slots of the
    module it names: one a streamed channel in order, the matcher's fill slot and
    its pairs over the array's PEs, the channel window's slots; and no dispatcher
    takes more than one slot a channel beyond its fill."""
    needs = rng.integers(0, 3, size=(9, 3, 2))
    chans = np.flatnonzero(needs.any(axis=(1, 2)))
    needs[np.setdiff1d(np.arange(9), chans)] = 0
    cfg = Config(lookahead=4)
    lanes = lambda: needs
    assert dispatched_slots(chans, lambda: 1 / 0, mode, cfg, matcher=False) == len(chans)   # reads no lanes
    assert dispatched_slots(chans, lanes, mode, cfg) == FILL_SLOTS + len(match(chans, needs.reshape(9, -1), 4))
    assert dispatched_slots([], lambda: needs * 0, mode, cfg) == FILL_SLOTS + 1   # the fill finds nothing
    window = cfg.with_(issue_window=3)
    assert dispatched_slots(chans, lanes, mode, window) == len(window_slots(needs, mode, 3))
    assert dispatched_slots(chans, lanes, mode, cfg) <= len(chans) + FILL_SLOTS
    assert dispatched_slots(chans, lanes, mode, window) <= len(chans)
