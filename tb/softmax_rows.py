"""Stimulus for the softmax unit's benches: rows of scores of named kinds, and
head scales, random or extreme. Shared by the cocotb bench and the Amaranth one."""

from __future__ import annotations

import random

from golden.softmax import MULT_BITS, SHIFT_MAX, softmax_scale

__all__ = ["ROW_KINDS", "row_scores", "head_scale"]

ROW_KINDS = ("random", "equal", "dominant", "extreme", "ties", "natural")


def row_scores(kind: str, n: int, bits: int, rnd: random.Random) -> list[int]:
    """One row of ``n`` scores of ``bits`` signed bits, of a named kind."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if kind == "random":
        return [rnd.randint(lo, hi) for _ in range(n)]
    if kind == "equal":
        return [rnd.randint(lo, hi)] * n
    if kind == "dominant":
        row = [rnd.randint(-100, 100) for _ in range(n)]
        row[rnd.randrange(n)] = hi
        return row
    if kind == "extreme":
        return [rnd.choice((lo, hi)) for _ in range(n)]
    if kind == "ties":
        row = [lo] * n
        for j in rnd.sample(range(n), min(n, 3)):
            row[j] = hi - rnd.randint(0, 1)
        return row
    spread = 1 << rnd.randint(0, bits - 2)        # "natural": a bell of some width
    return [max(lo, min(hi, int(rnd.gauss(0, spread)))) for _ in range(n)]


def head_scale(rnd: random.Random, trial: int) -> tuple[int, int]:
    """``(mult, shift)``: from a random real scale, or one of the extremes."""
    extremes = [(2 ** MULT_BITS - 1, 0), (1, SHIFT_MAX), (2 ** (MULT_BITS - 1), SHIFT_MAX)]
    if trial < len(extremes):
        return extremes[trial]
    return softmax_scale(10 ** rnd.uniform(-7, 1))
