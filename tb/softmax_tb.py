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

import random

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge

from golden.softmax import softmax_codes, softmax_cycles, softmax_spec
from tb.harness import design_point, start

from .softmax_agents import run_rows
from .softmax_rows import ROW_KINDS, head_scale, row_scores

SEED = cocotb.RANDOM_SEED       # COCOTB_RANDOM_SEED, which the runner sets from the test's seed
CFG = design_point()

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
        got, cycles = await run_rows(dut, CFG, rows, mult, shift, rnd, gaps, stalls)
        want = softmax_codes(np.array(rows, dtype=np.int64), mult, shift, spec)
        assert np.array_equal(got, want), (
            f"seed={SEED} trial {trial} mult={mult} shift={shift}: RTL {got.tolist()} != golden {want.tolist()}")
        if not gaps and not stalls:
            model = softmax_cycles(spec, CFG.vector_lanes, len(rows))
            assert cycles == model, f"seed={SEED} trial {trial}: {cycles} cycles, model {model}"
        await FallingEdge(dut.clk)
