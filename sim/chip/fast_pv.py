"""Fast model of ``P V~`` with V's reuse folded (:mod:`golden.pv_tiles`), for
heads too big to hold ``P``.

The exact model needs the head's codes ``P`` (``N x N``: a billion of them on a
480p Wan2.1 head) for one fact per pair of keys: whether folding the partner
into its reference keeps every row's code a code (:func:`golden.pv_tiles.fold_fits`).
That fact almost never needs ``P``:

* a code is at most ``127 e / sum + 1/2`` (the reciprocal is rounded down, the
  product to nearest; :mod:`golden.softmax`), so two codes of a row add up to
  more than 127 only when their exponents ``e`` make up the whole row sum, i.e.
  when every other key of the row has ``e = 0``;
* ``e`` is 0 exactly for the scores more than :func:`golden.softmax.exp_reach`
  below the row's maximum.

So a row can refuse a fold only if at most two of its scores lie within the
reach of its maximum. This model computes ``S~`` a block of rows at a time
(int8 products summed over ``D <= 256`` channels, and their differences, stay
below ``2**24``, so ``float32`` is exact), counts each row's scores within reach, and computes the
codes of the few rows with two or fewer (:func:`golden.attention.head_probs`)
for the exact :func:`~golden.pv_tiles.fold_fits`. The column tiles and their
folds then come from :func:`golden.pv_tiles.fold_plan` itself, so the keys each
tile steps through are the exact model's (the tests hold them equal).

What the chip needs of a head is :class:`PvWork`: per column tile, its channels
and keys, and whether the engine's choice (:func:`golden.head_cycles.pv_cycles`)
runs the folded tiles or the dense product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from golden import drain
from golden.attention import head_probs, int_gemm
from golden.config import Config
from golden.cycle_model import gemm_cycles
from golden.head_cycles import pv_config
from golden.pv_tiles import fold_fits, fold_plan
from golden.reuse import pair_reuse
from golden.softmax import exp_reach, softmax_scale, softmax_spec

__all__ = ["PvWork", "risky_rows", "pv_work"]

#: Rows of ``S~`` computed at once (a 32,760-key row block is 134 MB in float32).
ROW_BLOCK = 1024


@dataclass
class PvWork:
    """``P V~`` of one head on one array.

    Members
    -------
    tiles : list of (int, int)
        Per column tile, its channels and the keys it steps through (the head's
        ``N`` less the partners it folds).
    shared : bool
        Whether the folded tiles run (the engine's choice: fewer cycles than dense).
    risky_rows : int
        Rows whose codes had to be computed (two or fewer scores within reach).
    """

    tiles: list
    shared: bool
    risky_rows: int

    def slots(self, queries: int, keys: int, cfg: Config, extra_keys: int = 0) -> tuple[int, int, int]:
        """``(slots, passes, products)`` on one array for ``queries`` rows, as run:
        the folded tiles (each over its keys and ``extra_keys`` that never fold,
        such as text tokens) or the dense product over ``keys + extra_keys``."""
        row_tiles = -(-queries // cfg.rows)
        if self.shared:
            # Each column tile is one engine run over its own keys, with its final drain.
            steps = [(ch, k + extra_keys) for ch, k in self.tiles]
            slots = sum(drain.uniform_slots(row_tiles, k, cfg.rows) for _, k in steps)
        else:
            # One run of every column tile over every key.
            d = sum(ch for ch, _ in self.tiles)
            steps = [(min(cfg.cols, d - c0), keys + extra_keys) for c0 in range(0, d, cfg.cols)]
            slots = drain.uniform_slots(row_tiles * len(steps), keys + extra_keys, cfg.rows)
        return slots, row_tiles * len(steps), queries * sum(ch * k for ch, k in steps)

    @property
    def runs(self) -> int:
        """Engine runs, each with its tail: one per folded tile, or one dense."""
        return len(self.tiles) if self.shared else 1


def risky_rows(q: np.ndarray, k: np.ndarray, cfg: Config, scale: float, block: int = ROW_BLOCK,
               reuse=None) -> np.ndarray:
    """Rows of the head's ``S~`` (int8 ``q``, ``k``; reuse as ``cfg`` says, or
    ``reuse``, their :func:`~golden.reuse.pair_reuse` if the caller has it) with at
    most two scores within :func:`~golden.softmax.exp_reach` of their maximum: the
    only rows that can refuse a fold."""
    # |S~| <= 2**14 D <= 2**22 up to D = 256, and so is the row's maximum less a reach
    # held to 2**23 (every score is within 2**23 of it anyway): float32 holds each
    # exactly, so ``s >= max - reach`` is ``max - s <= reach`` with one pass fewer.
    exact = np.float32 if q.shape[1] <= 256 else np.float64
    rq, rk = reuse or (pair_reuse(q, cfg), pair_reuse(k, cfg))
    qa = rq.approx.astype(exact)
    ka = np.ascontiguousarray(rk.approx.astype(exact).T)
    mult, shift = softmax_scale(scale)
    reach = exact(min(exp_reach(mult, shift, softmax_spec(k.shape[0], cfg.acc_bits)),
                      2 ** 23 if exact is np.float32 else 2 ** 24))
    out = []
    for lo in range(0, len(qa), block):
        s = qa[lo:lo + block] @ ka
        live = np.count_nonzero(s >= (s.max(axis=1) - reach)[:, None], axis=1)
        out.append(lo + np.flatnonzero(live <= 2))
    return np.concatenate(out) if out else np.zeros(0, np.int64)


#: Rows of a head's softmax codes computed at once for the fold check (:func:`pv_work`).
PROB_ROWS = 1024


def pv_work(q: np.ndarray, k: np.ndarray, v: np.ndarray, cfg: Config, scale: float, reuse=None) -> PvWork:
    """:class:`PvWork` of a head of int8 ``q``, ``k``, ``v`` (``[N, D]``) whose
    softmax scale is ``scale`` (``sQ sK / sqrt(D)``); ``reuse``, the three
    operands' :func:`~golden.reuse.pair_reuse` if the caller has them."""
    rq, rk, rv = reuse or (pair_reuse(q, cfg), pair_reuse(k, cfg), pair_reuse(v, cfg))
    rows = risky_rows(q, k, cfg, scale, reuse=(rq, rk))
    if len(rows):
        # The risky rows' codes, a block of rows at a time (the softmax is row by row): a peaked head
        # can have most of its 32,760 rows risky, whose int64 scores alone would take gigabytes.
        blocks = [head_probs(int_gemm(rq.approx[part], rk.approx), cfg, scale)
                  for part in np.array_split(rows, -(-len(rows) // PROB_ROWS))]

        def fits(_group, partners, refs):
            # A pair fits when it fits on every row: on every block of rows.
            return np.logical_and.reduce([fold_fits(p, partners, refs) for p in blocks])
    else:
        def fits(_group, partners, refs):
            return np.ones(len(partners), bool)
    n = cfg.tokens
    tiles = [(len(ch), n - int(fold.sum())) for ch, _, _, fold in fold_plan(rv.states, cfg, fits)]
    # The engine's choice, as golden.head_cycles.pv_cycles makes it.
    pv = pv_config(cfg)
    shared = sum(gemm_cycles(n, ch, pv, "kaleido", depth=keys).cycles for ch, keys in tiles)
    dense = gemm_cycles(n, cfg.head_dim, pv, "kaleido").cycles
    return PvWork(tiles, shared < dense, len(rows))
