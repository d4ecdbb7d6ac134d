"""Attention with reused operands: exact scores, outputs, quality, skip baselines.

``S~ = Q~ K~^T`` is the one value that golden model, RTL and cycle model must
agree on bit for bit (docs/concepts.md, "Reuse states"). It is computed here exactly: every partial
sum of int8 products is an integer far below 2**24 for any head dimension up to
1024, so a float32 BLAS product is exact and much faster than numpy's integer
matmul; wider heads fall back to float64 (exact below 2**53).
"""

from __future__ import annotations

import math

import numpy as np

from .config import Config
from .opcount import dense_macs, oracle_macs, pv_oracle_macs
from .reuse import FULL, PARTIAL, lo, pair_reuse
from .softmax import P_MAX, softmax_codes, softmax_scale, softmax_spec

__all__ = [
    "int_gemm", "approx_scores", "DESIGNS", "expected_scores", "attention_output", "quality", "mask_skip",
    "topk_output", "Attention", "run_attention", "head_probs", "head_output", "expected_head",
]


def int_gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact ``a @ b.T`` of two int8 matrices, as int64."""
    depth = a.shape[1]
    bound = depth * 128 * 128
    dtype = np.float32 if bound < 2 ** 24 else np.float64
    if bound >= 2 ** 53:
        return a.astype(np.int64) @ b.astype(np.int64).T
    return (a.astype(dtype) @ b.astype(dtype).T).astype(np.int64)


def approx_scores(q: np.ndarray, k: np.ndarray, cfg: Config) -> np.ndarray:
    """``S~ = Q~ K~^T`` (int64 ``[N, N]``)."""
    return int_gemm(pair_reuse(q, cfg).approx, pair_reuse(k, cfg).approx)


#: The two designs every comparison runs: the augmented array and the plain one it augments.
DESIGNS = ("kaleido", "baseline")


def expected_scores(q: np.ndarray, k: np.ndarray, cfg: Config, design: str) -> np.ndarray:
    """What a design's array must produce: ``S~`` for ``kaleido``, ``Q K^T`` for ``baseline``."""
    if design == "kaleido":
        return approx_scores(q, k, cfg)
    if design == "baseline":
        return int_gemm(q, k)
    raise ValueError(f"unknown design {design!r}; choose one of {', '.join(DESIGNS)}")


def attention_output(scores: np.ndarray, v: np.ndarray, scale: float) -> np.ndarray:
    """``softmax(scores * scale) v`` in float64, row-wise and numerically stable.

    ``scores`` may hold ``-inf`` for dropped entries (top-k).
    """
    z = scores.astype(np.float64) * scale
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    return p @ v.astype(np.float64)


def quality(reference: np.ndarray, approx: np.ndarray) -> dict:
    """MSE, PSNR (``10 log10(max|O|^2 / MSE)``, ``inf`` when equal) and cosine similarity."""
    ref = reference.astype(np.float64).ravel()
    out = approx.astype(np.float64).ravel()
    mse = float(np.mean((out - ref) ** 2))
    peak = float(np.max(np.abs(ref))) ** 2
    psnr = math.inf if mse == 0 else (10 * math.log10(peak / mse) if peak > 0 else -math.inf)
    norm = float(np.linalg.norm(ref) * np.linalg.norm(out))
    cosine = float(ref @ out / norm) if norm > 0 else (1.0 if mse == 0 else 0.0)
    return {"mse": mse, "psnr_db": psnr, "cosine": cosine}


def mask_skip(x: np.ndarray, cfg: Config) -> np.ndarray:
    """The skip baseline of an operand: the same masks as reuse, but a masked
    contribution is dropped instead of reused (full: the value becomes 0;
    partial: its high nibble is dropped, leaving ``lo(x)``)."""
    states = pair_reuse(x, cfg).states
    out = np.where(states == FULL, 0, np.where(states == PARTIAL, lo(x), x))
    return out.astype(np.int8)


def topk_output(scores: np.ndarray, v: np.ndarray, scale: float, keep: int) -> np.ndarray:
    """Top-k sparse attention: each query keeps its ``keep`` highest scores."""
    keep = int(min(max(keep, 1), scores.shape[1]))
    cut = np.partition(scores, scores.shape[1] - keep, axis=1)[:, -keep][:, None]
    # Ties at the cut are kept; that only ever keeps more than `keep`, never fewer.
    masked = np.where(scores >= cut, scores.astype(np.float64), -np.inf)
    return attention_output(masked, v, scale)


class Attention(dict):
    """Results of :func:`run_attention`, a dict with attribute access."""

    __getattr__ = dict.__getitem__


def head_probs(scores: np.ndarray, cfg: Config, scale: float) -> np.ndarray:
    """``P``: the integer softmax (:mod:`golden.softmax`) of ``S~ * scale``, codes
    ``0..127`` (int8 ``[N_q, N_k]``), as the RTL's vector unit computes it."""
    mult, shift = softmax_scale(scale)
    return softmax_codes(scores, mult, shift, softmax_spec(scores.shape[1], cfg.acc_bits))


def head_output(probs: np.ndarray, v_approx: np.ndarray) -> np.ndarray:
    """``O~ = P V~``, exact (int64 ``[N_q, D]``; real units are ``O~ * sV / 127``)."""
    return int_gemm(probs, np.ascontiguousarray(v_approx.T))


def expected_head(q, k, v, cfg: Config, design: str, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """``(P, O)`` a design's whole head must produce: from ``S~`` and ``V~`` for
    ``kaleido``, from ``Q K^T`` and ``V`` for ``baseline``; ``scale`` is ``sQ*sK/sqrt(D)``."""
    probs = head_probs(expected_scores(q, k, cfg, design), cfg, scale)
    values = pair_reuse(v, cfg).approx if design == "kaleido" else v
    return probs, head_output(probs, values)


def run_attention(q, k, cfg: Config, v=None, scales=(1.0, 1.0, 1.0)) -> Attention:
    """States, ``S~`` and op counts of ``Q K^T``; with ``v``, the rest of the head.

    ``scales`` are the per-tensor quantization scales ``(sQ, sK, sV)``. With
    ``v``: ``v_states``, ``probs`` (``P``), ``out`` (``O~ = P V~``), the op counts
    of ``P V~``, and the quality of ``O~`` (``mse``, ``psnr_db``, ``cosine``)
    against float attention on the unapproximated int8 ``Q``, ``K``, ``V``. The
    ``float_*`` figures are the same with a float softmax over ``S~`` and ``V~``:
    the error of reuse alone, without ``P``'s 7-bit codes.
    """
    rq, rk = pair_reuse(q, cfg), pair_reuse(k, cfg)
    s = int_gemm(rq.approx, rk.approx)
    dense = dense_macs(q.shape[0], k.shape[0], cfg.head_dim)
    oracle = oracle_macs(rq.states, rk.states)
    res = Attention(scores=s, q_states=rq.states, k_states=rk.states,
                    dense_macs=dense, oracle_macs=oracle,
                    oracle_reduction=1.0 - oracle / dense)
    if v is not None:
        scale = scales[0] * scales[1] / math.sqrt(cfg.head_dim)
        rv = pair_reuse(v, cfg)
        exact = attention_output(int_gemm(q, k), v, scale) * scales[2]
        approx = attention_output(s, rv.approx, scale) * scales[2]
        probs = head_probs(s, cfg, scale)
        out = head_output(probs, rv.approx)
        res.update(v_states=rv.states, probs=probs, out=out,
                   pv_dense_macs=dense_macs(q.shape[0], v.shape[0], cfg.head_dim),
                   pv_oracle_macs=pv_oracle_macs(q.shape[0], rv.states),
                   output=out * (scales[2] / P_MAX), reference_output=exact,
                   **quality(exact, out * (scales[2] / P_MAX)),
                   **{"float_" + name: val for name, val in quality(exact, approx).items()})
    return res
