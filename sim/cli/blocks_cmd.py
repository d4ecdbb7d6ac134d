"""``kaleido verilog``, ``synth``, ``timing`` and ``power``: one block, one design point."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from golden import Config, model_partition
from golden.config import KNOBS, Part
from hw import blocks
from sim.cli.arguments import add_partition_args, three, triple
from sim.cli.outputs import atomic_output, check_output_dir, print_json
from sim.errors import UserError
from sim.rtl.core_file import write_core
from synth.actions import ACTIONS

from .options import HAVING, SIGNOFF, add_knobs, add_preset, design_knobs, design_point, flag, refuse_unused


def add_block_args(p, names=None, signoff: bool = True) -> None:
    """The design-point options of a block command; ``names``: the blocks it takes (all);
    ``signoff``: it maps the block for a clock."""
    p.add_argument("--block", required=True, choices=list(names or blocks.BLOCKS), help="which block")
    add_partition_args(p, required=False, head_dim=True)
    p.add_argument("--grid", type=three("grid"), metavar="T,H,W",
                   help="token grid of a head: the softmax unit's row length (default 8,16,16)")
    offered = set().union(*(blocks.BLOCKS[n].knobs for n in (names or blocks.BLOCKS)))
    # The knobs its blocks read (hw.blocks.BLOCKS), in Config's order; the grid is set apart.
    add_knobs(p, *(k for k in KNOBS if k in offered))
    if signoff:
        add_knobs(p, *SIGNOFF)
    add_preset(p)


#: PEs beyond which a block command says, before it starts, that it will take long.
BIG_ARRAY = 64


def block_config(args, signoff: bool = True) -> Config:
    """The design point of a block command. A knob the block does not read (its
    registry entry, and the clock for a command that maps the block) is refused."""
    reads = blocks.BLOCKS[args.block].knobs | (SIGNOFF if signoff else frozenset())
    # A refusal names the blocks that do read the knob.
    having = {name: "--block " + ", ".join(n for n, b in blocks.BLOCKS.items() if name in b.knobs)
              for name in KNOBS}
    refuse_unused(args, reads, f"--block {args.block}", having_knob=having)
    if "variant" in reads:
        _refuse_parts_lacking(args)
    if args.issue_window == 0 and args.block in ("window-pe", "channel-window"):
        raise UserError(f"--issue-window 0 means no channel window: --block {args.block} is one (2 to 8; "
                        "left out, 4)")
    if args.grid and "grid" not in reads:
        raise UserError(f"--grid sets the softmax unit's row length: --block {args.block} has none")
    if args.head_dim is not None and not args.model:
        raise UserError("--head-dim goes with --model (a --partition gives the head dimension itself)")
    pes = (args.rows or 4) * (args.cols or 4)
    if {"rows", "cols"} & reads and pes > BIG_ARRAY:
        # Emission and mapping grow with the PEs: say so before the silence.
        print(f"kaleido: --block {args.block} with {pes} PEs ({pes // 16}x the default 4x4): emitting and "
              f"mapping it takes minutes to hours", file=sys.stderr, flush=True)
    if args.partition:
        partition = triple(args.partition, "partition")
    elif args.model:
        partition = model_partition(args.model, 128 if args.head_dim is None else args.head_dim)
    else:
        partition = None                        # the preset's
    return design_point(args, partition=partition, grid=triple(args.grid, "grid") if args.grid else None)


def _refuse_parts_lacking(args) -> None:
    """A whole engine (or top) has the dispatcher parts of its variant only: a knob
    of a part it lacks is refused, as ``sim attention`` refuses it."""
    preset = design_point(args)
    variant = preset.variant
    dispatch = {k: getattr(preset, k) for k in ("issue_window", "dispatcher")}
    if args.lookahead is not None and dispatch["issue_window"]:
        raise UserError(f"--lookahead sets the matcher: --issue-window {dispatch['issue_window']} puts the channel "
                        "window in its place")
    reads = design_knobs("kaleido", variant, **dispatch)
    for name in ("lookahead", "issue_window", "dispatcher"):
        if getattr(args, name, None) is not None and name not in reads:
            # Each of the three is in the matcher's place, or the matcher itself.
            part = KNOBS[name].metadata["part"]
            raise UserError(f"{flag(name)} sets {part.value}: --variant {variant} has none "
                            f"({HAVING[Part.MATCHER]} have it)")


def cmd_verilog(args) -> int:
    check_output_dir(args.out)
    cfg = block_config(args, signoff=False)
    text = blocks.verilog(args.block, cfg)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{blocks.top_name(args.block)}.v")
    with atomic_output(path, ".v") as tmp:
        with open(tmp, "w") as f:
            f.write(text)
    print(path)
    if blocks.BLOCKS[args.block].system:
        # A system top comes with its FuseSoC core and filelist.
        for extra in write_core(Path(args.out), args.block, blocks.BLOCKS[args.block].description):
            print(extra)
    return 0


#: What ``--liberty`` takes, in every command that signs a block off.
LIBERTY_HELP = ("standard cells: nangate45 (the default) or osu018, which make setup fetches (each at its own "
                "sign-off clock unless --clock-mhz gives one), or a liberty FILE")


def liberty_arg(value: str | None) -> str | None:
    """``--liberty``'s value as a file: a kit's name (``osu018``, ``nangate45``) is
    the liberty ``make setup`` fetched for it; anything else is a path."""
    from synth.kits import LibraryError, liberty_of

    try:
        path = liberty_of(value)
    except LibraryError as exc:
        raise UserError(str(exc)) from None
    _check_liberty_file(path)
    return path


def _check_liberty_file(path: str | None) -> None:
    if path is not None:
        if not os.path.exists(path):
            from synth.kits import KITS
            raise UserError(f"liberty file {path} does not exist (or name a library: {', '.join(KITS)})")
        if not os.path.isfile(path):
            raise UserError(f"--liberty {path} is a folder, not a liberty file")


def cmd_synth(args) -> int:
    from synth.area import block_area
    from synth.flow import SynthError, check_liberty, default_liberty
    from synth.kits import at_signoff

    chosen = liberty_arg(args.liberty)
    if args.no_liberty and args.clock_mhz is not None:
        raise UserError("--clock-mhz maps the block for a clock: --no-liberty maps it for none")
    cfg = block_config(args)
    liberty = None if args.no_liberty else (chosen or default_liberty())
    try:
        if liberty:
            check_liberty(liberty)          # a bad file is refused before any progress line
            cfg = at_signoff(cfg, liberty, args.clock_mhz)
        res = block_area(args.block, cfg, liberty)
    except SynthError as exc:
        raise UserError(str(exc)) from None
    if liberty is None:
        why = "--no-liberty" if args.no_liberty else "no liberty file found (run make setup, or pass --liberty)"
        print(f"kaleido synth: {why}; using the {res['estimate'].split(';')[0]}", file=sys.stderr)
    report = {"block": args.block, "liberty": liberty, "clock_mhz": res["clock_mhz"], "area_um2": res["area_um2"],
              "sequential_area_um2": res["sequential_area_um2"], "cells": res["cells"],
              "config": {"partition": cfg.partition, "acc_bits": cfg.acc_bits, "pe_acc_bits": cfg.pe_acc_bits,
                         "rows": cfg.rows, "cols": cfg.cols, "grid": cfg.grid,
                         "vector_lanes": cfg.vector_lanes}}
    if liberty is None:
        report.update(transistors=res["transistors"], estimate=res["estimate"])
    if args.json:
        print_json(report)
    elif liberty:
        print(f"{args.block} mapped for {res['clock_mhz']:g} MHz: {res['area_um2']:.0f} um2 "
              f"({res['sequential_area_um2']:.0f} sequential), {res['cells']} cells, {os.path.basename(liberty)}")
    else:
        print(f"{args.block}: ~{res['transistors']} transistors (estimate), {res['cells']} cells")
    return 0


def _signoff(args, measure) -> dict:
    """``measure(block, cfg, liberty)`` with OpenSTA, on ``--liberty`` or the default
    liberty; a missing tool or file, or a failed run, becomes one line for the user."""
    from synth.flow import SynthError, check_liberty, default_liberty
    from synth.kits import at_signoff
    from synth.sta import StaError, sta_command

    liberty = liberty_arg(args.liberty) or default_liberty()
    if liberty is None:
        raise UserError("no liberty file found: run make setup (it fetches NanGate45), or pass --liberty")
    cfg = block_config(args)
    try:
        sta_command()
        check_liberty(liberty)
        return measure(args.block, at_signoff(cfg, liberty, args.clock_mhz), liberty)
    except (SynthError, StaError) as exc:
        raise UserError(str(exc)) from None


def _repaired(fix: dict | None) -> str:
    if fix is None:
        return ""
    left = f", {fix['unrepaired']} pins left failing" if fix["unrepaired"] else ""
    return (f" after hold repair ({fix['cells']} {fix['cell']} before {fix['pins']} flip-flops, "
            f"{fix['area_um2']:.1f} um2; {fix['hold_slack_before_ns']:+.3f} ns before{left})")


def cmd_timing(args) -> int:
    from synth.timing import block_timing, meets

    res = _signoff(args, block_timing)
    res["met"] = meets(res)
    other = ("hold_slack_ns", "gating_setup_slack_ns", "gating_hold_slack_ns")
    if args.json:
        print_json({k: res[k] for k in ("block", "liberty", "clock_mhz", "critical_path_ns", "fmax_mhz",
                                        "slack_ns", *other, "io_ns", "met", "startpoint", "endpoint",
                                        "hold_repair")})
    else:
        gating = ("no clock gates" if res["gating_setup_slack_ns"] is None else
                  f"clock gates {res['gating_setup_slack_ns']:+.3f} ns setup, "
                  f"{res['gating_hold_slack_ns']:+.3f} ns hold")
        print(f"{args.block} mapped for {res['clock_mhz']:g} MHz ({'met' if res['met'] else 'MISSED'}): "
              f"setup slack {res['slack_ns']:+.3f} ns, critical path {res['critical_path_ns']:.3f} ns, "
              f"fmax {res['fmax_mhz']:.1f} MHz ({res['startpoint']} -> {res['endpoint']}); "
              f"hold slack {res['hold_slack_ns']:+.3f} ns{_repaired(res['hold_repair'])}; {gating}; inputs and outputs "
              f"{res['io_ns']:.2f} ns from the edge; {os.path.basename(res['liberty'])}")
    return 0


def _with_cell_models(measure):
    # Gate-level energy simulates the cells' Verilog models, shipped beside the liberty:
    # a file without them is refused by the file it lacks, before any mapping.
    from synth.gatesim import GateSimError, cell_models

    def checked(block, cfg, liberty):
        try:
            cell_models(liberty)
        except GateSimError:
            raise UserError(f"--liberty {liberty}: its cells' Verilog models {Path(liberty).with_suffix('.v')} "
                            "are not beside it (gate-level energy simulates them)") from None
        return measure(block, cfg, liberty)
    return checked


def cmd_power(args) -> int:
    from synth.power import energy_per_action

    res = _signoff(args, _with_cell_models(energy_per_action))
    if args.json:
        print_json({k: res[k] for k in ("block", "liberty", "energy_pj", "split_pj", "leakage_uw", "clock_mhz",
                                        "measured_at_mhz", "at_chip_clock", "method")})
    else:
        where = ("at that clock" if res["at_chip_clock"] else
                 f"at {res['measured_at_mhz']:.1f} MHz, the block's own clock: it misses {res['clock_mhz']:g} MHz")
        print(f"{args.block} mapped for {res['clock_mhz']:g} MHz, leakage {res['leakage_uw']:.3f} uW; "
              f"energy per action (pJ per cycle, gate-level, {where}):")
        for action, e in res["energy_pj"].items():
            print(f"  {action:15s} {e:8.2f}")
    return 0


def register(sub, parser_class) -> None:
    v = sub.add_parser("verilog", help="emit a block's Verilog")
    add_block_args(v, signoff=False)
    v.add_argument("--out", required=True, metavar="DIR", help="folder for BLOCK.v (made if missing)")
    v.set_defaults(func=cmd_verilog)

    s = sub.add_parser("synth", help="synthesize a block mapped for the chip clock and report its area")
    add_block_args(s)
    lib = s.add_mutually_exclusive_group()
    lib.add_argument("--liberty", metavar="NAME|FILE",
                     help=LIBERTY_HELP)
    lib.add_argument("--no-liberty", action="store_true",
                     help="use the liberty-free transistor-count estimate")
    s.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    s.set_defaults(func=cmd_synth)

    t = sub.add_parser("timing", help="static timing of a block (OpenSTA) mapped for the chip clock: setup "
                                      "slack, critical path and fmax, hold and clock-gating slack "
                                      "(--block engine: the whole engine as one netlist)")
    add_block_args(t)
    t.add_argument("--liberty", metavar="NAME|FILE", help=LIBERTY_HELP)
    t.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    t.set_defaults(func=cmd_timing)

    pw = sub.add_parser("power", help="energy per action of a PE, a dispatcher block or the softmax unit "
                                      "(gate-level activity "
                             "on the netlist mapped for the chip clock, liberty energy tables)")
    add_block_args(pw, ACTIONS)
    pw.add_argument("--liberty", metavar="NAME|FILE", help=LIBERTY_HELP)
    pw.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    pw.set_defaults(func=cmd_power)
