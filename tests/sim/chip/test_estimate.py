"""A whole-model estimate on a two-worker Dask LocalCluster: the planned shards,
resuming, and the summary's figures against the chip model."""

import json

import numpy as np
import pytest

from sim.chip.chip import Chip, SignOff, Unit
from sim.chip.estimate import plan_shards, run_estimate, workload_tag
from sim.chip.vdits import VDiT

# A model small enough to run in seconds: 3 steps of 2 layers of 2 heads, 256 tokens a head.
TINY = VDiT("wan2.1", layers=2, heads=2, head_dim=64, hidden=128, mlp=256, steps=3, passes_per_step=2,
            text_tokens=16, joint_text=False, video={"480p": (13, 64, 64)}, flow_shift=5.0)
CHIP = Chip(name="small", arrays=4, softmax_lanes=16)
SOFTMAX = Unit(1.3e6, {"busy": 700.0, "idle": 49.0}, 100.0)
DISPATCH = Unit(2e5, {"busy": 300.0, "idle": 50.0}, 20.0)
SIGNS = {
    "kaleido": SignOff((180, 1.8), Unit(7e4, {"full_mac": 68.0, "nibble_mac": 50.0, "idle": 17.0,
                                               "hand_over": 70.0, "drain_shift": 20.0}, 5.0),
                       SOFTMAX, 4, scheduler=DISPATCH, matcher=DISPATCH, clusters=4),
    "baseline": SignOff((180, 1.8), Unit(3e4, {"full_mac": 44.0, "idle": 6.0, "hand_over": 46.0,
                                                "drain_shift": 8.0}, 2.0), SOFTMAX, 4),
}


def test_every_step_gets_its_heads():
    plan = plan_shards(TINY, 3, seed=1)
    assert len(plan) == 3 * 3 and len(set(plan)) == len(plan)
    assert sorted({s for s, _, _ in plan}) == [0, 1, 2]
    assert plan_shards(TINY, 99) == [(s, l, h) for s in range(3) for l in range(2) for h in range(2)]


@pytest.fixture(scope="module")
def estimate(tmp_path_factory):
    out = tmp_path_factory.mktemp("estimate")
    seen = []
    summary = run_estimate(TINY, "480p", CHIP, "proxy", str(out), per_step=2, samples=300, signs=SIGNS,
                           workers=2, seed=3, progress=lambda done, total: seen.append((done, total)))
    return out, summary, seen


def test_shards_run_on_two_workers_and_resume(estimate):
    out, summary, seen = estimate
    assert seen[0] == (0, 6) and seen[-1] == (6, 6)
    assert len(list((out / "shards").glob("*.json"))) == 6 == summary["shards"]
    again = []
    rerun = run_estimate(TINY, "480p", CHIP, "proxy", str(out), per_step=2, samples=300, signs=SIGNS, workers=2,
                         seed=3, progress=lambda done, total: again.append((done, total)))
    assert again == [(6, 6)]                            # nothing left to compute
    assert json.dumps(rerun, sort_keys=True, default=str) == json.dumps(summary, sort_keys=True, default=str)


def test_the_summary_adds_up(estimate):
    _, s, _ = estimate
    k, b = s["designs"]["kaleido"], s["designs"]["baseline"]
    assert s["speedup"] == pytest.approx(b["time_s"] / k["time_s"])
    lo, hi = s["speedup_interval"]
    assert lo <= s["speedup"] <= hi
    lo, hi = s["energy_ratio_interval"]
    assert lo <= s["energy_ratio"] <= hi
    assert k["energy_low_j"] <= k["energy_j"] <= k["energy_high_j"]
    for d in (k, b):
        # Pipelined, the attention's operations overlap: the layer is shorter than
        # their sum, which the serial time is.
        assert d["serial_time_s"] == pytest.approx(sum(d["time_by_op_s"].values()))
        assert max(d["time_by_op_s"].values()) < d["time_s"] < d["serial_time_s"]
        assert d["energy_j"] == pytest.approx(sum(d["energy_by_op_j"].values()))
        assert d["energy_j"] == pytest.approx(sum(d["energy_by_unit_j"].values()))
    assert b["energy_by_unit_j"]["dispatcher"] == 0 < s["dispatcher_energy_share"] < 1
    assert s["area_overhead"] > 0
    # The baseline chip of Kaleido's area: more arrays, no more area.
    iso = s["designs"]["baseline_iso_area"]
    assert iso["arrays"] == s["iso_area"]["arrays"] > CHIP.arrays
    assert iso["area_mm2"]["total"] <= k["area_mm2"]["total"] < iso["area_mm2"]["total"] + (
        b["area_mm2"]["pe_arrays"] / CHIP.arrays)
    assert s["iso_area"]["speedup"] == pytest.approx(iso["time_s"] / k["time_s"])
    assert iso["time_s"] < b["time_s"]
    reduction = s["qk_operation_reduction"]
    assert 0 <= reduction["hardware"] <= reduction["oracle"] < 1


def test_a_few_steps_stand_for_all():
    from sim.chip.estimate import computed_steps
    model = VDiT("wan2.1", 1, 1, 64, 64, 64, 50, 1, 1, False, {"480p": (5, 16, 16)})
    assert computed_steps(model, None) == list(range(50))
    assert computed_steps(model, 5) == [0, 12, 24, 37, 49]
    assert computed_steps(model, 1) == [0]
    assert {s for s, _, _ in plan_shards(model, 2, steps=5)} == {0, 12, 24, 37, 49}


def test_the_design_knobs_reach_the_heads(tmp_path):
    # The exact PE (4 accumulators) on the same heads: its own shards, its own config in the summary.
    s = run_estimate(TINY, "480p", CHIP, "proxy", str(tmp_path), per_step=1, samples=None, signs=SIGNS, workers=2,
                     steps=1, accumulators=4, variant="pe-m")
    assert s["config"]["pe"]["accumulators"] == 4 and s["config"]["dispatch"]["variant"] == "pe-m"
    assert all("-None-" in p.name for p in (tmp_path / "shards").glob("*.json"))
    exact = s["qk_operation_reduction"]
    assert exact["hardware"] <= exact["oracle"] + 1e-12


def test_the_shards_name_their_clip():
    # A rerun with another clip must not pick up the old clip's heads.
    assert workload_tag("video", "bikes") != workload_tag("video", "carphone")
    assert workload_tag("video", "/a/clip.mp4") != workload_tag("video", "/b/clip.mp4")
    assert workload_tag("video", "/a/clip.mp4").startswith("file")
    assert workload_tag("proxy", "bikes") == workload_tag("proxy", "carphone")


def test_the_banner_counts_the_heads_it_computes():
    from golden import Config
    from sim.cli.estimate_cmd import banner
    line = banner(TINY, "480p", Config(), 3, 10 ** 9)
    assert line.endswith("3 of 3 steps x 4 heads"), line


def test_one_estimate_at_a_time_in_a_folder(tmp_path):
    from sim.cli.estimate_cmd import claimed
    from sim.errors import UserError
    out = tmp_path / "out"
    with claimed(str(out)):
        with pytest.raises(UserError, match="another kaleido estimate is writing there"):
            with claimed(str(out)):
                pass
    assert out.is_dir() and not (out / ".estimate.lock").exists()
    # A run that fails before writing anything leaves no folder it made.
    fresh = tmp_path / "fresh"
    with pytest.raises(RuntimeError):
        with claimed(str(fresh)):
            raise RuntimeError("no scheduler")
    assert not fresh.exists()


def test_the_matcher_is_priced_on_one_head_of_the_run():
    from sim.chip.estimate import representative_trace, shard_config
    cfg = shard_config(TINY, "480p", CHIP)
    trace = representative_trace(TINY, cfg, "proxy", "bikes", None)
    assert 0 < len(trace) <= 8
    for sq, sk, sets in trace:
        assert len(sq) == cfg.rows and len(sk) == cfg.cols and len(sets) == 3
        assert all(0 <= s < 1 << cfg.group_width for s in sets)


# Ctrl-C while shards run on a local Dask cluster: the whole terminal's process group
# gets it, and the run ends as every interrupted command does, one line and exit 130,
# with no traceback from the workers or from the cluster's shutdown.


def test_the_published_area_table_is_every_unit_beside_table_2(estimate):
    """What ``--record`` publishes of the area: each unit of both chips, the
    matchers' feature buffers among them, beside the paper's Table 2."""
    from sim.chip.memories import FEATURE_BUFFER_KIB, sram_mm2_per_mib
    from sim.cli.estimate_cmd import estimate_figures

    _, s, _ = estimate
    _, tables = estimate_figures(s)
    rows = {r[0]: r[1:] for r in tables["area"][1:]}
    k, b = s["designs"]["kaleido"]["area_mm2"], s["designs"]["baseline"]["area_mm2"]
    assert set(rows) == {u.replace("_", " ") for u in k}
    assert float(rows["feature buffers"][0]) == pytest.approx(
        CHIP.arrays * FEATURE_BUFFER_KIB / 1024 * sram_mm2_per_mib(), abs=0.05) and rows["feature buffers"][1] == "0.0"
    assert float(rows["total"][0]) == pytest.approx(k["total"], abs=0.05) and rows["total"][2] == "94.8"
    assert float(rows["pe arrays"][1]) == pytest.approx(b["pe_arrays"], abs=0.05)


def test_each_step_reports_its_structure(estimate):
    # Every shard carries its head's structure; the summary's steps are their means,
    # and the model's mean weighs each computed step by the steps it stands for.
    out, s, _ = estimate
    st = s["structure"]
    shards = [json.loads(p.read_text()) for p in (out / "shards").glob("*.json")]
    for step, figures in st["by_step"].items():
        mine = [r["structure"]["reuse"] for r in shards if r["shard"][0] == int(step)]
        assert figures["structured"] == pytest.approx(np.mean([m["structured"] for m in mine]))
        assert figures["oracle"] == pytest.approx(figures["shuffled"] + figures["structured"])
    assert st["seed"] == 1 and 0 < st["seconds"] < s["shard_seconds"]
    assert min(f["oracle"] for f in st["by_step"].values()) <= st["mean"]["oracle"] <= max(
        f["oracle"] for f in st["by_step"].values())


def test_the_strength_reaches_the_heads(tmp_path):
    # A token-common part: its own shards, its strength in the summary's config, and the common
    # share of Q and K (RoPE undone) s / (1 + s), less what int8 rounding moves.
    s = run_estimate(TINY, "480p", CHIP, "proxy", str(tmp_path), per_step=1, samples=300, signs=SIGNS, workers=2,
                     steps=1, common_strength=1.0)
    assert s["config"]["workload"] == {"common_band": "low", "common_strength": 1.0}
    assert s["structure"]["mean"]["q_common_share"] == pytest.approx(0.5, abs=0.02)


def test_each_blocks_energy_says_the_clock_it_was_measured_at(monkeypatch):
    """A block that misses the clock it is mapped for has its energy measured at its
    own (synth.power); the estimate carries that clock per block and says so."""
    import sim.chip.estimate as estimate
    from sim.cli.estimate_cmd import _measured_at
    from synth.flow import default_liberty

    lib = default_liberty()
    if lib is None:
        pytest.skip("make setup fetches NanGate45")
    own = {"matcher": 612.5}

    def energy(block, cfg, liberty, cycles=256, trace=None):
        return {"energy_pj": {"busy": 1.0, "idle": 0.5, "run": 1.0}, "leakage_uw": 1.0,
                "measured_at_mhz": own.get(block, cfg.clock_mhz)}
    monkeypatch.setattr(estimate, "energy_per_action", energy)
    monkeypatch.setattr(estimate, "block_area", lambda block, cfg, liberty: {"area_um2": 10.0})
    from golden import Config
    signs = estimate.signoffs(Config().with_(clock_mhz=720.0), lib)
    at = _measured_at(signs)
    assert at["kaleido"]["matcher"] == 612.5 and at["kaleido"]["pe"] == 720.0
    assert at["baseline"] == {"pe": 720.0, "softmax": 720.0}
