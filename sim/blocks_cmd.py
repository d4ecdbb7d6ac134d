"""``kaleido verilog``, ``synth``, ``timing`` and ``power``: one block, one design point."""

from __future__ import annotations

import os
import sys

from golden import Config, model_partition
from hw import blocks
from synth.actions import ACTIONS

from .common import (UserError, add_accumulators_arg, add_clock_arg, add_dispatcher_args, add_partition_args,
                     add_pe_stages_arg, atomic_output, check_output_dir, print_json, three, triple)


def add_block_args(p, names=None) -> None:
    """The design-point options of a block command; ``names``: the blocks it takes (all)."""
    p.add_argument("--block", required=True, choices=list(names or blocks.BLOCKS), help="which block")
    add_partition_args(p, required=False, head_dim=True)
    p.add_argument("--max-channels", type=int, metavar="N",
                   help="longest reduction an accumulator holds (default: the head dimension)")
    p.add_argument("--acc-bits", type=int, metavar="BITS",
                   help="accumulator width (default: the least that cannot overflow)")
    p.add_argument("--rows", type=int, default=4, help="PE rows of an array (default 4)")
    p.add_argument("--cols", type=int, default=4, help="PE columns of an array (default 4)")
    p.add_argument("--grid", type=three("grid"), metavar="T,H,W",
                   help="token grid of a head: the softmax unit's row length (default 8,16,16)")
    p.add_argument("--vector-lanes", type=int, default=4, metavar="L",
                   help="scores the softmax unit takes per cycle (default 4)")
    add_accumulators_arg(p)
    add_dispatcher_args(p)
    add_pe_stages_arg(p)
    add_clock_arg(p)


def block_config(args) -> Config:
    if args.head_dim is not None and not args.model:
        raise UserError("--head-dim goes with --model (a --partition gives the head dimension itself)")
    if args.partition:
        partition = triple(args.partition, "partition")
    elif args.model:
        partition = model_partition(args.model, 128 if args.head_dim is None else args.head_dim)
    else:
        partition = Config().partition
    grid = triple(args.grid, "grid") if args.grid else Config().grid
    return Config(partition=partition, grid=grid, max_channels=args.max_channels, acc_bits=args.acc_bits,
                  rows=args.rows, cols=args.cols, accumulators=args.accumulators,
                  lookahead=args.lookahead, issue_window=args.issue_window, cluster_rule=args.cluster_rule,
                  pe_stages=args.pe_stages, clock_mhz=args.clock_mhz or 0,
                  vector_lanes=args.vector_lanes)


def cmd_verilog(args) -> int:
    check_output_dir(args.out)
    cfg = block_config(args)
    text = blocks.verilog(args.block, cfg)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{blocks.top_name(args.block)}.v")
    with atomic_output(path, ".v") as tmp:
        with open(tmp, "w") as f:
            f.write(text)
    print(path)
    return 0


def _check_liberty_arg(path: str | None) -> None:
    if path is not None:
        if not os.path.exists(path):
            raise UserError(f"liberty file {path} does not exist")
        if not os.path.isfile(path):
            raise UserError(f"--liberty {path} is a folder, not a liberty file")


def cmd_synth(args) -> int:
    from synth.flow import SynthError, default_liberty, synthesize

    _check_liberty_arg(args.liberty)
    cfg = block_config(args)
    liberty = None if args.no_liberty else (args.liberty or default_liberty())
    try:
        res = synthesize(blocks.verilog(args.block, cfg), blocks.top_name(args.block), liberty)
    except SynthError as exc:
        raise UserError(str(exc)) from None
    if liberty is None:
        why = "--no-liberty" if args.no_liberty else "no liberty file found (run make setup, or pass --liberty)"
        print(f"kaleido synth: {why}; using the {res['estimate'].split(';')[0]}", file=sys.stderr)
    report = {"block": args.block, "liberty": liberty, "area_um2": res["area_um2"],
              "sequential_area_um2": res["sequential_area_um2"], "cells": res["cells"],
              "config": {"partition": cfg.partition, "acc_bits": cfg.acc_bits, "pe_acc_bits": cfg.pe_acc_bits,
                         "rows": cfg.rows, "cols": cfg.cols, "grid": cfg.grid,
                         "vector_lanes": cfg.vector_lanes}}
    if liberty is None:
        report.update(transistors=res["transistors"], estimate=res["estimate"])
    if args.json:
        print_json(report)
    elif liberty:
        print(f"{args.block}: {res['area_um2']:.0f} um2 ({res['sequential_area_um2']:.0f} sequential), "
              f"{res['cells']} cells, {os.path.basename(liberty)}")
    else:
        print(f"{args.block}: ~{res['transistors']} transistors (estimate), {res['cells']} cells")
    return 0


def _signoff(args, measure) -> dict:
    """``measure(block, cfg, liberty)`` with OpenSTA, on ``--liberty`` or the default
    liberty; a missing tool or file, or a failed run, becomes one line for the user."""
    from synth.flow import SynthError, default_liberty
    from synth.sta import StaError, sta_command

    _check_liberty_arg(args.liberty)
    liberty = args.liberty or default_liberty()
    if liberty is None:
        raise UserError("no liberty file found: run make setup (it fetches OSU018), or pass --liberty")
    cfg = block_config(args)
    try:
        sta_command()
        return measure(args.block, cfg, liberty)
    except (SynthError, StaError) as exc:
        raise UserError(str(exc)) from None


def cmd_timing(args) -> int:
    from synth.timing import block_timing

    res = _signoff(args, block_timing)
    res["met"] = res["slack_ns"] >= 0
    if args.json:
        print_json({k: res[k] for k in ("block", "liberty", "clock_mhz", "critical_path_ns", "fmax_mhz",
                                        "slack_ns", "met", "startpoint", "endpoint")})
    else:
        print(f"{args.block} mapped for {res['clock_mhz']:g} MHz: slack {res['slack_ns']:+.3f} ns "
              f"({'met' if res['met'] else 'MISSED'}), critical path {res['critical_path_ns']:.3f} ns, "
              f"fmax {res['fmax_mhz']:.1f} MHz ({res['startpoint']} -> {res['endpoint']}), "
              f"{os.path.basename(res['liberty'])}")
    return 0


def cmd_power(args) -> int:
    from synth.power import energy_per_action

    res = _signoff(args, energy_per_action)
    if args.json:
        print_json({k: res[k] for k in ("block", "liberty", "energy_pj", "split_pj", "leakage_uw", "clock_mhz",
                                        "method")})
    else:
        print(f"{args.block} mapped for {res['clock_mhz']:g} MHz, leakage {res['leakage_uw']:.3f} uW; "
              f"energy per action (pJ per cycle, gate-level):")
        for action, e in res["energy_pj"].items():
            print(f"  {action:15s} {e:8.2f}")
    return 0


def register(sub, parser_class) -> None:
    v = sub.add_parser("verilog", help="emit a block's Verilog")
    add_block_args(v)
    v.add_argument("--out", required=True, metavar="DIR", help="folder for BLOCK.v (made if missing)")
    v.set_defaults(func=cmd_verilog)

    s = sub.add_parser("synth", help="synthesize a block and report its area")
    add_block_args(s)
    lib = s.add_mutually_exclusive_group()
    lib.add_argument("--liberty", metavar="FILE",
                     help="standard cells (default: OSU018, which make setup fetches)")
    lib.add_argument("--no-liberty", action="store_true",
                     help="use the liberty-free transistor-count estimate")
    s.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    s.set_defaults(func=cmd_synth)

    t = sub.add_parser("timing", help="static timing of a block (OpenSTA) mapped for the chip clock: slack, "
                                      "critical path and fmax")
    add_block_args(t)
    t.add_argument("--liberty", metavar="FILE", help="standard cells (default: OSU018, which make setup fetches)")
    t.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    t.set_defaults(func=cmd_timing)

    pw = sub.add_parser("power", help="energy per action of a PE, a dispatcher block or the softmax unit (gate-level activity "
                             "on the netlist mapped for the chip clock, liberty energy tables)")
    add_block_args(pw, ACTIONS)
    pw.add_argument("--liberty", metavar="FILE", help="standard cells (default: OSU018, which make setup fetches)")
    pw.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    pw.set_defaults(func=cmd_power)
