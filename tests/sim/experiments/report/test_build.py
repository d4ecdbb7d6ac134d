"""``kaleido report`` on tiny design points: every figure and table is written,
the area table is cached by the Verilog's hash, and the numbers are sane."""

import json
import re
import shutil

import pytest

from golden import Config
from golden.config import CHIP_CLOCK_MHZ
from hw import blocks
from sim.experiments.report import build_report
from synth import area
from synth.flow import default_liberty
from synth.kits import kit


def _area_by_lines(text, top, liberty=None, clock_mhz=None):
    # A stand-in for Yosys: area grows with the Verilog's lines, so the report's area
    # tables and ratios are exercised without minutes of synthesis. The slow test below
    # synthesizes for real.
    n = sum(1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("//"))
    # The library's own flip-flop and AND gate, so that the SRAM split finds its storage cells.
    flop, gate = (next(iter(kit(liberty).flops)), kit(liberty).gate_and[0]) if liberty else ("DFF", "AND")
    return {"liberty": liberty, "cells": n, "cell_types": {flop: n // 4 + 1, gate: n},
            "area_um2": float(n), "sequential_area_um2": float(n // 4 + 1)}


def test_every_figure_is_registered_once_with_its_own_key():
    from sim.experiments.report.figures import FIGURES
    keys = [f.key for f in FIGURES]
    assert len(keys) == len(set(keys))
    sections = [f.section for f in FIGURES if f.markdown]
    assert len(sections) == len(set(sections))        # each section has its place in report.md


def test_report_writes_its_figures(tmp_path, monkeypatch):
    """`kaleido report` in every `make test`: every figure but the energy one, on tiny
    design points, with Yosys stood in for, and the two widest sweeps at two points
    each and the threshold sweeps at their ends (`make test-all` runs it all for real)."""
    from sim.experiments.report import fig20, speed
    monkeypatch.setattr(area, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(area, "synthesize", _area_by_lines)
    # Nor is the hold repair, which would time each block (synth.hold).
    monkeypatch.setattr(area, "block_timing", lambda *a: {"hold_repair": None})
    from sim.experiments.report import build, fig18, fig23, workloads
    monkeypatch.setattr(speed, "SPEED_DIMS", speed.SPEED_DIMS[:2])
    monkeypatch.setattr(fig20, "BLOCK_THRESHOLDS", fig20.BLOCK_THRESHOLDS[:1])
    for module in (fig18, fig23, speed, workloads):
        monkeypatch.setattr(module, "THRESHOLDS", module.THRESHOLDS[::3])
    tiny = Config.for_model("wan2.1", 16, grid=(2, 4, 4), rows=2, cols=2)
    sizes = {"golden": tiny, "cycle_model": tiny, "rtl": tiny,
             "area": Config(partition=(4, 2, 2), rows=2, cols=2, queue_depth=8, clusters=2,
                            cluster_capacity=4)}
    data = build_report(tmp_path / "r", jobs=2, rtl=False, sizes=sizes, workload="carphone",
                        clips=("carphone",), energy=False)
    for name in ("fig7_directions", "fig9_reuse_vs_skip", "fig19_ablation", "fig21_array_size",
                 "fig23_thresholds", "noise_sweep", "fig20_block", "speed_vs_bound"):
        assert (tmp_path / "r" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "fig18" not in data and "timing" not in data
    text = (tmp_path / "r" / "report.md").read_text()
    for heading in ("Fig. 7", "Fig. 19", "Fig. 20", "Fig. 23", "Table 2", "Speed against the oracle bound"):
        assert heading in text
    metric = data["area"]["split"]["metric"]
    assert data["area"]["blocks"]["pe"][metric] > data["area"]["blocks"]["baseline-pe"][metric]
    assert len(data["fig20"]) == 2 and {p["D"] for p in data["speed"]["over_d"]} == {16, 32}
    assert [(p["F"], p["P"]) for p in data["fig23"]] == [(3, 1), (6, 4)]
    # Published into a docs folder: every figure it shows is there, under figures/.
    docs = tmp_path / "docs"
    published = build.publish(tmp_path / "r", docs).read_text()
    shown = re.findall(r"\]\(([^)]+\.png)\)", published)
    assert len(shown) == 8 and all(p.startswith("figures/") and (docs / p).is_file() for p in shown)
    assert published.startswith(text.split("\n", 1)[0]) and "signoff.md" in published


@pytest.mark.slow       # make test: test_report_on_the_shared_cache
def test_report_writes_every_figure(tmp_path, monkeypatch):
    monkeypatch.setattr(area, "CACHE", tmp_path / "cache")
    from synth import timing
    monkeypatch.setattr(timing, "CACHE", tmp_path / "timing")
    monkeypatch.setattr("synth.power.CACHE", tmp_path / "timing")
    tiny = Config.for_model("wan2.1", 16, grid=(2, 4, 4), rows=2, cols=2)
    sizes = {"golden": tiny, "cycle_model": tiny, "rtl": tiny,
             "area": Config(partition=(4, 2, 2), rows=2, cols=2, queue_depth=8, clusters=2,
                            cluster_capacity=4)}
    data = build_report(tmp_path / "r", jobs=2, rtl=False, sizes=sizes, workload="carphone",
                        clips=("carphone",), chip_level=False)      # whole models: report/test_chip.py
    for name in ("fig7_directions", "fig9_reuse_vs_skip", "fig19_ablation", "fig21_array_size",
                 "fig23_thresholds", "noise_sweep", "fig20_block"):
        assert (tmp_path / "r" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The figures' data: every direction of every group measured; fewer preserved bits save
    # more, and the hardware never executes less than the oracle; every array size reported.
    assert {g: set(v) for g, v in data["fig7"].items()} == {g: {"t", "y", "x"} for g in "tyx"}
    assert all(mse >= 0 for v in data["fig7"].values() for mse in v.values())
    f23 = data["fig23"]
    assert [p["oracle_reduction"] for p in f23] == sorted((p["oracle_reduction"] for p in f23), reverse=True)
    assert all(p["hardware_reduction"] <= p["oracle_reduction"] + 1e-12 and p["speedup"] > 0 for p in f23)
    assert set(data["fig21"]) == {"2", "4", "8", "16"}
    # The block: every threshold pair for both PEs; never slower than the baseline array,
    # and reuse in every layer never slower than in attention alone by more than its heads.
    assert len(data["fig20"]) == 10
    for p in data["fig20"]:
        assert p["attention"]["speedup"] >= 1 and p["all"]["speedup"] >= 1
        assert all(p["all"]["layers"][name] <= p["attention"]["layers"][name] for name in
                   ("qkv", "proj", "mlp1", "mlp2"))
    # P V~: the proxy and the clip, never slower than the baseline, never past the oracle bound.
    assert [p["workload"] for p in data["pv"]] == ["proxy", "carphone"]
    assert all(1 <= p["speedup"] <= p["oracle_bound"] and p["executed_over_oracle"] >= 1 for p in data["pv"])
    text = (tmp_path / "r" / "report.md").read_text()
    for heading in ("Fig. 7", "Fig. 9", "Fig. 19", "Fig. 20", "P V~ with V's reuse", "Fig. 21", "Fig. 23",
                    "Table 2", "Paper:",
                    "Real video against the proxy", "denoising step", "video **carphone**"):
        assert heading in text
    # The workload table: proxy and the clip at every threshold pair; fewer preserved bits
    # never save less.
    assert {(p["workload"], p["F"], p["P"]) for p in data["workloads"]} == \
        {(w, F, P) for w in ("proxy", "carphone") for F, P in ((3, 1), (4, 2), (5, 3), (6, 4))}
    for w in ("proxy", "carphone"):
        red = [p["oracle_reduction"] for p in data["workloads"] if p["workload"] == w]
        assert red == sorted(red, reverse=True), red
    if shutil.which("sta") and default_liberty():
        assert (tmp_path / "r" / "fig18_energy.png").read_bytes()[:4] == b"\x89PNG"
        assert "Fig. 18b" in text and set(data["timing"]) == set(blocks.UNITS)
        assert all(t["clock_mhz"] == CHIP_CLOCK_MHZ for t in data["timing"].values())
        assert {"pe", "baseline-pe", "scheduler", "matcher", "softmax"} <= set(data["power"])
        runs = ("pe", "full", "pe/4", "full/4")
        for p in data["fig18"]:
            assert set(p) == {"F", "P", "baseline", *runs}
            assert all(p[v]["energy_pj"] > 0 and p[v]["array_um2"] > 0 for v in ("baseline", *runs))
            # Both PEs, each larger than the baseline's; the exact one the largest.
            assert p["pe"]["array_um2"] == p["full"]["array_um2"] > p["baseline"]["array_um2"]
            assert p["pe/4"]["array_um2"] == p["full/4"]["array_um2"] > p["full"]["array_um2"]
            # One chip clock; a design at the clock its slowest block meets, never above it.
            assert all(p[v]["time_us"] == pytest.approx(p[v]["cycles"] / p[v]["clock_mhz"]) for v in runs)
            assert all(p[v]["clock_mhz"] <= CHIP_CLOCK_MHZ for v in ("baseline", *runs))
            # The dispatcher is counted where the variant has one.
            assert p["pe"]["dispatcher_pj"] == p["pe/4"]["dispatcher_pj"] == 0
            assert 0 < p["full"]["dispatcher_pj"] < p["full"]["energy_pj"]
        assert "| 4 |" in text.split("Fig. 18b")[1]
    # Speed against the bound: both PEs at every D and (F,P); never slower than the
    # baseline; the exact PE executes the oracle count whenever it runs passes A-D.
    assert (tmp_path / "r" / "speed_vs_bound.png").read_bytes()[:4] == b"\x89PNG"
    sp = data["speed"]
    assert ({(p["D"], p["accumulators"], p["issue_window"], p["cluster_rule"]) for p in sp["over_d"]}
            == {(D, n, w, r) for D in (16, 32, 64, 128) for n in (3, 4)
                for w, r in ((0, "pivots"), (4, "weight"), (8, "weight"))})
    for p in sp["over_d"] + sp["over_fp"]:
        assert p["speedup"] >= 1.0 and p["speedup"] <= p["oracle_bound"] + 1e-9
        if p["accumulators"] == 4 and p["schedule"] == "pairs":
            assert p["executed_over_oracle"] == pytest.approx(1.0)
    assert sp["pe_area"]["4"] > sp["pe_area"]["3"] > sp["pe_area"]["baseline"] > 0
    assert sp["pe_area"]["3/w4"] > sp["pe_area"]["3"] and sp["pe_area"]["4/w4"] > sp["pe_area"]["4"]
    assert sp["pe_area"]["4/w8"] > sp["pe_area"]["4/w4"]
    assert "3 acc., window 4, weight rule" in text        # the table says which dispatcher each row is
    assert "Speed against the oracle bound" in text
    # Pure noise leaves less to reuse than the clean clip.
    noise = {p["sigma"]: p for p in data["noise"]["points"]}
    assert noise[1.0]["oracle_reduction"] < noise[0.0]["oracle_reduction"]
    assert all(p["oracle_bound"] == pytest.approx(1 / (1 - p["oracle_reduction"])) for p in noise.values())
    saved = json.loads((tmp_path / "r" / "report.json").read_text())
    # Reordering and pairing change when products run, never which run.
    work = {v: saved["fig19"]["model"][v]["lane_work"] for v in ("pe", "pe-sh", "pe-m", "full")}
    assert len(set(work.values())) == 1, work
    assert [(p["F"], p["P"]) for p in data["fig9"]] == sorted((p["F"], p["P"]) for p in data["fig9"])
    assert all(0 <= p["saving"] < 1 for p in data["fig9"])
    metric = data["area"]["split"]["metric"]
    assert data["area"]["blocks"]["pe"][metric] > data["area"]["blocks"]["baseline-pe"][metric]
    # Cached: a second table reads the same numbers without synthesizing.
    cached = list((tmp_path / "cache").glob("*.json"))
    assert {p.name.rsplit("-", 1)[0] for p in cached} >= set(blocks.UNITS)
    again = area.area_table(sizes["area"], default_liberty(), jobs=1)
    assert again["blocks"] == data["area"]["blocks"]
