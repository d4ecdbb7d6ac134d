"""``kaleido verilog`` and ``kaleido synth`` end to end."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from synth.flow import default_liberty
from tests.synth.test_liberty import FF_LIBRARY

KALEIDO = [sys.executable, "-m", "sim"]


def run(*args):
    return subprocess.run(KALEIDO + list(args), capture_output=True, text=True)


@pytest.mark.parametrize("block", ["pe", "baseline-pe"])
def test_verilog_compiles_under_icarus(tmp_path, block):
    r = run("verilog", "--block", block, "--out", str(tmp_path), "--model", "cogvideox", "--head-dim", "64")
    assert r.returncode == 0, r.stderr
    path = r.stdout.strip()
    text = open(path).read()
    assert "`timescale" in text and f"module kaleido_{block.replace('-', '_')}" in text
    if shutil.which("iverilog"):
        c = subprocess.run(["iverilog", "-o", str(tmp_path / "a.out"), path], capture_output=True, text=True)
        assert c.returncode == 0, c.stderr


def test_synth_json_and_ratio():
    lib = default_liberty()
    if lib is None:
        pytest.skip("no liberty file (make setup fetches NanGate45)")
    areas = {}
    for block in ("pe", "baseline-pe"):
        r = run("synth", "--block", block, "--json")
        assert r.returncode == 0, r.stderr
        rep = json.loads(r.stdout)
        assert {"block", "liberty", "area_um2", "sequential_area_um2", "cells"} <= set(rep)
        assert 0 < rep["sequential_area_um2"] < rep["area_um2"] and rep["cells"] > 0
        areas[block] = rep["area_um2"]
    print(f"area ratio pe/baseline = {areas['pe'] / areas['baseline-pe']:.3f}")
    assert areas["pe"] > areas["baseline-pe"]


def test_synth_without_liberty_says_so():
    r = run("synth", "--block", "baseline-pe", "--no-liberty", "--json")
    assert r.returncode == 0, r.stderr
    assert "--no-liberty" in r.stderr and "transistor count" in r.stderr
    said = [line for line in r.stderr.splitlines() if "(once; cached after)" not in line]    # progress aside
    assert r.stderr.count("liberty") == 1 and len(said) == 1
    rep = json.loads(r.stdout)
    assert rep["area_um2"] is None and rep["transistors"] > 0


def test_bad_block_and_liberty(tmp_path):
    r = run("synth", "--block", "nope")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    r = run("synth", "--block", "pe", "--liberty", str(tmp_path / "none.lib"))
    assert r.returncode == 2 and "does not exist" in r.stderr
    r = run("verilog", "--block", "baseline-pe", "--out", str(tmp_path), "--acc-bits", "8")
    assert r.returncode == 2 and "could overflow" in r.stderr


@pytest.mark.parametrize("args, message", [
    (["synth", "--block", "pe", "--liberty", "{tmp}/junk.lib"], "not a Liberty file"),
    (["synth", "--block", "pe", "--liberty", "{tmp}"], "is a folder, not a liberty file"),
    (["synth", "--block", "pe", "--liberty", "{tmp}/junk.lib", "--no-liberty"], "not allowed with"),
    (["timing", "--block", "pe", "--liberty", "nangate"], "or name a library: nangate45, osu018"),
    (["synth", "--block", "pe", "--liberty", "{tmp}/other.lib"], "library 'tiny_ff' has no cell kit"),
    (["verilog", "--block", "pe", "--head-dim", "16", "--out", "{tmp}/v"], "--head-dim goes with --model"),
    (["verilog", "--block", "pe", "--out", "{tmp}/junk.lib"], "is a file; name a folder"),
    (["verilog", "--block", "matcher", "--lookahead", "0", "--out", "{tmp}/v"], "lookahead must be between 1 and 64"),
    (["verilog", "--block", "pe", "--pe-stages", "5", "--out", "{tmp}/v"], "--pe-stages: invalid choice: 5"),
])
def test_refusals_are_one_line(tmp_path, args, message):
    (tmp_path / "junk.lib").write_text("not a liberty file\n")
    (tmp_path / "other.lib").write_text(FF_LIBRARY)          # a Liberty file of a library with no kit
    r = run(*(a.format(tmp=tmp_path) for a in args))
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junk.lib", "other.lib"]


needs_sta = pytest.mark.skipif(shutil.which("sta") is None or default_liberty() is None,
                               reason="needs OpenSTA (sta) and the default liberty (make setup)")


@needs_sta
def test_timing_json_for_both_pes():
    fmax = {}
    for block in ("pe", "baseline-pe"):
        r = run("timing", "--block", block, "--partition", "2,1,1", "--json")
        assert r.returncode == 0, r.stderr
        rep = json.loads(r.stdout)
        assert set(rep) == {"block", "liberty", "clock_mhz", "critical_path_ns", "fmax_mhz", "slack_ns", "met",
                            "startpoint", "endpoint", "hold_slack_ns", "gating_setup_slack_ns",
                            "gating_hold_slack_ns", "io_ns", "hold_repair"}
        checks = [rep[k] for k in ("slack_ns", "hold_slack_ns", "gating_setup_slack_ns", "gating_hold_slack_ns")]
        assert rep["met"] == all(c is None or c >= 0 for c in checks)
        # A block alone gives a tenth of the period to the wiring on each side.
        assert rep["io_ns"] == pytest.approx(0.1 * 1e3 / rep["clock_mhz"])
        assert rep["slack_ns"] == pytest.approx(1e3 / rep["clock_mhz"] - rep["critical_path_ns"], abs=1e-3)
        assert rep["fmax_mhz"] == pytest.approx(1000 / rep["critical_path_ns"]) and rep["fmax_mhz"] > 0
        fmax[block] = rep["fmax_mhz"]
    print(f"fmax pe {fmax['pe']:.1f} MHz, baseline-pe {fmax['baseline-pe']:.1f} MHz")
    # Another chip clock: the block is mapped and timed for it.
    r = run("timing", "--block", "baseline-pe", "--partition", "2,1,1", "--clock-mhz", "150", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["clock_mhz"] == 150.0
    for bad in ("0", "-5", "fast", "1e9"):
        r = run("timing", "--block", "pe", "--clock-mhz", bad)
        assert r.returncode == 2 and "--clock-mhz" in r.stderr, r.stderr


@needs_sta
def test_power_json_and_refusals(tmp_path):
    r = run("power", "--block", "pe", "--partition", "2,1,1", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert set(rep) == {"block", "liberty", "energy_pj", "split_pj", "leakage_uw", "clock_mhz", "measured_at_mhz",
                        "at_chip_clock", "method"}
    assert rep["energy_pj"]["full_mac"] > rep["energy_pj"]["idle"] > 0
    r = run("power", "--block", "array")           # power --help offers only what it measures
    assert r.returncode == 2 and "invalid choice: 'array'" in r.stderr
    r = run("timing", "--block", "pe", "--liberty", str(tmp_path))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, message", [
    (["--block", "pe", "--seeds", "a,b"], "--seeds a,b: give integers"),
    (["--block", "pe", "--seeds", "1,1"], "distinct integers"),
    (["--block", "pe", "--seeds", "0"], "each at least 1"),
    (["--block", "matcher"], "invalid choice: 'matcher'"),
    (["--block", "pe", "--device", "12k"], "invalid choice: '12k'"),
    (["--block", "pe", "--bitstream", "--out", "x"], "--bitstream is for the system top (--block top), not --block pe"),
    (["--block", "top", "--design", "baseline"], "--design goes with --bitstream"),
    (["--block", "top", "--bitstream"], "--bitstream needs --out DIR"),
    (["--block", "pe", "--board", "ulx3s", "--baud", "9600"], "--board, --baud go with --bitstream"),
    (["--block", "top", "--bitstream", "--out", "x", "--baud", "10000000"], "--baud 10000000: the ulx3s's 25 MHz"),
    (["--block", "top", "--bitstream", "--out", "x", "--baud", "0"], "--baud 0 must be a positive rate"),
    # Refused before minutes of place and route (it was refused after them).
    (["--block", "top", "--bitstream", "--out", "README.md"], "--out README.md is a file; name a folder"),
    (["--block", "top", "--bitstream", "--out", "x", "--baud", "-9600"], "--baud -9600 must be a positive rate"),
    (["--block", "top", "--bitstream", "--out", "x", "--board", "icebreaker"], "invalid choice: 'icebreaker'"),
])
def test_fpga_refuses_bad_input_in_one_line(tmp_path, args, message):
    args = [str(tmp_path / a) if a == "x" else a for a in args]
    r = run("fpga", *args)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "x").exists()            # nothing half-written


def test_fpga_reports_both_designs():
    r = run("fpga", "--block", "pe", "--seeds", "1", "--json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert set(res) == {"kaleido", "baseline"} and res["kaleido"]["luts"] > res["baseline"]["luts"]


@pytest.mark.parametrize("argv, message", [
    (["--block", "engine", "--variant", "pe", "--issue-window", "4"],
     "--issue-window sets the channel window: --variant pe has none (pe-m and full have it)"),
    (["--block", "engine", "--variant", "pe", "--lookahead",
      "8"], "--lookahead sets the matcher: --variant pe has none"),
    (["--block", "top", "--variant", "pe-sh", "--dispatcher", "matcher"],
     "--dispatcher sets the data dispatcher: --variant pe-sh has none"),
    (["--block", "matcher", "--issue-window", "4"],
     "--issue-window sets the channel window: --block matcher has none (--block array, window-pe"),
    (["--block", "pe", "--dispatcher", "matcher"], "--block pe has none (--block engine, top have it)"),
])
def test_a_knob_of_a_part_the_block_lacks_is_refused(tmp_path, argv, message):
    r = run("verilog", *argv, "--out", str(tmp_path / "v"))
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert not (tmp_path / "v").exists()


def test_a_plugin_kind_and_a_preset_reach_the_verilog(tmp_path):
    """--pe-kind goes over a preset's PE (with its own register count), and a
    plugin's kind and dispatcher are blocks like the built-in ones."""
    r = run("verilog", "--block", "pe", "--preset", "exact", "--pe-kind", "paper", "--out", str(tmp_path / "a"))
    assert r.returncode == 0, r.stderr
    header = open(r.stdout.strip()).readline() + open(r.stdout.strip()).readlines()[1]
    assert "accumulators=3" in header and "pe_kind='paper'" in header
    toys = str(Path(__file__).resolve().parents[2] / "toys.py")
    r = run("--plugin", toys, "verilog", "--block", "pe", "--pe-kind", "toy-whole", "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    body = lambda path: open(path).read().split("\n", 2)[2]
    assert body(r.stdout.strip()) != body(str(tmp_path / "a" / "kaleido_pe.v"))
    r = run("--plugin", toys, "verilog", "--block", "engine", "--dispatcher", "toy-descending", "--rows", "2",
            "--cols", "2", "--partition", "2,1,1", "--out", str(tmp_path / "c"))
    assert r.returncode == 0 and "toy-descending" in open(r.stdout.strip()).readlines()[1], r.stderr


@pytest.mark.parametrize("flags", [["--model", "wan2.1", "--head-dim", "256"], ["--partition", "100,100,100"],
                                   ["--max-channels", "256"]])
def test_the_accumulator_defaults_follow_the_head(tmp_path, flags):
    # "default: the head dimension" and "the least that cannot overflow", whatever the head.
    r = run("verilog", "--block", "baseline-pe", *flags, "--out", str(tmp_path / "v"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "v" / "kaleido_baseline_pe.v").exists()


@pytest.mark.skipif(not __import__("tests.synth.test_kits", fromlist=["_fetched"])._fetched("nangate45"),
                    reason="needs NanGate45 (make setup fetches it)")
def test_a_library_by_name_signs_off_at_its_own_clock():
    """``--liberty nangate45`` maps the block for NanGate45's sign-off clock; ``--clock-mhz`` overrides it."""
    from synth.kits import NANGATE45

    r = run("synth", "--block", "baseline-pe", "--liberty", "nangate45", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["liberty"].endswith("nangate45/stdcells.lib") and rep["clock_mhz"] == NANGATE45.signoff_mhz
    r = run("synth", "--block", "baseline-pe", "--liberty", "nangate45", "--clock-mhz", "500", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["clock_mhz"] == 500


def test_fpga_bitstream_says_what_it_wrote(tmp_path, monkeypatch, capsys):
    # The flow itself runs in tests/synth/test_bitstream.py; here, what the command makes of its report.
    import synth.bitstream
    from sim.cli.main import main

    seen = {}

    def fake(cfg, design, board, out, device, seed, baud):
        seen.update(design=design, board=board, out=out, device=device, seed=seed, baud=baud)
        return {"board": board, "device": "LFE5U-45K", "package": "CABGA381", "seed": seed, "luts": 12345,
                "ffs": 678, "mult18": 9, "bram": 34, "fmax_mhz": 41.7, "clock_mhz": 25.0, "baud": baud,
                "mem_words": 16384, "files": [f"{out}/kaleido_board-ulx3s.bit"]}
    monkeypatch.setattr(synth.bitstream, "bitstream", fake)
    assert main(["fpga", "--block", "top", "--bitstream", "--out", str(tmp_path), "--device", "45k",
                 "--seeds", "3,1", "--baud", "115200", "--design", "baseline"]) == 0
    assert seen == {"design": "baseline", "board": "ulx3s", "out": str(tmp_path), "device": "45k", "seed": 3,
                    "baud": 115200}
    out = capsys.readouterr().out
    assert "12,345 LUT4" in out and "closes at 41.7 MHz against the board's 25" in out
    assert "115,200 baud" in out and "openFPGALoader -b ulx3s" in out


def test_power_names_the_cell_models_a_users_liberty_lacks(tmp_path):
    """It used to stop on a GateSimError (rc 1) that advised `make setup`."""
    from synth.kits import LibraryError, liberty_path
    try:
        source = liberty_path("nangate45")
    except LibraryError:
        pytest.skip("make setup fetches NanGate45")
    lib = tmp_path / "mine.lib"
    shutil.copyfile(source, lib)
    r = run("power", "--block", "pe", "--liberty", str(lib))
    assert r.returncode == 2 and f"{tmp_path / 'mine.v'} are not beside it" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
