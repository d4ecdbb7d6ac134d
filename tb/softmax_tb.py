"""cocotb testbench of the emitted softmax vector unit.

A driver plays every row three times (the unit's three passes) with random
gaps in ``valid``; a monitor takes the code beats with random gaps in
``ready``; the model is :func:`golden.softmax.softmax_codes`, and the checker
holds each row's codes against it, then the cycles of a gap-free run against
:func:`golden.softmax.softmax_cycles`. Rows are random and adversarial (all
equal, one dominant, extreme scores at both ends of the score width, ties), at
random and extreme scales. Seeded by ``COCOTB_RANDOM_SEED``.
"""

from __future__ import annotations

import os
import random

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from golden.config import Config
from golden.softmax import softmax_codes, softmax_cycles, softmax_spec

from .common import start
from .softmax_rows import ROW_KINDS, head_scale, row_scores

SEED = cocotb.RANDOM_SEED       # COCOTB_RANDOM_SEED, which the runner sets from the test's seed
CFG = Config.from_json(os.environ["KALEIDO_CONFIG"]) if "KALEIDO_CONFIG" in os.environ else Config()

def _beats(row, lanes):
    padded = list(row) + [0] * (-len(row) % lanes)
    return [padded[i:i + lanes] for i in range(0, len(padded), lanes)]


class Driver:
    """Plays rows into ``scores``, each three times; ``gaps`` is the chance of an idle cycle."""

    def __init__(self, dut, lanes, bits, rnd, gaps):
        self.dut, self.lanes, self.bits, self.rnd, self.gaps = dut, lanes, bits, rnd, gaps
        self.first_take = None

    def _pack(self, beat):
        return sum((v & ((1 << self.bits) - 1)) << (self.bits * j) for j, v in enumerate(beat))

    async def play(self, rows, cycle):
        dut = self.dut
        for row in rows:
            for _ in range(3):
                for beat in _beats(row, self.lanes):
                    while self.rnd.random() < self.gaps:
                        dut.scores__valid.value = 0
                        await FallingEdge(dut.clk)
                    dut.scores__valid.value = 1
                    dut.scores__payload.value = self._pack(beat)
                    while True:
                        await ReadOnly()
                        taken = int(dut.scores__ready.value)
                        if taken and self.first_take is None:
                            self.first_take = cycle[0]
                        await FallingEdge(dut.clk)
                        if taken:
                            break
        dut.scores__valid.value = 0


class Monitor:
    """Takes code beats from ``codes`` with random backpressure; keeps each beat and its cycle."""

    def __init__(self, dut, lanes, rnd, stalls):
        self.dut, self.lanes, self.rnd, self.stalls = dut, lanes, rnd, stalls
        self.beats, self.last_cycle = [], None

    async def take(self, count, cycle):
        dut = self.dut
        while len(self.beats) < count:
            dut.codes__ready.value = int(self.rnd.random() >= self.stalls)
            await ReadOnly()
            if int(dut.codes__valid.value) and int(dut.codes__ready.value):
                word = int(dut.codes__payload.value)
                self.beats.append([(word >> (7 * j)) & 0x7F for j in range(self.lanes)])
                self.last_cycle = cycle[0]
            await FallingEdge(dut.clk)


async def _count(dut, cycle):
    while True:
        await RisingEdge(dut.clk)
        cycle[0] += 1


async def _run(dut, rows, mult, shift, rnd, gaps, stalls):
    lanes, n = CFG.vector_lanes, CFG.tokens
    dut.mult.value, dut.shift.value = mult, shift
    cycle = [0]
    counter = cocotb.start_soon(_count(dut, cycle))
    driver = Driver(dut, lanes, CFG.acc_bits, rnd, gaps)
    monitor = Monitor(dut, lanes, rnd, stalls)
    beats = -(-n // lanes)
    feeding = cocotb.start_soon(driver.play(rows, cycle))
    await monitor.take(beats * len(rows), cycle)
    await feeding
    counter.cancel()
    got = np.array([sum(monitor.beats[r * beats:(r + 1) * beats], [])[:n] for r in range(len(rows))])
    return got, monitor.last_cycle - driver.first_take + 1


@cocotb.test()
async def softmax_rows(dut):
    """Codes of random and adversarial rows equal the golden softmax, under
    random gaps and backpressure; a gap-free run takes the model's cycles."""
    rnd = random.Random(SEED)
    spec = softmax_spec(CFG.tokens, CFG.acc_bits)
    dut.scores__valid.value = 0
    dut.codes__ready.value = 0
    await start(dut)
    for trial in range(12):
        mult, shift = head_scale(rnd, trial)
        rows = [row_scores(ROW_KINDS[(trial + r) % len(ROW_KINDS)], CFG.tokens, CFG.acc_bits, rnd)
                for r in range(3)]
        gaps, stalls = (0.0, 0.0) if trial % 3 == 0 else (0.3, 0.3)
        got, cycles = await _run(dut, rows, mult, shift, rnd, gaps, stalls)
        want = softmax_codes(np.array(rows, dtype=np.int64), mult, shift, spec)
        assert np.array_equal(got, want), (
            f"seed={SEED} trial {trial} mult={mult} shift={shift}: RTL {got.tolist()} != golden {want.tolist()}")
        if not gaps and not stalls:
            model = softmax_cycles(spec, CFG.vector_lanes, len(rows))
            assert cycles == model, f"seed={SEED} trial {trial}: {cycles} cycles, model {model}"
        await FallingEdge(dut.clk)
