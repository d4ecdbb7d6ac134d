"""Tiling ``Q K^T`` onto an R x C array of PEs, and accumulating its partial scores.

For each channel group, tokens pair up along the group's direction
(reference at even coordinate, partner at the next one; the last token of an
odd extent has no partner). One *pair* carries, per channel, the reference's
value ``x0``, the partner's approximated value ``x1~`` and the partner's state
``s``. A token without a partner becomes a pair whose missing partner is a full
reuse of the reference (``x1~ = x0``, ``s = 2``): the hardware then skips it as
cheaply as it can, and its scores are simply not used.

A *tile group* is R Q-pairs by C K-pairs of one channel group; the PE at
(i, j) computes the four partial scores of Q-pair i and K-pair j (T0..T3 of
docs/design.md, "How the PE works"). The accumulation buffer adds each channel group's partial
scores into the ``N x N`` result.

The baseline array tiles plainly: R query tokens by C key tokens, all D
channels, one score per PE.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import Config
from .reuse import pair_reuse
from .rope import DIRECTIONS, GROUPS

__all__ = ["PairTable", "pair_tables", "TileGroup", "tile_groups", "accumulate",
           "dense_tiles"]


@dataclass
class PairTable:
    """The pairs of one operand in one channel group."""

    group: str
    channels: slice
    ref: np.ndarray         # [P] token index of each pair's reference
    partner: np.ndarray     # [P] token index of its partner, -1 when there is none
    x0: np.ndarray          # [P, Dg] int8 reference values
    x1: np.ndarray          # [P, Dg] int8 approximated partner values (x0 when none)
    state: np.ndarray       # [P, Dg] int8 partner states (2 when none)

    @property
    def pairs(self) -> int:
        return len(self.ref)

    def take(self, order) -> "PairTable":
        """The same pairs in another order (what the scheduler's clustering does)."""
        order = np.asarray(order)
        return PairTable(self.group, self.channels, self.ref[order], self.partner[order],
                         self.x0[order], self.x1[order], self.state[order])

    @property
    def width(self) -> int:
        return self.channels.stop - self.channels.start


def pair_tables(x: np.ndarray, cfg: Config, reuse=None) -> list[PairTable]:
    """Pair tables of one operand ``[N, D]``, one per non-empty channel group, in
    t, y, x order; ``reuse``, its :func:`~golden.reuse.pair_reuse` if the caller has it."""
    reuse = pair_reuse(x, cfg) if reuse is None else reuse
    T, H, W = cfg.grid
    strides = (H * W, W, 1)
    coords = np.stack(np.meshgrid(np.arange(T), np.arange(H), np.arange(W), indexing="ij"),
                      axis=-1).reshape(-1, 3)
    tables = []
    for name in GROUPS:
        sl = cfg.group_slices[name]
        if sl.stop == sl.start:
            continue
        axis = DIRECTIONS[name]
        ref = np.flatnonzero(coords[:, axis] % 2 == 0)
        has = coords[ref, axis] + 1 < cfg.grid[axis]
        partner = np.where(has, ref + strides[axis], -1)
        x0 = reuse.approx[ref, sl]
        safe = np.where(has, partner, ref)
        x1 = np.where(has[:, None], reuse.approx[safe, sl], x0).astype(np.int8)
        st = np.where(has[:, None], reuse.states[safe, sl], 2).astype(np.int8)
        tables.append(PairTable(name, sl, ref, partner, x0, x1, st))
    return tables


@dataclass
class TileGroup:
    """R Q-pairs by C K-pairs of one channel group (index ranges into the pair tables)."""

    group: int              # index into the list of non-empty groups
    q_pairs: range
    k_pairs: range


def tile_groups(q_tables: list[PairTable], k_tables: list[PairTable], cfg: Config) -> list[TileGroup]:
    """Every tile group, in the order the controller runs them: group, Q tile, K tile."""
    out = []
    for g, (qt, kt) in enumerate(zip(q_tables, k_tables)):
        for q0 in range(0, qt.pairs, cfg.rows):
            for k0 in range(0, kt.pairs, cfg.cols):
                out.append(TileGroup(g, range(q0, min(q0 + cfg.rows, qt.pairs)),
                                     range(k0, min(k0 + cfg.cols, kt.pairs))))
    return out


def accumulate(scores: np.ndarray, tile: TileGroup, q: PairTable, k: PairTable,
               partial: np.ndarray) -> None:
    """Add one tile group's partial scores ``partial[4, R, C]`` (T0..T3) into ``scores``.

    Rows and columns beyond the tile's pairs, and scores of missing partners,
    are dropped.
    """
    qi = np.asarray(tile.q_pairs)
    kj = np.asarray(tile.k_pairs)
    rows = (q.ref[qi], q.ref[qi], q.partner[qi], q.partner[qi])
    cols = (k.ref[kj], k.partner[kj], k.ref[kj], k.partner[kj])
    for t in range(4):
        r, c = rows[t], cols[t]
        block = partial[t, :len(qi), :len(kj)]
        keep = (r >= 0)[:, None] & (c >= 0)[None, :]
        rr, cc = np.broadcast_arrays(r[:, None], c[None, :])
        np.add.at(scores, (rr[keep], cc[keep]), block[keep])


def dense_tiles(n_q: int, n_k: int, cfg: Config) -> list[tuple[range, range]]:
    """The baseline's tiles: R query tokens by C key tokens."""
    return [(range(i, min(i + cfg.rows, n_q)), range(j, min(j + cfg.cols, n_k)))
            for i in range(0, n_q, cfg.rows) for j in range(0, n_k, cfg.cols)]
