"""P V~ as column tiles with V's full reuse folded (the shared multiply): exact, and folding all it may."""

import numpy as np
import pytest

from golden import Config
from golden.pv_tiles import column_tiles, partner_refs, pv_tiles
from golden.softmax import P_MAX
from tests import reference

CASES = [((2, 2, 3), (2, 2, 2), 4), ((2, 4, 4), (4, 2, 2), 2), ((3, 2, 5), (3, 4, 1), 3),
         ((1, 4, 4), (0, 5, 3), 4), ((4, 2, 2), (6, 0, 2), 1)]


def codes(rng, n, peaked=False):
    """Rows of codes that sum to about P_MAX, as softmax rows do (a peaked row puts
    nearly all of it on two keys, which a fold must then refuse)."""
    logits = rng.normal(0, 3 if peaked else 1, (n, n))
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return np.round(P_MAX * p / p.sum(axis=1, keepdims=True)).astype(np.int64)


def values(rng, cfg):
    """int8 V whose partners often equal their references: full reuse to fold."""
    v = rng.integers(-128, 128, (cfg.tokens, cfg.head_dim))
    for group, sl in cfg.group_slices.items():
        if sl.stop > sl.start:
            partners, refs = partner_refs(cfg, group)
            same = rng.random((len(partners), sl.stop - sl.start)) < 0.7
            v[partners, sl] = np.where(same, v[refs, sl] ^ rng.integers(0, 4, same.shape), v[partners, sl])
    return v.astype(np.int8)


@pytest.mark.parametrize("grid, part, cols", CASES)
@pytest.mark.parametrize("peaked", [False, True])
def test_tiles_compute_p_v_exactly(rng, grid, part, cols, peaked):
    cfg = Config(grid=grid, partition=part, cols=cols)
    p, v = codes(rng, cfg.tokens, peaked), values(rng, cfg)
    _, v_approx = reference.reuse(v.astype(int).tolist(), grid, part, cfg.full_bits, cfg.partial_bits)
    want = np.array(reference.matmul_t(p.tolist(), [list(c) for c in zip(*v_approx)]))
    got = np.full(want.shape, -1, np.int64)
    seen = []
    for tile in pv_tiles(p, v, cfg):
        assert 1 <= len(tile.channels) <= cols
        assert tile.p.dtype == np.int8 and tile.p.min() >= 0 and tile.p.max() <= P_MAX
        got[:, tile.channels] = tile.p.astype(np.int64) @ tile.v.astype(np.int64)
        seen += list(tile.channels)
    assert sorted(seen) == list(range(cfg.head_dim))           # every channel in one tile
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("grid, part, cols", CASES)
def test_a_tile_folds_exactly_what_it_may(rng, grid, part, cols):
    cfg = Config(grid=grid, partition=part, cols=cols)
    p, v = codes(rng, cfg.tokens, peaked=True), values(rng, cfg)
    states, _ = reference.reuse(v.astype(int).tolist(), grid, part, cfg.full_bits, cfg.partial_bits)
    folded_any = False
    for tile in pv_tiles(p, v, cfg):
        chans = [int(c) for c in tile.channels]
        groups = {reference.group_of(c, part) for c in chans}
        assert len(groups) == 1                               # a tile keeps to one group's pairs
        refs = {n: reference.reference_token(n, chans[0], grid, part) for n in range(cfg.tokens)}
        for n, r in refs.items():
            may = (r is not None and all(states[n][c] == 2 for c in chans)
                   and all(p[i, n] + p[i, r] <= P_MAX for i in range(cfg.tokens)))
            assert (n in set(tile.folded)) == may, (n, chans)
        assert sorted(tile.keys) == sorted(set(range(cfg.tokens)) - set(tile.folded))
        # Each folded partner rides its reference's slot, and P' is P0 + P1 there.
        for s, (n, f) in enumerate(zip(tile.keys, tile.partner)):
            assert f == -1 or refs[f] == n
            np.testing.assert_array_equal(tile.fold[:, s], p[:, f] if f >= 0 else 0)
            np.testing.assert_array_equal(tile.p[:, s], p[:, n] + tile.fold[:, s])
        assert sorted(f for f in tile.partner if f >= 0) == sorted(tile.folded)
        folded_any |= len(tile.folded) > 0
    assert folded_any


def test_column_tiles_cluster_channels_that_agree():
    # Channels 0 and 2 reuse on the same keys, 1 and 3 on others: tiles of two pair them up.
    full = np.array([[1, 0, 1, 0], [1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 1, 0]], bool)
    assert sorted(map(sorted, column_tiles(full, 2))) == [[0, 2], [1, 3]]
    assert sorted(sum(column_tiles(full, 3), [])) == [0, 1, 2, 3]


def test_refusals():
    cfg = Config(grid=(1, 2, 2), partition=(2, 1, 1))
    v = np.zeros((4, 4), np.int8)
    with pytest.raises(ValueError, match="not \\[4, 4\\]"):
        pv_tiles(np.zeros((3, 4)), v, cfg)
    with pytest.raises(ValueError, match="codes 0..127"):
        pv_tiles(np.full((4, 4), 128), v, cfg)
