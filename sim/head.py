"""The whole attention head on the simulated RTL: ``S~`` on the array, the softmax
unit, then ``P V~`` on the array, one stage after the other.

Each stage runs its own emitted Verilog under cocotb, and its bench checks it
bit for bit against golden and cycle for cycle against its model:

* ``qk``: :func:`sim.simulate.simulate`, the engine as ``kaleido sim attention`` runs it;
* ``softmax``: :mod:`hw.softmax` on every row of the scores the array drained
  (``tb.softmax_head_tb``);
* ``pv``: ``P V~`` on the same engine, as a product of final operands (the
  dense schedule: V's reuse is not exploited on the array yet).

The stages do not overlap, so the head's cycles are their sum.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from golden import pair_reuse
from golden.head_cycles import STAGES, baseline_head_cycles, pv_config
from golden.softmax import softmax_scale

from . import runner
from .common import UserError
from .simulate import first_failure, follow_progress, simulate

__all__ = ["STAGES", "pv_config", "simulate_head", "baseline_head_cycles", "run_softmax"]


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
        raise UserError(f"softmax RTL failed under {simulator}: " + first_failure(result.log)
                        + f" (log: {result.log})")
    out = json.loads((work / "softmax.json").read_text())
    out["probs"] = np.load(work / "probs.npy")
    return out


def simulate_head(cfg, q, k, v, scale: float, design: str, simulator: str, work: Path,
                  waves: bool = False, variant: str = "pe", schedule: str = "auto") -> dict:
    """Run the head's three stages on the RTL.

    Returns the ``qk`` stage's result (as :func:`sim.simulate.simulate` gives it)
    under ``"qk"``, ``probs`` and ``out`` (int64 ``[N, D]``), and ``stages``:
    per stage, RTL ``cycles`` and ``model_cycles``.
    """
    work = Path(work).resolve()
    qk = simulate(cfg, q, k, design, simulator, work / "qk", waves,
                  label=f"S~ on the {design} array ({simulator})", variant=variant, schedule=schedule)
    soft = run_softmax(cfg, qk["scores"], scale, simulator, work / "softmax",
                       f"softmax unit ({simulator})", waves)
    values = pair_reuse(v, cfg).approx if design == "kaleido" else v
    pv = simulate(pv_config(cfg), soft["probs"], np.ascontiguousarray(values.T), design, simulator,
                  work / "pv", waves, label=f"P V~ on the {design} array ({simulator})", product="gemm")
    stages = {
        "qk": {"cycles": qk["cycles"], "model_cycles": qk["model"]["cycles"]},
        "softmax": {"cycles": soft["cycles"], "model_cycles": soft["model_cycles"]},
        "pv": {"cycles": pv["cycles"], "model_cycles": pv["model"]["cycles"]},
    }
    return {"qk": qk, "probs": soft["probs"], "out": pv["scores"], "stages": stages}
