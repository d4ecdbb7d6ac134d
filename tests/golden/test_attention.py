import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden import Config, approx_scores, int_gemm, run_attention
from golden.attention import attention_output, mask_skip, quality, topk_output
from tests import reference
from tests.strategies import configs, operands


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_scores_match_loop_reference(data):
    cfg = data.draw(configs(max_extent=4, max_group=4))
    q, k = data.draw(operands(cfg)), data.draw(operands(cfg))
    _, qa = reference.reuse(q.astype(int).tolist(), cfg.grid, cfg.partition, cfg.full_bits, cfg.partial_bits)
    _, ka = reference.reuse(k.astype(int).tolist(), cfg.grid, cfg.partition, cfg.full_bits, cfg.partial_bits)
    s = approx_scores(q, k, cfg)
    assert s.dtype == np.int64
    np.testing.assert_array_equal(s, np.array(reference.matmul_t(qa, ka)))


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_exact_at_F_P_8(data):
    cfg = data.draw(configs()).with_(full_bits=8, partial_bits=8)
    q, k = data.draw(operands(cfg)), data.draw(operands(cfg))
    np.testing.assert_array_equal(approx_scores(q, k, cfg),
                                  q.astype(np.int64) @ k.astype(np.int64).T)


def test_int_gemm_exact_at_extremes():
    a = np.full((3, 1024), -128, np.int8)       # the largest products, longest exact float32 sum
    np.testing.assert_array_equal(int_gemm(a, a), np.full((3, 3), 1024 * 16384))
    b = np.full((2, 1100), -128, np.int8)        # past float32's exact range: float64 path
    np.testing.assert_array_equal(int_gemm(b, b), np.full((2, 2), 1100 * 16384))


def test_quality_metrics():
    ref = np.array([[1.0, -2.0], [0.5, 0.0]])
    assert quality(ref, ref)["psnr_db"] == math.inf and quality(ref, ref)["cosine"] == pytest.approx(1)
    q = quality(ref, ref + 0.1)
    assert q["mse"] == pytest.approx(0.01)
    assert q["psnr_db"] == pytest.approx(10 * math.log10(4 / 0.01))


def test_attention_output_rows_are_convex_combinations(rng):
    s = rng.integers(-1000, 1000, (6, 5))
    v = rng.standard_normal((5, 3))
    o = attention_output(s, v, 0.01)
    assert np.all(o <= v.max(axis=0) + 1e-12) and np.all(o >= v.min(axis=0) - 1e-12)


def test_topk_keeps_k_largest(rng):
    s = rng.permutation(20).reshape(2, 10)
    v = np.eye(10)
    o = topk_output(s, v, 1.0, keep=3)
    assert np.all((o > 0).sum(axis=1) == 3)
    assert np.all(o[np.arange(2)[:, None], np.argsort(s, axis=1)[:, -3:]] > 0)
    np.testing.assert_allclose(topk_output(s, v, 1.0, keep=10), attention_output(s, v, 1.0))


def test_mask_skip_drops_instead_of_reusing():
    cfg = Config(partition=(1, 0, 0), grid=(1, 1, 4), full_bits=5, partial_bits=3)
    x = np.array([[40], [41], [40], [60]], np.int8)   # partner 41 reuses fully, 60 partially
    np.testing.assert_array_equal(mask_skip(x, cfg).ravel(), [40, 0, 40, 60 & 15])


def test_run_attention_figures(rng):
    cfg = Config(partition=(4, 2, 2), grid=(2, 2, 4))
    q = rng.integers(-10, 10, (16, 8), dtype=np.int8)
    r = run_attention(q, q, cfg, v=q, scales=(0.1, 0.1, 0.1))
    assert r.dense_macs == 16 * 16 * 8
    assert r.oracle_reduction == pytest.approx(1 - r.oracle_macs / r.dense_macs)
    assert {"mse", "psnr_db", "cosine", "output"} <= set(r)


def test_head_output_is_probs_times_v_tilde(rng):
    # V~ from the loop reference's reading of docs/concepts.md, "Reuse states", O~ from plain integer loops.
    from golden.softmax import softmax_float_codes
    cfg = Config(partition=(2, 2, 2), grid=(2, 3, 4), full_bits=6, partial_bits=2)
    q = rng.integers(-128, 128, (24, 6), dtype=np.int8)
    k = np.clip(q + rng.integers(-3, 4, q.shape), -128, 127).astype(np.int8)
    v = np.clip(q[::-1] + rng.integers(-5, 6, q.shape), -128, 127).astype(np.int8)
    scales = (0.02, 0.03, 0.5)
    r = run_attention(q, k, cfg, v=v, scales=scales)
    vs, va = reference.reuse(v.astype(int).tolist(), cfg.grid, cfg.partition, 6, 2)
    np.testing.assert_array_equal(r.v_states, vs)
    probs = r.probs.astype(int).tolist()
    assert r.out.dtype == np.int64
    np.testing.assert_array_equal(r.out, reference.matmul_t(probs, [list(c) for c in zip(*va)]))
    want = softmax_float_codes(r.scores, scales[0] * scales[1] / np.sqrt(6))
    assert np.abs(r.probs.astype(int) - want).max() <= 1
    assert r.pv_dense_macs == 24 * 24 * 6
    assert r.pv_oracle_macs == reference.pv_oracle(24, vs)
    np.testing.assert_allclose(r.output, r.out * scales[2] / 127)
    assert r.mse == pytest.approx(float(np.mean((r.output - r.reference_output) ** 2)))
