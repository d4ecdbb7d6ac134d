"""The drain chain's timing rules, written once for the RTL controller
(:mod:`hw.core.engine`) and the cycle model (:mod:`golden.cycle_model`).

Finished scores leave the array through a chain that moves *up* each column,
one PE per cycle, against the downward skew: a drain issued at slot ``n``
captures R0 of the PE in row ``i`` at ``n + i``, and that capture takes the
chain position which the value of PE ``i + 1`` would have moved into. Counting
chain positions by ``position + time``, a drain at ``n`` occupies the positions
``n + 2i + 1`` for ``i < R``: one parity only. Two drains of *different* parity
therefore never collide, whatever their distance; two of the *same* parity
collide unless they are ``2R`` or more apart.

So a pass lasts as long as its work (one slot at least, which carries its
hand-over and its drain). The controller only holds a drain back, one empty
slot at a time, while the last drain of its parity is fewer than
:func:`drain_spacing` slots ago. That is the column port's own bandwidth (one
score per cycle, R per drain) and nothing more: at most two drains in any
``2R`` slots.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["drain_spacing", "tail_cycles", "drain_slots", "uniform_slots", "group_waits"]


def drain_spacing(rows: int) -> int:
    """Fewest slots between two drains of the same parity."""
    return 2 * rows


def tail_cycles(rows: int, cols: int, pe_stages: int = 1) -> int:
    """Cycles after the final drain slot until its last score has left the array:
    two register stages into the array, the column skew, the chain up, and one
    more cycle for each PE stage beyond the first (the drain acts there)."""
    return 2 * rows + cols + pe_stages - 1


def drain_slots(lengths: Iterable[int], rows: int) -> int:
    """Slots the controller issues for passes of ``lengths`` slots each, in order.

    Every pass but the first drains on its first slot, and one final slot
    drains the last pass; a drain waits (empty slots) while the last drain of
    its slot's parity is closer than :func:`drain_spacing`. Returns the slot
    count, waits and the final slot included.
    """
    spacing = drain_spacing(rows)
    lengths = np.asarray(lengths if isinstance(lengths, np.ndarray) else list(lengths), np.int64)
    lengths = np.maximum(lengths.ravel(), 1)
    if not len(lengths) or lengths.min() >= spacing:
        # Every pass outlasts the spacing, so no drain is ever closer than it to the
        # last one of its parity: nothing waits (a dense head's millions of tiles).
        return int(lengths.sum()) + 1
    last = [-spacing, -spacing]          # last drain slot of each parity
    n = 0
    first = True
    for length in lengths.tolist():
        if not first:
            while n - last[n & 1] < spacing:
                n += 1
            last[n & 1] = n
        first = False
        n += length
    while n - last[n & 1] < spacing:
        n += 1
    return n + 1


def uniform_slots(count: int, length: int, rows: int) -> int:
    """:func:`drain_slots` of ``count`` passes of ``length`` slots each, without
    listing them (a dense 720p head has about a billion tiles)."""
    if count < 0:
        raise ValueError(f"a negative pass count: {count}")
    if max(length, 1) >= drain_spacing(rows) or count == 0:
        return count * max(length, 1) + 1
    return drain_slots([length] * count, rows)


def group_waits(lengths, rows: int) -> np.ndarray:
    """Empty slots the drains of a group of passes wait, for many groups at once.

    ``lengths`` is ``[S, P]``: the issued slots of ``P`` passes run back to back
    (a tile group's passes A-D). Counted per group are the waits of the drains
    of its passes 2..P and of the drain that follows it (the next group's first
    drain, or the final one). Returns ``[S]``.

    Why a group can be counted on its own: when its first pass lasts at least
    :func:`drain_spacing` slots, every drain before that pass is at least that
    far from the group's second drain, so no wait inside the group, nor the one
    after it, depends on what ran before. A head's slots are then the sum over
    its groups of their slots and these waits, plus the final slot
    (:func:`drain_slots` gives the same count; the fast cycle model relies on it).
    """
    lengths = np.maximum(np.asarray(lengths, np.int64), 1)
    spacing = drain_spacing(rows)
    s, p = lengths.shape
    n = lengths[:, 0].copy()                      # slots since the group's first drain
    last = np.stack([np.zeros(s, np.int64), np.full(s, -spacing, np.int64)])   # by parity, relative
    waits = np.zeros(s, np.int64)
    rows_ = np.arange(s)
    for k in range(1, p + 1):
        for _ in range(2 * spacing):
            short = n - last[n & 1, rows_] < spacing
            if not short.any():
                break
            n += short
            waits += short
        last[n & 1, rows_] = n
        if k < p:
            n += lengths[:, k]
    return waits
