"""The cycle model in closed form (its equality with the RTL is in
test_engine.py and test_attention_tb.py)."""

import numpy as np

from golden import Config
from golden.cycle_model import (VARIANTS, baseline_cycles, baseline_tile_slots, kaleido_cycles,
                                kaleido_tables, kaleido_tile_slots, split_cycles, tail_cycles)


def test_baseline_formula():
    cfg = Config(partition=(5, 0, 0), grid=(1, 1, 7), rows=3, cols=2)
    r = baseline_cycles(7, 7, cfg)
    tiles = 3 * 4
    assert r.cycles == tiles * 5 + 1 + tail_cycles(cfg) == tiles * 5 + 1 + 2 * 3 + 2
    assert r.lane_work == 2 * 7 * 7 * 5 and r.utilization < 1
    short = Config(partition=(2, 0, 0), grid=(1, 1, 4), rows=4, cols=4)   # passes padded to 2R-1
    assert baseline_cycles(4, 4, short).cycles == 7 + 1 + tail_cycles(short)


def test_everything_reused_skips_b_and_c_but_not_d():
    cfg = Config(partition=(6, 0, 0), grid=(1, 2, 4), rows=2, cols=2)
    x = np.full((8, 6), 17, np.int8)                 # every partner a full reuse
    r = kaleido_cycles(x, x, cfg)
    assert r.tiles == 2 * 2                           # 4 Q pairs (along x) over 2 rows, same for K
    # A streams all 6 channels; B and C skip them all (padded to 2R-1 = 3 slots);
    # D still computes q0*k0 for T3 (three accumulators cannot keep T0 for it).
    assert r.cycles == r.tiles * (6 + 3 + 3 + 6) + 1 + tail_cycles(cfg)


def test_variants_change_when_not_what(rng):
    cfg = Config(partition=(4, 4, 4), grid=(2, 4, 4), rows=2, cols=3, queue_depth=8, clusters=2,
                 cluster_capacity=4)
    base = rng.integers(0, 256, (1, 12))
    q, k = (((base ^ rng.integers(0, 32, (32, 12))) & 0xFF).astype(np.uint8).view(np.int8) for _ in range(2))
    reports = {v: kaleido_cycles(q, k, cfg, v) for v in VARIANTS}
    assert len({r.lane_work for r in reports.values()}) == 1
    assert reports["pe-m"].engine_cycles <= reports["pe"].engine_cycles
    assert reports["pe-sh"].lead_cycles > 0 and reports["pe"].lead_cycles == 0


def test_one_array_of_a_split_is_the_engine(rng):
    cfg = Config(partition=(3, 2, 2), grid=(2, 3, 3), rows=2, cols=2)
    q = rng.integers(-128, 128, (18, 7), dtype=np.int8)
    qt, kt = kaleido_tables(q, q, cfg, "pe")
    slots, _ = kaleido_tile_slots(qt, kt, cfg, False)
    assert split_cycles(slots, 1, cfg) == kaleido_cycles(q, q, cfg, "pe").cycles
    assert split_cycles(slots, 3, cfg) < split_cycles(slots, 1, cfg)
    base = baseline_tile_slots(18, 18, cfg)
    assert split_cycles(base, 1, cfg) == baseline_cycles(18, 18, cfg).cycles
