"""The integer softmax of ``P = softmax(S~ * scale)`` (docs/concepts.md, "The rest of the head: P and O~").

This is the one definition: :mod:`hw.core.softmax` computes exactly this, bit for
bit, and so does every model above it. Per row of scores ``s``:

1. ``m = max(s)`` and ``d = m - s >= 0``;
2. the exponent in base 2, fixed point with ``FRAC_BITS`` fraction bits:
   ``t = (d * mult + 2**(shift-1)) >> shift`` where ``mult / 2**(shift + FRAC_BITS)``
   is ``scale * log2(e)`` (:func:`softmax_scale`);
3. ``e = round(EXP[frac(t)] / 2**int(t))``, ``EXP[f] = round(2**exp_bits * 2**(-f / 2**FRAC_BITS))``,
   and 0 once ``int(t) > exp_bits``;
4. ``sum = sum(e)``, then one reciprocal per row ``r = (127 << recip_shift) // sum``;
5. ``p = (e * r + 2**(recip_shift-1)) >> recip_shift``: unsigned 7-bit codes
   ``0..127`` (scale 1/127).

Why these widths: the exponent's rounding is at most 0.62/256 in base 2 (0.17 %
relative), the table's rounding is below ``2**-exp_bits``, each of the ``N``
shifted terms is off by at most half a unit of ``2**exp_bits`` (the max term is
exactly ``2**exp_bits``), and ``r`` keeps at least 16 significant bits. With
``exp_bits = max(20, bits(N) + 9)`` every code is within 1 of
``round(127 * softmax)`` computed in float64, which the tests check on random
and adversarial rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = ["FRAC_BITS", "MULT_BITS", "SHIFT_MAX", "P_MAX", "MAX_ROW", "MAX_LEVELS_PER_STAGE", "SUM_FAN_IN",
           "max_stages", "sum_stages", "pipe_stages", "SoftmaxSpec", "softmax_spec", "softmax_scale",
           "exp_table", "exp_reach", "softmax_codes", "softmax_float_codes", "softmax_cycles", "row_cycles",
           "ROW_PASSES"]

#: Fraction bits of the base-2 exponent ``t``; the exponent table has ``2**FRAC_BITS`` entries.
FRAC_BITS = 8
#: Bits of the exponent multiplier ``mult`` (normalised to ``[2**(MULT_BITS-1), 2**MULT_BITS)``).
MULT_BITS = 16
#: Largest right shift ``shift`` of ``d * mult`` (a 6-bit field).
SHIFT_MAX = 63
#: The longest row: beyond it ``127 << recip_shift`` would not fit 64 bits.
MAX_ROW = 2 ** 18
#: Comparison levels of the vector unit's row-maximum tree between two registers.
MAX_LEVELS_PER_STAGE = 1
#: Exponents the vector unit's row-sum tree adds between two registers.
SUM_FAN_IN = 2
#: The largest probability code: ``P`` is stored as ``round(127 * p)``.
P_MAX = 127


def max_stages(lanes: int) -> int:
    """Registers of the vector unit's tree that finds a beat's largest score."""
    levels = (lanes - 1).bit_length()
    return -(-levels // MAX_LEVELS_PER_STAGE)


def sum_stages(lanes: int) -> int:
    """Registers of the vector unit's tree that adds a beat's exponents (at least one)."""
    stages, reach = 1, SUM_FAN_IN
    while reach < lanes:
        stages, reach = stages + 1, reach * SUM_FAN_IN
    return stages


def pipe_stages(lanes: int) -> int:
    """Pipeline registers of the vector unit (:mod:`hw.core.softmax`) between a score
    beat and its last step into the row sum or the output: the beat max tree and
    a register to wait for the row max, then ``d``, its product in carry-save
    form, the product's low and high halves, the split of ``t``, the table and
    shift, the rounded ``e``, the sum tree (or ``e * r`` in carry-save form), and
    the low half of the sum (or of ``e * r``). The divider waits for them, and
    the codes trail by one more."""
    return max_stages(lanes) + sum_stages(lanes) + 9


@dataclass(frozen=True)
class SoftmaxSpec:
    """Widths of the integer softmax of rows of ``n`` scores of ``score_bits`` bits.

    Members
    -------
    n : int
        Scores per row (keys).
    score_bits : int
        Signed width of a score.
    exp_bits : int
        ``e`` of the max score is ``2**exp_bits``.
    int_bits : int
        Bits of ``int(t)`` after clamping: any larger exponent gives ``e = 0``.
    sum_bits : int
        Width of the row sum.
    recip_shift : int
        ``r = (127 << recip_shift) // sum``.
    quot_bits : int
        Width of ``r``: the divider's steps.
    """

    n: int
    score_bits: int
    exp_bits: int
    int_bits: int
    sum_bits: int
    recip_shift: int
    quot_bits: int

    @property
    def diff_bits(self) -> int:
        """Width of ``d = max - s`` (unsigned)."""
        return self.score_bits + 1

    @property
    def t_bits(self) -> int:
        """Width of the unclamped ``t = (d * mult) >> shift``."""
        return self.diff_bits + MULT_BITS


def softmax_spec(n: int, score_bits: int) -> SoftmaxSpec:
    """The widths for rows of ``n`` scores (``n >= 1``) of ``score_bits`` bits."""
    if n < 1:
        raise ValueError(f"a softmax row needs at least one score, got {n}")
    if n > MAX_ROW:
        raise ValueError(f"a softmax row of {n} scores is longer than the {MAX_ROW} this integer softmax takes")
    if score_bits < 2:
        raise ValueError(f"scores need at least 2 bits, got {score_bits}")
    nbits = max(1, (n - 1).bit_length())
    exp_bits = max(20, nbits + 9)
    int_bits = (exp_bits + 1).bit_length()
    sum_bits = exp_bits + 1 + nbits
    recip_shift = exp_bits + nbits + 10
    # r <= 127 * 2**recip_shift / 2**exp_bits (the sum is at least the max term).
    quot_bits = recip_shift - exp_bits + 7
    return SoftmaxSpec(n, score_bits, exp_bits, int_bits, sum_bits, recip_shift, quot_bits)


def softmax_scale(scale: float) -> tuple[int, int]:
    """``(mult, shift)`` for a real score scale (``sQ*sK/sqrt(D)``): ``mult`` is
    ``scale * log2(e) * 2**(shift + FRAC_BITS)``, rounded, with ``MULT_BITS``
    significant bits where the shift range allows."""
    if not (scale > 0 and math.isfinite(scale)):
        raise ValueError(f"the softmax scale must be a positive finite number, got {scale}")
    x = scale / math.log(2)
    # Largest total shift that keeps mult below 2**MULT_BITS.
    total = MULT_BITS - 1 - math.floor(math.log2(x))
    shift = min(max(total - FRAC_BITS, 0), SHIFT_MAX)
    mult = round(x * 2.0 ** (shift + FRAC_BITS))
    mult = min(max(mult, 1), 2 ** MULT_BITS - 1)
    return mult, shift


@lru_cache(maxsize=None)
def _table(exp_bits: int) -> tuple[int, ...]:
    return tuple(int(round(2.0 ** exp_bits * 2.0 ** (-f / 2 ** FRAC_BITS))) for f in range(2 ** FRAC_BITS))


def exp_table(spec: SoftmaxSpec) -> np.ndarray:
    """``EXP[f] = round(2**exp_bits * 2**(-f / 2**FRAC_BITS))``, ``f < 2**FRAC_BITS`` (int64)."""
    return np.array(_table(spec.exp_bits), dtype=np.int64)


def _exps(d: np.ndarray, mult: int, shift: int, spec: SoftmaxSpec) -> np.ndarray:
    t = (d * mult + ((1 << shift) >> 1)) >> shift
    whole = np.minimum(t >> FRAC_BITS, (1 << spec.int_bits) - 1)
    base = exp_table(spec)[t & ((1 << FRAC_BITS) - 1)]
    half = np.where(whole > 0, np.left_shift(1, np.maximum(whole - 1, 0)), 0)
    e = (base + half) >> whole
    return np.where(whole > spec.exp_bits, 0, e)


def softmax_codes(scores: np.ndarray, mult: int, shift: int, spec: SoftmaxSpec | None = None) -> np.ndarray:
    """Row-wise integer softmax of int scores ``[M, n]`` to codes ``0..127`` (int8)."""
    s = np.asarray(scores, dtype=np.int64)
    if s.ndim != 2:
        raise ValueError(f"scores must be a matrix [rows, n], got shape {s.shape}")
    spec = spec or softmax_spec(s.shape[1], max(2, int(np.abs(s).max(initial=0)).bit_length() + 1))
    if not (0 < mult < 2 ** MULT_BITS and 0 <= shift <= SHIFT_MAX):
        raise ValueError(f"mult {mult} / shift {shift} out of range")
    d = s.max(axis=1, keepdims=True) - s
    e = _exps(d, mult, shift, spec)
    total = e.sum(axis=1, keepdims=True)
    r = (P_MAX << spec.recip_shift) // total
    p = (e * r + (1 << (spec.recip_shift - 1))) >> spec.recip_shift
    return p.astype(np.int8)


def exp_reach(mult: int, shift: int, spec: SoftmaxSpec) -> int:
    """The largest ``d = max - s`` whose exponent ``e`` is not 0 (step 3 gives 0
    once ``int(t) > exp_bits``, and at least 1 before: the table's entries all
    exceed ``2**(exp_bits-1)``). A row's codes depend only on its scores within
    this reach of its maximum."""
    limit = (spec.exp_bits + 1) << FRAC_BITS          # t below it keeps int(t) <= exp_bits
    return ((limit << shift) - 1 - ((1 << shift) >> 1)) // mult


def softmax_float_codes(scores: np.ndarray, scale: float) -> np.ndarray:
    """``round(127 * softmax(scores * scale))`` in float64: the reference the codes
    must stay within 1 of."""
    z = np.asarray(scores, dtype=np.float64) * scale
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    return np.rint(P_MAX * p).astype(np.int64)


def softmax_cycles(spec: SoftmaxSpec, lanes: int, rows: int) -> int:
    """Cycles of the vector unit (:mod:`hw.core.softmax`) on ``rows`` rows fed without a
    gap and drained without backpressure: from the first score beat it takes to
    the last code beat it hands over. A row is three passes of ``ceil(n / lanes)``
    beats (max, sum, codes) and ``quot_bits`` divider steps after ``P =``
    :func:`pipe_stages` cycles of waiting for the sum; the last codes leave
    ``P + 1`` cycles after their beat."""
    if rows < 1 or lanes < 1:
        raise ValueError(f"need rows and lanes >= 1, got {rows} and {lanes}")
    pipe = pipe_stages(lanes)
    return rows * row_cycles(spec, lanes) + pipe + 1


#: Passes the vector unit makes over a row's scores: its maximum, its exponents'
#: sum, and its codes (each pass reads every score again).
ROW_PASSES = 3


def row_cycles(spec: SoftmaxSpec, lanes: int) -> int:
    """Cycles one row occupies the unit when rows follow each other without a gap:
    :data:`ROW_PASSES` passes of ``ceil(n / lanes)`` beats, the divider's steps and the wait for the sum."""
    return ROW_PASSES * -(-spec.n // lanes) + spec.quot_bits + pipe_stages(lanes)
