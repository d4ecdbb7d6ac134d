"""Reuse classification and the approximated tensors (docs/concepts.md, "Channel groups" and "Reuse states").

This module is the one definition of Kaleido's reuse arithmetic in Python.
Everything is vectorised over tokens and channels: a group's tokens are viewed
as a ``[T, H, W, Dg]`` block, the group's reuse axis is moved to the front, and
references and partners are the even and odd slices of that axis.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .rope import DIRECTIONS, GROUPS

if TYPE_CHECKING:                    # annotations only: the design point is above the reuse arithmetic
    from .config import Config

__all__ = [
    "State", "FULL", "PARTIAL", "COMPUTE", "Reuse", "hi", "lo", "classify", "approximate",
    "pair_reuse", "window_reuse", "as_tokens",
]

class State(IntEnum):
    """Reuse state of a partner value (docs/concepts.md, "Reuse states"), as stored in a states tensor
    and in the engine's buffer entries."""

    COMPUTE = 0     # computed from its own value
    PARTIAL = 1     # high nibble reused, low nibble its own
    FULL = 2        # the reference's value reused


FULL, PARTIAL, COMPUTE = State.FULL, State.PARTIAL, State.COMPUTE


class Reuse(NamedTuple):
    """States (int8 codes) and the approximated tensor, both shaped like the operand."""

    states: np.ndarray
    approx: np.ndarray


def hi(x):
    """Signed high nibble, ``x >> 4`` (-8..7)."""
    return np.asarray(x, dtype=np.int16) >> 4


def lo(x):
    """Unsigned low nibble, ``x & 0xF`` (0..15)."""
    return np.asarray(x, dtype=np.int16) & 0xF


def _prefix_equal(d, bits):
    # d is the 8-bit XOR of two bytes; the top `bits` bits agree when d >> (8 - bits) == 0.
    # Work in int16 so that a shift by 8 (bits = 0) is well defined.
    return (d >> (8 - bits)) == 0


def classify(ref, partner, full_bits: int, partial_bits: int) -> np.ndarray:
    """State of each partner value against its reference value (same shape)."""
    d = (np.asarray(ref, np.int16) ^ np.asarray(partner, np.int16)) & 0xFF
    full = _prefix_equal(d, full_bits)
    partial = ~full & _prefix_equal(d, partial_bits)
    return np.where(full, FULL, np.where(partial, PARTIAL, COMPUTE)).astype(np.int8)


def approximate(ref, partner, states) -> np.ndarray:
    """The value a partner takes given its state: ``ref``, ``16*hi(ref)+lo(own)``, or itself."""
    partial = 16 * hi(ref) + lo(partner)
    out = np.where(states == FULL, ref, np.where(states == PARTIAL, partial, partner))
    return out.astype(np.int8)


def as_tokens(x: np.ndarray, cfg: Config) -> np.ndarray:
    """Check an operand against ``cfg`` and return it as int8 ``[N, D]``."""
    x = np.asarray(x)
    if x.ndim == 4:
        x = x.reshape(-1, x.shape[-1])
    if x.ndim != 2 or x.shape != (cfg.tokens, cfg.head_dim):
        raise ValueError(f"operand of shape {x.shape} does not match grid {cfg.grid} "
                         f"with head dimension {cfg.head_dim}")
    if x.dtype != np.int8:
        raise ValueError(f"operand must be int8, got {x.dtype}")
    return x


def pair_reuse(x: np.ndarray, cfg: Config, directions: dict | None = None,
               groups=GROUPS) -> Reuse:
    """Reuse states and ``X~`` of an attention operand (``[N, D]`` int8).

    Along each group's direction, coordinate ``2m`` is the reference and ``2m+1``
    its partner; an odd extent leaves the last token unpaired (state 0).
    ``directions`` (group -> grid axis) and ``groups`` (which groups reuse at
    all) exist for studies such as the paper's Fig. 7; the design uses the
    defaults.
    """
    x = as_tokens(x, cfg)
    directions = {**DIRECTIONS, **(directions or {})}
    states = np.zeros(x.shape, np.int8)
    approx = x.copy()
    s_grid = states.reshape(*cfg.grid, -1)
    a_grid = approx.reshape(*cfg.grid, -1)
    for name in groups:
        sl = cfg.group_slices[name]
        if sl.stop == sl.start:
            continue
        axis = directions[name]
        g = np.moveaxis(x.reshape(*cfg.grid, -1)[..., sl], axis, 0)
        pairs = g.shape[0] // 2
        ref, par = g[0:2 * pairs:2], g[1:2 * pairs:2]
        st = classify(ref, par, cfg.full_bits, cfg.partial_bits)
        np.moveaxis(s_grid[..., sl], axis, 0)[1:2 * pairs:2] = st
        np.moveaxis(a_grid[..., sl], axis, 0)[1:2 * pairs:2] = approximate(ref, par, st)
    return Reuse(states, approx)


def window_reuse(x: np.ndarray, cfg: Config) -> Reuse:
    """Reuse states and ``X~`` of linear-layer activations ``X [N, C]``.

    ``C`` is a whole number of heads of ``D`` channels, each split like attention.
    Along each group's direction, aligned windows of ``cfg.window`` tokens are
    tested by their standard deviation, in integers:
    ``w*sum(a^2) - (sum a)^2 < w^2 * theta^2`` with ``theta = 2^(8-F)`` (full) or
    ``2^(8-P)`` (partial). The window's first token is the reference and is never
    changed; a trailing window shorter than ``w`` is left alone.
    """
    x = np.asarray(x)
    D, w = cfg.head_dim, cfg.window
    if x.ndim != 2 or x.shape[0] != cfg.tokens or x.shape[1] % D:
        raise ValueError(f"activations of shape {x.shape} are not [{cfg.tokens}, heads*{D}]")
    if x.dtype != np.int8:
        raise ValueError(f"activations must be int8, got {x.dtype}")
    heads = x.shape[1] // D
    # [T, H, W, heads, D]: every head splits the same way.
    xg = x.reshape(*cfg.grid, heads, D)
    states = np.zeros(xg.shape, np.int8)
    approx = xg.copy()
    for name in GROUPS:
        sl = cfg.group_slices[name]
        if sl.stop == sl.start:
            continue
        axis = DIRECTIONS[name]
        g = np.moveaxis(xg[..., sl], axis, 0).astype(np.int64)
        n = (g.shape[0] // w) * w
        if n == 0:
            continue
        win = g[:n].reshape(n // w, w, *g.shape[1:])          # [windows, w, ...]
        spread = w * (win ** 2).sum(axis=1) - win.sum(axis=1) ** 2
        full = spread < w * w * 4 ** (8 - cfg.full_bits)
        partial = ~full & (spread < w * w * 4 ** (8 - cfg.partial_bits))
        code = np.where(full, FULL, np.where(partial, PARTIAL, COMPUTE)).astype(np.int8)
        ref = win[:, :1]
        st = np.broadcast_to(code[:, None], win.shape).copy()
        st[:, 0] = COMPUTE                                     # the reference is exact
        new = approximate(np.broadcast_to(ref, win.shape), win, st)
        np.moveaxis(states[..., sl], axis, 0)[:n] = st.reshape(n, *g.shape[1:])
        np.moveaxis(approx[..., sl], axis, 0)[:n] = new.reshape(n, *g.shape[1:])
    return Reuse(states.reshape(x.shape), approx.reshape(x.shape))
