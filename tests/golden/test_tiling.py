"""Tiling: every token pair of every channel group is covered exactly once, and
the accumulation buffer rebuilds S~ from per-tile partial scores."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from golden import approx_scores, pair_reuse
from golden.tiling import accumulate, pair_tables, tile_groups
from tests.strategies import configs, operands


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_tiles_rebuild_s_tilde(data):
    cfg = data.draw(configs()).with_(rows=data.draw(st.integers(1, 3)), cols=data.draw(st.integers(1, 3)))
    q, k = data.draw(operands(cfg)), data.draw(operands(cfg))
    qt, kt = pair_tables(q, cfg), pair_tables(k, cfg)
    for table in qt:
        tokens = np.concatenate([table.ref, table.partner[table.partner >= 0]])
        assert sorted(tokens.tolist()) == list(range(cfg.tokens))     # each token once per group
    scores = np.zeros((cfg.tokens, cfg.tokens), np.int64)
    for tile in tile_groups(qt, kt, cfg):
        a, b = qt[tile.group], kt[tile.group]
        partial = np.zeros((4, cfg.rows, cfg.cols), np.int64)
        qi, kj = list(tile.q_pairs), list(tile.k_pairs)
        rows = (a.x0[qi], a.x0[qi], a.x1[qi], a.x1[qi])
        cols = (b.x0[kj], b.x1[kj], b.x0[kj], b.x1[kj])
        for t in range(4):
            partial[t, :len(qi), :len(kj)] = rows[t].astype(np.int64) @ cols[t].astype(np.int64).T
        accumulate(scores, tile, a, b, partial)
    np.testing.assert_array_equal(scores, approx_scores(q, k, cfg))


def test_missing_partner_is_a_full_reuse_of_the_reference():
    from golden import Config
    cfg = Config(partition=(2, 0, 0), grid=(1, 1, 3))
    x = np.array([[1, 2], [3, 4], [5, 6]], np.int8)
    (t,) = pair_tables(x, cfg)
    assert t.partner.tolist() == [1, -1]
    np.testing.assert_array_equal(t.x1[1], t.x0[1])
    assert (t.state[1] == 2).all()
    np.testing.assert_array_equal(t.x1[0], pair_reuse(x, cfg).approx[1])
