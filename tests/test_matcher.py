"""The matcher: golden pairing rules, and the RTL merge unit against them."""

import numpy as np
import pytest
from amaranth.sim import Simulator

from golden import Config
from golden.matcher import column_needs, compatible, match
from golden.pe import Mode
from hw.matcher import Matcher


def test_column_needs_follow_the_port_budget():
    sk = np.array([[2, 1, 0]])                      # one column, three channels
    assert column_needs(Mode.B, np.zeros((1, 3)), sk).ravel().tolist() == [0, 1, 2]
    sq_all2 = np.full((2, 3), 2)
    sq_mixed = np.array([[2, 2, 2], [0, 0, 0]])
    assert column_needs(Mode.D, sq_all2, sk).ravel().tolist() == [2, 1, 0]
    assert column_needs(Mode.D, sq_mixed, sk).ravel().tolist() == [2, 2, 2]
    assert column_needs(Mode.D, np.zeros((2, 3)), sk).ravel().tolist() == [0, 1, 2]


def test_match_pairs_first_compatible_within_lookahead():
    needs = np.array([[1, 1], [2, 0], [1, 0], [0, 2], [1, 1]])
    assert match(range(5), needs, 4) == [(0, 2), (1, 3), (4, None)]
    assert match(range(5), needs, 2) == [(0, None), (1, None), (2, 3), (4, None)]
    assert match(range(5), needs, 1) == [(c, None) for c in range(5)]
    assert compatible(needs[1], needs[3]) and not compatible(needs[0], needs[1])


@pytest.mark.parametrize("lookahead", [1, 2, 3, 4])
def test_rtl_merge_unit_matches_golden(lookahead, rng):
    cfg = Config(partition=(12, 2, 2), cols=3, lookahead=lookahead)
    G, C = cfg.group_width, cfg.cols
    dut = Matcher(cfg)
    table_b = rng.integers(0, 3, (G, C))
    table_d = rng.integers(0, 3, (G, C))
    pack = lambda row: sum(int(v) << (2 * j) for j, v in enumerate(row))

    async def bench(ctx):
        ctx.set(dut.wr_en, 1)
        for c in range(G):
            ctx.set(dut.wr_chan, c)
            ctx.set(dut.wr_b, pack(table_b[c]))
            ctx.set(dut.wr_d, pack(table_d[c]))
            await ctx.tick()
        ctx.set(dut.wr_en, 0)
        for trial in range(60):
            use_d = trial % 2
            table = table_d if use_d else table_b
            chans = sorted(rng.choice(G, rng.integers(0, G + 1), replace=False).tolist())
            if trial % 7 == 0:
                chans = list(range(G))                   # no step skipped
            ctx.set(dut.use_d, use_d)
            issued = []
            left = set(chans)
            while left:
                ctx.set(dut.steps, sum(1 << c for c in left))
                assert ctx.get(dut.head_valid)
                head = ctx.get(dut.head)
                second = ctx.get(dut.second) if ctx.get(dut.second_valid) else None
                issued.append((head, second))
                left -= {head, second}
            ctx.set(dut.steps, 0)
            assert not ctx.get(dut.head_valid)
            assert issued == match(chans, table, lookahead), f"trial {trial}"

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
