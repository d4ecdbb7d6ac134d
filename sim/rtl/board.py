"""The board top on the simulated RTL, as a library: a product run by the host
driver over the serial pins (:mod:`tb.board_tb`), on a board top sized for it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from golden.config import Config
from hw import blocks
from hw.board.board import memory_words
from hw.board.uart import MIN_DIVISOR
from hw.host.host_driver import attention_image, top_size
from sim.rtl import runner
from sim.rtl.simulate import bench_failed

__all__ = ["run_board"]


def run_board(cfg: Config, q, k, design: str, simulator: str, work: Path, seed: int = 1,
              divisor: int = MIN_DIVISOR) -> dict:
    """``S~`` (or ``Q K^T``) of ``q``, ``k`` over the line; the bench checks it bit for
    bit and cycle for cycle. Returns the run's counters, the line's bytes and the sizes."""
    image, _ = attention_image(q, k, cfg, design)
    size = top_size([image], cfg)
    words = memory_words(cfg, design, **size)
    work = Path(work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    np.save(work / "q.npy", q)
    np.save(work / "k.npy", k)
    (work / "job.json").write_text(json.dumps({"design": design, "divisor": divisor, "mem_words": words}))
    text = blocks.board_verilog(cfg, design, divisor, words, **size)
    result = runner.run("board", cfg, simulator, "tb.board_tb", work, testcase="run_over_the_line",
                        env={"KALEIDO_WORK": str(work)}, verilog_text=text, top=blocks.board_top(design), seed=seed)
    if not result.ok:
        raise bench_failed("board top", simulator, result)
    return {**json.loads((work / "board.json").read_text()), "size": size, "mem_words": words, "result": result}
