"""``make bench``: the measured figures the issues ask for, printed as one JSON object.

Timings are noisy on small machines: every timing here is a ratio of two
measurements taken in the same run, each the median of several repeats.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from unittest.mock import patch

import numpy as np

from golden import Config, approx_scores, proxy_workload, quantize, run_attention
from golden.channel_window import WINDOW_WIDTHS
from golden.config import CLUSTER_RULES
from golden.cycle_model import baseline_cycles, kaleido_cycles, pass_profile
from golden.energy import unit_energy
from golden.head_cycles import baseline_head_cycles, pv_cycles
from golden.pe import DEFAULT_PE_STAGES, PE_STAGES
from golden.pe_kinds import ACCUMULATORS
from golden.presets import PRESETS
from golden.softmax import softmax_cycles, softmax_spec
from golden.variants import VARIANTS
from sim.chip.fast_cycles import estimate_cycles
from sim.experiments.published import check_record, record, this_command
from sim.rtl import runner
from sim.rtl.energy import run_energy
from synth.area import block_area
from synth.flow import default_liberty
from synth.kits import DEFAULT, KITS
from synth.power import energy_per_action
from synth.timing import block_timing

from ..workload import make_workload
from . import SPEED_CASES, SPEED_DISPATCHERS, THRESHOLDS

#: The head the sign-off bench measures (preset ``signoff-head``).
SIGNOFF_HEAD = PRESETS["signoff-head"]


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_golden(repeats: int = 3) -> dict:
    """Golden S~ (states + approximation + product) against numpy's int64 GEMM, N=4096, D=128."""
    cfg = Config.for_model("wan2.1", 128, grid=(16, 16, 16))
    rng = np.random.default_rng(0)
    q = rng.integers(-128, 128, (cfg.tokens, 128), dtype=np.int8)
    k = rng.integers(-128, 128, (cfg.tokens, 128), dtype=np.int8)
    qi, ki = q.astype(np.int64), k.astype(np.int64).T
    golden = _median_time(lambda: approx_scores(q, k, cfg), repeats)
    plain = _median_time(lambda: qi @ ki, repeats)
    return {"N": cfg.tokens, "D": 128, "golden_s": golden, "numpy_int64_gemm_s": plain,
            "golden_over_gemm": golden / plain}


def bench_thresholds() -> list:
    """Oracle reduction and output PSNR on the proxy workload, grid 8x16x16, Wan2.1, D=128."""
    rows = []
    for F, P in THRESHOLDS:
        cfg = Config.for_model("wan2.1", 128, grid=(8, 16, 16), full_bits=F, partial_bits=P)
        w = proxy_workload(cfg)
        (q, sq), (k, sk), (v, sv) = (quantize(w[n]) for n in "qkv")
        r = run_attention(q, k, cfg, v=v, scales=(sq, sk, sv))
        rows.append({"F": F, "P": P, "oracle_reduction": r.oracle_reduction,
                     "psnr_db": r.float_psnr_db, "cosine": r.float_cosine,
                     "int_psnr_db": r.psnr_db})
    return rows


def bench_pe_sim(cycles: int = 20000) -> dict:
    """Simulated cycles per second of the PE testbench, Icarus against Verilator."""

    out = {}
    cfg = Config(partition=(16, 8, 8))
    for sim in runner.SIMULATORS:
        if runner.missing(sim):
            out[sim] = None
            continue
        with tempfile.TemporaryDirectory() as work:
            r = runner.run("pe", cfg, sim, "tb.pe_tb", Path(work), testcase="augmented_pe_random",
                           env={"KALEIDO_CYCLES": str(cycles)})
        out[sim] = {"cycles": r.sim_time_ns / 10, "test_s": r.test_s,
                    "cycles_per_s": r.sim_time_ns / 10 / r.test_s, "ok": r.ok}
    if out.get("icarus") and out.get("verilator"):
        out["verilator_over_icarus"] = out["verilator"]["cycles_per_s"] / out["icarus"]["cycles_per_s"]
    return out


def bench_head(workload: str = "bikes", grid=SIGNOFF_HEAD.changes["grid"], head_dim: int = SIGNOFF_HEAD.head_dim,
               pe_stages: int = DEFAULT_PE_STAGES,
               issue_window: int = 0, cluster_rule: str = Config().cluster_rule, clock_mhz: float = 0.0,
               variant: str = "full") -> dict:
    """One head's ``Q K^T`` at full size (and beside it the softmax stage that
    follows, :func:`_with_softmax`), Kaleido (full, both PEs) against the baseline:
    cycles from the cycle model (which the tests hold equal to the RTL; an RTL run here
    is ~30M cycles), energy and time from the measured energies per action (the
    dispatcher's included) at one chip clock (``clock_mhz``, default the Config's), each
    design at the clock its slowest block meets. ``kaleido`` is the paper's PE,
    ``kaleido_exact`` the 4-accumulator one; ``pe_stages`` applies to every PE,
    ``variant``, ``issue_window`` and ``cluster_rule`` to Kaleido's dispatcher."""


    cfg = Config.for_model(SIGNOFF_HEAD.model, head_dim, grid=grid, pe_stages=pe_stages, issue_window=issue_window,
                           cluster_rule=cluster_rule, clock_mhz=clock_mhz)
    w = make_workload(cfg, workload)
    q, k = quantize(w["q"])[0], quantize(w["k"])[0]
    golden = run_attention(q, k, cfg)
    base = baseline_cycles(cfg.tokens, cfg.tokens, cfg)
    out = {"workload": workload, "grid": list(grid), "partition": list(cfg.partition), "pe_stages": pe_stages,
           "variant": variant,
           "chip_clock_mhz": cfg.clock_mhz,
           "issue_window": issue_window, "cluster_rule": cluster_rule,
           "full_bits": cfg.full_bits, "partial_bits": cfg.partial_bits,
           "oracle_reduction": golden.oracle_reduction, "oracle_bound": golden.dense_macs / golden.oracle_macs}
    lib = default_liberty()
    runs = {"baseline": (cfg, "baseline", base)}
    for acc, name in zip(ACCUMULATORS, ("kaleido", "kaleido_exact")):
        at = cfg.with_(accumulators=acc, variant=variant)
        runs[name] = (at, "kaleido", kaleido_cycles(q, k, at))
    for name, (at, design, report) in runs.items():
        out[name] = {"cycles": report.cycles, "utilization": report.utilization, "schedule": report.schedule,
                     "speedup_cycles": base.cycles / report.cycles,
                     "share_of_bound": base.cycles / report.cycles / out["oracle_bound"]}
        if lib:
            out[name].update(run_energy(at, q, k, design, report.cycles,
                                        report=report if design == "kaleido" else None))
        if lib and name != "baseline" and out[name]["energy_pj"] is not None:
            out[name]["energy_ratio"] = out[name]["energy_pj"] / out["baseline"]["energy_pj"]
            out[name]["time_ratio"] = out[name]["time_us"] / out["baseline"]["time_us"]
            out[name]["iso_area"] = iso_area(at, lib, out[name]["time_us"], out["baseline"]["time_us"])
    if lib and all(out[name].get("energy_pj") is not None for name in runs):
        _with_softmax(out, runs, cfg, lib)
    return out


#: The designs of a head run, as its table names them.
_HEAD_ROWS = (("baseline", "baseline"), ("kaleido", "Kaleido"), ("kaleido_exact", "Kaleido exact"))


def head_figures(out: dict) -> tuple[dict, dict]:
    """The figures and the table :func:`bench_head`'s result publishes
    (:func:`sim.experiments.published.record`): per design its cycles, clock, time and energy
    against the baseline, energy and the dispatcher's share, and with the
    softmax stage; for Kaleido (the paper's PE) the headline figures alone."""
    base = out["baseline"]
    rows = [["design", "cycles", "clock MHz", "time x baseline", "energy x baseline", "energy mJ (dispatcher)",
             "with softmax: time, energy"]]
    for name, label in _HEAD_ROWS:
        r = out[name]
        disp = sum(v for k, v in r.get("energy_split_pj", {}).items() if k.startswith("dispatcher"))
        soft = r.get("with_softmax", {})
        rows.append([label, f"{r['cycles']:,}", f"{r['clock_mhz']:.1f}",
                     "1" if name == "baseline" else f"{r['time_ratio']:.3f}",
                     "1" if name == "baseline" else f"{r['energy_ratio']:.3f}",
                     f"{r['energy_pj'] / 1e9:.2f}" + (f" ({disp / 1e9:.2f})" if disp else ""),
                     "1, 1" if name == "baseline" else f"{soft['time_ratio']:.3f}, {soft['energy_ratio']:.3f}"])
    k = out["kaleido"]
    figures = {"cycles_fewer": f"{base['cycles'] / k['cycles']:.2f}x", "clock_mhz": f"{k['clock_mhz']:.1f} MHz",
               "time": f"{k['time_ratio']:.2f}x", "energy": f"{k['energy_ratio']:.2f}x",
               "exact_time": f"{out['kaleido_exact']['time_ratio']:.2f}x",
               "exact_energy": f"{out['kaleido_exact']['energy_ratio']:.2f}x",
               "oracle_bound": f"{out['oracle_bound']:.2f}x",
               "throughput_per_area": f"{k['iso_area']['throughput_per_area']:.3f}"}
    return figures, {"designs": rows}


def _with_softmax(out: dict, runs: dict, cfg: Config, liberty: str) -> None:
    """The head's softmax stage beside its ``Q K^T``: the same vector unit in both
    designs, busy for its whole stage (every row of scores), at the design's clock;
    ``with_softmax`` adds it to the ``Q K^T`` figures. ``softmax_slack_ns``: the
    unit's slack at the chip clock (a unit that missed it would slow the chip)."""

    soft = energy_per_action("softmax", cfg, liberty)
    cycles = softmax_cycles(softmax_spec(cfg.tokens, cfg.acc_bits), cfg.vector_lanes, cfg.tokens)
    out["softmax_slack_ns"] = block_timing("softmax", cfg, liberty)["slack_ns"]
    for name in runs:
        r = out[name]
        clock = r["clock_mhz"]
        pj = unit_energy(cycles, cycles, soft["energy_pj"], soft["leakage_uw"], clock)
        r["softmax"] = {"cycles": cycles, "time_us": cycles / clock, "energy_pj": pj}
        r["with_softmax"] = {"time_us": r["time_us"] + cycles / clock, "energy_pj": r["energy_pj"] + pj}
    for name in runs:
        if name != "baseline":
            mine, base = out[name]["with_softmax"], out["baseline"]["with_softmax"]
            mine["time_ratio"] = mine["time_us"] / base["time_us"]
            mine["energy_ratio"] = mine["energy_pj"] / base["energy_pj"]


def iso_area(cfg, liberty: str, kaleido_us: float, baseline_us: float) -> dict:
    """Kaleido's array against a baseline array of the same area, at the same clock.

    ``baseline_pes``: baseline PEs that fit in the Kaleido array's area (both mapped
    for the chip clock). The baseline's time there is its time scaled by its PEs,
    ideal scaling, which favours the baseline only by the tiling losses it would
    really have. ``throughput_per_area`` > 1: at equal area Kaleido finishes first.
    """
    k_area = block_area("array", cfg, liberty)["area_um2"]
    b_area = block_area("baseline-array", cfg, liberty)["area_um2"]
    pes = cfg.rows * cfg.cols
    fit = k_area / b_area * pes
    return {"kaleido_array_um2": k_area, "baseline_array_um2": b_area, "baseline_pes": int(fit),
            "throughput_per_area": baseline_us / kaleido_us * b_area / k_area}




def bench_speed(variant: str = "full", cases=tuple(SPEED_CASES), accumulators=ACCUMULATORS,
                dispatchers=SPEED_DISPATCHERS) -> list:
    """Kaleido against the baseline on the cycle model (which the tests hold equal to
    the RTL): cycles, speedup, share of the oracle bound, executed over oracle
    MACs, utilization, and lane use per pass, for both PEs and each of
    ``dispatchers`` (``(issue_window, cluster_rule)``). ``cycles`` is the faster of
    passes A-D (every dispatcher part) and the dense schedule; the pass figures
    are those of passes A-D."""

    rows = []
    for name in cases:
        grid, partition = SPEED_CASES[name]
        for acc, (window, rule) in ((a, d) for a in accumulators for d in dispatchers):
            cfg = Config(grid=grid, partition=partition, full_bits=5, partial_bits=3, accumulators=acc,
                         issue_window=window, cluster_rule=rule, variant=variant)
            w = proxy_workload(cfg)
            q, k = quantize(w["q"])[0], quantize(w["k"])[0]
            golden = run_attention(q, k, cfg)
            base = baseline_cycles(cfg.tokens, cfg.tokens, cfg)
            pairs = kaleido_cycles(q, k, cfg, schedule="pairs")
            ran = pairs if pairs.cycles <= base.cycles else kaleido_cycles(q, k, cfg, schedule="dense")
            bound = golden.dense_macs / golden.oracle_macs
            rows.append({
                "case": name, "accumulators": acc, "issue_window": window, "cluster_rule": rule,
                "variant": variant,
                "baseline_cycles": base.cycles, "pair_cycles": pairs.cycles, "cycles": ran.cycles,
                "schedule": ran.schedule, "speedup": base.cycles / ran.cycles,
                "pair_speedup": base.cycles / pairs.cycles, "oracle_bound": bound,
                "share_of_bound": base.cycles / ran.cycles / bound,
                "executed_over_oracle": pairs.executed_macs / golden.oracle_macs,
                "utilization": pairs.utilization,
                "lane_use": {p: v["lane_use"] for p, v in pass_profile(q, k, cfg).items()},
            })
            print(f"bench speed: {name}, {acc} accumulators, issue window {window}, {rule} rule: "
                  f"{rows[-1]['speedup']:.3f}x "
                  f"({rows[-1]['share_of_bound']:.2f} of the bound)", file=sys.stderr)
    return rows


#: The P V~ cases: (workload, grid, head dimension), Wan2.1 splits, F=5 P=3.
PV_CASES = [("proxy", (4, 8, 8), 64), ("bikes", (4, 8, 8), 64), ("proxy", (8, 16, 16), 128),
            ("bikes", (8, 16, 16), 128)]


def bench_pv(cases=tuple(PV_CASES), base: Config | None = None) -> list:
    """``P V~`` on the Kaleido array against the baseline's (cycle model, which the
    tests hold equal to the RTL): V's full reuse folded per column tile
    (:func:`golden.head_cycles.pv_cycles`), beside the oracle bound
    ``pv_dense_macs / pv_oracle_macs`` and executed over oracle MACs. ``base``: the
    design point to vary (default: the Wan2.1 split at each case's D)."""


    rows = []
    for workload, grid, d in cases:
        cfg = Config.for_model("wan2.1", d, grid=grid) if base is None else base
        w = make_workload(cfg, workload)
        (q, sq), (k, sk), (v, _) = (quantize(w[x]) for x in "qkv")
        att = run_attention(q, k, cfg, v=v, scales=(sq, sk, 1.0))
        pv = pv_cycles(att.probs, v, cfg)
        dense = baseline_head_cycles(cfg)["pv"]
        rows.append({"workload": workload, "grid": list(grid), "head_dim": d, "baseline_cycles": dense,
                     "cycles": pv["cycles"], "schedule": pv["schedule"], "speedup": dense / pv["cycles"],
                     "oracle_bound": att.pv_dense_macs / att.pv_oracle_macs,
                     "share_of_bound": dense / pv["cycles"] / (att.pv_dense_macs / att.pv_oracle_macs),
                     "executed_over_oracle": pv["executed_macs"] / att.pv_oracle_macs,
                     "column_tiles": len(pv["tiles"])})
        r = rows[-1]
        print(f"bench pv: {workload} {grid} D={d}: {r['speedup']:.3f}x ({r['schedule']}; oracle bound "
              f"{r['oracle_bound']:.3f}x)", file=sys.stderr)
    return rows


#: Heads the fast cycle model is checked on against the exact one (N = 256 to 2048).
FAST_MODEL_GRIDS = ((4, 8, 8), (4, 16, 16), (8, 16, 16))

#: A 480p Wan2.1 head: 81 frames and 480x832 pixels through the VAE (4x8x8) and the 1x2x2 patch.
WAN_480P_GRID = (21, 30, 52)


def bench_fast_model(samples: int = 20000, grids=FAST_MODEL_GRIDS, big=WAN_480P_GRID) -> dict:
    """The fast cycle model (sim.chip.fast_cycles) against the exact one on proxy heads,
    Wan2.1 D=128, variant full: cycles, error and time of each, computed whole and
    sampled (``samples`` tile groups per pair table set, 95 % interval), in the same
    run; then the sampled model alone on a 480p head (the exact one would take hours)."""

    def timed(fn):
        start = time.perf_counter()
        value = fn()
        return value, time.perf_counter() - start

    def operands(grid):
        cfg = Config.for_model("wan2.1", 128, grid=grid)
        w = proxy_workload(cfg)
        return cfg, quantize(w["q"])[0], quantize(w["k"])[0]

    rows = []
    for grid in grids:
        cfg, q, k = operands(grid)
        exact, t_exact = timed(lambda: kaleido_cycles(q, k, cfg))
        whole, t_whole = timed(lambda: estimate_cycles(q, k, cfg))
        part, t_part = timed(lambda: estimate_cycles(q, k, cfg, samples=min(samples, whole.tiles // 4)))
        rows.append({"N": cfg.tokens, "tile_groups": whole.tiles, "exact_cycles": exact.cycles,
                     "exact_s": t_exact, "whole_cycles": whole.cycles, "whole_s": t_whole,
                     "whole_equal": bool(whole.cycles == exact.cycles and whole.lane_work == exact.lane_work),
                     "sampled": part.sampled, "sampled_cycles": part.cycles, "interval": [part.low, part.high],
                     "sampled_error": part.cycles / exact.cycles - 1,
                     "exact_inside": bool(part.low <= exact.cycles <= part.high), "sampled_s": t_part,
                     "speedup_whole": t_exact / t_whole, "speedup_sampled": t_exact / t_part})
    cfg, q, k = operands(big)
    est, t_big = timed(lambda: estimate_cycles(q, k, cfg, samples=samples))
    return {"heads": rows, "wan480p": {"grid": list(big), "N": cfg.tokens, "tile_groups": est.tiles,
                                       "sampled": est.sampled, "cycles": est.cycles, "interval": [est.low, est.high],
                                       "half_width": (est.high - est.low) / 2 / est.cycles, "ran_as": est.ran_as,
                                       "seconds": t_big}}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("what", nargs="*", default=["golden", "thresholds", "pe-sim", "speed", "pv"],
                   choices=["golden", "thresholds", "pe-sim", "head", "speed", "pv", "fast-model"])
    p.add_argument("--workload", default="bikes", help="for head: proxy, a clip or a video file (default bikes)")
    p.add_argument("--variant", default="full", choices=tuple(VARIANTS),
                   help="for speed and head: Kaleido's dispatcher variant (default full)")
    p.add_argument("--pe-stages", type=int, choices=PE_STAGES, default=DEFAULT_PE_STAGES,
                   help=f"for head: register stages of every PE (default {DEFAULT_PE_STAGES})")
    p.add_argument("--issue-window", type=int, choices=WINDOW_WIDTHS, default=0,
                   help="for head: Kaleido's channel window (default 0: the matcher)")
    p.add_argument("--cluster-rule", choices=CLUSTER_RULES, default=Config().cluster_rule,
                   help=f"for head: Kaleido's scheduler rule (default {Config().cluster_rule}; pivots is the paper's)")
    p.add_argument("--clock-mhz", type=float, default=0.0, metavar="F",
                   help="for head: the chip clock (default: the library's sign-off clock, where the baseline array "
                        "closes)")
    p.add_argument("--liberty", choices=tuple(KITS), default=DEFAULT.name,
                   help=f"for head: the cell library its blocks are signed off on, at its own sign-off clock "
                        f"unless --clock-mhz gives one (default {DEFAULT.name})")
    p.add_argument("--record", metavar="AREA",
                   help="for head: also write its figures under AREA of docs/figures.json, the docs' source")
    args = p.parse_args(argv)
    args.clock_mhz = args.clock_mhz or KITS[args.liberty].signoff_mhz
    if args.record and args.what != ["head"]:
        p.error("--record goes with head alone")
    if args.record:
        try:
            check_record(args.record, this_command())
        except ValueError as exc:
            p.error(str(exc))
    table = {"golden": bench_golden, "thresholds": bench_thresholds, "pe-sim": bench_pe_sim,
             "head": lambda: bench_head(args.workload, pe_stages=args.pe_stages, issue_window=args.issue_window,
                                         cluster_rule=args.cluster_rule, clock_mhz=args.clock_mhz,
                                         variant=args.variant),
             "speed": lambda: bench_speed(args.variant), "pv": bench_pv, "fast-model": bench_fast_model}
    result = {}
    # The library reaches every sign-off step the way a user's does: as the flow's
    # default, for this run alone.
    with patch.dict(os.environ, KALEIDO_LIBERTY=args.liberty):
        for name in args.what:
            print(f"bench: {name} ...", file=sys.stderr)
            result[name] = table[name]()
    if args.record:

        figures, tables = head_figures(result["head"])
        record(args.record, figures, tables,
               command="python -m sim.experiments.bench " + " ".join(argv if argv is not None else sys.argv[1:]))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
