"""cocotb testbench of the emitted matcher Verilog.

A driver writes random row and column states (some rows and columns absent)
through the write port, then runs passes as the engine does: a first slot
(``opening``) that loads the window, with the pass's highest channel sometimes
arriving ``late`` through the write port, then slots that issue (``advance``)
with random stalls between them. A monitor reads the head and partner of
every issued slot; the checker holds the whole issue sequence against
:func:`golden.matcher.match` on :func:`golden.matcher.pe_needs`, and the
slots against :func:`golden.matcher.paired_pass_slots`. Sets are random,
empty, full (no step skipped) and single, in passes B, C and D. Seeded by
cocotb's ``COCOTB_RANDOM_SEED``.
"""

from __future__ import annotations

import random

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge, ReadOnly

from golden.matcher import FILL_SLOTS, PAIRED_MODES, match, paired_pass_slots, pe_needs
from hw.dispatcher.dispatch import state_entry
from hw.dispatcher.matcher import INVALID
from tb.harness import design_point, start

from .packing import pack

SEED = cocotb.RANDOM_SEED       # COCOTB_RANDOM_SEED, which the runner sets from the test's seed
CFG = design_point()


@cocotb.test()
async def matcher_sequences(dut):
    """Issue sequences of random channel sets equal the golden merge unit's."""
    rnd = random.Random(SEED)
    G, R, C, L = CFG.group_width, CFG.rows, CFG.cols, CFG.lookahead
    for port in (dut.wr_en, dut.sets__0, dut.single, dut.mode, dut.opening, dut.advance, dut.recorded, dut.late):
        port.value = 0
    await start(dut)
    sq = np.array([[rnd.randrange(3) for _ in range(G)] for _ in range(R)])
    sk = np.array([[rnd.randrange(3) for _ in range(G)] for _ in range(C)])
    rv, cv = rnd.randint(1, R), rnd.randint(1, C)       # rows and columns the tile group has
    layout = state_entry(R, C)
    entry = lambda c: pack(layout, {"sq": [int(sq[i, c]) if i < rv else INVALID for i in range(R)],
                                    "sk": [int(sk[j, c]) if j < cv else INVALID for j in range(C)]})
    mask = lambda chans: sum(1 << c for c in chans)
    dut.wr_en.value = 1
    for c in range(G):
        dut.wr_chan.value = c
        dut.wr_data.value = entry(c)
        await FallingEdge(dut.clk)
    dut.wr_en.value = 0
    for trial in range(80):
        mode = PAIRED_MODES[trial % 3]
        kind = trial % 5
        if kind == 0:
            chans = list(range(G))                         # no step skipped
        elif kind == 1:
            chans = []                                     # every step skipped
        elif kind == 2:
            chans = [rnd.randrange(G)]
        else:
            chans = sorted(rnd.sample(range(G), rnd.randrange(G + 1)))
        late = bool(chans) and rnd.random() < 0.5          # pass A's last channel, recorded a cycle late
        if late:                                           # until then the table holds a stale entry for it
            dut.wr_en.value = 1
            dut.wr_chan.value = chans[-1]
            dut.wr_data.value = pack(layout, {"sq": [rnd.randrange(3) for _ in range(R)],
                                              "sk": [rnd.randrange(3) for _ in range(C)]})
            await FallingEdge(dut.clk)
            dut.wr_en.value = 0
        dut.mode.value = int(mode)
        dut.sets__0.value = mask(chans)
        dut.opening.value = 1
        for wait in range(rnd.randint(1, 2)):              # the first slot may wait to drain
            now = late and wait == 0
            dut.recorded.value = mask(chans)
            dut.late.value = int(now)
            dut.wr_en.value = int(now)
            if now:
                dut.wr_chan.value = chans[-1]
                dut.wr_data.value = entry(chans[-1])
            await ReadOnly()
            assert not int(dut.found__0.value) and int(dut.more.value), f"seed={SEED} trial {trial}: first slot"
            await FallingEdge(dut.clk)
        dut.opening.value = 0
        dut.late.value = 0
        dut.wr_en.value = 0
        left, issued, slots = set(chans), [], FILL_SLOTS
        while True:
            dut.sets__0.value = mask(left)
            stall = rnd.random() < 0.2
            dut.advance.value = int(not stall)
            await ReadOnly()
            if not int(dut.found__0.value):
                assert not left and not int(dut.more.value), f"seed={SEED} trial {trial}: lost {sorted(left)}"
                slots += 1                                 # the empty pass's one slot
                await FallingEdge(dut.clk)
                break
            head = int(dut.chan__0.value)
            second = int(dut.chan__1.value) if int(dut.found__1.value) else None
            after = left - {head, second}
            rest = int(dut.rest__0.value)
            assert rest == mask(after) and int(dut.more.value) == bool(after), \
                f"seed={SEED} trial {trial}: rest {rest:b}, left {sorted(after)}"
            await FallingEdge(dut.clk)
            if not stall:
                issued.append((head, second))
                left, slots = after, slots + 1
                if not left:
                    break
            if len(issued) > G:
                raise AssertionError(f"seed={SEED} trial {trial}: no end")
        dut.advance.value = 0
        want = match(chans, pe_needs(mode, sq[:rv], sk[:cv], CFG.pe.kind), L)
        assert issued == want, f"seed={SEED} trial {trial} set {chans}: RTL {issued} != golden {want}"
        assert slots == paired_pass_slots(len(want)), f"seed={SEED} trial {trial}: {slots} slots"
        await FallingEdge(dut.clk)
