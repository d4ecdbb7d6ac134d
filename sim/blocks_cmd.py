"""``kaleido verilog`` and ``kaleido synth``: one block, one design point."""

from __future__ import annotations

import os
import sys

from golden import Config, model_partition
from hw import blocks

from .common import UserError, atomic_output, print_json, triple


def add_block_args(p) -> None:
    p.add_argument("--block", required=True, choices=list(blocks.BLOCKS), help="which block")
    part = p.add_mutually_exclusive_group()
    part.add_argument("--partition", metavar="Dt,Dy,Dx", help="channel groups (default 44,42,42)")
    part.add_argument("--model", choices=["hunyuanvideo", "wan2.1", "turbodiffusion", "cogvideox"])
    p.add_argument("--head-dim", type=int, default=128, metavar="D", help="with --model (128)")
    p.add_argument("--max-channels", type=int, metavar="N",
                   help="longest reduction an accumulator holds (default: D)")
    p.add_argument("--acc-bits", type=int, metavar="BITS", help="accumulator width (default: safe minimum)")
    p.add_argument("--rows", type=int, default=4)
    p.add_argument("--cols", type=int, default=4)


def block_config(args) -> Config:
    if args.partition:
        partition = triple(args.partition, "partition")
    elif args.model:
        partition = model_partition(args.model, args.head_dim)
    else:
        partition = Config().partition
    return Config(partition=partition, max_channels=args.max_channels, acc_bits=args.acc_bits,
                  rows=args.rows, cols=args.cols)


def cmd_verilog(args) -> int:
    cfg = block_config(args)
    text = blocks.verilog(args.block, cfg)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{blocks.top_name(args.block)}.v")
    with atomic_output(path, ".v") as tmp:
        with open(tmp, "w") as f:
            f.write(text)
    print(path)
    return 0


def cmd_synth(args) -> int:
    from synth.flow import SynthError, default_liberty, synthesize

    cfg = block_config(args)
    liberty = None if args.no_liberty else (args.liberty or default_liberty())
    if args.liberty and not os.path.isfile(args.liberty):
        raise UserError(f"liberty file {args.liberty} does not exist")
    try:
        res = synthesize(blocks.verilog(args.block, cfg), blocks.top_name(args.block), liberty)
    except SynthError as exc:
        raise UserError(str(exc)) from None
    if liberty is None:
        print(f"kaleido synth: no liberty file; using the {res['estimate']}", file=sys.stderr)
    report = {"block": args.block, "liberty": liberty, "area_um2": res["area_um2"],
              "sequential_area_um2": res["sequential_area_um2"], "cells": res["cells"],
              "config": {"partition": cfg.partition, "acc_bits": cfg.acc_bits,
                         "rows": cfg.rows, "cols": cfg.cols}}
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


def register(sub, parser_class) -> None:
    v = sub.add_parser("verilog", help="emit a block's Verilog")
    add_block_args(v)
    v.add_argument("--out", required=True, metavar="DIR")
    v.set_defaults(func=cmd_verilog)

    s = sub.add_parser("synth", help="synthesize a block and report its area")
    add_block_args(s)
    s.add_argument("--liberty", metavar="FILE", help="standard cells (default: OSU018 from make setup)")
    s.add_argument("--no-liberty", action="store_true", help="force the liberty-free estimate")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_synth)
