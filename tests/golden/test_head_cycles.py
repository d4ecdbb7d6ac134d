"""The whole head's cycle model: P V~'s design point and the stage cycles."""

import numpy as np

from golden import Config
from golden.cycle_model import baseline_cycles
from golden.softmax import softmax_cycles, softmax_spec
from golden.head_cycles import STAGES, baseline_head_cycles, kaleido_head_cycles, pv_config


def test_pv_config_reduces_over_the_keys():
    cfg = Config(partition=(4, 2, 2), grid=(2, 3, 5), rows=3, cols=2)
    pv = pv_config(cfg)
    assert pv.head_dim == cfg.tokens and (pv.rows, pv.cols, pv.grid) == (3, 2, cfg.grid)
    # A P V~ score is a sum of N products of a code (<= 127) and an int8: it must fit.
    assert 127 * 128 * cfg.tokens < 2 ** (pv.acc_bits - 1)
    assert 127 * 128 * cfg.tokens < 2 ** (pv.pe_acc_bits - 1)


def test_baseline_head_cycles_are_the_stage_models():
    cfg = Config(partition=(4, 2, 2), grid=(2, 4, 4), vector_lanes=2)
    stages = baseline_head_cycles(cfg)
    assert tuple(stages) == STAGES
    n = cfg.tokens
    assert stages["qk"] == baseline_cycles(n, n, cfg).cycles
    assert stages["softmax"] == softmax_cycles(softmax_spec(n, cfg.acc_bits), 2, n)
    # P V~: N x D outputs, each reduced over the N keys.
    assert stages["pv"] == baseline_cycles(n, cfg.head_dim, pv_config(cfg)).cycles
    assert np.all(np.array(list(stages.values())) > 0)


def test_kaleido_head_cycles_differ_only_in_qk(rng):
    cfg = Config(partition=(4, 2, 2), grid=(2, 4, 4))
    q = rng.integers(-128, 128, (cfg.tokens, cfg.head_dim), dtype=np.int8)
    k = np.clip(q + rng.integers(-3, 4, q.shape), -128, 127).astype(np.int8)
    kal, base = kaleido_head_cycles(q, k, cfg), baseline_head_cycles(cfg)
    assert tuple(kal) == STAGES
    assert (kal["softmax"], kal["pv"]) == (base["softmax"], base["pv"])
    assert kal["qk"] <= base["qk"]
