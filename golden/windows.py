"""Tiling ``X~ W`` onto an R x C array: window tables, tile groups, and the
accumulation of partial outputs (docs/concepts.md, "Linear layers: X~ W"; docs/design.md, "How the PE works").

The array computes ``Y~^T = W^T X~^T``, output-stationary. A row carries one
output's weights, a column one *window* of activations: the reference token's
value and, per partner, the partner's approximated value and the window's
state. The PE at (i, j) holds output i of every token of window j, one
register each: R0 the reference, R1.. the partners.

A tile group is R outputs by C windows of one channel group. Its passes:

* LINEAR streams every channel, ``w x x_ref``: R0 takes the product, and each
  partner register the product (full reuse), its high part ``16 w hi(x_ref)``
  (partial), or nothing (compute), by the window's state, which every partner
  shares;
* then one pass B per partner, on that partner's approximated value: a low
  nibble product ``w lo(x~)`` where partial, a whole product where compute,
  nothing where full. A partner beyond the PE's registers (the third of a
  3-register PE) starts from zero and takes whole products of ``x~`` on every
  channel.

Channel groups run like attention's, but a group gathers that direction's
channels of every head (each head splits alike, and windows depend only on
the direction), so one engine run covers the whole layer. Windows are aligned
along the group's direction; a trailing window shorter than ``w`` (which reuse
leaves alone) keeps its tokens as compute partners, and a missing member is
a full reuse of nothing, whose output is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import Config
from .reuse import COMPUTE, FULL, window_reuse
from .rope import DIRECTIONS
from .tiling import TileGroup

__all__ = ["WindowTable", "window_tables", "linear_config", "window_tiles", "accumulate_windows",
           "group_channels"]


@dataclass
class WindowTable:
    """The windows of ``X`` in one channel group, as the engine streams them."""

    group: str
    channels: np.ndarray    # [G] channels of X in this group (every head's)
    members: np.ndarray     # [Wn, 1 + partners] tokens of each window, reference first; -1 if missing
    x0: np.ndarray          # [Wn, G] int8 reference values
    x1: np.ndarray          # [Wn, partners, G] int8 partner values as streamed (x~)
    state: np.ndarray       # [Wn, partners, G] int8 states as streamed

    @property
    def windows(self) -> int:
        return len(self.members)

    @property
    def partners(self) -> int:
        return self.members.shape[1] - 1

    @property
    def width(self) -> int:
        return len(self.channels)


def linear_config(cfg: Config, heads: int) -> Config:
    """The engine's design point for a layer of ``heads`` heads: each group gathers
    its channels of every head (accumulator widths re-derived for them)."""
    return cfg.with_(partition=tuple(heads * p for p in cfg.partition), max_channels=None,
                     acc_bits=None, pe_acc_bits=None)


def group_channels(cfg: Config, heads: int) -> dict[str, np.ndarray]:
    """The channels of ``X`` (``heads * D`` of them) in each channel group."""
    D = cfg.head_dim
    return {name: np.array([h * D + c for h in range(heads) for c in range(sl.start, sl.stop)], np.int64)
            for name, sl in cfg.group_slices.items()}


def window_tables(x: np.ndarray, cfg: Config) -> list[WindowTable]:
    """Window tables of activations ``X [N, heads*D]``, one per non-empty group, in t, y, x
    order. ``cfg.accumulators`` decides which partners get a register."""
    x = np.asarray(x)
    reuse = window_reuse(x, cfg)
    heads = x.shape[1] // cfg.head_dim
    T, H, W = cfg.grid
    strides = (H * W, W, 1)
    coords = np.stack(np.meshgrid(np.arange(T), np.arange(H), np.arange(W), indexing="ij"),
                      axis=-1).reshape(-1, 3)
    tables = []
    for name, chans in group_channels(cfg, heads).items():
        if len(chans) == 0:
            continue
        axis = DIRECTIONS[name]
        extent = cfg.grid[axis]
        size = min(cfg.window, extent)
        ref = np.flatnonzero(coords[:, axis] % cfg.window == 0)
        offsets = np.arange(size)
        present = coords[ref, axis][:, None] + offsets[None, :] < extent
        members = np.where(present, ref[:, None] + offsets[None, :] * strides[axis], -1)
        x0 = reuse.approx[np.ix_(ref, chans)]
        parts = size - 1
        x1 = np.empty((len(ref), parts, len(chans)), np.int8)
        st = np.empty_like(x1)
        for p in range(parts):
            has = present[:, p + 1]
            tok = np.where(has, members[:, p + 1], ref)
            x1[:, p] = np.where(has[:, None], reuse.approx[np.ix_(tok, chans)], x0)
            state = np.where(has[:, None], reuse.states[np.ix_(tok, chans)], FULL)
            if p >= cfg.accumulators - 1:
                # No register collected this partner's reuse: it is computed whole.
                state = np.where(has[:, None], COMPUTE, FULL)
            st[:, p] = state
        tables.append(WindowTable(name, chans, members, x0, x1, st))
    return tables


def window_tiles(tables: list[WindowTable], outputs: int, cfg: Config) -> list[TileGroup]:
    """Every tile group (``q_pairs``: outputs, ``k_pairs``: windows), in the
    controller's order: group, output tile, window tile."""
    out = []
    for g, table in enumerate(tables):
        for o0 in range(0, outputs, cfg.rows):
            for w0 in range(0, table.windows, cfg.cols):
                out.append(TileGroup(g, range(o0, min(o0 + cfg.rows, outputs)),
                                     range(w0, min(w0 + cfg.cols, table.windows))))
    return out


def accumulate_windows(y_t: np.ndarray, tile: TileGroup, table: WindowTable, partial: np.ndarray) -> None:
    """Add one tile group's partial outputs ``partial[1 + partners, R, C]`` (the
    reference's, then each partner's) into ``y_t [outputs, N]``; missing members
    and rows and columns beyond the tile are dropped."""
    rows = np.asarray(tile.q_pairs)
    cols = np.asarray(tile.k_pairs)
    for m in range(table.partners + 1):
        tokens = table.members[cols, m]
        keep = tokens >= 0
        block = partial[m, :len(rows), :len(cols)]
        y_t[np.ix_(rows, tokens[keep])] += block[:, keep]
