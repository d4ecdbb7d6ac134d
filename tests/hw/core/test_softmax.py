"""The softmax vector unit in Amaranth's simulator against the golden softmax:
codes bit for bit under random gaps and backpressure (a driver and a monitor
running concurrently), cycles equal to the model's when nothing stalls."""

import random

import numpy as np
import pytest
from amaranth.sim import Simulator

from golden import Config
from golden.softmax import pipe_stages, softmax_codes, softmax_cycles, softmax_spec
from hw.core.softmax import Phase, SoftmaxUnit
from tb.softmax_rows import ROW_KINDS, head_scale, row_scores


def run_rows(cfg, rows, mult, shift, rnd, gaps=0.0, stalls=0.0):
    """Codes of ``rows`` from the RTL, and the cycles from the first beat taken to
    the last code beat handed over."""
    dut = SoftmaxUnit(cfg)
    lanes, n = cfg.vector_lanes, cfg.tokens
    beats = -(-n // lanes)
    takes, outs = [], []

    async def driver(ctx):
        ctx.set(dut.mult, mult)
        ctx.set(dut.shift, shift)
        cycle = 0
        for row in rows:
            padded = list(row) + [0] * (-n % lanes)
            for _ in range(3):
                for b in range(beats):
                    while rnd.random() < gaps:
                        ctx.set(dut.scores.valid, 0)
                        await ctx.tick()
                        cycle += 1
                    ctx.set(dut.scores.valid, 1)
                    ctx.set(dut.scores.payload, padded[b * lanes:(b + 1) * lanes])
                    while True:
                        # Sampled at the edge, after the monitor has set this cycle's ready.
                        *_, ready = await ctx.tick().sample(dut.scores.ready)
                        if ready:
                            takes.append(cycle)
                        cycle += 1
                        if ready:
                            break
        ctx.set(dut.scores.valid, 0)

    async def monitor(ctx):
        cycle = 0
        while len(outs) < beats * len(rows):
            ctx.set(dut.codes.ready, int(rnd.random() >= stalls))
            *_, valid, payload = await ctx.tick().sample(dut.codes.valid, dut.codes.payload)
            if valid and ctx.get(dut.codes.ready):
                outs.append((cycle, list(payload)))
            cycle += 1
            if cycle > 100 * beats * len(rows) + 1000:
                raise AssertionError("the unit stopped handing out codes")

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(driver)
    sim.add_testbench(monitor)
    sim.run()
    codes = np.array([sum([o[1] for o in outs[r * beats:(r + 1) * beats]], [])[:n] for r in range(len(rows))])
    return codes, outs[-1][0] - takes[0] + 1


def check(cfg, rows, mult, shift, rnd, gaps=0.0, stalls=0.0):
    spec = softmax_spec(cfg.tokens, cfg.acc_bits)
    got, cycles = run_rows(cfg, rows, mult, shift, rnd, gaps, stalls)
    want = softmax_codes(np.array(rows, dtype=np.int64), mult, shift, spec)
    np.testing.assert_array_equal(got, want, err_msg=f"mult={mult} shift={shift} rows={rows}")
    if not gaps and not stalls:
        assert cycles == softmax_cycles(spec, cfg.vector_lanes, len(rows))


@pytest.mark.parametrize("grid, lanes", [((1, 1, 1), 1), ((1, 1, 5), 2), ((1, 2, 3), 4), ((2, 3, 3), 3),
                                         ((1, 4, 4), 4), ((1, 3, 4), 5), ((1, 4, 4), 16)])
def test_rows_match_golden(grid, lanes, seed):
    # 5 and 16 lanes take two registers of the max tree and two of the sum tree.
    rnd = random.Random(seed)
    cfg = Config(partition=(2, 2, 2), grid=grid, vector_lanes=lanes)
    for trial in range(len(ROW_KINDS) + 2):
        mult, shift = head_scale(rnd, trial)
        rows = [row_scores(ROW_KINDS[(trial + r) % len(ROW_KINDS)], cfg.tokens, cfg.acc_bits, rnd)
                for r in range(2)]
        check(cfg, rows, mult, shift, rnd, *((0.0, 0.0) if trial % 2 else (0.4, 0.4)))


def test_phases_follow_the_row():
    cfg = Config(partition=(2, 2, 2), grid=(1, 1, 3), vector_lanes=2)
    dut = SoftmaxUnit(cfg)
    seen = []

    async def bench(ctx):
        ctx.set(dut.mult, 40000)
        ctx.set(dut.scores.valid, 1)
        ctx.set(dut.codes.ready, 1)
        for _ in range(3 * 2 + dut.spec.quot_bits + pipe_stages(2) + 2):
            seen.append(ctx.get(dut.phase))
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    q = dut.spec.quot_bits
    assert seen == ([Phase.MAX] * 2 + [Phase.SUM] * 2 + [Phase.DIVIDE] * (q + pipe_stages(2))
                    + [Phase.NORM] * 2 + [Phase.MAX] * 2)
