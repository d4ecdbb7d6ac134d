"""The whole attention head on the simulated RTL: ``S~`` on the array, the softmax
unit, then ``P V~`` on the array, one stage after the other.

Each stage runs its own emitted Verilog under cocotb, and its bench checks it
bit for bit against golden and cycle for cycle against its model:

* ``qk``: :func:`sim.rtl.simulate.simulate`, the engine as ``kaleido sim attention`` runs it;
* ``softmax``: :mod:`hw.core.softmax` on every row of the scores the array drained
  (``tb.softmax_head_tb``);
* ``pv``: ``P V~`` on the same engine, as products of final operands: on the
  Kaleido array one run per column tile of :mod:`golden.pv_tiles` (V's reuse as
  the shared multiply, each tile over its own keys), or the dense product
  where that would take more cycles (:func:`golden.head_cycles.pv_cycles`).

The stages do not overlap, so the head's cycles are their sum.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from golden import pair_reuse
from golden.head_cycles import STAGES, baseline_head_cycles, pv_config, pv_cycles
from golden.softmax import softmax_scale
from sim.rtl import runner
from sim.rtl.simulate import WAVE_SUFFIXES, bench_failed, follow_progress, simulate

__all__ = ["STAGES", "pv_config", "simulate_head", "baseline_head_cycles", "run_softmax", "run_pv"]


def run_softmax(cfg, scores: np.ndarray, scale: float, simulator: str, work: Path, label: str,
                waves: bool = False) -> dict:
    """Every row of ``scores`` through the softmax unit's RTL; return ``probs`` and cycles."""
    work.mkdir(parents=True, exist_ok=True)
    mult, shift = softmax_scale(scale)
    np.save(work / "scores.npy", scores)
    (work / "softmax_in.json").write_text(json.dumps({"mult": mult, "shift": shift}))
    with follow_progress(work, label, "beats"):
        result = runner.run("softmax", cfg, simulator, "tb.softmax_head_tb", work,
                            env={"KALEIDO_WORK": str(work)}, waves=waves)
    if not result.ok:
        raise bench_failed("softmax RTL", simulator, result)
    out = json.loads((work / "softmax.json").read_text())
    out["probs"] = np.load(work / "probs.npy")
    return out


def run_pv(cfg, probs: np.ndarray, v: np.ndarray, design: str, simulator: str, work: Path,
           waves: bool = False, schedule: str = "auto") -> dict:
    """``P V~`` on the RTL; return ``out`` (int64 ``[N, D]``) and the stage's
    ``cycles`` (the runs' sum), ``model_cycles`` (the head's model), ``schedule``,
    ``runs``, ``tile_groups`` and ``executed_macs``."""
    work.mkdir(parents=True, exist_ok=True)
    pv_cfg, kaleido = pv_config(cfg), design == "kaleido"
    plan = pv_cycles(probs, v, cfg, schedule) if kaleido else None
    if plan is None or plan["schedule"] == "dense":
        values = pair_reuse(v, cfg).approx if kaleido else v
        r = simulate(pv_cfg, probs, np.ascontiguousarray(values.T), design, simulator, work, waves,
                     label=f"P V~ on the {design} array ({simulator})", product="gemm")
        return {"out": r["scores"], "cycles": r["cycles"],
                "model_cycles": plan["cycles"] if plan else r["model"]["cycles"], "schedule": "dense",
                "runs": 1, "tile_groups": r["model"]["tiles"], "executed_macs": r["executed_macs"]}
    out = np.zeros((cfg.tokens, cfg.head_dim), np.int64)
    res = {"cycles": 0, "model_cycles": plan["cycles"], "schedule": "shared", "runs": len(plan["tiles"]),
           "tile_groups": 0, "executed_macs": 0}
    for i, tile in enumerate(plan["tiles"]):
        # One engine, built for the longest tile, runs every tile over its own keys.
        # A row entry holds P[i, n0] and, where n0 has a folded partner, P[i, n1]: the
        # engine adds them as the row enters the array.
        r = simulate(pv_cfg, probs[:, tile.keys], np.ascontiguousarray(tile.v.T), design, simulator, work,
                     waves, label=f"P V~ tile {i + 1}/{len(plan['tiles'])} on the kaleido array ({simulator})",
                     product="gemm", depth=cfg.tokens, fold=tile.fold)
        out[:, tile.channels] = r["scores"]
        res["cycles"] += r["cycles"]
        res["tile_groups"] += r["model"]["tiles"]
        res["executed_macs"] += r["executed_macs"]
        if waves:
            for f in [f for f in work.rglob("*") if f.suffix in WAVE_SUFFIXES and not f.name.startswith("tile")]:
                f.rename(work / f"tile{i}_{f.name}")
    res["out"] = out
    return res


def simulate_head(cfg, q, k, v, scale: float, design: str, simulator: str, work: Path,
                  waves: bool = False, schedule: str = "auto",
                  pv_schedule: str = "auto") -> dict:
    """Run the head's three stages on the RTL.

    Returns the ``qk`` stage's result (as :func:`sim.rtl.simulate.simulate` gives it)
    under ``"qk"``, ``probs`` and ``out`` (int64 ``[N, D]``), and ``stages``:
    per stage, RTL ``cycles`` and ``model_cycles`` (``pv`` also says how it ran).
    """
    work = Path(work).resolve()
    qk = simulate(cfg, q, k, design, simulator, work / "qk", waves,
                  label=f"S~ on the {design} array ({simulator})", schedule=schedule)
    soft = run_softmax(cfg, qk["scores"], scale, simulator, work / "softmax",
                       f"softmax unit ({simulator})", waves)
    pv = run_pv(cfg, soft["probs"], v, design, simulator, work / "pv", waves, pv_schedule)
    stages = {
        "qk": {"cycles": qk["cycles"], "model_cycles": qk["model"]["cycles"]},
        "softmax": {"cycles": soft["cycles"], "model_cycles": soft["model_cycles"]},
        "pv": {k: pv[k] for k in ("cycles", "model_cycles", "schedule", "runs", "tile_groups",
                                  "executed_macs")},
    }
    return {"qk": qk, "probs": soft["probs"], "out": pv["out"], "stages": stages}
