"""Agents of the softmax unit's cocotb benches: a driver that plays rows into
``scores`` (each three times, the unit's three passes) with optional gaps, and a
monitor that takes code beats from ``codes`` with optional backpressure."""

from __future__ import annotations

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

__all__ = ["Driver", "Monitor", "run_rows"]


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

    def __init__(self, dut, lanes, rnd, stalls, progress=None):
        self.dut, self.lanes, self.rnd, self.stalls = dut, lanes, rnd, stalls
        self.progress = progress            # called with (beats taken, beats expected) now and then
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
                if self.progress and len(self.beats) % 4096 == 0:
                    self.progress(len(self.beats), count)
            await FallingEdge(dut.clk)
        if self.progress:
            self.progress(len(self.beats), count)


async def _count(dut, cycle):
    while True:
        await RisingEdge(dut.clk)
        cycle[0] += 1


async def run_rows(dut, cfg, rows, mult, shift, rnd, gaps=0.0, stalls=0.0, progress=None):
    """Play ``rows`` through the unit; return their codes ``[rows, n]`` and the cycles
    from the first score beat taken to the last code beat handed over."""
    lanes, n = cfg.vector_lanes, cfg.tokens
    dut.mult.value, dut.shift.value = mult, shift
    cycle = [0]
    counter = cocotb.start_soon(_count(dut, cycle))
    driver = Driver(dut, lanes, cfg.acc_bits, rnd, gaps)
    monitor = Monitor(dut, lanes, rnd, stalls, progress)
    beats = -(-n // lanes)
    feeding = cocotb.start_soon(driver.play(rows, cycle))
    await monitor.take(beats * len(rows), cycle)
    await feeding
    counter.cancel()
    got = np.array([sum(monitor.beats[r * beats:(r + 1) * beats], [])[:n] for r in range(len(rows))])
    return got, monitor.last_cycle - driver.first_take + 1
