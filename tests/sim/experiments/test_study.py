"""The packing study: its schedules serve the work exactly, its built matcher is the
cycle model's, and its checker catches a schedule that drops or repeats work."""

import pytest

from golden import Config, proxy_workload, quantize
from golden.cycle_model import kaleido_cycles, kaleido_tables, tile_lane_needs
from golden.pe_encoding import Mode
from sim.experiments import study


def _head(rng, acc, grid=(2, 4, 4), partition=(8, 6, 6)):
    # The study orders pairs by the paper's pivots (its "weight" mechanisms by the weight rule).
    cfg = Config(grid=grid, partition=partition, full_bits=5, partial_bits=3, accumulators=acc, cluster_rule="pivots")
    w = proxy_workload(cfg, seed=int(rng.integers(1 << 16)))
    return cfg, quantize(w["q"])[0], quantize(w["k"])[0]


@pytest.mark.parametrize("acc", [3, 4])
def test_study_schedules_serve_the_work_exactly(rng, acc):
    cfg, q, k = _head(rng, acc)
    res = study.study(q, k, cfg, check=True)
    assert set(res) == set(study.MECHANISMS)
    # The built matcher is the cycle model's, slot for slot (the study leaves out the scheduler's lead).
    model = kaleido_cycles(q, k, cfg, schedule="pairs")
    assert res["pairs"]["cycles"] == model.engine_cycles
    # Pass A is dense under every mechanism.
    assert len({r["slots"]["A"] for r in res.values()}) == 1
    # The window the RTL builds (Config.issue_window) is the study's column/row window.
    built = kaleido_cycles(q, k, cfg.with_(issue_window=4), schedule="pairs")
    assert res["window:4,rc"]["cycles"] == built.engine_cycles
    # ... and so is the window behind the scheduler's weight rule.
    weighted = kaleido_cycles(q, k, cfg.with_(issue_window=4, cluster_rule="weight"), schedule="pairs")
    assert res["weight+window:4,rc"]["cycles"] == weighted.engine_cycles
    # No packing within a pass of the same tiles beats the bound (d-partners moves D's
    # steps into B and C; a reordering makes other tiles, with a bound of their own).
    for order in (None, "weight"):
        bound = res["bound" if order is None else f"{order}+bound"]["cycles"]
        assert all(bound <= r["cycles"] for name, r in res.items()
                   if name != "d-partners" and study._parse(name, cfg)[0] == order)


def test_study_check_catches_a_bad_schedule(rng):
    cfg, q, k = _head(rng, 4)
    tables = kaleido_tables(q, k, cfg)
    work = next(w for _, w in tile_lane_needs(*tables, cfg) if (w[Mode.B] > 0).sum() > 1)
    slots = study.schedule_pairs(work[Mode.B], Mode.B, cfg.lookahead)
    study.check_pass({Mode.B: work[Mode.B]}, slots)
    with pytest.raises(AssertionError, match="missed or repeated"):
        study.check_pass({Mode.B: work[Mode.B]}, slots[:-1])
    with pytest.raises(AssertionError, match="missed or repeated"):
        study.check_pass({Mode.B: work[Mode.B]}, slots + slots[-1:])
    # A full product twice in one slot overruns a PE's two lanes.
    full = next(c for c in range(work[Mode.B].shape[0]) if (work[Mode.B][c] == 2).any())
    crowded = [[(Mode.B, full, work[Mode.B][full] > 0)] * 2]
    with pytest.raises(AssertionError, match="more than two lanes"):
        study.check_pass({Mode.B: work[Mode.B]}, crowded)


def test_study_rejects_unknown_mechanisms(rng):
    cfg, q, k = _head(rng, 3)
    for bad in ("window:4", "window:x,rc", "steps:1", "nn-orderpairs", "fast"):
        with pytest.raises(ValueError, match="unknown mechanism"):
            study.study(q, k, cfg, (bad,))


def test_study_cli(capsys, tmp_path):
    png = tmp_path / "study.png"
    assert study.main(["narrow", "--accumulators", "4", "--mechanism", "pairs",
                       "--mechanism", "nn-order+window:4,pe", "--plot", str(png)]) == 0
    out = capsys.readouterr()
    assert '"nn-order+window:4,pe"' in out.out and "study: narrow, 4 acc." in out.err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert study.main(["narrow", "--plot", str(tmp_path / "study.svg")]) == 2
    assert not (tmp_path / "study.svg").exists()
    assert study.main(["narrow", "--mechanism", "bogus"]) == 2
    assert "unknown mechanism 'bogus'" in capsys.readouterr().err
