"""The attention engine (controller + array) in Amaranth's simulator against the
golden S~ and the cycle model: scores bit for bit, cycles and lane work equal."""

import numpy as np
import pytest

from golden import Config, approx_scores, proxy_workload, quantize, run_attention
from golden.cycle_model import baseline_cycles, kaleido_cycles, kaleido_tables, variant_parts
from golden.variants import VARIANTS
from hw.host.engine_image import baseline_image, driver_image, kaleido_image
from tb.engine_sim import simulate_engine
from tests.adversarial import CASES, operands
from tests.sweep import cover, ident, sweep


def _case_id(c):
    return f"{c[0]}-{c[1]}-{c[2]}x{c[3]}-F{c[4]}P{c[5]}-{c[6]}" if isinstance(c, tuple) and len(c) == 7 else ident(c)


# make test: every variant and PE once, on cases from first to last; make test-all: all.
@sweep("case, variant, accumulators", CASES, list(VARIANTS), [3, 4], ids=_case_id,
       keep=cover(CASES, list(VARIANTS), [3, 4]))
def test_kaleido_engine_is_exact_and_on_model(case, variant, accumulators, rng):
    partition, grid, R, C, F, P, kind = case
    cfg = Config(partition=partition, grid=grid, rows=R, cols=C, full_bits=F, partial_bits=P,
                 queue_depth=8, clusters=2, cluster_capacity=4, lookahead=3, accumulators=accumulators,
                 variant=variant)
    q, k = operands(kind, cfg, rng)
    tables = kaleido_tables(q, k, cfg)
    # Passes A-D forced, even where the dense schedule would win: they must be exact too.
    got = simulate_engine(kaleido_image(q, k, cfg, tables), cfg, cfg.tokens, cfg.tokens,
                          matcher=variant_parts(variant)[1])
    np.testing.assert_array_equal(got["scores"], approx_scores(q, k, cfg))
    model = kaleido_cycles(q, k, cfg, tables, schedule="pairs")
    assert got["cycles"] == model.engine_cycles == got["last_out"]
    assert got["lane_work"] == model.lane_work
    if accumulators == 4:           # the exact PE executes the oracle count, no more
        assert got["lane_work"] == 2 * run_attention(q, k, cfg).oracle_macs


# Shapes where short passes meet the drain rule: 1-4 channel groups, empty groups,
# odd extents, arrays from 1x1 to 8x8.
NEVER_SLOWER = CASES + [
    ((1, 1, 1), (2, 2, 3), 4, 4, 5, 3, "correlated"),
    ((2, 0, 1), (1, 4, 5), 8, 8, 5, 3, "partial"),
    ((4, 3, 1), (2, 4, 4), 8, 2, 5, 3, "equal"),
    ((1, 4, 2), (3, 3, 2), 1, 8, 4, 2, "random"),
]


# (variant, issue_window, cluster_rule). In this order the Latin walk gives the 8x8
# array the plain PE, its cheapest simulation.
DISPATCHERS = [("full", 0, "pivots"), ("full", 4, "pivots"), ("full", 8, "weight"), ("pe", 0, "pivots")]


@sweep("case, dispatcher", NEVER_SLOWER, DISPATCHERS, ids=_case_id, keep=cover(NEVER_SLOWER, DISPATCHERS))
def test_kaleido_is_never_slower_than_baseline(case, dispatcher, rng):
    partition, grid, R, C, F, P, kind = case
    variant, window, rule = dispatcher
    cfg = Config(partition=partition, grid=grid, rows=R, cols=C, full_bits=F, partial_bits=P,
                 queue_depth=8, clusters=2, cluster_capacity=4, lookahead=3, issue_window=window,
                 cluster_rule=rule, variant=variant)
    q, k = operands(kind, cfg, rng)
    tables = kaleido_tables(q, k, cfg)
    model = kaleido_cycles(q, k, cfg, tables)           # the driver's choice
    got = simulate_engine(driver_image(q, k, cfg, model, tables), cfg, cfg.tokens,
                          cfg.tokens, matcher=variant_parts(variant)[1])
    np.testing.assert_array_equal(got["scores"], approx_scores(q, k, cfg))
    assert got["cycles"] == model.engine_cycles == got["last_out"]
    assert got["lane_work"] == model.lane_work
    base = baseline_cycles(cfg.tokens, cfg.tokens, cfg)
    assert model.cycles <= base.cycles, (model.schedule, model.cycles, base.cycles)
    if model.schedule == "dense":
        assert got["cycles"] == base.cycles
    # The dispatcher pays for itself: the full variant is never slower than pe.
    if variant == "full":
        assert model.cycles <= kaleido_cycles(q, k, cfg.with_(variant="pe")).cycles


def test_matcher_bypass_is_the_unpaired_engine(rng):
    # A full engine told to bypass its matcher runs exactly as pe-sh does.
    cfg = Config(partition=(4, 4, 4), grid=(2, 4, 4), rows=2, cols=3, queue_depth=8, clusters=2,
                 cluster_capacity=4)
    q, k = operands("partial", cfg, rng)
    tables = kaleido_tables(q, k, cfg)
    image = kaleido_image(q, k, cfg, tables)
    image.unpaired = True
    got = simulate_engine(image, cfg, cfg.tokens, cfg.tokens, matcher=True)
    np.testing.assert_array_equal(got["scores"], approx_scores(q, k, cfg))
    model = kaleido_cycles(q, k, cfg.with_(variant="pe-sh"), tables, schedule="pairs")
    assert got["cycles"] == model.engine_cycles and got["lane_work"] == model.lane_work
    assert model.engine_cycles > kaleido_cycles(q, k, cfg, tables, schedule="pairs").engine_cycles


def test_dense_schedule_is_the_baseline_on_kaleido_pes(rng):
    cfg = Config(partition=(3, 2, 2), grid=(2, 3, 3), rows=2, cols=3)
    q, k = operands("correlated", cfg, rng)
    got = simulate_engine(kaleido_image(q, k, cfg, schedule="dense"), cfg, cfg.tokens, cfg.tokens)
    np.testing.assert_array_equal(got["scores"], approx_scores(q, k, cfg))
    base = baseline_cycles(cfg.tokens, cfg.tokens, cfg)
    assert got["cycles"] == base.cycles == kaleido_cycles(q, k, cfg, schedule="dense").cycles
    assert got["lane_work"] == base.lane_work


def test_folded_keys_add_codes_where_rows_enter(rng):
    """P V~ with V's reuse (golden.pv_tiles): every column tile's run on the engine, the
    folded keys' codes added by the engine's row adder, gives P V~ exactly, in the
    cycles of a dense product over the tile's own keys."""
    from golden.cycle_model import gemm_cycles
    from golden.head_cycles import pv_config
    from golden.pv_tiles import pv_tiles
    from golden.reuse import pair_reuse
    from hw.host.engine_image import gemm_image
    from tests.golden.test_pv_tiles import codes, values

    cfg = Config(partition=(4, 2, 2), grid=(2, 3, 4), rows=3, cols=2)
    p, v = codes(rng, cfg.tokens).astype(np.int8), values(rng, cfg)
    pv, out, folded = pv_config(cfg), np.zeros((cfg.tokens, cfg.head_dim), np.int64), 0
    for tile in pv_tiles(p, v, cfg):
        a, b = p[:, tile.keys], np.ascontiguousarray(tile.v.T)
        got = simulate_engine(gemm_image("kaleido", a, b, pv, tile.fold), pv, cfg.tokens, len(tile.channels))
        out[:, tile.channels] = got["scores"]
        model = gemm_cycles(cfg.tokens, len(tile.channels), pv, "kaleido", depth=len(tile.keys))
        assert got["cycles"] == model.cycles and got["lane_work"] == model.lane_work
        folded += len(tile.folded)
    assert folded
    np.testing.assert_array_equal(out, p.astype(np.int64) @ pair_reuse(v, cfg).approx.astype(np.int64))


@pytest.mark.parametrize("R, C, D, N", [(2, 3, 5, 7), (4, 4, 3, 9), (1, 1, 4, 3), (3, 2, 8, 6)])
def test_baseline_engine_is_q_kt(R, C, D, N, rng):
    cfg = Config(partition=(D, 0, 0), grid=(1, 1, N), rows=R, cols=C)
    q, k = operands("random", cfg, rng)
    got = simulate_engine(baseline_image(q, k, cfg), cfg, N, N)
    np.testing.assert_array_equal(got["scores"], q.astype(np.int64) @ k.astype(np.int64).T)
    model = baseline_cycles(N, N, cfg)
    assert got["cycles"] == model.cycles == got["last_out"]
    assert got["lane_work"] == model.lane_work == 2 * N * N * D


def test_matcher_saves_cycles_on_nibble_work(rng):
    cfg = Config(partition=(4, 4, 4), grid=(2, 4, 4), rows=2, cols=3)
    q, k = operands("partial", cfg, rng)
    runs = {}
    for variant in ("pe", "pe-m"):
        tables = kaleido_tables(q, k, cfg.with_(variant=variant))
        got = simulate_engine(kaleido_image(q, k, cfg, tables), cfg, cfg.tokens, cfg.tokens,
                              matcher=variant == "pe-m")
        runs[variant] = got
    assert runs["pe-m"]["cycles"] < runs["pe"]["cycles"]
    assert runs["pe-m"]["lane_work"] == runs["pe"]["lane_work"]      # same work, fewer cycles


# (accumulators, window, stages)
DEEP_PES = [(3, 0, 2), (4, 0, 2), (4, 4, 2), (3, 0, 3), (4, 4, 3), (3, 0, 4), (4, 4, 4)]


@sweep("case, pe", NEVER_SLOWER[::3], DEEP_PES, ids=_case_id, keep=cover(NEVER_SLOWER[::3], DEEP_PES))
def test_deeper_pes_keep_scores_cycles_and_the_baseline_bound(case, pe, rng):
    """With ``pe_stages`` 2 every PE (Kaleido's and the baseline's) registers its
    products first, with 3 it also multiplies what it forwards (Kaleido's
    decoded a cycle ahead), and with 4 (the FPGA variant) it registers the
    multipliers' operands too: scores stay exact, cycles stay the model's (one more
    cycle of tail a stage), and Kaleido stays no slower than the baseline built
    the same way; with a channel window too."""
    accumulators, window, stages = pe
    partition, grid, R, C, F, P, kind = case
    cfg = Config(partition=partition, grid=grid, rows=R, cols=C, full_bits=F, partial_bits=P,
                 queue_depth=8, clusters=2, cluster_capacity=4, lookahead=3, accumulators=accumulators,
                 pe_stages=stages, issue_window=window)
    q, k = operands(kind, cfg, rng)
    tables = kaleido_tables(q, k, cfg)
    model = kaleido_cycles(q, k, cfg, tables)
    got = simulate_engine(driver_image(q, k, cfg, model, tables), cfg, cfg.tokens, cfg.tokens,
                          matcher=True)
    np.testing.assert_array_equal(got["scores"], approx_scores(q, k, cfg))
    assert got["cycles"] == model.engine_cycles == got["last_out"]
    assert got["lane_work"] == model.lane_work
    one = kaleido_cycles(q, k, cfg.with_(pe_stages=1), tables)
    assert model.engine_cycles == one.engine_cycles + stages - 1
    base = simulate_engine(baseline_image(q, k, cfg), cfg, cfg.tokens, cfg.tokens)
    np.testing.assert_array_equal(base["scores"], q.astype(np.int64) @ k.astype(np.int64).T)
    assert base["cycles"] == baseline_cycles(cfg.tokens, cfg.tokens, cfg).cycles >= model.cycles


@sweep("case, window, accumulators", CASES, [4, 8, 2], [3, 4], ids=_case_id,
       keep=cover(CASES, [4, 8, 2], [3, 4]))
def test_channel_window_engine_is_exact_and_on_model(case, window, accumulators, rng):
    """With a channel window each column (B, D) or row (C) takes its own steps:
    scores stay exact, and cycles and lane work are the window's model."""
    partition, grid, R, C, F, P, kind = case
    cfg = Config(partition=partition, grid=grid, rows=R, cols=C, full_bits=F, partial_bits=P,
                 queue_depth=8, clusters=2, cluster_capacity=4, accumulators=accumulators, issue_window=window)
    q, k = operands(kind, cfg, rng)
    tables = kaleido_tables(q, k, cfg)
    got = simulate_engine(kaleido_image(q, k, cfg, tables), cfg, cfg.tokens, cfg.tokens, matcher=True)
    np.testing.assert_array_equal(got["scores"], approx_scores(q, k, cfg))
    model = kaleido_cycles(q, k, cfg, tables, schedule="pairs")
    assert got["cycles"] == model.engine_cycles == got["last_out"]
    assert got["lane_work"] == model.lane_work
    if accumulators == 4:
        assert got["lane_work"] == 2 * run_attention(q, k, cfg).oracle_macs


@pytest.mark.slow      # make test: the CLI's window test shows the same on the RTL
def test_channel_window_beats_the_matcher_on_the_proxy():
    """On the proxy (F=5 P=3, 4x4 PEs) the window of 4 issues fewer slots than the
    matcher, the RTL says so too, and with the window bypassed (``unpaired``) the
    engine is the unpaired one."""
    cfg = Config(grid=(1, 4, 8), partition=(12, 10, 10), full_bits=5, partial_bits=3, accumulators=4,
                 issue_window=4)
    w = proxy_workload(cfg)
    q, k = quantize(w["q"])[0], quantize(w["k"])[0]
    tables = kaleido_tables(q, k, cfg.with_(variant="pe-m"))
    image = kaleido_image(q, k, cfg, tables)
    got = simulate_engine(image, cfg, cfg.tokens, cfg.tokens, matcher=True)
    np.testing.assert_array_equal(got["scores"], approx_scores(q, k, cfg))
    window = kaleido_cycles(q, k, cfg.with_(variant="pe-m"), tables, schedule="pairs")
    matcher = kaleido_cycles(q, k, cfg.with_(issue_window=0, variant="pe-m"), tables, schedule="pairs")
    assert got["cycles"] == window.engine_cycles < matcher.engine_cycles
    image.unpaired = True
    got = simulate_engine(image, cfg, cfg.tokens, cfg.tokens, matcher=True)
    assert got["cycles"] == kaleido_cycles(q, k, cfg.with_(variant="pe"), tables, schedule="pairs").engine_cycles
