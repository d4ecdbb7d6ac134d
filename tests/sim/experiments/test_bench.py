"""``make bench``'s P V~ table: every case measured at its own design point."""

from sim.experiments.bench import bench_pv


def test_bench_pv_measures_every_case():
    cases = [("proxy", (2, 4, 4), 16), ("proxy", (2, 4, 4), 32)]
    rows = bench_pv(cases)
    assert [(r["workload"], r["head_dim"]) for r in rows] == [("proxy", 16), ("proxy", 32)]
    for r in rows:
        # Never slower than the baseline array, never past the oracle bound.
        assert 1 <= r["speedup"] <= r["oracle_bound"] and r["executed_over_oracle"] >= 1
    assert rows[0]["baseline_cycles"] < rows[1]["baseline_cycles"]
