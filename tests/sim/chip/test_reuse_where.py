"""Where the reuse lives: each head's reductions from its own figures, the
steps' census of the heads per schedule, and the lines and plot that show them."""

import pytest

from sim.chip.reuse_where import format_steps, head_reductions, plot_reuse, reuse_where


def _head(paired, dense_cycles=1000.0, paired_cycles=1100.0):
    return {"dense_macs": 1000.0, "oracle_macs": 600.0, "full_products": 700.0, "nibble_products": 200.0,
            "pv_channel_keys": 900.0, "pv_oracle": 0.8, "paired": paired, "qk_dense_cycles": dense_cycles,
            "qk_paired_cycles": paired_cycles,
            "linear_roles": {"out": {"linear_full": 0.5, "linear_nibble": 0.2, "linear_slots": 0.7,
                                     "linear_passes": 1.0, "linear_windows": 1.0}},
            "linear_oracle": {"out": 0.4}}


def test_a_heads_reductions_come_from_its_figures():
    red = head_reductions(_head(True), n=10, d=100)
    assert red["qk"] == pytest.approx((0.4, 1 - 800 / 1000))
    assert red["pv"] == pytest.approx((0.2, 1 - 900 / 1000))
    assert red["out"] == pytest.approx((0.6, 1 - 0.5 - 0.1))


def test_each_step_counts_its_heads_per_schedule_and_why():
    results = [{"shard": [0, 0, 0], "head": _head(False, 1000, 1050)},
               {"shard": [0, 1, 0], "head": {**_head(True, 1000, 900), "qk_ran_as": "pe-m"}},
               {"shard": [4, 0, 1], "head": _head(True, 1000, 900)}]
    decided = {0: {"fastest": ["dense", "pe-m"], "ran": ["dense", "pe-m"], "time_s": [2.0, 2.0],
                   "energy_j": [3.0, 2.5], "arrays_share": 0.61, "bound": "softmax"}}
    where = reuse_where(results, tokens=10, head_dim=100, decided=decided)
    s = where["schedules"]
    assert s[0]["heads"] == 2 and s[0]["dense"] == 1 and s[0]["ran"] == {"dense": 1, "pe-m": 1}
    assert s[0]["fastest"] == {"dense": 1, "pe-m": 1} and s[0]["arrays_share"] == 0.61
    # The margin over every head of the step: (+5 % - 10 %) / 2.
    assert s[0]["extra_share_mean"] == pytest.approx(-0.025) and s[0]["extra_share_least"] == pytest.approx(-0.1)
    assert s[4]["ran"] == {"paired": 1} and s[4]["fastest"] is None and s[4]["arrays_share"] is None
    assert set(where["by_layer"]) == {0, 1}
    lines = format_steps(where, {0: 1.0, 4: 0.5})
    assert "Q K^T of 2 heads: 1 dense, 1 pe-m; paired -2.50 % Q K^T cycles against dense" in lines[0]
    assert "arrays busy 61 % of a full pipelined step (softmax bounds it); on their own: 1 dense, 1 pe-m" in lines[0]
    assert lines[1].startswith("step 4 sigma 0.500") and "Q K^T of 1 heads: 1 paired" in lines[1]
    assert "bounds it" not in lines[1]


def test_the_plot_is_written(tmp_path):
    where = reuse_where([{"shard": [0, 0, 0], "head": _head(False)}], tokens=10, head_dim=100)
    plot_reuse(where, "t", str(tmp_path / "r.png"))
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
