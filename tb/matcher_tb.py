"""cocotb testbench of the emitted matcher Verilog.

A driver runs tile groups as the engine does: pass A writes random row and
column states (some rows and columns absent) in channel order, each channel
with its need bits for passes B, C and D (the last write sometimes on pass B's
first slot); then each pass runs a first slot (``opening``) that loads the
window, and slots that issue (``advance``) with random stalls between them.
A monitor reads the head and partner of every issued slot; the checker holds
the whole issue sequence against :func:`golden.matcher.match` on
:func:`golden.matcher.pe_needs`, and the slots against
:func:`golden.matcher.paired_pass_slots`. Sets are random, empty, full (no step
skipped) and single. Seeded by cocotb's ``COCOTB_RANDOM_SEED``.
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


def _sets(rnd, dg, group):
    """Passes B, C and D's sets of ``dg`` channels: full, empty, single or random by turn
    (a single one is often the last, which pass A may write on pass B's first slot)."""
    shapes = (lambda: list(range(dg)), lambda: [], lambda: [rnd.choice((rnd.randrange(dg), dg - 1))],
              lambda: sorted(rnd.sample(range(dg), rnd.randrange(dg + 1))))
    return [shapes[(group + n) % 4]() if (group + n) % 5 else shapes[3]() for n in range(len(PAIRED_MODES))]


@cocotb.test()
async def matcher_sequences(dut):
    """Issue sequences of random channel sets equal the golden merge unit's."""
    rnd = random.Random(SEED)
    G, R, C, L = CFG.group_width, CFG.rows, CFG.cols, CFG.lookahead
    for port in (dut.wr_en, dut.wr_need, dut.sets__0, dut.single, dut.mode, dut.opening, dut.advance,
                 dut.recorded):
        port.value = 0
    await start(dut)
    layout = state_entry(R, C)
    mask = lambda chans: sum(1 << c for c in chans)
    for group in range(30):
        dg = G if group % 4 == 0 else rnd.randint(1, G)        # channels pass A writes
        sq = np.array([[rnd.randrange(3) for _ in range(G)] for _ in range(R)])
        sk = np.array([[rnd.randrange(3) for _ in range(G)] for _ in range(C)])
        rv, cv = rnd.randint(1, R), rnd.randint(1, C)          # rows and columns the tile group has
        sets = _sets(rnd, dg, group)

        def write(c):
            dut.wr_en.value = 1
            dut.wr_chan.value = c
            dut.wr_data.value = pack(layout, {"sq": [int(sq[i, c]) if i < rv else INVALID for i in range(R)],
                                              "sk": [int(sk[j, c]) if j < cv else INVALID for j in range(C)]})
            dut.wr_need.value = sum(1 << k for k, chans in enumerate(sets) if c in chans)

        late = rnd.random() < 0.5                              # pass A's last write on pass B's first slot
        for c in range(dg - late):
            write(c)
            await FallingEdge(dut.clk)
        dut.wr_en.value = 0
        for p, (mode, chans) in enumerate(zip(PAIRED_MODES, sets)):
            dut.mode.value = int(mode)
            dut.sets__0.value = mask(chans)
            dut.recorded.value = mask(chans)
            dut.opening.value = 1
            for wait in range(rnd.randint(1, 2)):              # the first slot may wait to drain
                if late and p == 0 and wait == 0:
                    write(dg - 1)
                await ReadOnly()
                assert not int(dut.found__0.value) and int(dut.more.value), f"seed={SEED} group {group}: first slot"
                await FallingEdge(dut.clk)
                dut.wr_en.value = 0
            dut.opening.value = 0
            left, issued, slots = set(chans), [], FILL_SLOTS
            while True:
                dut.sets__0.value = mask(left)
                stall = rnd.random() < 0.2
                dut.advance.value = int(not stall)
                await ReadOnly()
                if not int(dut.found__0.value):
                    assert not left and not int(dut.more.value), f"seed={SEED} group {group}: lost {sorted(left)}"
                    slots += 1                                 # the empty pass's one slot
                    await FallingEdge(dut.clk)
                    break
                head = int(dut.chan__0.value)
                second = int(dut.chan__1.value) if int(dut.found__1.value) else None
                after = left - {head, second}
                rest = int(dut.rest__0.value)
                assert rest == mask(after) and int(dut.more.value) == bool(after), \
                    f"seed={SEED} group {group}: rest {rest:b}, left {sorted(after)}"
                await FallingEdge(dut.clk)
                if not stall:
                    issued.append((head, second))
                    left, slots = after, slots + 1
                    if not left:
                        break
                if len(issued) > G:
                    raise AssertionError(f"seed={SEED} group {group}: no end")
            dut.advance.value = 0
            want = match(chans, pe_needs(mode, sq[:rv], sk[:cv], CFG.pe.kind), L)
            assert issued == want, f"seed={SEED} group {group} {mode!r} set {chans}: RTL {issued} != golden {want}"
            assert slots == paired_pass_slots(len(want)), f"seed={SEED} group {group}: {slots} slots"
            await FallingEdge(dut.clk)
