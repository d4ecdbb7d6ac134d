"""The system top on the simulated RTL, as a library: size a top for a job, emit
it, and run a head or a linear layer through the host driver under cocotb
(:mod:`tb.top_tb`), with random stalls on the bus."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from golden.config import Config
from golden.linear_cycles import kaleido_linear_cycles
from golden.windows import linear_config
from hw import blocks
from hw.host.engine_image import baseline_image, linear_image
from hw.host.host_driver import head_images, top_size
from sim.rtl import runner
from sim.rtl.simulate import bench_failed

__all__ = ["run_head", "run_linear"]


def _run(cfg: Config, design: str, size: dict, job: dict, tensors: dict, simulator: str, work: Path,
         seed: int) -> dict:
    work = Path(work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    for name, array in tensors.items():
        np.save(work / f"{name}.npy", array)
    (work / "job.json").write_text(json.dumps({**job, "design": design, "seed": seed}))
    text = blocks.top_verilog(cfg, design, **size)
    result = runner.run("top", cfg, simulator, "tb.top_tb", work, testcase="run_from_memory",
                        env={"KALEIDO_WORK": str(work)},
                        verilog_text=text, top=blocks.system_top(design), seed=seed)
    if not result.ok:
        raise bench_failed("system top", simulator, result)
    return {**json.loads((work / "top.json").read_text()), "size": size, "result": result}


def run_head(cfg: Config, q, k, v, scale: float, design: str, simulator: str, work: Path, seed: int = 1,
             busy: float = 0.3, schedule: str = "auto") -> dict:
    """A whole head from memory through the driver on a top sized for it; the bench checks
    it bit for bit. Returns each run's counters (``runs``) and the top's ``size``."""
    size = top_size(head_images(q, k, v, cfg, design, scale, schedule), cfg, cfg.tokens)
    return _run(cfg, design, size, {"what": "head", "busy": busy, "scale": scale,
                                                     "schedule": schedule}, {"q": q, "k": k, "v": v},
                simulator, work, seed)


def run_linear(cfg: Config, x, w, design: str, simulator: str, work: Path, seed: int = 1,
               busy: float = 0.3) -> dict:
    """``X~ W`` from memory through the driver on a top built for the layer's design point."""

    heads = x.shape[1] // cfg.head_dim
    lcfg = linear_config(cfg, heads)
    if design == "kaleido":
        image = linear_image(x, w, cfg, kaleido_linear_cycles(x, w.shape[1], cfg))
    else:
        image = baseline_image(np.ascontiguousarray(w.T), x, lcfg)
    return _run(lcfg, design, top_size([image], lcfg), {"what": "linear", "busy": busy,
                                                        "head_config": cfg.to_json()},
                {"x": x, "w": w}, simulator, work, seed)
