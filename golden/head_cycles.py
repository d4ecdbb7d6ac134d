"""Cycle model of a whole attention head: ``S~`` on the array, the softmax unit,
then ``P V~`` on the array, one stage after the other (so the head's cycles
are their sum). The RTL's head (``kaleido sim attention --v``) is held against
these stage by stage."""

from __future__ import annotations

import numpy as np

from .config import Config
from .cycle_model import baseline_cycles, gemm_cycles, kaleido_cycles
from .softmax import softmax_cycles, softmax_spec

__all__ = ["STAGES", "pv_config", "softmax_model_cycles", "baseline_head_cycles", "kaleido_head_cycles"]

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


def kaleido_head_cycles(q: np.ndarray, k: np.ndarray, cfg: Config, variant: str = "full") -> dict:
    """Per-stage cycles of the Kaleido array's head on int8 ``q``, ``k`` (the driver's
    choice for ``S~``; ``P V~`` runs dense, as the RTL does)."""
    n = cfg.tokens
    return {"qk": kaleido_cycles(q, k, cfg, variant).cycles, "softmax": softmax_model_cycles(cfg),
            "pv": gemm_cycles(n, cfg.head_dim, pv_config(cfg), "kaleido").cycles}
