"""cocotb testbench of the emitted scheduler Verilog.

A feeder offers one string per cycle whenever the unit is ready; a monitor
records each assignment and the cycle it appeared on (counted from the first
string's cycle); the checker holds both against :func:`golden.scheduler.schedule`.

Input: ``$KALEIDO_WORK/sched_in.json`` with one or more named streams
(``{"q": {"strings": [...], "last": [...]}, ...}``), each run from reset.
Output: ``sched_out.json`` with, per stream, ``clusters``, ``cycles`` and ``groups``
(per channel group, the cycle by which all its clusters exist:
:func:`golden.cycle_model.group_ready`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly

from golden.cycle_model import group_ready
from golden.scheduler import Assignment, schedule
from tb.harness import design_point, reset

WORK = Path(os.environ.get("KALEIDO_WORK", "."))
CFG = design_point()


async def run_stream(dut, strings, last):
    """Feed one stream from reset; return [(cluster, cycle)]."""
    dut.in_valid.value = 0
    await reset(dut)
    got, idx, cycle = [], 0, 0
    while len(got) < len(strings):
        if idx < len(strings):
            dut.in_valid.value = 1
            dut.in_string.value = strings[idx]
            dut.in_last.value = int(last[idx])
        else:
            dut.in_valid.value = 0
        await ReadOnly()
        ready = int(dut.in_ready.value)
        # out_valid decodes the FSM state; Icarus may show X until the state first
        # changes, which only ever happens while nothing is valid.
        if str(dut.out_valid.value) == "1":
            got.append((int(dut.out_cluster.value), cycle))
        await FallingEdge(dut.clk)
        if ready and idx < len(strings):
            idx += 1
        cycle += 1
        if cycle > (CFG.queue_depth + 4) * len(strings) + 64 * CFG.clusters + 100:
            raise AssertionError(f"scheduler stalled after {len(got)} of {len(strings)} assignments")
    return got


@cocotb.test()
async def scheduler_streams(dut):
    """Every stream clustered exactly as the golden model, cycle for cycle."""
    Clock(dut.clk, 10, unit="ns").start()
    streams = json.loads((WORK / "sched_in.json").read_text())
    out = {}
    for name, s in streams.items():
        got = await run_stream(dut, s["strings"], s["last"])
        want, sizes = schedule(s["strings"], s["last"], CFG)
        expected = [(a.cluster, a.cycle) for a in want]
        if got != expected:
            first = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
            raise AssertionError(f"stream {name}: assignment {first}: RTL {got[first]} != "
                                 f"golden {expected[first]}")
        out[name] = {"clusters": [c for c, _ in got], "cycles": [t for _, t in got],
                     "groups": group_ready([Assignment(c, t) for c, t in got], s["last"])}
    (WORK / "sched_out.json").write_text(json.dumps(out))
