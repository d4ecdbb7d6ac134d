"""A workload's energy from action counts: the arithmetic, and the counts against the cycle model."""

import numpy as np
import pytest

from golden import Config
from golden.cycle_model import kaleido_cycles, kaleido_products, kaleido_tables
from golden.energy import unit_energy, workload_energy

E = {"full_mac": 10.0, "nibble_mac": 6.0, "paired_nibbles": 11.0, "idle": 2.0, "hand_over": 13.0,
     "drain_shift": 4.0}


def test_split_adds_up():
    r = workload_energy(cycles=100, rows=2, cols=3, full=50, nibble=20, passes=4, energy_pj=E,
                        leakage_uw=1.0, clock_mhz=100.0)
    s = r["energy_split_pj"]
    assert s["clock_and_idle"] == 100 * 6 * 2.0
    assert s["full_products"] == 50 * 8.0 and s["nibble_products"] == 20 * 4.0
    assert s["register_loads"] == 4 * 6 * 3.0
    assert s["drain"] == 4 * 3 * (1 + 2) * 2.0              # rows 0 and 1 move 1 and 2 links
    assert r["time_us"] == 1.0 and s["leakage"] == pytest.approx(6 * 1.0 * 1.0)
    assert r["energy_pj"] == pytest.approx(sum(s.values()))


def test_baseline_energy_has_no_nibbles():
    base = {k: E[k] for k in ("full_mac", "idle", "hand_over", "drain_shift")}
    r = workload_energy(cycles=10, rows=1, cols=1, full=5, nibble=0, passes=1, energy_pj=base,
                        leakage_uw=0.0, clock_mhz=10.0)
    assert r["energy_split_pj"]["nibble_products"] == 0


@pytest.mark.parametrize("variant", ["pe", "full"])
def test_products_are_the_cycle_models_lane_work(rng, variant):
    cfg = Config(partition=(4, 3, 3), grid=(2, 4, 4), rows=2, cols=3, variant=variant)
    q = rng.integers(-128, 128, (cfg.tokens, cfg.head_dim), dtype=np.int8)
    k = np.clip(q + rng.integers(-20, 21, q.shape), -128, 127).astype(np.int8)
    counts = kaleido_products(*kaleido_tables(q, k, cfg), cfg)
    model = kaleido_cycles(q, k, cfg, schedule="pairs")
    assert 2 * counts["full_products"] + counts["nibble_products"] == model.lane_work
    assert counts["tiles"] == model.tiles and counts["nibble_products"] > 0


def test_a_dispatcher_unit_pays_its_clock_all_run():
    e = {"busy": 5.0, "idle": 3.0}
    assert unit_energy(100, 0, e, 0.0, 100.0) == 300.0
    assert unit_energy(100, 40, e, 0.0, 100.0) == 40 * 5.0 + 60 * 3.0
    assert unit_energy(100, 100, e, 2.0, 100.0) == pytest.approx(500.0 + 2.0 * 1.0)   # uW x us
    with pytest.raises(ValueError, match="busy"):
        unit_energy(10, 11, e, 0.0, 1.0)
