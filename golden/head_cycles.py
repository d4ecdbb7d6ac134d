"""Cycle model of a whole attention head: ``S~`` on the array, the softmax unit,
then ``P V~`` on the array, one stage after the other (so the head's cycles
are their sum). The RTL's head (``kaleido sim attention --v``) is held against
these stage by stage."""

from __future__ import annotations

import numpy as np

from .config import Config
from .cycle_model import baseline_cycles, gemm_cycles, kaleido_cycles
from .pv_tiles import pv_tiles
from .softmax import softmax_cycles, softmax_spec

__all__ = ["STAGES", "PV_SCHEDULES", "pv_config", "softmax_model_cycles", "baseline_head_cycles",
           "kaleido_head_cycles", "pv_cycles"]

#: How ``P V~`` runs on the Kaleido array: the fewer cycles of the two, folded
#: column tiles (:mod:`golden.pv_tiles`), or the dense product of ``P`` and ``V~``.
PV_SCHEDULES = ("auto", "shared", "dense")

#: The head's stages, in order.
STAGES = ("qk", "softmax", "pv")


def pv_config(cfg: Config) -> Config:
    """The design point ``P V~`` runs at: the same array, a reduction over the ``N`` keys."""
    return cfg.with_(partition=(cfg.tokens, 0, 0), max_channels=None, acc_bits=None, pe_acc_bits=None)


def softmax_model_cycles(cfg: Config) -> int:
    """Cycles of the softmax unit on a head's ``N`` rows."""
    return softmax_cycles(softmax_spec(cfg.tokens, cfg.acc_bits), cfg.vector_lanes, cfg.tokens)


def baseline_head_cycles(cfg: Config) -> dict:
    """Per-stage cycles of the baseline array's head."""
    n = cfg.tokens
    return {"qk": baseline_cycles(n, n, cfg).cycles, "softmax": softmax_model_cycles(cfg),
            "pv": gemm_cycles(n, cfg.head_dim, pv_config(cfg), "baseline").cycles}


def pv_cycles(probs: np.ndarray, v: np.ndarray, cfg: Config, schedule: str = "auto") -> dict:
    """Cycles of ``P V~`` on the Kaleido array for codes ``probs`` and int8 ``v``.

    Returns ``cycles`` and ``schedule`` (what runs: ``"shared"``, one engine run
    per column tile of :func:`golden.pv_tiles.pv_tiles` over its own keys, or
    ``"dense"``), both options' cycles, the ``tiles`` and the ``executed_macs``.
    ``"auto"`` takes the fewer cycles, so ``P V~`` is never slower than on the
    baseline array.
    """
    if schedule not in PV_SCHEDULES:
        raise ValueError(f"unknown P V~ schedule {schedule!r}; choose one of {', '.join(PV_SCHEDULES)}")
    n, pv = cfg.tokens, pv_config(cfg)
    tiles = pv_tiles(probs, v, cfg)
    shared = sum(gemm_cycles(n, len(t.channels), pv, "kaleido", depth=len(t.keys)).cycles for t in tiles)
    dense = gemm_cycles(n, cfg.head_dim, pv, "kaleido").cycles
    ran = schedule if schedule != "auto" else ("shared" if shared < dense else "dense")
    macs = (sum(n * len(t.channels) * len(t.keys) for t in tiles) if ran == "shared"
            else n * n * cfg.head_dim)
    return {"cycles": shared if ran == "shared" else dense, "schedule": ran, "shared_cycles": shared,
            "dense_cycles": dense, "tiles": tiles, "executed_macs": macs}


def kaleido_head_cycles(q: np.ndarray, k: np.ndarray, cfg: Config, v: np.ndarray | None = None,
                        probs: np.ndarray | None = None) -> dict:
    """Per-stage cycles of the Kaleido array's head on int8 ``q``, ``k`` (the driver's
    choice for ``S~``). With ``v`` and the head's codes ``probs``, ``P V~`` takes
    :func:`pv_cycles`'s choice; without them it runs dense."""
    n = cfg.tokens
    pv = (pv_cycles(probs, v, cfg)["cycles"] if v is not None
          else gemm_cycles(n, cfg.head_dim, pv_config(cfg), "kaleido").cycles)
    return {"qk": kaleido_cycles(q, k, cfg).cycles, "softmax": softmax_model_cycles(cfg), "pv": pv}
