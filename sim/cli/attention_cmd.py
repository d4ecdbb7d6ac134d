"""``kaleido sim attention``: Q K^T on the simulated RTL, with its figures.

The emitted engine runs under cocotb (Icarus or Verilator) through
:func:`sim.rtl.simulate.simulate`; the bench checks every score against the golden
model and the cycles against the cycle model, and this command writes
``scores.npy`` and ``stats.json``. A progress bar follows the drained scores
while the simulator runs.

With ``--v`` the whole head runs on the RTL (:mod:`sim.rtl.head`): ``S~`` on the
array, the softmax unit, ``P V~`` on the array; ``out.npy`` and ``probs.npy``
join the outputs, and ``stats.json`` gains the stages' cycles.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np

from golden import DESIGNS, expected_scores, pair_reuse, run_attention
from golden.attention import expected_head
from golden.config import Part
from golden.cycle_model import SCHEDULES, baseline_cycles
from golden.head_cycles import PV_SCHEDULES, STAGES, baseline_head_cycles
from golden.opcount import dense_macs, pv_oracle_macs
from sim.cli.outputs import check_output_dir, keep_waves, print_json, run_folder, write_json, write_npy
from sim.errors import UserError
from sim.rtl import runner
from sim.rtl.energy import head_energy, run_energy
from sim.rtl.head import simulate_head
from sim.rtl.plugin_check import unused_plugins
from sim.rtl.simulate import WAVE_SUFFIXES, pick_simulator, simulate

from .operands import add_operand_args, load_attention_inputs
from .options import add_knobs, check_design_knobs, knobs_of

__all__ = ["register", "OUTPUTS"]

#: What a run leaves in its folder; a new run first removes the last run's.
OUTPUTS = ("scores.npy", "stats.json", "probs.npy", "out.npy")

def add_args(p) -> None:
    p.add_argument("--design", choices=list(DESIGNS), default="kaleido",
                   help="kaleido (the augmented array, S~) or baseline (the plain array, Q K^T); "
                        "default kaleido")
    p.add_argument("--schedule", choices=list(SCHEDULES), default="auto",
                   help="kaleido: auto (the default: what the cycle model says is fastest of passes A-D "
                        "with the variant's dispatcher, with its scheduler or matcher bypassed, and the "
                        "dense schedule on the same PEs), pairs (A-D, every dispatcher part) or dense")
    p.add_argument("--pv-schedule", choices=list(PV_SCHEDULES), default="auto",
                   help="with --v on kaleido, how P V~ runs: auto (the default: the fewer cycles of the "
                        "two), shared (V's full reuse folded per column tile, the shared multiply) or dense")
    p.add_argument("--simulator", choices=list(runner.SIMULATORS),
                   help="default: verilator when it can run here, else icarus")
    add_knobs(p, *knobs_of(Part.ARRAY, Part.KALEIDO_PE, Part.PE, Part.DISPATCHER, Part.SCHEDULER, Part.MATCHER,
                            Part.WINDOW, Part.CHIP))
    p.add_argument("--waves", action="store_true",
                   help="keep every simulation's waveform (engine, and scheduler where it runs) in DIR")
    p.add_argument("--no-energy", action="store_true",
                   help="leave energy_pj, clock_mhz and time_us out of stats.json (they need the "
                        "liberty file and OpenSTA, and a first synthesis of the array)")
    p.add_argument("--json", action="store_true", help="print stats.json to stdout")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="folder for scores.npy and stats.json (with --v also probs.npy and out.npy; "
                        "made if missing)")


def cmd_sim_attention(args) -> int:
    check_design_knobs(args)
    if args.pv_schedule != "auto" and (args.design == "baseline" or args.v is None):
        raise UserError("--pv-schedule says how P V~ runs on the Kaleido array: it needs --v and "
                        "--design kaleido")
    check_output_dir(args.out)
    simulator = pick_simulator(args.simulator)
    cfg, ops = load_attention_inputs(args, ("q", "k", "v"))
    q, k = ops["q"].data, ops["k"].data
    v = ops.get("v")
    with run_folder(args.out, OUTPUTS) as (out, work):
        if v is None:
            rtl = simulate(cfg, q, k, args.design, simulator, work, args.waves,
                           label=f"{args.design} {cfg.variant} on {simulator}", schedule=args.schedule)
        else:
            scale = ops["q"].scale * ops["k"].scale / math.sqrt(cfg.head_dim)
            head = simulate_head(cfg, q, k, v.data, scale, args.design, simulator, work, args.waves,
                                 schedule=args.schedule, pv_schedule=args.pv_schedule)
            rtl = head["qk"]
        if args.waves:
            keep_waves(work, out, WAVE_SUFFIXES)
        golden = run_attention(q, k, cfg)
        expected = expected_scores(q, k, cfg, args.design)
        model = rtl["model"]
        stats = {
            "design": args.design, "variant": cfg.variant, "simulator": simulator,
            "cycles": rtl["cycles"], "model_cycles": model["cycles"],
            "engine_cycles": rtl["engine_cycles"], "scheduler_lead_cycles": rtl["lead_cycles"],
            "cycles_match": rtl["cycles"] == model["cycles"],
            "schedule": model["schedule"], "ran_as": model["ran_as"], "pair_cycles": model["pair_cycles"],
            "baseline_cycles": baseline_cycles(cfg.tokens, cfg.tokens, cfg).cycles,
            "executed_macs": rtl["executed_macs"], "model_executed_macs": model["executed_macs"],
            "utilization": rtl["utilization"],
            "dense_macs": golden.dense_macs, "oracle_macs": golden.oracle_macs,
            "hardware_reduction": 1 - rtl["executed_macs"] / golden.dense_macs,
            "oracle_reduction": golden.oracle_reduction,
            "scores_match": bool(np.array_equal(rtl["scores"], expected)),
            "config": json.loads(cfg.to_json()), "chip_clock_mhz": cfg.clock_mhz, "tile_groups": model["tiles"],
            "sim_cycles_per_second": rtl["cycles"] / rtl["test_seconds"] if rtl["test_seconds"] else None,
        }
        if v is not None:
            stats.update(_head_stats(cfg, q, k, v.data, scale, args.design, head))
        if not args.no_energy:
            stats.update(run_energy(cfg, q, k, args.design, rtl["cycles"], args.schedule,
                                    head=v is not None))
            if v is not None:
                stats["energy_scope"] = "qk stage only"
                stats.update(head_energy(cfg, args.design, stats["stages"], stats))
        if v is not None:
            for name in ("probs", "out"):
                write_npy(out / f"{name}.npy", head[name])
        write_npy(out / "scores.npy", rtl["scores"])
        write_json(out / "stats.json", stats)
    if args.design == "kaleido" and (note := unused_plugins(cfg, stats["ran_as"])):
        print(note, file=sys.stderr)
    if args.json:
        print_json(stats)
    else:
        energy = ""
        if stats.get("energy_pj") is not None:
            energy = f", {stats['energy_pj'] / 1e3:.1f} nJ in {stats['time_us']:.1f} us at {stats['clock_mhz']:.0f} MHz"
            if stats["slowest_block"]:
                energy += (f" (its {stats['slowest_block']} misses the {stats['chip_clock_mhz']:g} MHz "
                           f"chip clock)")
        how = ""
        if args.design == "kaleido":
            how = (" (dense schedule)" if stats["schedule"] == "dense" else
                   f" (passes A-D{'' if stats['ran_as'] == cfg.variant else ', run as ' + stats['ran_as']})")
        print(f"{args.design} {cfg.variant}{how} on {simulator}: "
              f"scores {'match' if stats['scores_match'] else 'DIFFER'}, "
              f"{stats['cycles']} cycles (model {stats['model_cycles']}, baseline {stats['baseline_cycles']}), "
              f"utilization {100 * stats['utilization']:.1f} %{energy}, -> {out}/")
        if v is not None:
            per = ", ".join(f"{s} {stats['stages'][s]['cycles']}" for s in STAGES)
            if stats["pv_schedule"] == "shared":
                per += f" in {stats['stages']['pv']['runs']} column tiles, V's reuse shared"
            print(f"  whole head: out {'matches' if stats['out_match'] else 'DIFFERS'}, "
                  f"{stats['head_cycles']} cycles ({per}; model {stats['head_model_cycles']}), "
                  f"baseline {stats['head_baseline_cycles']}: speedup {stats['head_speedup']:.3f}"
                  + (f", {stats['head_energy_pj'] / 1e3:.1f} nJ" if stats.get("head_energy_pj") is not None else ""))
    ok = stats["scores_match"] and stats["cycles_match"]
    if v is not None:
        ok = ok and stats["out_match"] and stats["probs_match"] and stats["head_cycles_match"]
    return 0 if ok else 1


def _head_stats(cfg, q, k, v, scale: float, design: str, head: dict) -> dict:
    """What ``--v`` adds to stats.json: the stages' cycles against their models,
    and ``probs`` and ``out`` against golden."""
    probs, want = expected_head(q, k, v, cfg, design, scale)
    stages = head["stages"]
    n = cfg.tokens
    total = sum(s["cycles"] for s in stages.values())
    base = baseline_head_cycles(cfg)
    return {
        "stages": stages, "head_cycles": total,
        "head_model_cycles": sum(s["model_cycles"] for s in stages.values()),
        "head_cycles_match": all(s["cycles"] == s["model_cycles"] for s in stages.values()),
        "head_baseline_cycles": sum(base.values()), "head_baseline_stages": base,
        "head_speedup": sum(base.values()) / total,
        "pv_schedule": stages["pv"]["schedule"], "pv_executed_macs": stages["pv"]["executed_macs"],
        "pv_dense_macs": dense_macs(n, n, cfg.head_dim),
        "pv_oracle_macs": pv_oracle_macs(n, pair_reuse(v, cfg).states),
        "probs_match": bool(np.array_equal(head["probs"], probs)),
        "out_match": bool(np.array_equal(head["out"], want)),
    }


def register(sub, parser_class):
    """Add ``sim`` and its ``attention``; return the subcommands, for ``sim linear``."""
    p = sub.add_parser("sim", help="run the emitted RTL under cocotb")
    what = p.add_subparsers(dest="what", required=True, parser_class=parser_class)
    a = what.add_parser("attention", help="Q K^T on the simulated engine (with --v, the whole head)")
    add_operand_args(a, with_v=True, v_help="values, shaped like the queries: run the whole head on the "
                                            "RTL (S~, the softmax unit, P V~) and write probs.npy and out.npy")
    add_args(a)
    a.set_defaults(func=cmd_sim_attention)
    return what
