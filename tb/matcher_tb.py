"""cocotb testbench of the emitted matcher Verilog.

A driver writes random need tables (passes B and D) through the write port,
then presents channel sets; a monitor reads the head and partner the merge unit
picks, removes them and presents the rest, until the set is empty; the checker
holds the whole issue sequence against :func:`golden.matcher.match`. Sets are
random, empty, full (no step skipped) and single. Seeded by cocotb's ``COCOTB_RANDOM_SEED``.
"""

from __future__ import annotations

import os
import random

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge, ReadOnly

from golden.config import Config
from golden.matcher import match

from .common import start

SEED = cocotb.RANDOM_SEED       # COCOTB_RANDOM_SEED, which the runner sets from the test's seed
CFG = Config.from_json(os.environ["KALEIDO_CONFIG"]) if "KALEIDO_CONFIG" in os.environ else Config()


def _pack(row):
    return sum(int(v) << (2 * j) for j, v in enumerate(row))


@cocotb.test()
async def matcher_sequences(dut):
    """Issue sequences of random channel sets equal the golden merge unit's."""
    rnd = random.Random(SEED)
    G, C, L = CFG.group_width, CFG.cols, CFG.lookahead
    dut.wr_en.value = 0
    dut.steps.value = 0
    dut.use_d.value = 0
    await start(dut)
    tables = {0: np.array([[rnd.randrange(3) for _ in range(C)] for _ in range(G)]),
              1: np.array([[rnd.randrange(3) for _ in range(C)] for _ in range(G)])}
    dut.wr_en.value = 1
    for c in range(G):
        dut.wr_chan.value = c
        dut.wr_b.value = _pack(tables[0][c])
        dut.wr_d.value = _pack(tables[1][c])
        await FallingEdge(dut.clk)
    dut.wr_en.value = 0
    for trial in range(80):
        use_d = trial % 2
        kind = trial % 5
        if kind == 0:
            chans = list(range(G))                         # no step skipped
        elif kind == 1:
            chans = []                                     # every step skipped
        elif kind == 2:
            chans = [rnd.randrange(G)]
        else:
            chans = sorted(rnd.sample(range(G), rnd.randrange(G + 1)))
        dut.use_d.value = use_d
        left, issued = set(chans), []
        while True:
            dut.steps.value = sum(1 << c for c in left)
            await ReadOnly()
            if not int(dut.head_valid.value):
                break
            head = int(dut.head.value)
            second = int(dut.second.value) if int(dut.second_valid.value) else None
            issued.append((head, second))
            await FallingEdge(dut.clk)
            left -= {head, second}
            if len(issued) > G:
                raise AssertionError(f"seed={SEED} trial {trial}: no end")
        want = match(chans, tables[use_d], L)
        assert issued == want, f"seed={SEED} trial {trial} set {chans}: RTL {issued} != golden {want}"
        await FallingEdge(dut.clk)
