"""``kaleido sim linear``: ``Y~ = X~ W`` on the simulated RTL, with its figures.

The attention engine runs the layer's windows (:mod:`golden.windows`) under
cocotb through :func:`sim.rtl.linear.simulate_linear`; the bench checks every output
against golden and the cycles against :mod:`golden.linear_cycles`, and this
command writes ``out.npy`` and ``stats.json``.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from golden import DESIGNS
from golden.config import Part
from golden.cycle_model import SCHEDULES
from golden.linear import linear_layer
from golden.linear_cycles import baseline_linear_cycles
from sim.cli.outputs import check_output_dir, keep_waves, print_json, run_folder, write_json, write_npy
from sim.rtl import runner
from sim.rtl.plugin_check import unused_plugins
from sim.rtl.simulate import WAVE_SUFFIXES, pick_simulator

from .golden_cmd import add_linear_args, linear_inputs
from .options import add_knobs, check_design_knobs, knobs_of

__all__ = ["register", "OUTPUTS"]

#: What a run leaves in its folder; a new run first removes the last run's.
OUTPUTS = ("out.npy", "stats.json")


def cmd_sim_linear(args) -> int:
    from hw.core.sequencer import MAX_PARTNERS
    from sim.rtl.linear import simulate_linear

    check_design_knobs(args, linear=True)
    check_output_dir(args.out)
    simulator = pick_simulator(args.simulator)
    cfg, x, w = linear_inputs(args, max_window=MAX_PARTNERS + 1)
    variant = cfg.variant
    with run_folder(args.out, OUTPUTS) as (out, work):
        rtl = simulate_linear(cfg, x, w, args.design, simulator, work, args.schedule, args.waves,
                              label=f"{args.design} {variant} linear on {simulator}")
        if args.waves:
            keep_waves(work, out, WAVE_SUFFIXES)
        layer = linear_layer(x, w, cfg)
        expected = layer.approx if args.design == "kaleido" else layer.exact
        model = rtl["model"]
        heads = x.shape[1] // cfg.head_dim
        base = baseline_linear_cycles(x.shape[0], w.shape[1], cfg, heads).cycles
        stats = {
            "design": args.design, "variant": variant, "simulator": simulator,
            "cycles": rtl["cycles"], "model_cycles": model["cycles"],
            "cycles_match": rtl["cycles"] == model["cycles"],
            "schedule": model["schedule"], "ran_as": model["ran_as"], "pair_cycles": model["pair_cycles"],
            "baseline_cycles": base, "speedup": base / rtl["cycles"],
            "executed_macs": rtl["executed_macs"], "model_executed_macs": model["executed_macs"],
            "utilization": rtl["utilization"],
            "dense_macs": layer.dense_macs, "oracle_macs": layer.reuse_macs,
            "executed_over_oracle": rtl["executed_macs"] / layer.reuse_macs if layer.reuse_macs else None,
            "oracle_bound": layer.dense_macs / layer.reuse_macs if layer.reuse_macs else None,
            "out_match": bool(np.array_equal(rtl["out"], expected)),
            "tokens": x.shape[0], "channels": x.shape[1], "outputs": w.shape[1], "heads": heads,
            "config": json.loads(cfg.to_json()), "tile_groups": model["tiles"], "chip_clock_mhz": cfg.clock_mhz,
        }
        if args.timing:
            stats.update(_clock(cfg, args.design, stats["cycles"]))
        write_npy(out / "out.npy", rtl["out"])
        write_json(out / "stats.json", stats)
    if args.design == "kaleido" and (note := unused_plugins(cfg, stats["ran_as"])):
        print(note, file=sys.stderr)
    if args.json:
        print_json(stats)
    else:
        how = ""
        if args.design == "kaleido":
            how = " (dense schedule)" if stats["schedule"] == "dense" else f" (windows, run as {stats['ran_as']})"
        print(f"{args.design} {variant} linear{how} on {simulator}: "
              f"out {'matches' if stats['out_match'] else 'DIFFERS'}, "
              f"{stats['cycles']} cycles (model {stats['model_cycles']}, baseline {stats['baseline_cycles']}: "
              f"speedup {stats['speedup']:.3f}), executed/oracle MACs "
              f"{stats['executed_over_oracle']:.3f}, utilization {100 * stats['utilization']:.1f} % -> {out}/")
    return 0 if stats["out_match"] and stats["cycles_match"] else 1


def _clock(cfg, design: str, cycles: int) -> dict:
    """The clock the design's blocks meet at the chip clock, and the run's time there."""
    from sim.rtl.energy import run_clock
    from synth.flow import SynthError, default_liberty
    from synth.sta import StaError, sta_command

    liberty = default_liberty()
    try:
        if liberty is None:
            raise SynthError("no liberty file (make setup fetches NanGate45)")
        sta_command()
        timing = run_clock(cfg, design, liberty)
    except (SynthError, StaError) as exc:
        return {"clock_mhz": None, "time_us": None, "timing_note": str(exc)}
    return {**timing, "time_us": cycles / timing["clock_mhz"]}


def register(what, parser_class) -> None:
    """Add ``linear`` to the ``sim`` command's subcommands ``what``."""
    p = what.add_parser("linear", help="Y~ = X~ W with window reuse on the simulated engine")
    add_linear_args(p)
    p.add_argument("--design", choices=list(DESIGNS), default="kaleido",
                   help="kaleido (the augmented array, X~ W) or baseline (the plain array, X W); default kaleido")
    p.add_argument("--schedule", choices=list(SCHEDULES), default="auto",
                   help="kaleido: auto (the default: the fastest of the windows with and without the matcher "
                        "and the dense schedule, by the cycle model), pairs (the windows) or dense")
    p.add_argument("--simulator", choices=list(runner.SIMULATORS),
                   help="default: verilator when it can run here, else icarus")
    # No scheduler knob: a linear layer's windows are never reordered.
    add_knobs(p, *knobs_of(Part.ARRAY, Part.KALEIDO_PE, Part.PE, Part.DISPATCHER, Part.MATCHER, Part.WINDOW, Part.CHIP),
              notes={"variant": "Windows are not clustered: the scheduler has no part here"})
    p.add_argument("--timing", action="store_true",
                   help="also map the design's blocks for the chip clock and give clock_mhz, slowest_block "
                        "and time_us = cycles / clock_mhz (a first run synthesizes, for minutes)")
    p.add_argument("--waves", action="store_true", help="keep the engine's waveform in DIR")
    p.add_argument("--json", action="store_true", help="print stats.json to stdout")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for out.npy and stats.json (made if missing)")
    p.set_defaults(func=cmd_sim_linear)
