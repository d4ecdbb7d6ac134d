"""Reuse statistics of a workload, against a loop over docs/concepts.md, "Channel groups" and "Reuse states" pairs."""

import numpy as np
import pytest

from golden import Config
from golden.reuse_stats import reuse_stats
from tests import reference


@pytest.mark.parametrize("grid, partition", [((2, 3, 4), (2, 3, 1)), ((3, 3, 3), (1, 0, 3)),
                                             ((1, 1, 5), (2, 2, 2))])
def test_shares_match_a_loop_over_partners(rng, grid, partition):
    cfg = Config(partition=partition, grid=grid, full_bits=5, partial_bits=3)
    q = rng.integers(-128, 128, (cfg.tokens, cfg.head_dim), dtype=np.int8)
    k = np.clip(q + rng.integers(-9, 10, q.shape), -128, 127).astype(np.int8)
    stats = reuse_stats({"q": q, "k": k}, cfg)
    for name, x in (("q", q), ("k", k)):
        states, _ = reference.reuse(x.tolist(), grid, partition, 5, 3)
        for g in "tyx":
            counts = {0: 0, 1: 0, 2: 0}
            for n in range(cfg.tokens):
                for c in range(cfg.head_dim):
                    if reference.group_of(c, partition) == g and \
                            reference.reference_token(n, c, grid, partition) is not None:
                        counts[states[n][c]] += 1
            got = stats["operands"][name][g]
            total = sum(counts.values())
            assert got["partners"] == total
            assert got["direction"] == reference.DIRECTION[g]
            if total == 0:
                assert got["full"] is None
                continue
            assert got["full"] == pytest.approx(counts[2] / total)
            assert got["partial"] == pytest.approx(counts[1] / total)
            assert got["compute"] == pytest.approx(counts[0] / total)
    qs, _ = reference.reuse(q.tolist(), grid, partition, 5, 3)
    ks, _ = reference.reuse(k.tolist(), grid, partition, 5, 3)
    dense = cfg.tokens ** 2 * cfg.head_dim
    assert stats["oracle_reduction"] == pytest.approx(1 - reference.oracle(qs, ks) / dense)
