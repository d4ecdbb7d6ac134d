"""Linear layers: Y~ = X~ W with window reuse, against the loop reference."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from golden.linear import linear_layer
from tests import reference
from tests.strategies import configs, operands


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_linear_layer_is_x_tilde_times_w(data):
    cfg = data.draw(configs())
    x = data.draw(operands(cfg, heads=2))
    w = np.random.default_rng(data.draw(st.integers(0, 1000))).integers(
        -128, 128, (x.shape[1], 3), dtype=np.int8)
    r = linear_layer(x, w, cfg)
    _, xt = reference.window(x.astype(int).tolist(), cfg.grid, cfg.partition,
                             cfg.full_bits, cfg.partial_bits, cfg.window)
    np.testing.assert_array_equal(r.approx, np.array(xt, dtype=np.int64) @ w.astype(np.int64))
    np.testing.assert_array_equal(r.exact, x.astype(np.int64) @ w.astype(np.int64))
    assert 0 <= r.reuse_macs <= r.dense_macs


def test_bad_weights():
    import pytest

    from golden import Config
    cfg = Config(partition=(1, 1, 1), grid=(1, 1, 2))
    with pytest.raises(ValueError, match="weights must be int8"):
        linear_layer(np.zeros((2, 3), np.int8), np.zeros((2, 3), np.int8), cfg)
