import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from golden import Config, dense_macs, oracle_macs, pair_reuse
from tests import reference
from tests.strategies import configs, operands


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_oracle_matches_loop_reference(data):
    cfg = data.draw(configs(max_extent=3, max_group=3))
    q, k = data.draw(operands(cfg)), data.draw(operands(cfg))
    sq, sk = pair_reuse(q, cfg).states, pair_reuse(k, cfg).states
    assert oracle_macs(sq, sk) == reference.oracle(sq.tolist(), sk.tolist())
    assert 0 <= oracle_macs(sq, sk) <= dense_macs(cfg.tokens, cfg.tokens, cfg.head_dim)


def test_no_reuse_costs_dense(rng):
    cfg = Config(partition=(2, 3, 4), grid=(2, 3, 4), full_bits=8, partial_bits=8)
    q = rng.integers(-128, 128, (cfg.tokens, 9), dtype=np.int8)
    q[:, :] = np.where(np.arange(cfg.tokens)[:, None] % 2, q, -q - 1)   # neighbours differ
    s = np.zeros_like(q)
    assert oracle_macs(s, s) == dense_macs(cfg.tokens, cfg.tokens, 9)


def test_all_full_costs_only_anchor_pairs():
    states = np.array([[0], [2], [0], [2]], np.int8)       # two anchors, two full partners
    assert oracle_macs(states, states) == 4                 # anchor x anchor only


def test_oracle_never_rises_as_F_falls(rng):
    q = rng.integers(-40, 40, (2 * 4 * 4, 8), dtype=np.int8)
    k = rng.integers(-40, 40, (2 * 4 * 4, 8), dtype=np.int8)
    costs = []
    for F in range(8, -1, -1):
        cfg = Config(partition=(2, 3, 3), grid=(2, 4, 4), full_bits=F, partial_bits=min(F, 3))
        costs.append(oracle_macs(pair_reuse(q, cfg).states, pair_reuse(k, cfg).states))
    assert costs == sorted(costs, reverse=True), costs


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_pv_oracle_matches_loop_reference(data):
    from golden.opcount import pv_oracle_macs
    cfg = data.draw(configs(max_extent=3, max_group=3))
    v = data.draw(operands(cfg))
    vs = pair_reuse(v, cfg).states
    n_q = data.draw(st.integers(1, 5))
    assert pv_oracle_macs(n_q, vs) == reference.pv_oracle(n_q, vs.tolist())
    assert pv_oracle_macs(n_q, vs) <= dense_macs(n_q, cfg.tokens, cfg.head_dim)
