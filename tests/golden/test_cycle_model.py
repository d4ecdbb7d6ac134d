"""The cycle model in closed form (its equality with the RTL is in
test_engine.py and test_attention_tb.py)."""

import numpy as np
import pytest

from golden import Config
from golden.cycle_model import (
    baseline_cycles,
    baseline_tile_slots,
    kaleido_cycles,
    kaleido_tables,
    kaleido_tile_slots,
    matcher_trace,
    scheduler_busy,
    scheduler_lead,
    scheduler_wait,
    split_cycles,
    sub_variants,
    tail_cycles,
    tile_lane_needs,
)
from golden.drain import drain_slots
from golden.matcher import lanes_of
from golden.pe_encoding import Mode
from golden.scheduler import operand_stream
from golden.tiling import pair_tables, tile_groups
from golden.variants import VARIANTS


def test_baseline_formula():
    cfg = Config(partition=(5, 0, 0), grid=(1, 1, 7), rows=3, cols=2, pe_stages=1)
    r = baseline_cycles(7, 7, cfg)
    tiles = 3 * 4
    assert r.cycles == tiles * 5 + 1 + tail_cycles(cfg) == tiles * 5 + 1 + 2 * 3 + 2
    assert r.lane_work == 2 * 7 * 7 * 5 and r.utilization < 1
    # Four tiles of 2 slots on 4x4: drains wait for their parity (golden.drain):
    # slots 0-1, 2-3, wait, 5-6, three waits, 10-11, wait, final drain at 13.
    short = Config(partition=(2, 0, 0), grid=(1, 1, 8), rows=4, cols=4)
    assert baseline_cycles(8, 8, short).cycles == 14 + tail_cycles(short)


def test_everything_reused_skips_b_and_c_but_not_d():
    cfg = Config(partition=(6, 0, 0), grid=(1, 2, 4), rows=2, cols=2)
    x = np.full((8, 6), 17, np.int8)                 # every partner a full reuse
    r = kaleido_cycles(x, x, cfg.with_(variant="pe"), schedule="pairs")
    assert r.tiles == 2 * 2                           # 4 Q pairs (along x) over 2 rows, same for K
    # A streams all 6 channels; B and C skip them all (one slot each, for the
    # hand-over and the drain); D still computes q0*k0 for T3 (three
    # accumulators cannot keep T0 for it).
    assert r.slots == drain_slots([6, 0, 0, 6] * r.tiles, cfg.rows)
    assert r.cycles == r.slots + tail_cycles(cfg)
    # Each tile's D drain waits two slots for its parity: 16 slots a tile, and the final drain.
    assert r.slots == r.tiles * 16 + 1


def test_variants_change_when_not_what(rng):
    cfg = Config(partition=(4, 4, 4), grid=(2, 4, 4), rows=2, cols=3, queue_depth=8, clusters=2,
                 cluster_capacity=4)
    base = rng.integers(0, 256, (1, 12))
    q, k = (((base ^ rng.integers(0, 32, (32, 12))) & 0xFF).astype(np.uint8).view(np.int8) for _ in range(2))
    reports = {v: kaleido_cycles(q, k, cfg.with_(variant=v), schedule="pairs") for v in VARIANTS}
    assert len({r.lane_work for r in reports.values()}) == 1
    assert reports["pe-m"].engine_cycles <= reports["pe"].engine_cycles
    assert reports["pe-sh"].lead_cycles > 0 and reports["pe"].lead_cycles == 0


def test_the_scheduler_works_past_its_lead(rng):
    # Its first batches are the lead; every batch of both operands is its work (energy counts it).
    cfg = Config(partition=(4, 4, 4), grid=(2, 4, 4), rows=2, cols=3, queue_depth=8, clusters=2,
                 cluster_capacity=4)
    q, k = (rng.integers(-128, 128, (32, 12)).astype(np.int8) for _ in range(2))
    lead, busy = scheduler_lead(q, k, cfg), scheduler_busy(q, k, cfg)
    strings = sum(len(operand_stream(pair_tables(x, cfg), cfg)[0]) for x in (q, k))
    # Each string is taken in one cycle and assigned in another; the lead is one batch's worth.
    assert 0 < lead < busy and busy >= 2 * strings


def test_one_array_of_a_split_is_the_engine(rng):
    cfg = Config(partition=(3, 2, 2), grid=(2, 3, 3), rows=2, cols=2)
    q = rng.integers(-128, 128, (18, 7), dtype=np.int8)
    qt, kt = kaleido_tables(q, q, cfg.with_(variant="pe"))
    slots, _ = kaleido_tile_slots(qt, kt, cfg, False)
    assert split_cycles(slots, 1, cfg) == kaleido_cycles(q, q, cfg.with_(variant="pe"), schedule="pairs").cycles
    assert split_cycles(slots, 3, cfg) < split_cycles(slots, 1, cfg)
    base = baseline_tile_slots(18, 18, cfg)
    assert split_cycles(base, 1, cfg) == baseline_cycles(18, 18, cfg).cycles


def test_auto_is_the_faster_schedule_and_never_slower_than_baseline(rng):
    for grid, partition, R in (((2, 4, 4), (4, 4, 4), 4), ((2, 2, 3), (1, 1, 1), 8), ((1, 4, 6), (9, 5, 2), 2)):
        cfg = Config(partition=partition, grid=grid, rows=R, cols=R)
        q, k = (rng.integers(-3, 3, (cfg.tokens, cfg.head_dim), dtype=np.int8) for _ in range(2))
        for variant in VARIANTS:
            at = cfg.with_(variant=variant)
            pairs = kaleido_cycles(q, k, at, schedule="pairs")
            auto = kaleido_cycles(q, k, at)
            base = baseline_cycles(cfg.tokens, cfg.tokens, cfg)
            subs = [kaleido_cycles(q, k, cfg.with_(variant=v), schedule="pairs").cycles for v in sub_variants(variant)]
            assert auto.cycles == min(subs + [base.cycles]) <= base.cycles
            assert auto.schedule == ("pairs" if min(subs) <= base.cycles else "dense")
            assert auto.pair_cycles == pairs.cycles


# make test draws 20 shapes; make test-all 60.
@pytest.mark.parametrize("shapes", [20, pytest.param(60, marks=pytest.mark.slow)])
def test_driver_choice_on_random_shapes(rng, shapes):
    # Kaleido never slower than the baseline, and full never slower than pe, on
    # random shapes, arrays and operands (random, or correlated at two strengths).
    for _ in range(shapes):
        partition = tuple(int(v) for v in rng.integers(0, 7, 3))
        if sum(partition) == 0:
            continue
        cfg = Config(partition=partition, grid=tuple(int(v) for v in rng.integers(1, 5, 3)),
                     rows=int(rng.integers(1, 5)), cols=int(rng.integers(1, 5)), queue_depth=8,
                     clusters=2, cluster_capacity=4, accumulators=int(rng.integers(3, 5)))
        N, D = cfg.tokens, cfg.head_dim
        spread = int(rng.choice([4, 40, 128]))
        base = rng.integers(-128, 128, (1, D))
        q, k = (np.clip(base + rng.integers(-spread, spread + 1, (N, D)), -128, 127).astype(np.int8)
                for _ in range(2))
        reports = {v: kaleido_cycles(q, k, cfg.with_(variant=v)) for v in VARIANTS}
        assert reports["full"].cycles <= reports["pe"].cycles, cfg
        assert all(r.cycles <= baseline_cycles(N, N, cfg).cycles for r in reports.values())


def test_tile_lane_needs_are_the_work_the_model_counts(rng):
    # What a dispatcher packs (each PE's lanes per channel) adds up, tile by tile
    # and pass by pass, to the lane work the cycle model counts; pass A streams
    # every channel of the group.
    for acc in (3, 4):
        cfg = Config(partition=(6, 4, 3), grid=(2, 4, 5), rows=3, cols=2, accumulators=acc)
        q = rng.integers(-128, 128, (cfg.tokens, cfg.head_dim), dtype=np.int8)
        k = np.clip(q + rng.integers(-20, 21, q.shape), -128, 127).astype(np.int8)
        qt, kt = kaleido_tables(q, k, cfg.with_(variant="pe"))
        slots, work = kaleido_tile_slots(qt, kt, cfg, with_matcher=False)
        needs = list(tile_lane_needs(qt, kt, cfg))
        assert len(needs) == len(slots)
        for t, (a_slots, lanes) in enumerate(needs):
            assert a_slots == slots[t, 0]
            for mode in (1, 2, 3):
                assert lanes[mode].sum() == work[t, mode]
                # Unpaired, a pass streams the channels some PE has work on.
                assert (lanes[mode] > 0).reshape(lanes[mode].shape[0], -1).any(axis=1).sum() == slots[t, mode]


def test_matcher_trace_is_whole_tile_groups_as_the_passes_stream_them():
    seed = 5
    print("seed", seed)
    rng = np.random.default_rng(seed)
    cfg = Config(partition=(6, 0, 0), grid=(1, 6, 6), rows=2, cols=2)
    # Partners that copy their reference on some channels: states of every kind.
    q = rng.integers(-128, 128, (36, 6)).astype(np.int8)
    q[1::2, ::2] = q[0::2, ::2]
    k = q[::-1].copy()
    qt, kt = kaleido_tables(q, k, cfg)
    trace = matcher_trace(qt, kt, cfg, tiles=4)
    assert len(trace) == 4
    whole = [t for t in tile_groups(qt, kt, cfg) if len(t.q_pairs) == 2 and len(t.k_pairs) == 2]
    first, last = whole[0], whole[-1]
    for tile, (sq, sk, sets) in ((first, trace[0]), (last, trace[-1])):
        want_sq = qt[tile.group].state[tile.q_pairs]
        want_sk = kt[tile.group].state[tile.k_pairs]
        assert np.array_equal(np.array(sq), want_sq) and np.array_equal(np.array(sk), want_sk)
        mask = lambda chans: sum(1 << c for c in np.flatnonzero(chans))
        assert sets[0] == mask((want_sk != 2).any(axis=0))          # B: a column not fully reused
        assert sets[1] == mask((want_sq != 2).any(axis=0))          # C: a row not fully reused
        need_d = lanes_of(Mode.D, cfg.accumulators)[want_sq[:, None, :], want_sk[None, :, :]] > 0
        assert sets[2] == mask(need_d.any(axis=(0, 1)))                # D: some PE has work left
    assert len({s for _, _, s in trace}) > 1 or len({sq for sq, _, _ in trace}) > 1


def test_the_engine_waits_for_a_groups_clusters():
    # Group 0 waits for both operands' clusters; group 1's came while group 0 ran;
    # group 2's come 380 cycles after the engine could have started it.
    assert scheduler_wait([[100, 150, 1500], [120, 130, 200]], [500, 500, 500]) == 120 + 380
    assert scheduler_wait([[7], [9]], [50]) == 9
