"""``P V~`` on the array with V's reuse taken as docs/concepts.md, "Reuse states" shared multiply.

The array is output-stationary: a row holds a query, a column a channel of V,
and every PE steps through the keys together. A fully reused partner ``n1`` of
reference ``n0`` on channel ``c`` has ``V~[n1, c] = V[n0, c]``, so
``P[i, n0] V~[n0, c] + P[i, n1] V~[n1, c] = (P[i, n0] + P[i, n1]) V[n0, c]``:
one product instead of two. The columns of a tile step together, so a key's
slot can fold into its reference's only where **every** channel of the column
tile fully reuses it. Hence:

* **column tiles** of ``cfg.cols`` channels, never across two channel groups
  (their pairs differ). Channels are clustered greedily by the keys they fully
  reuse, so that a tile's channels agree as often as they can;
* per tile, the partners it folds: every channel of the tile is ``FULL`` there,
  and ``P0 + P1`` fits a code (``<= P_MAX`` on every row, so the row operand
  stays the int8 the PE takes; softmax rows sum to about ``P_MAX``, so this
  fails only where one pair holds nearly all of a row);
* per tile, the operands the array multiplies: ``P'`` (``[N, L]``, the keys
  left, a folded partner's codes added into its reference's) and ``V'``
  (``[L, C]``, those keys' rows of ``V~``). ``P' V' = P V~`` on the tile's
  channels, exactly.

Each tile runs on the engine's dense schedule over its own ``L`` keys: a row
entry holds ``P[i, n0]`` and, for a folded key, ``P[i, n1]``, and the engine
adds them where the row enters the array (:mod:`hw.core.engine`). The key list of
each tile is the controller's input here: the simulated RTL runs one tile at a
time, each from its own buffer image.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import Config
from .reuse import FULL, pair_reuse
from .rope import DIRECTIONS
from .softmax import P_MAX

__all__ = ["PvTile", "partner_refs", "column_tiles", "fold_fits", "fold_plan", "pv_tiles"]


@dataclass
class PvTile:
    """One column tile of ``P V~``.

    Members
    -------
    channels : np.ndarray
        The tile's channels of V (at most ``cfg.cols``, one group's).
    keys : np.ndarray
        The keys it steps through (natural order), ``L`` of them.
    folded : np.ndarray
        The partners whose products fold into their references'.
    partner : np.ndarray
        Per key of ``keys``, the partner folded into it, or -1.
    fold : np.ndarray
        int8 ``[N, L]``: per key, the folded partner's codes (0 where none), which
        the engine adds to ``P`` on ``keys`` as a row enters the array.
    p : np.ndarray
        ``P'``, int8 ``[N, L]``: ``P`` on ``keys`` plus ``fold``.
    v : np.ndarray
        ``V'``, int8 ``[L, len(channels)]``: ``V~`` on ``keys`` and ``channels``.
    """

    channels: np.ndarray
    keys: np.ndarray
    folded: np.ndarray
    partner: np.ndarray
    fold: np.ndarray
    p: np.ndarray
    v: np.ndarray


def partner_refs(cfg: Config, group: str) -> tuple[np.ndarray, np.ndarray]:
    """Token indices of ``group``'s partners and of their references (pairs along
    the group's direction, docs/concepts.md, "Reuse states")."""
    idx = np.moveaxis(np.arange(cfg.tokens).reshape(cfg.grid), DIRECTIONS[group], 0)
    pairs = idx.shape[0] // 2
    return idx[1:2 * pairs:2].ravel(), idx[0:2 * pairs:2].ravel()


def column_tiles(full: np.ndarray, cols: int) -> list[list[int]]:
    """Channels (columns of ``full``, a group's ``[N, Dg]`` full-reuse mask) in tiles
    of ``cols``: seed a tile with the channel that reuses on the most keys, then
    add the channel that keeps the most keys reused on all of the tile's channels."""
    left, tiles = list(range(full.shape[1])), []
    while left:
        seed = max(left, key=lambda c: int(full[:, c].sum()))
        left.remove(seed)
        tile, common = [seed], full[:, seed].copy()
        while len(tile) < cols and left:
            best = max(left, key=lambda c: int((common & full[:, c]).sum()))
            left.remove(best)
            tile.append(best)
            common &= full[:, best]
        tiles.append(tile)
    return tiles


def fold_fits(probs: np.ndarray, partners: np.ndarray, refs: np.ndarray) -> np.ndarray:
    """Per pair ``(refs[j], partners[j])``: whether ``P0 + P1`` stays a code on
    every row of ``probs`` (any rows of a head's ``P``; a row not given is taken
    to fit)."""
    p16 = np.asarray(probs).astype(np.int16)
    return (p16[:, partners] + p16[:, refs]).max(axis=0, initial=0) <= P_MAX


def fold_plan(states: np.ndarray, cfg: Config, fits):
    """The column tiles of ``P V~`` and what each folds, from V's reuse
    ``states`` (``[N, D]``) and ``fits(group, partners, refs)``, each pair's
    :func:`fold_fits` on the head's codes. Yields, per tile in order,
    ``(channels, partners, refs, fold)``: the tile's channels of V, the group's
    pairs, and which of them the tile folds."""
    for group, sl in cfg.group_slices.items():
        if sl.stop == sl.start:
            continue
        partners, refs = partner_refs(cfg, group)
        full = states[:, sl] == FULL
        ok = fits(group, partners, refs)
        for chans in column_tiles(full, cfg.cols):
            fold = ok & full[partners][:, chans].all(axis=1)
            yield np.arange(sl.start, sl.stop)[chans], partners, refs, fold


def pv_tiles(probs: np.ndarray, v: np.ndarray, cfg: Config) -> list[PvTile]:
    """The column tiles of ``P V~`` for codes ``probs`` (``[N, N]``, ``0..P_MAX``)
    and int8 values ``v`` (``[N, D]``), as the module describes."""
    probs = np.asarray(probs)
    if probs.shape != (cfg.tokens, cfg.tokens):
        raise ValueError(f"probs of shape {probs.shape} are not [{cfg.tokens}, {cfg.tokens}]")
    if probs.min() < 0 or probs.max() > P_MAX:
        raise ValueError(f"probs must be codes 0..{P_MAX}")
    reuse = pair_reuse(v, cfg)
    p16 = probs.astype(np.int16)
    tiles = []
    for channels, partners, refs, fold in fold_plan(reuse.states, cfg,
                                                     lambda _g, pa, re: fold_fits(p16, pa, re)):
        keys = np.setdiff1d(np.arange(cfg.tokens), partners[fold])
        p = p16.copy()
        np.add.at(p, (slice(None), refs[fold]), p16[:, partners[fold]])
        partner = np.full(cfg.tokens, -1)
        partner[refs[fold]] = partners[fold]
        codes = np.where(partner[keys] >= 0, p16[:, np.maximum(partner[keys], 0)], 0).astype(np.int8)
        tiles.append(PvTile(channels, keys, partners[fold], partner[keys], codes, p[:, keys].astype(np.int8),
                            np.ascontiguousarray(reuse.approx[np.ix_(keys, channels)])))
    return tiles
