"""The integer softmax: codes within 1 of round(127 * softmax) in float64, on
random and adversarial rows, and the widths it promises."""

import math

import numpy as np
import pytest

from golden.softmax import (
    FRAC_BITS,
    MULT_BITS,
    P_MAX,
    _exps,
    exp_reach,
    exp_table,
    softmax_codes,
    softmax_float_codes,
    softmax_scale,
    softmax_spec,
)


def _rows(kind, n, rng, scale):
    if kind == "random":
        return rng.integers(-2 ** 20, 2 ** 20, (3, n))
    if kind == "equal":
        return np.full((2, n), int(rng.integers(-5, 5)))
    if kind == "dominant":
        s = rng.integers(-100, 100, (2, n))
        s[:, rng.integers(n)] = 10 ** 6
        return s
    if kind == "extreme":
        return np.where(rng.random((2, n)) < 0.5, -2 ** 21, 2 ** 21 - 1)
    if kind == "ties":                         # two maxima and a tail just below them
        s = np.full((2, n), -2 ** 21)
        s[:, :2] = 7
        s[:, 2:5] = 6
        return s
    return (rng.normal(0, 1.5, (2, n)) / scale).astype(np.int64)   # "natural": logits of order 1


@pytest.mark.parametrize("kind", ["random", "equal", "dominant", "extreme", "ties", "natural"])
def test_codes_within_one_of_float(kind, rng):
    for _ in range(150):
        n = int(rng.integers(1, 40)) if rng.random() < 0.5 else int(rng.integers(40, 2500))
        scale = float(10 ** rng.uniform(-6, 1))
        s = _rows(kind, n, rng, scale)
        mult, shift = softmax_scale(scale)
        p = softmax_codes(s, mult, shift).astype(np.int64)
        ref = softmax_float_codes(s, scale)
        assert p.dtype == np.int64 and p.min() >= 0 and p.max() <= P_MAX
        assert np.abs(p - ref).max() <= 1, f"{kind} n={n} scale={scale}"


def test_one_score_is_certain_and_equal_scores_share():
    assert softmax_codes(np.array([[-123]]), *softmax_scale(0.01)).tolist() == [[P_MAX]]
    p = softmax_codes(np.zeros((1, 4), np.int64), *softmax_scale(0.5))
    assert p.tolist() == [[32, 32, 32, 32]]          # round(127 / 4)


def test_scale_is_normalised():
    for scale in (1e-7, 3.3e-4, 0.125, 1.0, 77.0):
        mult, shift = softmax_scale(scale)
        assert 0 < mult < 2 ** MULT_BITS
        exact = scale / math.log(2) * 2 ** (shift + FRAC_BITS)
        if shift > 0:
            assert mult >= 2 ** (MULT_BITS - 1) and abs(mult - exact) <= 0.5
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="positive finite"):
            softmax_scale(bad)


def test_widths():
    spec = softmax_spec(2048, 24)
    table = exp_table(spec)
    assert table[0] == 2 ** spec.exp_bits and np.all(np.diff(table) < 0)
    assert table[-1] > 2 ** (spec.exp_bits - 1)
    assert spec.exp_bits >= 20 and spec.sum_bits >= spec.exp_bits + 12
    # The reciprocal keeps 16 significant bits even when every term is the max.
    assert (P_MAX << spec.recip_shift) // (2048 * 2 ** spec.exp_bits) >= 2 ** 16
    assert (P_MAX << spec.recip_shift) // 2 ** spec.exp_bits < 2 ** spec.quot_bits
    with pytest.raises(ValueError):
        softmax_spec(0, 24)
    with pytest.raises(ValueError, match="longer"):
        softmax_spec(2 ** 18 + 1, 24)


@pytest.mark.parametrize("scale", [1e-6, 1e-3, 0.05, 1.0, 40.0])
@pytest.mark.parametrize("n", [2, 300, 32760])
def test_exp_reach_is_the_last_nonzero_exponent(scale, n):
    spec = softmax_spec(n, 24)
    mult, shift = softmax_scale(scale)
    reach = exp_reach(mult, shift, spec)
    e = _exps(np.array([reach, reach + 1], np.int64), mult, shift, spec)
    assert e[0] > 0 and e[1] == 0
