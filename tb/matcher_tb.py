"""cocotb testbench of the emitted matcher Verilog.

A driver writes random row and column states (some rows and columns absent)
through the write port, then presents a pass and a channel set; a monitor
reads the head and partner the merge unit picks, removes them and presents
the rest, until the set is empty; the checker holds the whole issue sequence
against :func:`golden.matcher.match` on :func:`golden.matcher.pe_needs`. Sets
are random, empty, full (no step skipped) and single, in passes B, C and D.
Seeded by cocotb's ``COCOTB_RANDOM_SEED``.
"""

from __future__ import annotations

import os
import random

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge, ReadOnly

from golden.config import Config
from golden.matcher import PAIRED_MODES, match, pe_needs
from hw.matcher import INVALID, state_entry

from .packing import pack
from .common import start

SEED = cocotb.RANDOM_SEED       # COCOTB_RANDOM_SEED, which the runner sets from the test's seed
CFG = Config.from_json(os.environ["KALEIDO_CONFIG"]) if "KALEIDO_CONFIG" in os.environ else Config()


@cocotb.test()
async def matcher_sequences(dut):
    """Issue sequences of random channel sets equal the golden merge unit's."""
    rnd = random.Random(SEED)
    G, R, C, L = CFG.group_width, CFG.rows, CFG.cols, CFG.lookahead
    dut.wr_en.value = 0
    dut.sets__0.value = 0
    dut.single.value = 0
    dut.mode.value = 0
    await start(dut)
    sq = np.array([[rnd.randrange(3) for _ in range(G)] for _ in range(R)])
    sk = np.array([[rnd.randrange(3) for _ in range(G)] for _ in range(C)])
    rv, cv = rnd.randint(1, R), rnd.randint(1, C)       # rows and columns the tile group has
    layout = state_entry(R, C)
    dut.wr_en.value = 1
    for c in range(G):
        dut.wr_chan.value = c
        dut.wr_data.value = pack(layout, {"sq": [int(sq[i, c]) if i < rv else INVALID for i in range(R)],
                                          "sk": [int(sk[j, c]) if j < cv else INVALID for j in range(C)]})
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
        dut.mode.value = int(mode)
        left, issued = set(chans), []
        while True:
            dut.sets__0.value = sum(1 << c for c in left)
            await ReadOnly()
            if not int(dut.found__0.value):
                break
            head = int(dut.chan__0.value)
            second = int(dut.chan__1.value) if int(dut.found__1.value) else None
            issued.append((head, second))
            left -= {head, second}
            # What the engine keeps for the next slot: the set without both steps.
            rest = int(dut.rest__0.value)
            assert rest == sum(1 << c for c in left) and int(dut.more.value) == bool(left), \
                f"seed={SEED} trial {trial}: rest {rest:b}, left {sorted(left)}"
            await FallingEdge(dut.clk)
            if len(issued) > G:
                raise AssertionError(f"seed={SEED} trial {trial}: no end")
        want = match(chans, pe_needs(mode, sq[:rv], sk[:cv], CFG.accumulators), L)
        assert issued == want, f"seed={SEED} trial {trial} set {chans}: RTL {issued} != golden {want}"
        await FallingEdge(dut.clk)
