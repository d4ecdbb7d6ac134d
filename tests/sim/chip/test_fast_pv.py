"""The fast model of P V~ with V's reuse folded: the same column tiles, keys,
choice and cycles as the exact model (golden.head_cycles.pv_cycles on the
head's whole P), on random heads and on heads whose rows refuse folds."""

import math

import numpy as np
import pytest

from golden import Config
from golden.attention import approx_scores, head_probs
from golden.cycle_model import tail_cycles
from golden.head_cycles import pv_config, pv_cycles
from golden.pv_tiles import partner_refs
from golden.softmax import _exps, softmax_scale, softmax_spec
from sim.chip.fast_pv import pv_work, risky_rows
from tests.golden.test_pv_tiles import values

CASES = [((2, 4, 4), (4, 2, 2), 4), ((3, 4, 5), (3, 4, 1), 3), ((4, 4, 4), (6, 0, 2), 2), ((2, 6, 6), (2, 2, 4), 4)]
#: Softmax scales: a natural one (rows spread over many keys) and ones so large
#: that most rows keep one or two keys within reach (rows that refuse folds).
SCALES = {"natural": lambda d: 1 / (8 * math.sqrt(d)), "peaked": lambda d: 4.0, "ties": lambda d: 40.0,
          "pairs": lambda d: 40.0}


def head(rng, cfg, kind):
    """int8 Q, K. ``ties``: few distinct values, so that rows often hold their
    maximum on exactly two keys. ``pairs``: every key of the first group's pairs
    equals its reference, so a row whose maximum is on such a pair puts all of
    its codes on it (64 + 64: the fold must be refused)."""
    spread = 3 if kind == "ties" else 128
    q = rng.integers(-spread, spread, (cfg.tokens, cfg.head_dim)).astype(np.int8)
    k = rng.integers(-spread, spread, (cfg.tokens, cfg.head_dim)).astype(np.int8)
    if kind == "pairs":
        partners, refs = partner_refs(cfg, next(g for g, sl in cfg.group_slices.items() if sl.stop > sl.start))
        k[partners] = k[refs]
    return q, k


@pytest.mark.parametrize("grid, part, cols", CASES)
@pytest.mark.parametrize("kind", list(SCALES))
@pytest.mark.parametrize("prob_rows", [3, 1024])        # the risky rows in blocks of 3, or whole
def test_fast_pv_equals_the_exact_model(rng, monkeypatch, grid, part, cols, kind, prob_rows):
    monkeypatch.setattr("sim.chip.fast_pv.PROB_ROWS", prob_rows)
    cfg = Config(grid=grid, partition=part, cols=cols)
    q, k = head(rng, cfg, kind)
    v = values(rng, cfg)
    scale = SCALES[kind](cfg.head_dim)
    exact = pv_cycles(head_probs(approx_scores(q, k, cfg), cfg, scale), v, cfg)
    work = pv_work(q, k, v, cfg, scale)
    assert work.tiles == [(len(t.channels), len(t.keys)) for t in exact["tiles"]]
    assert work.shared == (exact["schedule"] == "shared")
    slots, passes, products = work.slots(cfg.tokens, cfg.tokens, cfg)
    assert slots + work.runs * tail_cycles(pv_config(cfg)) == exact["cycles"]
    assert products == exact["executed_macs"]
    assert passes == (len(work.tiles) if work.shared else -(-cfg.head_dim // cfg.cols)) * -(-cfg.tokens // cfg.rows)


@pytest.mark.parametrize("kind", list(SCALES))
def test_risky_rows_are_those_with_two_exponents_or_fewer(rng, kind):
    cfg = Config(grid=(2, 4, 4), partition=(4, 2, 2), cols=4)
    q, k = head(rng, cfg, kind)
    scale = SCALES[kind](cfg.head_dim)
    s = approx_scores(q, k, cfg)
    mult, shift = softmax_scale(scale)
    e = _exps(s.max(axis=1, keepdims=True) - s, mult, shift, softmax_spec(cfg.tokens, cfg.acc_bits))
    want = np.flatnonzero((e > 0).sum(axis=1) <= 2)
    got = risky_rows(q, k, cfg, scale, block=7)          # blocks that do not divide N
    np.testing.assert_array_equal(got, want)
    if kind != "natural":
        assert len(want), "the adversarial head must exercise the exact codes"


def test_a_refused_fold_is_seen_without_the_whole_p(rng):
    # Rows that put all their codes on a pair refuse its fold; spread rows do not.
    cfg = Config(grid=(2, 4, 4), partition=(4, 2, 2), cols=4)
    q, k = head(rng, cfg, "pairs")
    v = values(rng, cfg)
    v[partner_refs(cfg, "t")[0], :4] = v[partner_refs(cfg, "t")[1], :4]     # every t-pair of V fully reused
    refused = sum(keys for _, keys in pv_work(q, k, v, cfg, SCALES["pairs"](cfg.head_dim)).tiles)
    spread = sum(keys for _, keys in pv_work(q, k, v, cfg, 1e-4).tiles)
    assert refused > spread
