"""The whole head's cycle model: P V~'s design point and the stage cycles."""

import numpy as np
import pytest

from golden import Config
from golden.cycle_model import baseline_cycles
from golden.head_cycles import STAGES, baseline_head_cycles, kaleido_head_cycles, pv_config
from golden.softmax import softmax_cycles, softmax_spec


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


def test_pv_cycles_take_the_faster_of_shared_and_dense(rng):
    from golden.cycle_model import gemm_cycles
    from golden.head_cycles import pv_cycles
    from golden.opcount import pv_oracle_macs
    from golden.reuse import pair_reuse
    from tests.golden.test_pv_tiles import codes, values

    for grid, part in [((2, 4, 4), (4, 2, 2)), ((4, 4, 4), (8, 4, 4)), ((2, 2, 3), (2, 2, 2))]:
        cfg = Config(grid=grid, partition=part)
        p, v = codes(rng, cfg.tokens), values(rng, cfg)
        auto, shared, dense = (pv_cycles(p, v, cfg, s) for s in ("auto", "shared", "dense"))
        n, pv = cfg.tokens, pv_config(cfg)
        # Shared: one dense run per column tile over its own keys; dense: P V~ as one run.
        assert shared["cycles"] == sum(gemm_cycles(n, len(t.channels), pv, "kaleido", depth=len(t.keys)).cycles
                                       for t in shared["tiles"])
        assert dense["cycles"] == baseline_head_cycles(cfg)["pv"]
        assert auto["cycles"] == min(shared["cycles"], dense["cycles"])
        assert auto["schedule"] == ("shared" if shared["cycles"] < dense["cycles"] else "dense")
        assert dense["executed_macs"] == n * n * cfg.head_dim
        # Folding only where every column reuses fully: never below the oracle.
        assert pv_oracle_macs(n, pair_reuse(v, cfg).states) <= shared["executed_macs"] < dense["executed_macs"]
        with_v = kaleido_head_cycles(v, v, cfg, v=v, probs=p)
        assert with_v["pv"] == auto["cycles"]
    with pytest.raises(ValueError, match="unknown P V~ schedule"):
        pv_cycles(p, v, cfg, "pairs")
