"""cocotb testbench of the emitted PE Verilog (augmented and baseline).

Separate pieces, as in a bigger bench: a driver puts one cycle's inputs on the
pins, a monitor samples what the PE shows after the clock edge, a reference
model (the golden PE) predicts it, and a checker compares the two. Random
stimulus is seeded by cocotb's ``COCOTB_RANDOM_SEED``, printed in every failure message.
"""

from __future__ import annotations

import os
import random

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from golden.pe import BaselinePEModel, ColIn, PEModel, RowIn
from golden.pe_encoding import Load, Mode
from golden.pe_kinds import pe_kind_of
from hw.core.baseline_pe import baseline_row_layout
from hw.core.pe import COL_FORWARDED, ROW_FORWARDED, col_layout, row_layout
from tb.forwarded import Forwarded
from tb.harness import design_point, start

from .packing import pack, unpack

SEED = cocotb.RANDOM_SEED       # COCOTB_RANDOM_SEED, which the runner sets from the test's seed
CYCLES = int(os.environ.get("KALEIDO_CYCLES", "2000"))
CFG = design_point()


def _signed(handle) -> int:
    return handle.value.to_signed()


class Stimulus:
    """Random cycles for the augmented PE: every mode, paired or not, every hand-over."""

    def __init__(self, seed):
        self.rnd = random.Random(seed)

    def augmented(self):
        r = self.rnd
        paired = r.random() < 0.3
        row = RowIn(a0=r.randrange(-128, 128), a1=r.randrange(-128, 128),
                    sq0=r.randrange(3), sq1=r.randrange(3), mode=r.choice(list(Mode)),
                    steps=r.choice([2, 3]) if paired else r.choice([0, 1, 1, 1]),
                    load=r.choices(list(Load), weights=[8, 1, 1, 1])[0],
                    drain=r.random() < 0.15)
        # The slot's steps reach the column too (an invalid row has none of its own).
        col_steps = row.steps | r.choice([0, 0, 0, 1, 3])
        col = ColIn(b0=r.randrange(256), b1=r.randrange(256), sk0=r.randrange(3), sk1=r.randrange(3),
                    steps=col_steps)
        return row, col, r.randrange(-1000, 1000), r.random() < 0.5

    def baseline(self):
        r = self.rnd
        row = dict(a=r.randrange(-128, 128), valid=r.random() < 0.8, clear=r.random() < 0.1,
                   drain=r.random() < 0.1)
        return row, r.randrange(-128, 128), r.randrange(-1000, 1000), r.random() < 0.5


class Driver:
    def __init__(self, dut, row_layout_, acc_bits):
        self.dut, self.row_layout, self.acc_bits = dut, row_layout_, acc_bits

    def drive(self, row, col_raw, out_in, out_in_valid):
        self.dut.row_in.value = pack(self.row_layout, row)
        self.dut.col_in.value = col_raw
        self.dut.drain_in__score.value = out_in & ((1 << self.acc_bits) - 1)
        self.dut.drain_in__valid.value = int(out_in_valid)


class Monitor:
    def __init__(self, dut, registers):
        self.dut, self.registers = dut, registers

    def sample(self) -> dict:
        seen = {name: _signed(getattr(self.dut, name)) for name in self.registers}
        seen["out_valid"] = int(self.dut.drain_out__valid.value)
        seen["out"] = _signed(self.dut.drain_out__score) if seen["out_valid"] else None
        return seen


class Checker:
    def __init__(self, name):
        self.name, self.checked = name, 0

    def check(self, cycle, seen, expected, stimulus):
        if seen != expected:
            raise AssertionError(f"{self.name} seed={SEED} cycle {cycle}: RTL {seen} != model "
                                 f"{expected} after {stimulus}")
        self.checked += 1


async def _begin(dut):
    # Every input defined before the first edge after reset (no X in Icarus).
    for name in ("row_in", "col_in", "drain_in__score", "drain_in__valid"):
        getattr(dut, name).value = 0
    await start(dut)


@cocotb.test()
async def augmented_pe_random(dut):
    """Random cycles against the golden PE model."""
    await _begin(dut)
    stim, model = Stimulus(SEED), PEModel(CFG.pe_acc_bits, pe_kind_of(CFG), stages=CFG.pe_stages)
    registers = tuple(f"r{k}" for k in range(CFG.accumulators))
    driver, monitor = Driver(dut, row_layout, CFG.pe_acc_bits), Monitor(dut, registers)
    checker = Checker("augmented PE")
    row_fwd, col_fwd = Forwarded(ROW_FORWARDED, RowIn()), Forwarded(COL_FORWARDED, ColIn())
    for cycle in range(CYCLES):
        await FallingEdge(dut.clk)
        row, col, out_in, out_in_valid = stim.augmented()
        driver.drive(row, pack(col_layout, col), out_in, out_in_valid)
        await RisingEdge(dut.clk)
        await ReadOnly()
        model.tick(row, col, out_in, out_in_valid)
        expected = {name: model.r[k] for k, name in enumerate(registers)}
        expected |= {"out_valid": int(model.out_valid),
                    "out": model.out if model.out_valid else None}
        checker.check(cycle, monitor.sample(), expected, (row, col))
        # An operand moves on with its step; the control every cycle.
        for port, layout, model_fwd, bundle in ((dut.row_out, row_layout, row_fwd, row),
                                                (dut.col_out, col_layout, col_fwd, col)):
            passed = unpack(layout, port.value.to_unsigned())
            expected = unpack(layout, pack(layout, model_fwd.tick(bundle, row.steps | col.steps)))
            if passed != expected:
                raise AssertionError(f"seed={SEED} cycle {cycle}: not passed on as expected: {passed} != {expected}")
    dut._log.info("checked %d cycles, seed %d", checker.checked, SEED)


@cocotb.test()
async def baseline_pe_random(dut):
    """Random cycles against the golden baseline PE model."""
    await _begin(dut)
    stim, model = Stimulus(SEED), BaselinePEModel(CFG.acc_bits, stages=CFG.pe_stages)
    driver, monitor = Driver(dut, baseline_row_layout, CFG.acc_bits), Monitor(dut, ("acc",))
    checker = Checker("baseline PE")
    for cycle in range(CYCLES):
        await FallingEdge(dut.clk)
        row, b, out_in, out_in_valid = stim.baseline()
        driver.drive(row, b & 0xFF, out_in, out_in_valid)
        await RisingEdge(dut.clk)
        await ReadOnly()
        model.tick(row["a"], b, row["valid"], row["clear"], row["drain"], out_in, out_in_valid)
        expected = {"acc": model.acc, "out_valid": int(model.out_valid),
                    "out": model.out if model.out_valid else None}
        checker.check(cycle, monitor.sample(), expected, row)
    dut._log.info("checked %d cycles, seed %d", checker.checked, SEED)
