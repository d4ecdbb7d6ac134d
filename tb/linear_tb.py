"""cocotb testbench of a linear layer ``Y~ = X~ W`` on the attention engine's Verilog.

The same loader and monitor as :mod:`tb.attention_tb`; the image is the
windows of :mod:`golden.windows` (or the dense schedule on ``X~``, where the
cycle model says the driver takes it), and the accumulation buffer sums each
tile group's partial outputs into ``Y~^T``. The checker holds ``Y~`` against
golden (``X~ W`` for Kaleido, ``X W`` for the baseline) bit for bit, and cycles
and lane work against :mod:`golden.linear_cycles`.

Inputs, in ``$KALEIDO_WORK``: ``x.npy`` (int8 ``[N, heads*D]``), ``w.npy``
(int8 ``[heads*D, O]``); ``$KALEIDO_HEAD_CONFIG`` is the head's design point
(the engine's, ``$KALEIDO_CONFIG``, gathers every head's channels per group).
Outputs: ``out.npy`` (``Y~``, int64 ``[N, O]``) and ``rtl.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import cocotb
import numpy as np

from golden.linear import linear_layer
from golden.linear_cycles import baseline_linear_cycles, kaleido_linear_cycles
from hw.host.engine_image import baseline_image, check_run, linear_image
from tb.harness import design_point, start

from .attention_tb import run_image

WORK = Path(os.environ.get("KALEIDO_WORK", "."))
DESIGN = os.environ.get("KALEIDO_DESIGN", "kaleido")
SCHEDULE = os.environ.get("KALEIDO_SCHEDULE", "auto")
ENGINE_CFG = design_point()
HEAD_CFG = design_point("KALEIDO_HEAD_CONFIG") if "KALEIDO_HEAD_CONFIG" in os.environ else ENGINE_CFG


@cocotb.test()
async def linear(dut):
    """X~ W on the engine: exact outputs, and cycles equal to the cycle model."""
    x = np.load(WORK / "x.npy")
    w = np.load(WORK / "w.npy")
    n, outputs = x.shape[0], w.shape[1]
    heads = x.shape[1] // HEAD_CFG.head_dim
    dut.start.value = dut.q_wr_en.value = dut.k_wr_en.value = 0
    await start(dut)
    layer = linear_layer(x, w, HEAD_CFG)
    if DESIGN == "kaleido":
        model = kaleido_linear_cycles(x, outputs, HEAD_CFG, SCHEDULE)
        image = linear_image(x, w, HEAD_CFG, model)
        golden = layer.approx
    else:
        model = baseline_linear_cycles(n, outputs, HEAD_CFG, heads)
        image = baseline_image(np.ascontiguousarray(w.T), x, ENGINE_CFG)
        golden = layer.exact
    out, rtl = await run_image(dut, image, ENGINE_CFG, outputs, n, model)
    out = out.T
    rtl.update(dense_macs=layer.dense_macs, oracle_macs=layer.reuse_macs)
    np.save(WORK / "out.npy", out)
    (WORK / "rtl.json").write_text(json.dumps(rtl))
    check_run(out, golden, rtl, model, "outputs")
