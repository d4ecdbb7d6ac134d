"""The dispatcher's matcher, docs/design.md, "The data dispatcher" and the lane pairing of §5.2: golden model.

A channel step needs, in each PE of the array, 0, 1 or 2 of its two 4x8 lanes
(:func:`golden.pe.need_lanes` of the step's :func:`golden.pe.step_need`): nothing,
one nibble or ``ROW`` product, or a full product. Two steps can share a cycle
when every PE's lanes add up to at most 2. Both ports carry two bytes (the row
operands ``a0, a1`` and the column operands ``b0, b1``), so the lanes are the
only budget: a PE where only one of the two steps has work runs it whole.

* pass B (``q0 x k1~``) depends on the column only (``sk``);
* pass C (``q1~ x k0``) on the row only (``sq``); with the exact PE a partial
  row is a one-lane ``ROW`` step, so two partial rows pair;
* pass D (``q1~ x k1~``) on both.

Pass A multiplies whole bytes in every PE and is never paired. The merge unit
looks at a window of ``lookahead`` upcoming steps (the head and the next
``lookahead - 1``), pairs the head with the first compatible one and issues
both in one cycle, or issues the head alone.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .pe import Mode, need_lanes, step_need

__all__ = ["PAIRED_MODES", "lanes_of", "pe_needs", "compatible", "step_masks", "share", "match"]

#: The passes whose steps the matcher pairs.
PAIRED_MODES = (Mode.B, Mode.C, Mode.D)


@lru_cache(maxsize=None)
def lanes_of(mode: int, accumulators: int = 3) -> np.ndarray:
    """``[sq, sk]``: lanes one step of ``mode`` takes in a PE with those flags.

    Built once per (mode, PE kind): the cycle model asks for it once per tile and
    pass, millions of times on a full-size head. The table is read-only."""
    table = np.array([[need_lanes(step_need(mode, sq, sk, accumulators)[0]) for sk in range(3)]
                      for sq in range(3)], dtype=np.int64)
    table.flags.writeable = False
    return table


def pe_needs(mode: int, sq: np.ndarray, sk: np.ndarray, accumulators: int = 3) -> np.ndarray:
    """Lane needs ``[Dg, Rv * Cv]`` of every channel in every valid PE (row-major).

    ``sq`` is ``[Rv, Dg]`` (valid rows), ``sk`` is ``[Cv, Dg]`` (valid columns);
    PEs of rows or columns that do not exist are left out (they need nothing).
    """
    table = lanes_of(mode, accumulators)
    sq, sk = np.asarray(sq, np.int64), np.asarray(sk, np.int64)
    per = table[sq.T[:, :, None], sk.T[:, None, :]]          # [Dg, Rv, Cv]
    return per.reshape(per.shape[0], -1)


def compatible(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(np.asarray(a) + np.asarray(b) <= 2))


def step_masks(needs: np.ndarray) -> tuple[list[int], list[int]]:
    """Each step's needs (``needs[c]``, lanes per PE) as two PE bit masks: the PEs
    it uses some lane of, and those it uses both lanes of."""
    needs = np.asarray(needs).reshape(len(needs), -1)
    weights = np.array([1 << j for j in range(needs.shape[1])], dtype=object)
    return ((needs >= 1).astype(object) @ weights).tolist(), ((needs == 2).astype(object) @ weights).tolist()


def share(some: list[int], whole: list[int], a: int, b: int) -> bool:
    """Steps ``a`` and ``b`` (:func:`step_masks`) fit in one cycle: neither takes both
    lanes of a PE the other uses at all."""
    return not (whole[a] & some[b]) and not (some[a] & whole[b])


def match(channels, needs: np.ndarray, lookahead: int) -> list[tuple[int, int | None]]:
    """Issue order of a pass's ``channels``: ``(head, partner or None)`` per cycle."""
    some, whole = step_masks(needs)
    rem = list(channels)
    out = []
    while rem:
        head = rem.pop(0)
        partner = None
        for pos, c in enumerate(rem[:lookahead - 1]):
            if share(some, whole, head, c):
                partner = rem.pop(pos)
                break
        out.append((head, partner))
    return out
