"""The matcher's RTL merge unit in Amaranth's simulator, against the golden pairing rules."""

import pytest
from amaranth.sim import Simulator

from golden import Config
from golden.matcher import match
from hw.matcher import Matcher


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
