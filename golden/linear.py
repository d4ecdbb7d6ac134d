"""Linear layers with window reuse (docs/concepts.md, "Linear layers: X~ W"; paper §4.1).

``Y~ = X~ W`` exactly, where ``X~`` is the activation tensor after window reuse
(:func:`golden.reuse.window_reuse`), next to the exact ``Y = X W`` and the op
counts: a reused activation's products are free when fully reused and half
price (a nibble lane) when partially reused.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .attention import int_gemm
from .config import Config
from .opcount import linear_oracle_macs
from .reuse import window_reuse

__all__ = ["LinearResult", "linear_layer"]


class LinearResult(NamedTuple):
    exact: np.ndarray        # X W, int64 [N, O]
    approx: np.ndarray       # X~ W, int64 [N, O]
    states: np.ndarray       # window states of X, int8 [N, C]
    dense_macs: int
    reuse_macs: float


def linear_layer(x: np.ndarray, w: np.ndarray, cfg: Config) -> LinearResult:
    """``X [N, C]`` (int8, C whole heads) times ``W [C, O]`` (int8), with window reuse."""
    w = np.asarray(w)
    if w.ndim != 2 or w.shape[0] != np.asarray(x).shape[1] or w.dtype != np.int8:
        raise ValueError(f"weights must be int8 [{np.asarray(x).shape[1]}, O], got {w.dtype} {w.shape}")
    reuse = window_reuse(x, cfg)
    exact = int_gemm(x, w.T)
    approx = int_gemm(reuse.approx, w.T)
    n, c = reuse.states.shape
    o = w.shape[1]
    return LinearResult(exact, approx, reuse.states, n * c * o, linear_oracle_macs(o, reuse.states))
