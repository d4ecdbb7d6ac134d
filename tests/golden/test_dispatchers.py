"""golden/dispatchers.py: each dispatcher's slot model, and which one a design point has."""

import numpy as np
import pytest

from golden import Config
from golden.channel_window import window_slots
from golden.dispatchers import DISPATCHERS, InOrder, design_blocks, dispatched_slots, dispatcher_of, register
from golden.matcher import FILL_SLOTS, match
from golden.pe_encoding import Mode


def test_a_design_point_picks_its_dispatcher():
    assert dispatcher_of(Config(), False) == "in-order"
    assert dispatcher_of(Config(), True) == "matcher"
    assert dispatcher_of(Config(issue_window=4), True) == "channel-window"
    assert dispatcher_of(Config(issue_window=4), False) == "in-order"
    assert dispatcher_of(Config(dispatcher="matcher"), True) == "matcher"
    assert dispatcher_of(Config(dispatcher="channel-window", issue_window=4), True) == "channel-window"
    assert {"in-order", "matcher", "channel-window"} <= set(DISPATCHERS)     # a test may add its own


def test_a_design_point_is_built_of_its_dispatchers_blocks():
    assert design_blocks(Config(), "kaleido") == ("pe", "matcher", "matcher", "scheduler", True)
    assert design_blocks(Config(issue_window=4, variant="pe-m"), "kaleido") == (
        "window-pe", "channel-window", "channel-window", None, False)
    assert design_blocks(Config(issue_window=4, variant="pe"), "kaleido") == ("pe", "in-order", None, None, False)
    assert design_blocks(Config(), "baseline") == ("baseline-pe", None, None, None, False)
    with pytest.raises(ValueError, match="design must be"):
        design_blocks(Config(), "other")


@pytest.mark.parametrize("name, why", [("nope", "unknown dispatcher"), ("in-order", "unknown dispatcher"),
                                       ("channel-window", "needs an issue window")])
def test_a_design_point_names_only_a_unit_it_can_have(name, why):
    with pytest.raises(ValueError, match=why):
        Config(dispatcher=name)


def test_a_named_dispatcher_travels_and_an_unnamed_one_leaves_the_json_as_it_was():
    assert "dispatcher" not in Config().to_json()
    named = Config(dispatcher="matcher")
    assert Config.from_json(named.to_json()) == named and '"dispatcher": "matcher"' in named.to_json()


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


def test_a_dispatcher_no_variant_would_pick_is_refused():
    class Unpaired(InOrder):
        name = "kp-unpaired"
    Unpaired.__module__ = "kp_user"
    with pytest.raises(ValueError, match="declares paired = False, but only the built-in in-order unit"):
        register(Unpaired)
    assert "kp-unpaired" not in DISPATCHERS
