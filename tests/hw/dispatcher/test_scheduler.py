"""The scheduler RTL in Amaranth's simulator against the golden model,
assignment for assignment and cycle for cycle."""

import numpy as np
import pytest
from amaranth.sim import Simulator

from golden import Config
from golden.scheduler import batch_sizes, schedule, weight_ranks
from hw.dispatcher.scheduler import Scheduler


def run_rtl(strings, last, cfg, max_cycles=100_000):
    """Feed every string as soon as the unit is ready; record (cluster, cycle) of
    each assignment, cycles counted from the first string's."""
    dut = Scheduler(cfg)
    got = []

    async def bench(ctx):
        idx = 0
        for cycle in range(max_cycles):
            if idx < len(strings):
                ctx.set(dut.in_valid, 1)
                ctx.set(dut.in_string, strings[idx])
                ctx.set(dut.in_last, last[idx])
            else:
                ctx.set(dut.in_valid, 0)
            ready = ctx.get(dut.in_ready)
            if ctx.get(dut.out_valid):
                got.append((ctx.get(dut.out_cluster), cycle))
            if len(got) == len(strings):
                return
            await ctx.tick()
            if ready and idx < len(strings):
                idx += 1
        raise AssertionError(f"no end after {max_cycles} cycles: {len(got)} assignments")

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return got


def check(strings, last, cfg):
    want, _ = schedule(strings, last, cfg)
    got = run_rtl(strings, last, cfg)
    assert got == [(a.cluster, a.cycle) for a in want]
    return want


@pytest.mark.parametrize("kind", ["random", "equal", "ties", "one-cluster-full"])
def test_rtl_matches_golden(kind, rng):
    cfg = Config(queue_depth=16, clusters=4, cluster_capacity=4, string_bits=8, seed=5, cluster_rule="pivots")
    n = 40
    if kind == "random":
        strings = [int(v) for v in rng.integers(0, 256, n)]
    elif kind == "equal":
        strings = [0x5A] * n                   # every pivot identical: capacity fallback
    elif kind == "ties":
        strings = [int(v) for v in rng.choice([0x0F, 0xF0, 0x3C, 0xC3], n)]
    else:
        strings = [0] * 30 + [0xFF] * 10
    last = [False] * n
    last[22] = last[-1] = True                 # a batch ended early; the stream ends
    want = check(strings, last, cfg)
    counts = np.bincount([a.cluster for a in want[:16]], minlength=4)
    assert counts.max() <= cfg.cluster_capacity


def test_default_sizes_and_short_streams(rng):
    cfg = Config(cluster_rule="pivots")        # 64 entries, 4 clusters of 16, 16-bit strings
    strings = [int(v) for v in rng.integers(0, 1 << 16, 70)]
    last = [False] * 69 + [True]
    check(strings, last, cfg)
    check([7], [True], cfg)                    # a batch of one: every pivot is that string


@pytest.mark.parametrize("kind", ["random", "equal", "few", "saturated"])
def test_weight_rule_ranks_like_golden(kind, rng):
    """The weight rule: no pivots, each string's rank in its batch (heavier first,
    ties in queue order), one a turn of the ring (queue_depth cycles) after the batch fills."""
    cfg = Config(queue_depth=16, partition=(100, 8, 8), cluster_rule="weight")
    assert cfg.entry_bits == 8                                     # weights up to 2 x 100 lanes
    n = 40
    strings = {"random": lambda: [int(v) for v in rng.integers(0, 256, n)],
               "equal": lambda: [9] * n,
               "few": lambda: [int(v) for v in rng.choice([0, 1, 2, 40], n)],
               "saturated": lambda: [255] * 20 + [int(v) for v in rng.integers(250, 256, n - 20)]}[kind]()
    last = [False] * n
    last[5] = last[22] = last[-1] = True
    want = check(strings, last, cfg)
    ranks = [a.cluster for a in want]
    sizes = batch_sizes(last, cfg.queue_depth)
    assert sizes == [6, 16, 1, 16, 1]
    for start, stop in zip(np.cumsum([0] + sizes[:-1]), np.cumsum(sizes)):
        batch = ranks[start:stop]
        assert sorted(batch) == list(range(stop - start))          # a permutation of the batch
        heavier_first = [strings[start + i] for i in np.argsort(batch)]
        assert heavier_first == sorted(strings[start:stop], reverse=True)
    # No pivot cycles: the first rank after a turn, then one a turn.
    assert want[0].cycle == 6 + 16 - 1 and want[1].cycle - want[0].cycle == 16
    assert want[6].cycle == 6 + 6 * 16 + 16 + 16 - 1               # the next batch fills first
    assert weight_ranks([3, 5, 3, 5]) == [2, 0, 3, 1]
