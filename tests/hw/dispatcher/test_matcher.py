"""The matcher's RTL merge unit in Amaranth's simulator, against the golden pairing rules.

A testbench drives it as the engine does, tile group after tile group: pass A
writes the table in channel order with each channel's need bits (its last
write sometimes on pass B's first slot), then passes B, C and D each run a
first slot (``opening``, held over random waits) and slots that issue when
``advance`` says so, with random stalls between them."""

import pytest
from amaranth.sim import Simulator

from golden import Config
from golden.matcher import FILL_SLOTS, PAIRED_MODES, match, paired_pass_slots, pe_needs
from golden.pe_encoding import Mode
from hw.dispatcher.matcher import INVALID, Matcher


def _sets(rng, dg, k):
    """The three passes' sets of a group of ``dg`` channels, each full, empty, single or random by
    turn (a single one is often the last, which pass A may write on pass B's first slot)."""
    shapes = (lambda: list(range(dg)), lambda: [], lambda: [int(rng.choice([rng.integers(dg), dg - 1]))],
              lambda: sorted(rng.choice(dg, rng.integers(0, dg + 1), replace=False).tolist()))
    return [shapes[(k + n) % len(shapes)]() if (k + n) % 5 else shapes[3]() for n in range(len(PAIRED_MODES))]


@pytest.mark.parametrize("accumulators", [3, 4])
@pytest.mark.parametrize("lookahead", [1, 2, 4, 8])
def test_rtl_merge_unit_matches_golden(lookahead, accumulators, rng):
    cfg = Config(partition=(12, 2, 2), rows=2, cols=3, lookahead=lookahead, accumulators=accumulators)
    G, R, C = cfg.group_width, cfg.rows, cfg.cols
    dut = Matcher(cfg)
    mask = lambda chans: sum(1 << c for c in chans)
    code = lambda states, valid: [int(s) if n < valid else INVALID for n, s in enumerate(states)]

    async def bench(ctx):
        for group in range(18):
            dg = G if group % 4 == 0 else int(rng.integers(1, G + 1))     # channels pass A writes
            sq, sk = rng.integers(0, 3, (R, G)), rng.integers(0, 3, (C, G))
            rv, cv = int(rng.integers(1, R + 1)), int(rng.integers(1, C + 1))
            sets = _sets(rng, dg, group)

            def write(c):
                ctx.set(dut.wr_en, 1)
                ctx.set(dut.wr_chan, c)
                ctx.set(dut.wr_data, {"sq": code(sq[:, c], rv), "sk": code(sk[:, c], cv)})
                ctx.set(dut.wr_need, sum(1 << k for k, chans in enumerate(sets) if c in chans))

            # Pass A writes in channel order; its last write may fall on pass B's first slot.
            late = rng.random() < 0.5
            for c in range(dg - late):
                write(c)
                await ctx.tick()
            ctx.set(dut.wr_en, 0)
            for p, (mode, chans) in enumerate(zip(PAIRED_MODES, sets)):
                ctx.set(dut.mode, mode)
                ctx.set(dut.sets[0], mask(chans))
                ctx.set(dut.recorded, mask(chans))
                ctx.set(dut.opening, 1)
                for wait in range(int(rng.integers(1, 3))):  # the first slot may wait to drain
                    if late and p == 0 and wait == 0:
                        write(dg - 1)
                    assert not ctx.get(dut.found[0]) and ctx.get(dut.more)       # known a slot later
                    await ctx.tick()
                    ctx.set(dut.wr_en, 0)
                ctx.set(dut.opening, 0)
                issued, left, slots = [], set(chans), FILL_SLOTS
                if not chans:                            # the pass has nothing: one empty slot ends it
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
                        f"group {group}: rest {ctx.get(dut.rest[0]):b}, left {sorted(after)}"
                    await ctx.tick()
                    if not stall:
                        issued.append((head, second))
                        left, slots = after, slots + 1
                    assert len(issued) <= G, f"group {group}: no end"
                ctx.set(dut.advance, 0)
                needs = pe_needs(mode, sq[:rv], sk[:cv], accumulators)
                assert issued == match(chans, needs, lookahead), f"group {group}, mode {mode!r}"
                assert slots == paired_pass_slots(len(issued))
                if chans:                                # single: the lowest alone, from the first slot
                    ctx.set(dut.single, 1)
                    ctx.set(dut.opening, 1)
                    ctx.set(dut.sets[0], mask(chans))
                    ctx.set(dut.recorded, mask(chans))
                    assert ctx.get(dut.found[0]) and not ctx.get(dut.found[1]) and ctx.get(dut.chan[0]) == chans[0]
                    assert ctx.get(dut.rest[0]) == mask(chans[1:]) and ctx.get(dut.more) == (len(chans) > 1)
                    ctx.set(dut.single, 0)
                    ctx.set(dut.opening, 0)
        # Pass A pairs nothing (every PE takes both lanes), whatever its window holds.
        ctx.set(dut.wr_en, 1)
        for c in range(G):
            ctx.set(dut.wr_chan, c)
            ctx.set(dut.wr_data, {"sq": [0] * R, "sk": [0] * C})
            ctx.set(dut.wr_need, 1)
            await ctx.tick()
        ctx.set(dut.wr_en, 0)
        ctx.set(dut.mode, Mode.A)
        ctx.set(dut.opening, 1)
        ctx.set(dut.recorded, mask(range(G)))
        await ctx.tick()
        ctx.set(dut.opening, 0)
        assert ctx.get(dut.found[0]) and not ctx.get(dut.found[1])

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
