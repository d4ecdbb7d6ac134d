"""The matcher's RTL merge unit in Amaranth's simulator, against the golden pairing rules."""

import pytest
from amaranth.sim import Simulator

from golden import Config
from golden.matcher import PAIRED_MODES, match, pe_needs
from golden.pe import Mode
from hw.matcher import INVALID, Matcher


@pytest.mark.parametrize("accumulators", [3, 4])
@pytest.mark.parametrize("lookahead", [1, 2, 4, 8])
def test_rtl_merge_unit_matches_golden(lookahead, accumulators, rng):
    cfg = Config(partition=(12, 2, 2), rows=2, cols=3, lookahead=lookahead, accumulators=accumulators)
    G, R, C = cfg.group_width, cfg.rows, cfg.cols
    dut = Matcher(cfg)
    sq = rng.integers(0, 3, (R, G))
    sk = rng.integers(0, 3, (C, G))
    rv = int(rng.integers(1, R + 1))             # rows and columns the tile group has
    cv = int(rng.integers(1, C + 1))
    code = lambda states, valid: [int(s) if n < valid else INVALID for n, s in enumerate(states)]

    async def bench(ctx):
        ctx.set(dut.wr_en, 1)
        for c in range(G):
            ctx.set(dut.wr_chan, c)
            ctx.set(dut.wr_data, {"sq": code(sq[:, c], rv), "sk": code(sk[:, c], cv)})
            await ctx.tick()
        ctx.set(dut.wr_en, 0)
        for trial in range(45):
            mode = PAIRED_MODES[trial % 3]
            needs = pe_needs(mode, sq[:rv], sk[:cv], accumulators)
            chans = sorted(rng.choice(G, rng.integers(0, G + 1), replace=False).tolist())
            if trial % 7 == 0:
                chans = list(range(G))                   # no step skipped
            ctx.set(dut.mode, mode)
            issued = []
            left = set(chans)
            while left:
                ctx.set(dut.sets[0], sum(1 << c for c in left))
                assert ctx.get(dut.found[0])
                head = ctx.get(dut.chan[0])
                second = ctx.get(dut.chan[1]) if ctx.get(dut.found[1]) else None
                issued.append((head, second))
                left -= {head, second}
                # The set the engine keeps for the next slot.
                assert ctx.get(dut.rest[0]) == sum(1 << c for c in left) and ctx.get(dut.more) == bool(left)
                assert ctx.get(dut.choice[0].take) == 1 + 2 * (second is not None)
            ctx.set(dut.sets[0], 0)
            assert not ctx.get(dut.found[0])
            assert issued == match(chans, needs, lookahead), f"trial {trial}, mode {mode!r}"
            if chans:                                    # single: the head alone
                ctx.set(dut.single, 1)
                ctx.set(dut.sets[0], sum(1 << c for c in chans))
                assert not ctx.get(dut.found[1]) and ctx.get(dut.chan[0]) == chans[0]
                assert ctx.get(dut.rest[0]) == sum(1 << c for c in chans[1:])
                ctx.set(dut.single, 0)
        ctx.set(dut.mode, Mode.A)                        # pass A pairs nothing
        ctx.set(dut.sets[0], 0b11)
        assert ctx.get(dut.found[0]) and not ctx.get(dut.found[1])

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
