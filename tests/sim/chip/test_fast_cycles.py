"""The fast cycle model against the exact one: equal when it computes every tile
group, and within its interval (or 1 %) when it samples them."""

import numpy as np
import pytest

from golden import Config, proxy_workload, quantize
from golden.cycle_model import channel_steps, executed_products, kaleido_cycles, kaleido_tables, sub_variants
from golden.tiling import tile_groups
from sim.chip.fast_cycles import estimate_cycles
from tests.adversarial import CASES, operands
from tests.sweep import sweep


def _case_id(c):
    return f"{c[0]}-{c[1]}-{c[2]}x{c[3]}-{c[6]}" if isinstance(c, tuple) and len(c) == 7 else str(c)


# Dispatchers and PEs: (variant, accumulators, issue_window, cluster_rule, lookahead).
DESIGNS = [("full", 3, 0, "weight", 4), ("full", 4, 0, "pivots", 3), ("pe-m", 3, 0, "weight", 1),
           ("pe-sh", 4, 0, "weight", 4), ("pe", 3, 0, "weight", 4), ("full", 3, 4, "weight", 4)]


def _config(case, design, **kw):
    partition, grid, R, C, F, P, _ = case
    variant, acc, window, rule, lookahead = design
    return Config(partition=partition, grid=grid, rows=R, cols=C, full_bits=F, partial_bits=P, queue_depth=8,
                  clusters=2, cluster_capacity=4, lookahead=lookahead, accumulators=acc, variant=variant,
                  issue_window=window, cluster_rule=rule, **kw)


def _same_as_exact(q, k, cfg):
    exact = kaleido_cycles(q, k, cfg)
    products = executed_products(q, k, cfg, exact)
    fast = estimate_cycles(q, k, cfg)
    assert fast.exact and fast.low == fast.cycles == fast.high
    assert (fast.cycles, fast.ran_as, fast.schedule) == (exact.cycles, exact.ran_as, exact.schedule)
    assert fast.lane_work == exact.lane_work
    assert (fast.full_products, fast.nibble_products) == (products["full_products"], products["nibble_products"])
    # Every option the driver weighed, as the exact model runs it on its own, with
    # the channels its passes stream and the tile groups of its first channel group.
    for v in sub_variants(cfg.variant):
        own = kaleido_cycles(q, k, cfg.with_(variant=v), schedule="pairs").cycles
        assert fast.options[v]["cycles"] == own, v
        tables = kaleido_tables(q, k, cfg.with_(variant=v))
        assert fast.options[v]["channel_steps"] == channel_steps(*tables, cfg), v
        first = [t for t in tile_groups(*tables, cfg) if t.group == 0]
        assert fast.options[v]["first_tiles"] == len(first), v
    assert fast.options["dense"]["channel_steps"] == fast.options["dense"]["tiles"] * cfg.head_dim


# Adversarial operands on odd shapes (partial tiles, empty groups, groups narrower
# than the drain spacing, where the head is not a sum of its tile groups).
@sweep("case, design", CASES, DESIGNS, ids=_case_id)
def test_every_tile_group_computed_is_the_exact_model(case, design, rng):
    cfg = _config(case, design)
    q, k = operands(case[6], cfg, rng)
    _same_as_exact(q, k, cfg)


@pytest.mark.parametrize("design", DESIGNS, ids=str)
def test_a_video_head_computed_whole_is_the_exact_model(design):
    cfg = Config.for_model("wan2.1", 64, grid=(2, 8, 8), variant=design[0], accumulators=design[1],
                           issue_window=design[2], cluster_rule=design[3], lookahead=design[4])
    w = proxy_workload(cfg)
    _same_as_exact(quantize(w["q"])[0], quantize(w["k"])[0], cfg)


def test_a_sample_as_large_as_the_head_is_the_census():
    cfg = Config.for_model("wan2.1", 64, grid=(2, 4, 8))
    w = proxy_workload(cfg)
    q, k = quantize(w["q"])[0], quantize(w["k"])[0]
    whole = estimate_cycles(q, k, cfg)
    assert estimate_cycles(q, k, cfg, samples=whole.tiles) == whole


# make test: a 256-token head; make test-all: up to 2048 tokens (the exact model
# then takes about two minutes).
@sweep("grid, samples", [((4, 8, 8), 600), ((4, 16, 16), 4000), ((8, 16, 16), 8000)],
       keep=[((4, 8, 8), 600)])
def test_a_sampled_head_is_within_its_interval(grid, samples, seed):
    cfg = Config.for_model("wan2.1", 128, grid=grid)
    w = proxy_workload(cfg)
    q, k = quantize(w["q"])[0], quantize(w["k"])[0]
    exact = kaleido_cycles(q, k, cfg)
    est = estimate_cycles(q, k, cfg, samples=samples, seed=seed)
    assert not est.exact and est.sampled < 2 * est.tiles
    assert est.low < est.cycles < est.high
    error = abs(est.cycles / exact.cycles - 1)
    print(f"N={cfg.tokens}: exact {exact.cycles}, estimate {est.cycles:.0f} "
          f"[{est.low:.0f}, {est.high:.0f}], error {error:.2e}")
    assert est.low <= exact.cycles <= est.high or error <= 0.01
    assert est.ran_as == exact.ran_as


def test_the_interval_narrows_with_the_sample(seed):
    cfg = Config.for_model("wan2.1", 128, grid=(4, 8, 8))
    w = proxy_workload(cfg)
    q, k = quantize(w["q"])[0], quantize(w["k"])[0]
    widths = [(lambda e: e.high - e.low)(estimate_cycles(q, k, cfg, samples=n, seed=seed)) for n in (200, 2000)]
    assert 0 < widths[1] < widths[0]


@pytest.mark.parametrize("kwargs, message", [({"samples": 0}, "samples"), ({"confidence": 1.0}, "confidence")])
def test_bad_arguments_are_refused(kwargs, message):
    cfg = Config.for_model("wan2.1", 64, grid=(2, 4, 4))
    q = np.zeros((cfg.tokens, cfg.head_dim), np.int8)
    with pytest.raises(ValueError, match=message):
        estimate_cycles(q, q, cfg, **kwargs)
