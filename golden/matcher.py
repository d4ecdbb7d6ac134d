"""The dispatcher's matcher, DESIGN.md §5.4 and the nibble-lane pairing of §5.2: golden model.

A channel step needs, in each column of the array, 0, 4 or 8 bits of the
8-bit column port (codes 0, 1, 2): nothing, one nibble, or the whole byte.
Two steps can share a cycle when every column's codes add up to at most 2.

* pass B (``q0 x k1~``): ``sk = 2`` needs nothing, ``sk = 1`` the low nibble of
  ``k1~``, ``sk = 0`` the byte;
* pass D (``q1~ x k1~``): ``sk = 2`` needs the byte if some valid row has
  ``sq = 2``, else nothing; ``sk = 0`` needs the byte if some valid row has
  ``sq != 2``, else nothing; ``sk = 1`` needs one nibble when all valid rows
  agree (``hi(k1~)`` when they all have ``sq = 2``, ``lo(k1~)`` otherwise) and
  the byte when they differ.

Passes A and C multiply whole bytes and are never paired. The merge unit
looks at a window of ``lookahead`` upcoming steps (the head and the next
``lookahead - 1``), pairs the head with the first compatible one and issues
both in one cycle, or issues the head alone.
"""

from __future__ import annotations

import numpy as np

from .pe import Mode

__all__ = ["column_needs", "compatible", "match"]


def column_needs(mode: int, sq: np.ndarray, sk: np.ndarray, accumulators: int = 3) -> np.ndarray:
    """Need codes ``[Dg, C]`` of every channel in every column.

    ``sq`` is ``[Rv, Dg]`` (valid rows), ``sk`` is ``[Cv, Dg]`` (valid columns);
    columns beyond ``Cv`` are left out (the caller pads them with 0). The exact
    PE (``accumulators = 4``) does nothing in D for ``sq = 2`` rows, so there
    ``sk = 1`` needs ``lo(k1~)`` and ``sk = 0`` the byte, when some row has ``sq != 2``.
    """
    sk = sk.T                                             # [Dg, Cv]
    if mode == Mode.B:
        return np.select([sk == 2, sk == 1], [0, 1], 2).astype(np.int64)
    if mode != Mode.D:
        raise ValueError("only passes B and D are paired")
    any2 = (sq == 2).any(axis=0)[:, None]                 # [Dg, 1]
    anyn = (sq != 2).any(axis=0)[:, None]
    if accumulators == 4:
        return np.where(anyn, np.select([sk == 2, sk == 1], [0, 1], 2), 0).astype(np.int64)
    need = np.where(sk == 2, np.where(any2, 2, 0),
                    np.where(sk == 0, np.where(anyn, 2, 0), np.where(any2 & anyn, 2, 1)))
    return need.astype(np.int64)


def compatible(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(a + b <= 2))


def match(channels, needs: np.ndarray, lookahead: int) -> list[tuple[int, int | None]]:
    """Issue order of a pass's ``channels``: ``(head, partner or None)`` per cycle."""
    # Each channel's needs as two column masks (some bits; all 8 bits): two steps
    # fit when neither takes the whole byte of a column the other uses at all.
    needs = np.asarray(needs).reshape(len(needs), -1)
    weights = np.array([1 << j for j in range(needs.shape[1])], dtype=object)
    some = ((needs >= 1).astype(object) @ weights).tolist()
    whole = ((needs == 2).astype(object) @ weights).tolist()
    rem = list(channels)
    out = []
    while rem:
        head = rem.pop(0)
        partner = None
        for pos, c in enumerate(rem[:lookahead - 1]):
            if not (whole[head] & some[c]) and not (some[head] & whole[c]):
                partner = rem.pop(pos)
                break
        out.append((head, partner))
    return out
