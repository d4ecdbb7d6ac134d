"""cocotb testbench of the attention engine's emitted Verilog.

A loader (driver) fills the operand buffers and starts the engine; a monitor
collects every drained score, column by column; the scoreboard (the
accumulation buffer) sums the partial scores into ``N x N``; the checker holds
the result against the golden model (``S~`` for Kaleido, ``Q K^T`` for the
baseline) and the cycle model, and the bench writes what it saw to
``$KALEIDO_WORK`` for ``kaleido sim attention`` to report.

Inputs, in ``$KALEIDO_WORK``: ``q.npy``, ``k.npy`` (int8 ``[N, D]``) and the
design in ``$KALEIDO_DESIGN``. With ``$KALEIDO_PRODUCT=gemm`` the operands are
final (``P`` and ``V~^T`` of the head's last stage): the engine runs its dense
schedule on them, no reuse is applied, and the golden result is ``q @ k.T``. Outputs: ``scores.npy`` and ``rtl.json``;
``progress`` is rewritten now and then with the drained-score count.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from golden.attention import expected_scores, int_gemm
from golden.config import Config
from golden.cycle_model import baseline_cycles, gemm_cycles, kaleido_cycles, kaleido_tables
from golden.scheduler import Assignment
from hw.core.engine import COUNTER_SETTLE
from hw.host.engine_image import Scoreboard, baseline_image, check_run, driver_image, gemm_image
from tb.harness import design_point, start

WORK = Path(os.environ.get("KALEIDO_WORK", "."))
DESIGN = os.environ.get("KALEIDO_DESIGN", "kaleido")
SCHEDULE = os.environ.get("KALEIDO_SCHEDULE", "auto")
PRODUCT = os.environ.get("KALEIDO_PRODUCT", "qk")        # "qk" (Q K^T with reuse) or "gemm" (final operands)
CFG = design_point()


class Loader:
    """Fills the buffers through the write ports, sets the group settings, starts."""

    def __init__(self, dut):
        self.dut = dut

    async def load(self, image):
        dut = self.dut
        for name, values in image.settings().items():
            if isinstance(values, list):
                for idx, v in enumerate(values):
                    getattr(dut, f"{name}__{idx}").value = v
            else:
                getattr(dut, name).value = values
        q, k = image.q_words, image.k_words
        for addr in range(max(len(q), len(k))):
            await FallingEdge(dut.clk)
            dut.q_wr_en.value = int(addr < len(q))
            dut.k_wr_en.value = int(addr < len(k))
            if addr < len(q):
                dut.q_wr_addr.value, dut.q_wr_data.value = addr, q[addr]
            if addr < len(k):
                dut.k_wr_addr.value, dut.k_wr_data.value = addr, k[addr]
        await FallingEdge(dut.clk)
        dut.q_wr_en.value = dut.k_wr_en.value = 0
        dut.start.value = 1
        await FallingEdge(dut.clk)
        dut.start.value = 0


class Monitor:
    """Samples each column's drain output every cycle until the engine idles."""

    def __init__(self, dut, cols, board, expected):
        self.dut, self.board, self.expected = dut, board, expected
        self.valid = [getattr(dut, f"out_valid__{j}") for j in range(cols)]
        self.data = [getattr(dut, f"out__{j}") for j in range(cols)]
        self.last_out = None

    async def run(self):
        cycle, seen = 0, 0
        await RisingEdge(self.dut.busy)
        while True:
            await ReadOnly()
            cycle += 1
            for j, v in enumerate(self.valid):
                if v.value:
                    self.board.push(j, self.data[j].value.to_signed(), cycle)
                    self.last_out = cycle
                    seen += 1
            if not self.dut.busy.value:
                break
            if cycle % 4096 == 0:
                (WORK / "progress").write_text(f"{seen} {self.expected}")
            await RisingEdge(self.dut.clk)
        (WORK / "progress").write_text(f"{seen} {self.expected}")


async def run_image(dut, image, cfg: Config, rows: int, cols: int, model):
    """Load ``image`` into the engine and collect what drains out (``rows x cols``
    results, by the scoreboard) and what the RTL counted, beside the model's figures."""
    board = Scoreboard(image, cfg, rows, cols)
    monitor = Monitor(dut, cfg.cols, board, board.expected_per_column * cfg.cols)
    watch = cocotb.start_soon(monitor.run())
    await Loader(dut).load(image)
    await watch
    for _ in range(COUNTER_SETTLE):              # the counters are pipelined
        await RisingEdge(dut.clk)
    await ReadOnly()
    rtl = {"cycles": int(dut.cycles.value), "lane_work": int(dut.lane_work.value),
           "last_out": monitor.last_out, "model": model.as_dict(), "variant": model.variant,
           "schedule": model.schedule, "ran_as": model.ran_as}
    return board.result(), rtl


@cocotb.test()
async def attention(dut):
    """Q K^T on the engine: exact scores, and cycles equal to the cycle model."""
    q = np.load(WORK / "q.npy")
    k = np.load(WORK / "k.npy")
    n_q, n_k = q.shape[0], k.shape[0]
    dut.start.value = dut.q_wr_en.value = dut.k_wr_en.value = 0
    await start(dut)
    if PRODUCT == "gemm":
        # P V~'s folded keys (golden.pv_tiles): the partner's codes, added in the engine.
        fold = np.load(WORK / "fold.npy") if (WORK / "fold.npy").exists() else None
        image = gemm_image(DESIGN, q, k, CFG, fold)
        model = gemm_cycles(n_q, n_k, CFG, DESIGN, depth=q.shape[1])
        golden = int_gemm(q if fold is None else (q.astype(np.int64) + fold), k)
    elif DESIGN == "kaleido":
        # With a scheduler, the pairs run in the order of its clusters, as the
        # scheduler RTL assigned them (sched_out.json), checked against golden.
        assignments = (None, None)
        if CFG.dispatch.parts[0]:
            sched = json.loads((WORK / "sched_out.json").read_text())
            assignments = tuple([Assignment(c, t) for c, t in zip(sched[s]["clusters"], sched[s]["cycles"])]
                                for s in ("q", "k"))
        tables = kaleido_tables(q, k, CFG, assignments)
        # The driver's choice: passes A-D, or the dense schedule where they would be slower.
        model = kaleido_cycles(q, k, CFG, tables, SCHEDULE)
        image = driver_image(q, k, CFG, model, tables)
        golden = expected_scores(q, k, CFG, DESIGN)
    else:
        image, model = baseline_image(q, k, CFG), baseline_cycles(n_q, n_k, CFG)
        golden = expected_scores(q, k, CFG, DESIGN)
    scores, rtl = await run_image(dut, image, CFG, n_q, n_k, model)
    np.save(WORK / "scores.npy", scores)
    (WORK / "rtl.json").write_text(json.dumps(rtl))
    # The checker: scores bit for bit, cycles and lane work equal to the model.
    check_run(scores, golden, rtl, model)
