"""The break-even map: heads scaled to a reuse level, where a ratio reaches 1,
and the map of a tiny model on a two-worker Dask cluster."""

import pytest

from sim.chip.chip import baseline_head
from sim.chip.explore import at_level, break_even, chip_presets, explore, measured_levels
from tests.sim.chip.test_estimate import CHIP, SIGNS, TINY, estimate  # noqa: F401  (the fixture)


def test_a_head_scaled_to_a_level_keeps_its_mix():
    base = baseline_head(TINY.tokens("480p"), TINY.head_dim, CHIP.rows, CHIP.cols).slots
    head = {"slots": base * 0.8, "slots_low": base * 0.7, "slots_high": base * 0.9, "full_products": 100.0,
            "nibble_products": 50.0, "passes": 40.0, "lead": 7, "scheduler_busy": 9}
    results = [{"shard": [0, 0, 0], "head": head}, {"shard": [0, 0, 1], "head": dict(head, slots=base * 0.6)}]
    assert measured_levels(TINY, TINY.tokens("480p"), CHIP, results) == {0: pytest.approx(0.3)}
    half = at_level(TINY, TINY.tokens("480p"), CHIP, results, 0.5)
    assert [r["head"]["slots"] for r in half] == pytest.approx([base / 2, base / 2])
    h = half[0]["head"]
    assert (h["slots_low"], h["slots_high"]) == pytest.approx((base * 0.7 * 0.625, base * 0.9 * 0.625))
    assert (h["full_products"], h["nibble_products"], h["passes"]) == pytest.approx((62.5, 31.25, 25.0))
    assert (h["lead"], h["scheduler_busy"]) == (7, 9)                 # the scheduler's work is per head
    assert results[0]["head"]["slots"] == base * 0.8                  # the shards themselves are untouched


def test_break_even_is_where_a_ratio_reaches_one():
    def pts(values):
        return [{"level": i / 10, "iso_speedup": v, "iso_energy_ratio": 2 - v} for i, v in enumerate(values)]
    rising = pts([0.6, 0.8, 0.9, 1.1, 1.3])
    assert break_even(rising, "iso_speedup") == pytest.approx(0.25)           # between 0.9 at 0.2 and 1.1 at 0.3
    assert break_even(rising, "iso_energy_ratio") == pytest.approx(0.25)
    assert break_even(pts([0.5, 0.6]), "iso_speedup") is None
    assert break_even(pts([1.2, 1.3]), "iso_speedup") == 0.0
    assert break_even([{"level": None, "iso_speedup": 9.0}] + pts([0.5, 1.0]), "iso_speedup") == pytest.approx(0.1)


def test_the_map_runs_on_dask(estimate):  # noqa: F811  (the fixture, imported above)
    import json

    from dask.distributed import Client, LocalCluster

    from sim.chip.estimate import shard_config

    out, _, _ = estimate
    results = [json.loads(p.read_text()) for p in sorted((out / "shards").glob("*.json"))]
    cfg = shard_config(TINY, "480p", CHIP)
    with Client(LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0")) as client:
        found = explore(TINY, "480p", CHIP, cfg, results, SIGNS, client, levels=(0.0, 0.5, 0.9),
                        shares=((0.5, 1.0), (1.0,)))
    # Two chips, three of them each: half and all the arrays Kaleido's at the chip's
    # coupled share, and all of them coupled; the workload's own heads, and three
    # levels in Q K^T or in every product.
    own = CHIP.coupled_share
    assert len(found["points"]) == 2 * 3 * (1 + 3 + 3)
    lanes = {c.softmax_lanes for c in chip_presets(CHIP).values()}
    assert {(m["lanes"], m["share"], m["coupled"], m["scope"]) for m in found["maps"]} == {
        (l, s, c, scope) for l in lanes for s, c in ((0.5, own), (1.0, own), (1.0, 1.0)) for scope in ("qk", "all")}
    coupled = {c: next(p for p in found["points"] if (p["lanes"], p["share"], p["coupled"], p["level"]) ==
                       (CHIP.softmax_lanes, 1.0, c, None)) for c in (own, 1.0)}
    # A dispatcher on every Kaleido array: more area than on an eighth of them.
    assert coupled[1.0]["area_mm2"] > coupled[own]["area_mm2"]
    for m in found["maps"]:
        mine = sorted((p for p in found["points"] if (p["lanes"], p["share"], p["coupled"], p["scope"]) == (
            m["lanes"], m["share"], m["coupled"], m["scope"]) and p["level"] is not None), key=lambda p: p["level"])
        # More reuse never slows Kaleido's chip, and the baseline of its area stays put.
        assert all(a["time_s"] >= b["time_s"] for a, b in zip(mine, mine[1:]))
        assert len({p["iso_time_s"] for p in mine}) == 1
        assert m["break_even"]["iso_speedup"] == break_even(mine, "iso_speedup")
    # Reuse in every product is never slower than in Q K^T alone, and equal without reuse.
    for qk in (p for p in found["points"] if p["scope"] == "qk" and p["level"] is not None):
        every = next(p for p in found["points"] if p["scope"] == "all" and p["level"] == qk["level"]
                     and (p["lanes"], p["share"], p["coupled"]) == (qk["lanes"], qk["share"], qk["coupled"]))
        assert every["time_s"] <= qk["time_s"] * (1 + 1e-12)
        if qk["level"] == 0:
            assert every["time_s"] == pytest.approx(qk["time_s"])


def test_the_verdict_over_the_strength(tmp_path):
    """Each strength's heads on their own shards, priced as an estimate prices
    them: the oracle and the common share rise with the strength, and the
    break-even strengths are where the priced ratios cross 1."""
    from sim.chip.estimate import run_estimate
    from sim.chip.explore import plot_strength, strength_break_even, strength_point

    points = []
    for s in (0.0, 4.0):
        summary = run_estimate(TINY, "480p", CHIP, "proxy", str(tmp_path), per_step=1, samples=300, signs=SIGNS,
                               workers=2, steps=1, common_strength=s, common_band="all")
        points.append(strength_point(summary, s))
    low, high = points
    assert high["oracle"] > low["oracle"] and high["q_common_share"] > 0.7 > 0.05 > low["q_common_share"]
    assert low["speedup"] > 0 and high["iso_energy_ratio"] > 0
    assert len(list((tmp_path / "shards").glob("*.json"))) == 2          # one head a strength, each its own
    even = strength_break_even([dict(low, speedup=0.9), dict(high, speedup=1.1)])
    assert even["speedup"] == pytest.approx(2.0)                         # halfway between 0 and 4
    found = {"model": TINY.name, "resolution": "480p", "workload": "proxy", "band": "all", "chip": CHIP.name,
             "points": points}
    plot_strength(found, str(tmp_path / "strength.png"))
    assert (tmp_path / "strength.png").stat().st_size > 1000
