"""The linear layer's cycle model: never slower than the baseline array with
the driver's choice, the exact PE executes exactly the oracle's MACs, the
3-register PE only its third partner more, and pairing never costs a cycle.
(Cycles equal to the RTL's are checked in tests/tb/test_linear_tb.py.)"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden.cycle_model import baseline_cycles
from golden.linear import linear_layer
from golden.linear_cycles import baseline_linear_cycles, kaleido_linear_cycles
from golden.windows import linear_config, window_tables
from tests.strategies import configs, operands


def _draw(data):
    cfg = data.draw(configs()).with_(window=data.draw(st.integers(1, 4)),
                                     accumulators=data.draw(st.sampled_from([3, 4])),
                                     rows=data.draw(st.integers(1, 4)), cols=data.draw(st.integers(1, 4)))
    heads = data.draw(st.integers(1, 2))
    x = data.draw(operands(cfg, heads=heads))
    outputs = data.draw(st.integers(1, 9))
    return cfg, x, outputs, heads


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_never_slower_than_the_baseline(data):
    cfg, x, outputs, heads = _draw(data)
    base = baseline_linear_cycles(x.shape[0], outputs, cfg, heads)
    auto = kaleido_linear_cycles(x, outputs, cfg)
    assert auto.cycles <= base.cycles
    assert auto.cycles <= kaleido_linear_cycles(x, outputs, cfg, "pairs").cycles
    assert auto.cycles == min(auto.pair_cycles, base.cycles, auto.cycles)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_executed_macs_against_the_oracle(data):
    cfg, x, outputs, _ = _draw(data)
    w = np.zeros((x.shape[1], outputs), np.int8)
    oracle = linear_layer(x, w, cfg).reuse_macs
    own = kaleido_linear_cycles(x, outputs, cfg.with_(variant="pe"), "pairs")
    # The 3-register PE computes its third partner whole: that, and nothing else, is extra.
    extra = 0.0
    if cfg.accumulators == 3:
        for t in window_tables(x, cfg):
            if t.partners == 3:
                has = t.members[:, 3] >= 0
                cost = np.where(t.state[has, 2] == 0, 1.0, 0.0).sum()
                states = linear_layer(x, w, cfg).states[np.ix_(t.members[has, 3], t.channels)]
                extra += outputs * (cost - np.select([states == 2, states == 1], [0.0, 0.5], 1.0).sum())
    assert own.executed_macs == pytest.approx(oracle + extra)
    paired = kaleido_linear_cycles(x, outputs, cfg.with_(variant="pe-m"), "pairs")
    assert paired.lane_work == own.lane_work
    # Pairing can lose by its fill slots; the driver then runs the windows unpaired.
    assert kaleido_linear_cycles(x, outputs, cfg.with_(variant="pe-m"), "auto").cycles <= own.cycles


def test_dense_schedule_is_the_baseline():
    from golden import Config
    cfg = Config(partition=(2, 1, 1), grid=(2, 2, 3))
    x = np.random.default_rng(3).integers(-128, 128, (cfg.tokens, 8), dtype=np.int8)
    dense = kaleido_linear_cycles(x, 5, cfg.with_(variant="pe"), "dense")
    assert dense.schedule == "dense"
    assert dense.cycles == baseline_cycles(5, cfg.tokens, linear_config(cfg, 2)).cycles
    with pytest.raises(ValueError, match="unknown schedule"):
        kaleido_linear_cycles(x, 5, cfg.with_(variant="pe"), "fast")
