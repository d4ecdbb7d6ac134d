"""The linear layer at chip scale: one output tile, counted once, gives the exact
model's cycles, choice and lane work for any whole number of output tiles."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from golden import Config, proxy_workload, quantize
from golden.cycle_model import tail_cycles
from golden.linear_cycles import kaleido_linear_cycles
from golden.windows import linear_config
from sim.chip.fast_linear import linear_work
from tests.strategies import configs, operands


def check(x, cfg, tiles):
    """The fast model against the exact one on ``tiles`` output tiles."""
    heads = x.shape[1] // cfg.head_dim
    lcfg = linear_config(cfg, heads)
    work = linear_work(x, cfg)
    exact = kaleido_linear_cycles(x, tiles * cfg.rows, cfg)
    assert work.ran_as == exact.ran_as
    assert tiles * work.slots + 1 + tail_cycles(lcfg) == exact.cycles
    assert tiles * (2 * work.full_products + work.nibble_products) == exact.lane_work
    assert tiles * work.tile_groups == exact.tiles
    f = work.factors()
    assert f["linear_slots"] == pytest.approx(work.slots / work.dense_slots)
    return work


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_fast_linear_equals_the_exact_model(data):
    cfg = data.draw(configs()).with_(window=data.draw(st.integers(1, 4)),
                                     accumulators=data.draw(st.sampled_from([3, 4])),
                                     rows=data.draw(st.integers(1, 4)), cols=data.draw(st.integers(1, 4)),
                                     variant=data.draw(st.sampled_from(["full", "pe-m", "pe"])))
    heads = data.draw(st.integers(1, 2))
    lcfg = linear_config(cfg, heads)
    assume(all(sl.stop - sl.start >= 2 * cfg.rows for sl in lcfg.group_slices.values() if sl.stop > sl.start))
    x = data.draw(operands(cfg, heads=heads))
    check(x, cfg, data.draw(st.integers(1, 3)))


@pytest.mark.parametrize("variant", ["full", "pe"])
def test_a_video_like_slice_reuses_and_matches(variant):
    cfg = Config(grid=(4, 8, 8), partition=(12, 10, 10), variant=variant)
    x = quantize(proxy_workload(cfg)["x"][:, :cfg.head_dim])[0]
    work = check(x, cfg, 3)
    assert work.ran_as != "dense" and work.slots < work.dense_slots


def test_narrow_groups_are_refused():
    cfg = Config(grid=(2, 4, 4), partition=(4, 2, 2))
    with pytest.raises(ValueError, match="narrower than 2R"):
        linear_work(np.zeros((cfg.tokens, cfg.head_dim), np.int8), cfg)
