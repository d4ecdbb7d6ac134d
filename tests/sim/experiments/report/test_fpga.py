"""The report's FPGA table: each design's head time at its own clock and at the
common one, from the cycle model at both PE depths. Place and route is stood in
for by figures of the right shape (one engine takes about 20 minutes a seed;
tests/synth/test_fpga.py places a PE for real)."""

from golden import Config
from golden.head_cycles import baseline_head_cycles
from golden.pe import DEFAULT_PE_STAGES, FPGA_PE_STAGES
from sim.experiments.report import fpga
from sim.experiments.report.figure import Study


def _placed(block, cfg, device, seeds, recorded=True):
    # The block's resources grow with the array; the clocks are the stand-in's own.
    assert cfg.pe_stages == FPGA_PE_STAGES and device == fpga.DEVICE and seeds == fpga.SEEDS
    cells = {"pe": 1, "array": cfg.rows * cfg.cols, "engine": 2 * cfg.rows * cfg.cols}[block]

    def design(luts, mhz):
        return {"device": "LFE5U-85K", "tools": "stand-in", "luts": luts * cells, "ffs": luts * cells // 2,
                "mult18": cells, "bram": 0, "fmax_mhz": [mhz, mhz + 3.0]}
    return {"kaleido": design(500, 80.0), "baseline": design(100, 120.0)}


def test_head_times_are_cycles_over_each_clock_and_the_common_one():
    t = fpga.head_times({"kaleido": 1000, "baseline": 1500}, {"kaleido": 50.0, "baseline": 125.0})
    assert t["kaleido"]["us"] == 20.0 and t["baseline"]["us"] == 12.0
    assert t["kaleido"]["us_common"] == 20.0 and t["baseline"]["us_common"] == 30.0


def _study(tmp_path, place=False):
    tiny = Config.for_model("wan2.1", 16, grid=(2, 4, 4), rows=2, cols=2)
    return Study(tmp_path, {"golden": tiny, "cycle_model": tiny, "rtl": tiny, "area": tiny}, "carphone",
                 ("carphone",), 1, None, None, True, False, place)


def test_a_block_with_no_recorded_placement_is_placed_only_when_asked(tmp_path, monkeypatch):
    """A fresh clone's report must not spend hours placing engines: a block whose
    placements are neither cached nor shipped is left out, and the section says how
    to place it; with --place every block is placed anew (not from the record)."""
    import synth.fpga
    asked = []

    def place(block, cfg, device, seeds, recorded=True):
        asked.append((block, recorded))
        return _placed(block, cfg, device, seeds)
    monkeypatch.setattr(synth.fpga, "fpga_blocks", place)
    monkeypatch.setattr(synth.fpga, "placed", lambda name, *a: name in ("pe", "baseline-pe"))
    d = fpga.compute(_study(tmp_path))
    assert asked == [("pe", True)] and d["not_placed"] == ["array", "engine"] and "head_time" not in d
    text = "\n".join(fpga.markdown({"fpga": d}))
    assert "| pe |" in text and "| engine |" not in text and "Not placed in this run: array, engine" in text
    asked.clear()
    d = fpga.compute(_study(tmp_path, place=True))
    assert asked == [(b, False) for b in fpga.BLOCKS] and d["not_placed"] == [] and "head_time" in d


def test_the_table_prices_a_head_at_the_fpga_variants_depth(tmp_path, monkeypatch):
    import synth.fpga
    monkeypatch.setattr(synth.fpga, "fpga_blocks", _placed)
    monkeypatch.setattr(synth.fpga, "placed", lambda *a: True)
    study = _study(tmp_path)
    tiny = study.sizes["area"]
    d = fpga.compute(study)
    asic, variant = d["cycles"][str(DEFAULT_PE_STAGES)], d["cycles"][str(FPGA_PE_STAGES)]
    # The baseline's head is three runs of the array (S~, softmax, P V~); the
    # variant's extra stage adds a cycle of drain to each of the two on the array.
    assert variant["baseline"] == asic["baseline"] + 2
    assert variant["baseline"] == sum(baseline_head_cycles(tiny.with_(pe_stages=FPGA_PE_STAGES)).values())
    assert variant["kaleido"] > asic["kaleido"]
    head = d["head_time"]
    assert head["kaleido"]["fmax_mhz"] == 80.0 and head["baseline"]["fmax_mhz"] == 120.0
    assert head["kaleido"]["us"] == variant["kaleido"] / 80.0
    assert head["baseline"]["us_common"] == variant["baseline"] / 80.0
    text = "\n".join(fpga.markdown({"fpga": d}))
    assert "| engine | 4,000 / 2,000 / 8 / 0 / 80.0-83.0 |" in text and "0.67x" in text
