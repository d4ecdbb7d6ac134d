"""cocotb bench: every output of a block resolves to 0 or 1 on every cycle.

Verilator is 2-state, so a register that is never given a value, or a
combinational block that never runs, reads as 0 there and the scores can still
match. Icarus is 4-state: such a signal reads X. This bench holds every input of
a block at one constant pattern (``KALEIDO_PATTERN``: ``zeros``, or ``ones``, every
bit set: the largest unsigned and the most negative operands, every valid and
flag on), resets it, clocks it and checks, on every cycle, that no output bit is
X or Z (its reset held for two cycles first). The ports come from the emitted Verilog (``KALEIDO_PORTS``, a JSON list
of ``[direction, width, name]``).
"""

from __future__ import annotations

import json
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge, Timer

PORTS = json.loads(os.environ.get("KALEIDO_PORTS", "[]"))
PATTERN = os.environ.get("KALEIDO_PATTERN", "zeros")
CYCLES = int(os.environ.get("KALEIDO_CYCLES", "24"))
RESET = os.environ.get("KALEIDO_RESET", "1") == "1"     # 0: never reset (the bench's own control)
CONTROL = ("clk", "rst")


@cocotb.test()
async def outputs_resolve(dut):
    """No output bit is X or Z, from reset on, with the inputs held at one pattern."""
    names = {name for _, _, name in PORTS}
    for direction, width, name in PORTS:
        if direction == "input" and name not in CONTROL:
            getattr(dut, name).value = 0 if PATTERN == "zeros" else (1 << width) - 1
    outputs = [name for direction, _, name in PORTS if direction == "output"]
    if "clk" not in names:                      # a combinational block: one look
        await Timer(1, unit="ns")
        edges = [None]
    else:
        Clock(dut.clk, 10, unit="ns").start()
        edges = range(CYCLES)
    if "rst" in names:
        dut.rst.value = int(RESET)
    unresolved = {}
    for cycle in edges:
        if cycle is not None:
            await RisingEdge(dut.clk)
            if cycle == 2 and "rst" in names:
                dut.rst.value = 0
            await ReadOnly()
        for name in outputs:
            value = getattr(dut, name).value
            if not value.is_resolvable:
                unresolved.setdefault(name, (cycle, str(value)))
    assert not unresolved, (
        f"with every input {PATTERN}, outputs hold X or Z: "
        + "; ".join(f"{name} = {v} at cycle {c}" for name, (c, v) in sorted(unresolved.items())))
