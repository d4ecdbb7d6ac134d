"""A linear layer ``Y~ = X~ W`` on the simulated RTL, as a library: size and emit
the engine for the layer, run :mod:`tb.linear_tb` under cocotb, and return what
the bench measured. ``kaleido sim linear`` calls :func:`simulate_linear`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from golden.cycle_model import utilization
from golden.windows import linear_config, window_tables
from hw import blocks
from sim.rtl import runner
from sim.rtl.simulate import bench_failed, follow_progress

__all__ = ["simulate_linear", "buffer_words"]


def buffer_words(x: np.ndarray, outputs: int, cfg) -> tuple[int, int]:
    """Words the engine's two buffers need for either image of the layer: the
    windows (one run of a group's channels per partner) or the dense tiles."""
    lcfg = linear_config(cfg, x.shape[1] // cfg.head_dim)
    cin = x.shape[1]
    q = -(-outputs // lcfg.rows) * cin
    k = -(-x.shape[0] // lcfg.cols) * cin
    k_win = sum(-(-t.windows // lcfg.cols) * max(1, t.partners) * t.width for t in window_tables(x, cfg))
    return max(1, q), max(1, k, k_win)


def simulate_linear(cfg, x: np.ndarray, w: np.ndarray, design: str, simulator: str, work: Path,
                    schedule: str = "auto", waves: bool = False,
                    label: str = "simulating") -> dict:
    """Run ``X~ W`` (``X`` int8 ``[N, heads*D]``, ``W`` int8 ``[heads*D, O]``) on the
    RTL with ``cfg``'s dispatcher; return the bench's ``rtl.json`` plus ``out`` (``Y~``, int64 ``[N, O]``)."""
    work = Path(work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    np.save(work / "x.npy", x)
    np.save(work / "w.npy", w)
    lcfg = linear_config(cfg, x.shape[1] // cfg.head_dim)
    q_words, k_words = buffer_words(x, w.shape[1], cfg)
    matcher = design == "kaleido" and cfg.dispatch.parts[1]
    text = blocks.engine_verilog(lcfg, design, q_words, k_words, matcher=matcher)
    with follow_progress(work, label, "outputs"):
        result = runner.run(design, lcfg, simulator, "tb.linear_tb", work,
                            env={"KALEIDO_WORK": str(work), "KALEIDO_DESIGN": design,
                                 "KALEIDO_SCHEDULE": schedule, "KALEIDO_HEAD_CONFIG": cfg.to_json()},
                            waves=waves, verilog_text=text, top=blocks.engine_top(design))
    if not result.ok:
        raise bench_failed("RTL simulation", simulator, result)
    rtl = json.loads((work / "rtl.json").read_text())
    rtl["utilization"] = utilization(rtl["lane_work"], rtl["cycles"], cfg.rows * cfg.cols)
    rtl["executed_macs"] = rtl["lane_work"] / 2
    rtl["out"] = np.load(work / "out.npy")
    rtl["sim_time_ns"], rtl["test_seconds"], rtl["wall_seconds"] = (
        result.sim_time_ns, result.test_s, result.wall_s)
    return rtl
