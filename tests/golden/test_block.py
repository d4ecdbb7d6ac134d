"""The vDiT block of the Fig. 20 analog: seeded, never slower than the baseline
array in any layer, and reuse confined to the scope asked for."""

import numpy as np
import pytest

from golden import Config
from golden.block import LAYERS, block_figures, block_weights, run_block


@pytest.fixture
def block(rng):
    cfg = Config(partition=(4, 2, 2), grid=(2, 4, 4), rows=2, cols=2)
    base = rng.standard_normal((1, 16))
    x = base + 0.05 * rng.standard_normal((cfg.tokens, 16))        # correlated tokens: reuse happens
    return cfg, x


def test_weights_are_seeded():
    a, b = block_weights(8, seed=3), block_weights(8, seed=3)
    assert all(np.array_equal(a[k], b[k]) for k in LAYERS)
    assert a["mlp1"].shape == (8, 32) and a["mlp2"].shape == (32, 8) and a["qkv"].shape == (8, 24)
    assert not np.array_equal(a["proj"], block_weights(8, seed=4)["proj"])


def test_scopes(block):
    cfg, x = block
    w = block_weights(16, seed=1)
    none = run_block(x, cfg, w, "none")
    att = run_block(x, cfg, w, "attention")
    every = run_block(x, cfg, w, "all")
    assert none["kaleido_cycles"] == none["baseline_cycles"]
    # Attention only: the linear layers run dense; every layer, they run windows (or dense).
    for name in LAYERS:
        assert att["cycles"]["kaleido"][name] == att["cycles"]["baseline"][name]
        assert every["cycles"]["kaleido"][name] <= every["cycles"]["baseline"][name]
    assert every["kaleido_cycles"] < att["kaleido_cycles"] <= att["baseline_cycles"]
    assert not np.array_equal(every["output"], none["output"])
    with pytest.raises(ValueError, match="unknown scope"):
        run_block(x, cfg, w, "some")


def test_block_figures(block):
    cfg, x = block
    rows = block_figures(x, cfg, seed=2)
    assert set(rows) == {"attention", "all"}
    assert rows["all"]["speedup"] > rows["attention"]["speedup"] >= 1
    assert rows["attention"]["psnr_db"] > 0 and -1 <= rows["all"]["cosine"] <= 1
