"""The structure reuse rests on, measured on any Q or K (docs/structure.md).

Two figures say whether a head's reuse is spatio-temporal or chance:

- the **common share**: the fraction of a channel set's energy that is the
  token-mean, ``|mean_t x|^2 / mean_t |x|^2``, per channel group and RoPE band
  (:data:`golden.rope.BANDS`). RoPE turns a token-common part into position:
  measured on rotated Q or K it reads low even where the part is large, so it
  is taken with RoPE undone (the standard 3-D RoPE of the partition,
  :func:`golden.workload.rope`, turned back by each token's position) as well
  as on the tensor as given;
- the **structured reuse**: the ``Q K^T`` pair oracle's reduction less the same
  oracle on the tokens in a seeded random order (one permutation for Q and K).
  A shuffle keeps every value and so every chance agreement of high bits; it
  breaks only what neighbours share. Near 0 where nothing is spatio-temporal.
"""

from __future__ import annotations

import numpy as np

from .config import Config
from .opcount import dense_macs, oracle_macs
from .reuse import pair_reuse
from .rope import BANDS, GROUPS, band_pairs
from .workload import rope, token_coords

__all__ = ["SHUFFLE_SEED", "derotate", "common_share", "oracle_reduction", "structured_reuse", "structure"]

#: The token permutation's seed unless one is given.
SHUFFLE_SEED = 1


def derotate(x: np.ndarray, cfg: Config) -> np.ndarray:
    """``x [N, D]`` with the partition's 3-D RoPE turned back at each token's position."""
    return rope(np.asarray(x, np.float64), cfg, -token_coords(cfg.grid))


def _share(x: np.ndarray) -> float | None:
    total = float(np.mean(np.sum(x * x, axis=1)))
    if total == 0:
        return None
    mean = x.mean(axis=0)
    return float(np.sum(mean * mean)) / total


def common_share(x: np.ndarray, cfg: Config) -> dict:
    """The token-mean's share of ``x``'s energy: ``{"all": s, "groups": {g:
    {"all": s, "bands": {band: s}}}}`` (None where a set has no energy or no
    channels). ``x`` is ``[N, D]``, as given (rotated or not)."""
    x = np.asarray(x, np.float64)
    groups = {}
    for g in GROUPS:
        sl = cfg.group_slices[g]
        width = sl.stop - sl.start
        bands = {}
        for band in BANDS[:-1]:
            pairs = band_pairs(width, band)
            cols = [sl.start + 2 * i + j for i in pairs for j in (0, 1)]
            bands[band] = _share(x[:, cols]) if cols else None
        groups[g] = {"all": _share(x[:, sl]) if width else None, "bands": bands}
    return {"all": _share(x), "groups": groups}


def oracle_reduction(q: np.ndarray, k: np.ndarray, cfg: Config) -> float:
    """``1 - oracle / dense`` of ``Q K^T`` (int8 ``[N, D]`` each)."""
    oracle = oracle_macs(pair_reuse(q, cfg).states, pair_reuse(k, cfg).states)
    return 1 - oracle / dense_macs(cfg.tokens, cfg.tokens, cfg.head_dim)


def structured_reuse(q: np.ndarray, k: np.ndarray, cfg: Config, seed: int = SHUFFLE_SEED) -> dict:
    """The oracle reduction of int8 ``q`` and ``k``, the same with their tokens
    shuffled by one seeded permutation, and the difference, ``structured``."""
    order = np.random.default_rng(seed).permutation(cfg.tokens)
    mine = oracle_reduction(q, k, cfg)
    shuffled = oracle_reduction(np.asarray(q)[order], np.asarray(k)[order], cfg)
    return {"oracle": mine, "shuffled": shuffled, "structured": mine - shuffled, "seed": seed}


def structure(q: np.ndarray, k: np.ndarray, cfg: Config, seed: int = SHUFFLE_SEED) -> dict:
    """Both figures of one head (int8 ``q`` and ``k``, RoPE applied, as an
    archive or a workload holds them): each operand's common share with RoPE
    undone (``derotated``) and as given (``as_given``), and
    :func:`structured_reuse`."""
    out = {"reuse": structured_reuse(q, k, cfg, seed)}
    for name, x in (("q", q), ("k", k)):
        out[name] = {"derotated": common_share(derotate(x, cfg), cfg), "as_given": common_share(x, cfg)}
    return out
