import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden import Config, pair_reuse, window_reuse
from golden.reuse import classify
from tests import reference
from tests.strategies import configs, operands


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_pair_reuse_matches_loop_reference(data):
    cfg = data.draw(configs())
    x = data.draw(operands(cfg))
    got = pair_reuse(x, cfg)
    states, approx = reference.reuse(x.astype(int).tolist(), cfg.grid, cfg.partition,
                                     cfg.full_bits, cfg.partial_bits)
    np.testing.assert_array_equal(got.states, np.array(states))
    np.testing.assert_array_equal(got.approx, np.array(approx))
    assert got.states.dtype == np.int8 and got.approx.dtype == np.int8


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_window_reuse_matches_loop_reference(data):
    cfg = data.draw(configs()).with_(window=data.draw(st.integers(1, 4)))
    heads = data.draw(st.integers(1, 2))
    x = data.draw(operands(cfg, heads=heads))
    got = window_reuse(x, cfg)
    states, out = reference.window(x.astype(int).tolist(), cfg.grid, cfg.partition,
                                   cfg.full_bits, cfg.partial_bits, cfg.window)
    np.testing.assert_array_equal(got.states, np.array(states))
    np.testing.assert_array_equal(got.approx, np.array(out))


def test_classify_every_byte_pair():
    a, b = np.meshgrid(np.arange(-128, 128), np.arange(-128, 128), indexing="ij")
    for F, P in [(5, 3), (8, 8), (0, 0), (4, 4), (8, 0)]:
        got = classify(a, b, F, P)
        want = np.array([[reference.state_of(int(i), int(j), F, P) for j in range(-128, 128)]
                         for i in range(-128, 128)])
        np.testing.assert_array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_anchors_never_change(data):
    cfg = data.draw(configs())
    x = data.draw(operands(cfg))
    r = pair_reuse(x, cfg)
    changed = r.approx != x
    assert np.all(r.states[changed] > 0), "only partners may be approximated"
    # Every anchor has state 0; references sit at even coordinates along the direction.
    for n in range(cfg.tokens):
        for c in range(cfg.head_dim):
            if reference.reference_token(n, c, cfg.grid, cfg.partition) is None:
                assert r.states[n, c] == 0 and r.approx[n, c] == x[n, c]


def test_exact_when_only_identical_values_reuse(rng):
    cfg = Config(partition=(3, 4, 5), grid=(3, 4, 5), full_bits=8, partial_bits=8)
    x = rng.integers(-128, 128, (cfg.tokens, cfg.head_dim), dtype=np.int8)
    x[1::2] = x[0::2][: x[1::2].shape[0]]          # plenty of identical neighbours
    r = pair_reuse(x, cfg)
    np.testing.assert_array_equal(r.approx, x)
    assert not np.any(r.states == 1)


def test_full_reuse_count_never_falls_as_F_falls(rng):
    x = rng.integers(-128, 128, (4 * 6 * 6, 12), dtype=np.int8)
    counts = [int((pair_reuse(x, Config(partition=(4, 4, 4), grid=(4, 6, 6), full_bits=F,
                                        partial_bits=0)).states == 2).sum())
              for F in range(8, -1, -1)]
    assert counts == sorted(counts), counts
    assert counts[-1] == np.prod(x.shape) // 2     # F = 0: every partner is a full reuse


def test_odd_extents_and_empty_group():
    cfg = Config(partition=(0, 2, 1), grid=(3, 1, 3))
    x = np.zeros((cfg.tokens, 3), np.int8)
    r = pair_reuse(x, cfg)
    g = r.states.reshape(3, 1, 3, 3)
    assert g[2, 0, :, 0:2].max() == 0            # y-group reuses along t: t=2 unpaired
    assert np.all(g[1, 0, :, 0:2] == 2)          # t=1 partners of t=0
    assert np.all(g[..., 2] == 0)                # x-group along y, H=1: no pairs at all


def test_shape_and_dtype_errors():
    cfg = Config(partition=(1, 1, 1), grid=(1, 2, 2))
    with pytest.raises(ValueError, match="does not match"):
        pair_reuse(np.zeros((5, 3), np.int8), cfg)
    with pytest.raises(ValueError, match="int8"):
        pair_reuse(np.zeros((4, 3), np.int16), cfg)

