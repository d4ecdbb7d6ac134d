"""The drain chain's timing rules, written once for the RTL controller
(:mod:`hw.engine`) and the cycle model (:mod:`golden.cycle_model`).

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

__all__ = ["drain_spacing", "tail_cycles", "drain_slots"]


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
    last = [-spacing, -spacing]          # last drain slot of each parity
    n = 0
    first = True
    for length in lengths:
        if not first:
            while n - last[n & 1] < spacing:
                n += 1
            last[n & 1] = n
        first = False
        n += max(int(length), 1)
    while n - last[n & 1] < spacing:
        n += 1
    return n + 1
