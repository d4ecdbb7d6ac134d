"""A new dispatcher through the registries alone (``tests/toys.py``): named by a
design point, it runs in the engine under Amaranth's simulator, exact and on its
own cycle model, and through a whole-model estimate on Dask workers."""

import numpy as np
import pytest

from golden import Config, approx_scores
from golden.cycle_model import kaleido_cycles, kaleido_tables
from golden.dispatchers import DISPATCHERS, design_blocks, dispatcher_of
from hw.dispatchers import DISPATCHERS as UNITS
from tb.engine_image import kaleido_image
from tb.engine_sim import simulate_engine
from tests.adversarial import operands
from tests.toys import Descending, DescendingUnit


def test_a_design_point_names_the_toy():
    cfg = Config(dispatcher="toy-descending")
    assert DISPATCHERS["toy-descending"] is Descending and UNITS["toy-descending"] is DescendingUnit
    assert dispatcher_of(cfg, True) == "toy-descending" and dispatcher_of(cfg, False) == "in-order"
    assert design_blocks(cfg, "kaleido") == ("pe", "toy-descending", None, "scheduler", False)
    assert dispatcher_of(Config(), True) == "matcher"           # it claims no design point unnamed
    with pytest.raises(ValueError, match="has no issue window"):
        Config(dispatcher="toy-descending", issue_window=4)


@pytest.mark.parametrize("variant", ["pe-m", "full"])
def test_the_toy_runs_in_the_engine(variant, rng):
    cfg = Config(partition=(6, 3, 2), grid=(2, 3, 4), rows=2, cols=3, variant=variant, dispatcher="toy-descending",
                 queue_depth=8, clusters=2, cluster_capacity=4)
    q, k = operands("partial", cfg, rng)
    tables = kaleido_tables(q, k, cfg)
    got = simulate_engine(kaleido_image(q, k, cfg, tables), cfg, cfg.tokens, cfg.tokens, matcher=True)
    np.testing.assert_array_equal(got["scores"], approx_scores(q, k, cfg))
    model = kaleido_cycles(q, k, cfg, tables, schedule="pairs")
    assert got["cycles"] == model.engine_cycles
    # Its slot count is the in-order one: the variant without a matcher takes as many cycles.
    plain = cfg.with_(variant="pe-sh" if variant == "full" else "pe")
    assert model.engine_cycles == kaleido_cycles(q, k, plain, kaleido_tables(q, k, plain), schedule="pairs").engine_cycles


def test_the_toy_runs_through_an_estimate(tmp_path):
    from tests.sim.chip.test_estimate import CHIP, SIGNS, TINY
    from sim.chip.estimate import run_estimate

    runs = {v: run_estimate(TINY, "480p", CHIP, "proxy", str(tmp_path / v), per_step=1, samples=None, signs=SIGNS,
                            workers=2, steps=1, variant=v, **({"dispatcher": "toy-descending"} if v == "pe-m" else {}))
            for v in ("pe-m", "pe")}
    toy, plain = runs["pe-m"], runs["pe"]
    assert toy["config"]["dispatch"]["dispatcher"] == "toy-descending"
    # The toy issues as the in-order dispatcher does, and it has no unit to price.
    assert toy["designs"]["kaleido"]["time_s"] == pytest.approx(plain["designs"]["kaleido"]["time_s"])
