"""``kaleido sim attention`` end to end on the emitted RTL: files, waveforms, and refusals."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.sweep import sweep

KALEIDO = [sys.executable, "-m", "sim"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def run(*args, cwd=None):
    return subprocess.run(KALEIDO + list(args), capture_output=True, text=True, cwd=cwd or ROOT)


def test_sim_attention_end_to_end(tmp_path, rng):
    from sim.rtl import runner
    if runner.missing("icarus"):
        pytest.skip(runner.missing("icarus"))
    q = rng.integers(-128, 128, (2 * 2 * 3, 5), dtype=np.int8)
    k = np.clip(q + rng.integers(-4, 5, q.shape), -128, 127).astype(np.int8)
    np.save(tmp_path / "q.npy", q)
    np.save(tmp_path / "k.npy", k)
    common = ["--q", "q.npy", "--k", "k.npy", "--grid", "2,2,3", "--partition", "1,2,2",
              "--simulator", "icarus", "--rows", "2", "--cols", "3"]
    r = run("sim", "attention", *common, "--out", "rtl", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    stats = json.loads((tmp_path / "rtl" / "stats.json").read_text())
    assert stats["scores_match"] and stats["cycles"] == stats["model_cycles"]
    assert {"design", "variant", "simulator", "cycles", "model_cycles", "executed_macs",
            "utilization", "energy_pj", "chip_clock_mhz", "clock_mhz", "time_us"} <= set(stats)
    if stats["energy_pj"] is None:
        assert stats["energy_note"]                         # said why, where sta or the liberty is missing
    else:
        assert stats["energy_pj"] > 0 and stats["time_us"] == pytest.approx(stats["cycles"] / stats["clock_mhz"])
        # One chip clock; a run is never credited with more than its slowest block meets.
        assert stats["clock_mhz"] <= stats["chip_clock_mhz"]
        timing = stats["blocks_timing"]
        assert set(timing) == {"array", "scheduler", "matcher", "engine"}   # the whole engine caps the clock too
        assert stats["clock_mhz"] == pytest.approx(min(stats["chip_clock_mhz"],
                                                       min(t["fmax_mhz"] for t in timing.values())))
        assert (stats["slowest_block"] is None) == all(t["met"] for t in timing.values())
        assert stats["energy_pj"] == pytest.approx(sum(stats["energy_split_pj"].values()))
        # full (the default variant) has a dispatcher, and its energy counts it.
        assert stats["variant"] == "full"
        assert stats["dispatcher_pj"] > 0 and "clock-gated" in stats["dispatcher_scope"]
        split = stats["energy_split_pj"]
        assert {"dispatcher_scheduler", "dispatcher_matcher"} <= set(split)
        assert stats["dispatcher_pj"] == pytest.approx(split["dispatcher_scheduler"] + split["dispatcher_matcher"])
    g = run("golden", "attention", *common[:8], "--out", "g.npz", cwd=tmp_path)
    assert g.returncode == 0, g.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "rtl" / "scores.npy"),
                                  np.load(tmp_path / "g.npz")["scores"])
    assert not [p for p in (tmp_path / "rtl").iterdir() if p.name.startswith(".work")]
    # Waveforms: one file per simulated top (the energy is as above: not measured again).
    w = run("sim", "attention", *common, "--variant", "full", "--waves", "--no-energy", "--out", "waves",
            cwd=tmp_path)
    assert w.returncode == 0, w.stderr
    waves = [p.name for p in (tmp_path / "waves").iterdir() if p.suffix in (".fst", ".vcd")]
    assert len(waves) == 2 and [n for n in waves if n.startswith("scheduler_")], waves
    assert not [p for p in (tmp_path / "waves").iterdir() if p.name.startswith(".work")]


def test_a_failed_run_leaves_no_old_results(tmp_path, monkeypatch, capsys):
    # The last run's scores and stats go when a new run starts: a failure leaves none behind.
    from sim.cli import attention_cmd
    from sim.cli.main import main
    from sim.errors import UserError
    from sim.rtl import runner
    if runner.missing("icarus"):
        pytest.skip(runner.missing("icarus"))
    np.save(tmp_path / "q.npy", np.zeros((4, 3), np.int8))
    out = tmp_path / "o"
    out.mkdir()
    for name in ("scores.npy", "stats.json", "old.vcd", "mine.vcd"):
        (out / name).write_text("from the last run")
    (out / ".kaleido-waves").write_text("old.vcd\n")     # the waveforms the last run wrote

    def broken(*args, **kwargs):
        raise UserError("RTL simulation failed under icarus: on purpose")
    monkeypatch.setattr(attention_cmd, "simulate", broken)
    args = ["sim", "attention", "--q", str(tmp_path / "q.npy"), "--k", str(tmp_path / "q.npy"),
            "--grid", "1,2,2", "--partition", "1,1,1", "--simulator", "icarus", "--out", str(out)]
    assert main(args) == 2
    assert "on purpose" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["mine.vcd"]      # the user's own waveform stays
    assert main(args[:-1] + [str(tmp_path / "new")]) == 2
    assert not (tmp_path / "new").exists()          # a folder the failed run made goes too
    assert main(args[:-1] + [str(tmp_path / "nest" / "x" / "y")]) == 2
    assert not (tmp_path / "nest").exists()         # every level of it
    # A folder another run is writing into (its scratch is there) stays.
    shared = tmp_path / "shared"

    def other_run_started(*args, **kwargs):
        (shared / ".work-other").mkdir()
        raise UserError("RTL simulation failed under icarus: on purpose")
    monkeypatch.setattr(attention_cmd, "simulate", other_run_started)
    assert main(args[:-1] + [str(shared)]) == 2
    assert [p.name for p in shared.iterdir()] == [".work-other"]


def test_sim_attention_bad_variant(tmp_path):
    np.save(tmp_path / "q.npy", np.zeros((4, 3), np.int8))
    r = run("sim", "attention", "--q", "q.npy", "--k", "q.npy", "--grid", "1,2,2", "--design",
            "baseline", "--partition", "1,1,1", "--variant", "pe-m", "--out", "o", cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "dispatcher" in r.stderr and not (tmp_path / "o" / "stats.json").exists()
    r = run("sim", "attention", "--q", "q.npy", "--k", "q.npy", "--grid", "1,2,2",
            "--partition", "1,1,1", "--variant", "fancy", "--out", "o", cwd=tmp_path)
    assert r.returncode == 2 and "invalid choice" in r.stderr
    for extra in (["--design", "baseline", "--v", "q.npy"], []):
        r = run("sim", "attention", "--q", "q.npy", "--k", "q.npy", "--grid", "1,2,2", "--partition",
                "1,1,1", "--pv-schedule", "shared", *extra, "--out", "o", cwd=tmp_path)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "--pv-schedule" in r.stderr and not (tmp_path / "o").exists()


# make test: both designs' heads on Icarus; the Verilator head and the dense P V~ in test-all
# (the engine and the softmax unit are each checked on Verilator by their benches).
@sweep("simulator, design, pv", [("icarus", "kaleido", "shared"), ("verilator", "kaleido", "shared"),
                                 ("icarus", "kaleido", "dense"), ("icarus", "baseline", "auto")],
       keep=[("icarus", "kaleido", "shared"), ("icarus", "baseline", "auto")])
def test_sim_attention_whole_head(tmp_path, rng, simulator, design, pv):
    """--v: S~, the softmax unit and P V~ on the RTL. out.npy is held against an
    independent reading of §3 (V~ from the loop reference, O = P V~ by loops),
    probs against float64, and each stage's cycles against its model."""
    from golden.softmax import softmax_float_codes
    from golden.workload import INT8_SCALE
    from sim.rtl import runner
    from tests import reference
    if runner.missing(simulator):
        pytest.skip(runner.missing(simulator))
    grid, part = (2, 2, 3), (2, 2, 2)
    q = rng.integers(-128, 128, (12, 6), dtype=np.int8)
    k = np.clip(q + rng.integers(-4, 5, q.shape), -128, 127).astype(np.int8)
    v = np.clip(q[::-1] + rng.integers(-6, 7, q.shape), -128, 127).astype(np.int8)
    # Most partners equal their references, so that column tiles have keys to fold.
    from golden import Config
    from golden.pv_tiles import partner_refs
    cfg = Config(grid=grid, partition=part)
    for group, sl in cfg.group_slices.items():
        partners, refs = partner_refs(cfg, group)
        v[partners, sl] = np.where(rng.random((len(partners), 2)) < 0.8, v[refs, sl], v[partners, sl])
    for name, x in dict(q=q, k=k, v=v).items():
        np.save(tmp_path / f"{name}.npy", x)
    r = run("sim", "attention", "--q", "q.npy", "--k", "k.npy", "--v", "v.npy", "--grid", "2,2,3",
            "--partition", "2,2,2", "--simulator", simulator, "--design", design, "--no-energy",
            "--pv-schedule", pv, "--out", "head", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    stats = json.loads((tmp_path / "head" / "stats.json").read_text())
    assert stats["out_match"] and stats["probs_match"] and stats["head_cycles_match"]
    assert set(stats["stages"]) == {"qk", "softmax", "pv"}
    for stage in stats["stages"].values():
        assert stage["cycles"] == stage["model_cycles"]
    assert stats["head_cycles"] == sum(s["cycles"] for s in stats["stages"].values())
    scores = np.load(tmp_path / "head" / "scores.npy")
    probs = np.load(tmp_path / "head" / "probs.npy").astype(int)
    out = np.load(tmp_path / "head" / "out.npy")
    assert np.abs(probs - softmax_float_codes(scores, INT8_SCALE ** 2 / np.sqrt(6))).max() <= 1
    if design == "kaleido":
        _, values = reference.reuse(v.astype(int).tolist(), grid, part, 5, 3)
    else:
        values = v.astype(int).tolist()
    np.testing.assert_array_equal(out, reference.matmul_t(probs.tolist(), [list(c) for c in zip(*values)]))
    if design == "baseline":
        assert stats["head_cycles"] == stats["head_baseline_cycles"]
    else:
        assert stats["pv_schedule"] == pv
    if pv == "shared":
        # One engine run per column tile, each over its own keys: fewer products than dense.
        assert stats["stages"]["pv"]["runs"] == 3
        assert stats["pv_oracle_macs"] <= stats["pv_executed_macs"] < stats["pv_dense_macs"]
    else:
        assert stats["pv_executed_macs"] == stats["pv_dense_macs"]
        assert stats["head_cycles"] <= stats["head_baseline_cycles"]


def test_sim_attention_lookahead_reaches_the_rtl(tmp_path, rng):
    """``--lookahead`` sizes the RTL matcher's window: deeper pairs more steps of
    these partial-reuse operands, and the cycles stay the model's."""
    from sim.rtl import runner
    if runner.missing("icarus"):
        pytest.skip(runner.missing("icarus"))
    base = rng.integers(-64, 64, (1, 8))
    for name in "qk":
        np.save(tmp_path / f"{name}.npy", np.clip(base + rng.integers(0, 16, (32, 8)), -128, 127).astype(np.int8))
    cycles = {}
    for depth in (1, 8):
        r = run("sim", "attention", "--q", "q.npy", "--k", "k.npy", "--grid", "2,4,4", "--partition", "4,2,2",
                "--rows", "2", "--cols", "2", "--variant", "pe-m", "--schedule", "pairs", "--lookahead", str(depth),
                "--simulator", "icarus", "--no-energy", "--out", f"la{depth}", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        stats = json.loads((tmp_path / f"la{depth}" / "stats.json").read_text())
        assert stats["config"]["dispatch"]["lookahead"] == depth and stats["scores_match"]
        assert stats["cycles"] == stats["model_cycles"]
        cycles[depth] = stats["cycles"]
    assert cycles[8] < cycles[1], cycles


def _alike_operands(folder, rng):
    """Q and K (32 tokens, 8 channels) close to one token, saved as q.npy and k.npy."""
    base = rng.integers(-64, 64, (1, 8))
    ops = {n: np.clip(base + rng.integers(0, 24, (32, 8)), -128, 127).astype(np.int8) for n in "qk"}
    for name, x in ops.items():
        np.save(folder / f"{name}.npy", x)
    return ops


# make test: two stages on Icarus; CI: the FPGA variant's four on Verilator (three is the default).
@sweep("simulator, stages", ["icarus", "verilator"], [2, 3, 4], keep=[("icarus", 2)], ci=[("verilator", 4)])
def test_sim_attention_deeper_pes(tmp_path, rng, simulator, stages):
    """``--pe-stages 2``, ``3`` and ``4`` on both designs and both simulators: exact
    scores, cycles the model's, one more a stage than with one stage, and
    Kaleido no slower."""
    from golden import Config
    from golden.cycle_model import baseline_cycles, kaleido_cycles
    from sim.rtl import runner
    if runner.missing(simulator):
        pytest.skip(runner.missing(simulator))
    ops = _alike_operands(tmp_path, rng)
    cfg = Config(grid=(2, 4, 4), partition=(4, 2, 2), rows=2, cols=2, pe_stages=1)
    stats = {}
    for design in ("kaleido", "baseline"):
        r = run("sim", "attention", "--q", "q.npy", "--k", "k.npy", "--grid", "2,4,4", "--partition", "4,2,2",
                "--rows", "2", "--cols", "2", "--design", design, "--pe-stages", str(stages), "--simulator", simulator,
                "--no-energy", "--out", design, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        stats[design] = s = json.loads((tmp_path / design / "stats.json").read_text())
        assert s["config"]["pe"]["pe_stages"] == stages and s["scores_match"] and s["cycles"] == s["model_cycles"]
    one = kaleido_cycles(ops["q"], ops["k"], cfg).cycles
    assert stats["kaleido"]["cycles"] == one + stages - 1
    assert stats["baseline"]["cycles"] == baseline_cycles(cfg.tokens, cfg.tokens, cfg).cycles + stages - 1
    assert stats["kaleido"]["cycles"] <= stats["baseline"]["cycles"]


# (grid, partition, rows = cols): the proxy head on the default array, and a small one
# on which the window still beats the matcher (1,292 slots against 1,303).
WINDOW_HEADS = [((1, 4, 8), (12, 10, 10), 4), ((1, 4, 4), (6, 5, 5), 2)]


# make test: the small head on both simulators (the only RTL run of the channel window).
@sweep("simulator, head", ["icarus", "verilator"], WINDOW_HEADS,
       keep=[("icarus", WINDOW_HEADS[1]), ("verilator", WINDOW_HEADS[1])])
def test_sim_attention_issue_window(tmp_path, simulator, head):
    """``--issue-window 4`` builds the channel window into the RTL: exact scores, and
    cycles the window's model, which on this proxy head are fewer than the matcher's
    (so a window that did not reach the RTL would show)."""
    from golden import Config, proxy_workload, quantize
    from golden.cycle_model import kaleido_cycles
    from sim.rtl import runner
    if runner.missing(simulator):
        pytest.skip(runner.missing(simulator))
    grid, partition, size = head
    cfg = Config(grid=grid, partition=partition, rows=size, cols=size, accumulators=4, issue_window=4)
    w = proxy_workload(cfg)
    ops = {n: quantize(w[n])[0] for n in "qk"}
    for name, x in ops.items():
        np.save(tmp_path / f"{name}.npy", x)
    r = run("sim", "attention", "--q", "q.npy", "--k", "k.npy", "--grid", ",".join(map(str, grid)),
            "--partition", ",".join(map(str, partition)), "--rows", str(size), "--cols", str(size),
            "--variant", "pe-m", "--schedule", "pairs", "--issue-window", "4",
            "--accumulators", "4", "--simulator", simulator, "--no-energy", "--out", "w4", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    stats = json.loads((tmp_path / "w4" / "stats.json").read_text())
    assert stats["config"]["dispatch"]["issue_window"] == 4 and stats["scores_match"]
    assert stats["cycles"] == stats["model_cycles"]
    assert stats["executed_macs"] == stats["oracle_macs"]
    window = kaleido_cycles(ops["q"], ops["k"], cfg.with_(variant="pe-m"), schedule="pairs").cycles
    matcher = kaleido_cycles(ops["q"], ops["k"], cfg.with_(issue_window=0, variant="pe-m"), schedule="pairs").cycles
    assert stats["cycles"] == window < matcher


def test_sim_attention_refuses_a_window_of_one(tmp_path):
    r = run("sim", "attention", "--issue-window", "1", "--out", "w1", cwd=tmp_path)
    assert r.returncode == 2 and "--issue-window" in r.stderr and "invalid choice" in r.stderr
    assert not (tmp_path / "w1").exists()


@pytest.mark.slow         # make test: test_sim_attention_weight_rule_small
@pytest.mark.parametrize("simulator", ["icarus", "verilator"])
def test_sim_attention_weight_rule(tmp_path, simulator):
    """``--cluster-rule weight`` reaches the scheduler RTL: the engine runs the pairs
    in the ranks it gave, scores exact and cycles the model's under that rule,
    which on this proxy head (full variant, exact PE, a window of 8) differ from
    the pivots' (6,767 against 6,728: the weight rule is not the faster here)."""
    from golden import Config, proxy_workload, quantize
    from golden.cycle_model import kaleido_cycles
    from sim.rtl import runner
    if runner.missing(simulator):
        pytest.skip(runner.missing(simulator))
    cfg = Config(grid=(2, 4, 8), partition=(12, 10, 10), accumulators=4, issue_window=8, cluster_rule="weight")
    w = proxy_workload(cfg)
    ops = {n: quantize(w[n])[0] for n in "qk"}
    for name, x in ops.items():
        np.save(tmp_path / f"{name}.npy", x)
    r = run("sim", "attention", "--q", "q.npy", "--k", "k.npy", "--grid", "2,4,8", "--partition", "12,10,10",
            "--issue-window", "8", "--cluster-rule", "weight", "--accumulators", "4", "--simulator", simulator,
            "--no-energy", "--out", "weight", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    stats = json.loads((tmp_path / "weight" / "stats.json").read_text())
    assert stats["config"]["dispatch"]["cluster_rule"] == "weight" and stats["scores_match"]
    assert stats["cycles"] == stats["model_cycles"] == kaleido_cycles(ops["q"], ops["k"], cfg).cycles
    assert stats["executed_macs"] == stats["oracle_macs"]
    pivots = kaleido_cycles(ops["q"], ops["k"], cfg.with_(cluster_rule="pivots")).cycles
    assert stats["cycles"] != pivots


@pytest.mark.parametrize("flags, needs", [(("--cluster-rule", "weight", "--variant",
                                            "pe-m"), "--variant pe-m has none"),
                                          (("--issue-window", "4", "--variant", "pe-sh"), "--variant pe-sh has none")])
def test_sim_attention_refuses_a_dispatcher_option_the_variant_lacks(tmp_path, flags, needs):
    r = run("sim", "attention", "--q", "q.npy", "--k", "k.npy", "--grid", "1,2,2", "--model", "wan2.1", *flags,
            "--out", "x", cwd=tmp_path)
    assert r.returncode == 2 and needs in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


def test_sim_attention_weight_rule_small(tmp_path, rng):
    """``--cluster-rule weight`` reaches the scheduler RTL, on a head small enough for
    every `make test`: scores exact, and cycles the weight rule's model, which differs
    from the pivots' on these operands (so a rule that did not reach the RTL would show)."""
    from golden import Config
    from golden.cycle_model import kaleido_cycles
    from sim.rtl import runner
    if runner.missing("icarus"):
        pytest.skip(runner.missing("icarus"))
    ops = _alike_operands(tmp_path, rng)
    cfg = Config(grid=(2, 4, 4), partition=(4, 2, 2), rows=2, cols=2, cluster_rule="weight")
    weight = kaleido_cycles(ops["q"], ops["k"], cfg, schedule="pairs").cycles
    pivots = kaleido_cycles(ops["q"], ops["k"], cfg.with_(cluster_rule="pivots"), schedule="pairs").cycles
    assert weight != pivots, "operands that do not tell the rules apart"
    r = run("sim", "attention", "--q", "q.npy", "--k", "k.npy", "--grid", "2,4,4", "--partition", "4,2,2",
            "--rows", "2", "--cols", "2", "--cluster-rule", "weight", "--schedule", "pairs",
            "--simulator", "icarus", "--no-energy", "--out", "weight", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    stats = json.loads((tmp_path / "weight" / "stats.json").read_text())
    assert stats["config"]["dispatch"]["cluster_rule"] == "weight" and stats["scores_match"]
    assert stats["cycles"] == stats["model_cycles"] == weight
