"""The matcher's RTL merge unit in Amaranth's simulator, against the golden pairing rules.

A testbench drives it as the engine does: the table written through the write
port, then per pass a first slot (``opening``, held over random waits, with the
pass's highest channel sometimes arriving ``late`` from the write port), then
slots that issue when ``advance`` says so, with random stalls between them."""

import pytest
from amaranth.sim import Simulator

from golden import Config
from golden.matcher import FILL_SLOTS, PAIRED_MODES, match, paired_pass_slots, pe_needs
from golden.pe_encoding import Mode
from hw.dispatcher.matcher import INVALID, Matcher


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
    entry = lambda c: {"sq": code(sq[:, c], rv), "sk": code(sk[:, c], cv)}
    mask = lambda chans: sum(1 << c for c in chans)

    async def bench(ctx):
        ctx.set(dut.wr_en, 1)
        for c in range(G):
            ctx.set(dut.wr_chan, c)
            ctx.set(dut.wr_data, entry(c))
            await ctx.tick()
        ctx.set(dut.wr_en, 0)
        for trial in range(45):
            mode = PAIRED_MODES[trial % 3]
            needs = pe_needs(mode, sq[:rv], sk[:cv], accumulators)
            chans = sorted(rng.choice(G, rng.integers(0, G + 1), replace=False).tolist())
            if trial % 7 == 0:
                chans = list(range(G))                   # no step skipped
            # Pass A's last channel is recorded a cycle late: the highest of the set
            # comes through the write port on the first cycle of the first slot.
            late = bool(chans) and rng.random() < 0.5
            if late:            # until then the table holds a stale entry for it
                ctx.set(dut.wr_en, 1)
                ctx.set(dut.wr_chan, chans[-1])
                ctx.set(dut.wr_data, {"sq": rng.integers(0, 3, R).tolist(), "sk": rng.integers(0, 3, C).tolist()})
                await ctx.tick()
                ctx.set(dut.wr_en, 0)
            ctx.set(dut.mode, mode)
            ctx.set(dut.sets[0], mask(chans))
            ctx.set(dut.recorded, mask(chans))
            ctx.set(dut.opening, 1)
            for wait in range(int(rng.integers(1, 3))):  # the first slot may wait to drain
                ctx.set(dut.late, late and wait == 0)
                ctx.set(dut.wr_en, late and wait == 0)
                if late and wait == 0:
                    ctx.set(dut.wr_chan, chans[-1])
                    ctx.set(dut.wr_data, entry(chans[-1]))
                assert not ctx.get(dut.found[0]) and ctx.get(dut.more)       # known a slot later
                await ctx.tick()
            ctx.set(dut.opening, 0)
            ctx.set(dut.late, 0)
            ctx.set(dut.wr_en, 0)
            issued = []
            left = set(chans)
            slots = FILL_SLOTS
            if not chans:                                # the fill found nothing: one empty slot ends the pass
                assert not ctx.get(dut.found[0]) and not ctx.get(dut.more)
                slots += 1
            while left:
                # The engine feeds back what the slot leaves.
                ctx.set(dut.sets[0], mask(left))
                stall = rng.random() < 0.2
                ctx.set(dut.advance, not stall)
                assert ctx.get(dut.found[0])
                head = ctx.get(dut.chan[0])
                second = ctx.get(dut.chan[1]) if ctx.get(dut.found[1]) else None
                assert ctx.get(dut.choice[0].take) == 1 + 2 * (second is not None)
                after = left - {head, second}
                assert ctx.get(dut.rest[0]) == mask(after) and ctx.get(dut.more) == bool(after), \
                    f"trial {trial}: rest {ctx.get(dut.rest[0]):b}, left {sorted(after)}"
                await ctx.tick()
                if not stall:
                    issued.append((head, second))
                    left, slots = after, slots + 1
                assert len(issued) <= G, f"trial {trial}: no end"
            ctx.set(dut.advance, 0)
            assert issued == match(chans, needs, lookahead), f"trial {trial}, mode {mode!r}"
            assert slots == paired_pass_slots(len(issued))
            if chans:                                    # single: the lowest alone, from the first slot
                ctx.set(dut.single, 1)
                ctx.set(dut.opening, 1)
                ctx.set(dut.sets[0], mask(chans))
                ctx.set(dut.recorded, mask(chans))
                ctx.set(dut.late, late)
                ctx.set(dut.wr_chan, chans[-1])
                assert ctx.get(dut.found[0]) and not ctx.get(dut.found[1]) and ctx.get(dut.chan[0]) == chans[0]
                assert ctx.get(dut.rest[0]) == mask(chans[1:]) and ctx.get(dut.more) == (len(chans) > 1)
                ctx.set(dut.single, 0)
                ctx.set(dut.opening, 0)
                ctx.set(dut.late, 0)
        ctx.set(dut.mode, Mode.A)                        # pass A pairs nothing
        ctx.set(dut.opening, 1)
        ctx.set(dut.recorded, 0b11)
        await ctx.tick()
        ctx.set(dut.opening, 0)
        assert ctx.get(dut.found[0]) and not ctx.get(dut.found[1])

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
