"""``kaleido report``: the paper's figures from this project's RTL and models
(:mod:`sim.experiments.report`), and their publication into the docs."""

from __future__ import annotations

import os
from pathlib import Path

from sim.cli.outputs import check_output_dir
from sim.errors import UserError

from ..experiments.report import build_report, publish
from ..workload import DEFAULT_CLIP

__all__ = ["cmd_report", "register", "MAX_JOBS_PER_CORE"]

#: Each job is a synthesis of its own (a process and its memory): more than a few a core only thrash.
MAX_JOBS_PER_CORE = 4


def cmd_report(args) -> int:
    check_output_dir(args.out)
    if args.publish:
        check_output_dir(args.publish, "--publish")
    if args.publish and os.path.realpath(args.publish) == os.path.realpath(args.out):
        raise UserError(f"--publish {args.publish} is --out itself; publish into another folder (e.g. docs)")
    if args.jobs < 1:
        raise UserError(f"--jobs {args.jobs} must be 1 or more")
    cores = os.cpu_count() or 1
    if args.jobs > MAX_JOBS_PER_CORE * cores:
        raise UserError(f"--jobs {args.jobs}: this machine has {cores} cores, and the report runs at most "
                        f"{MAX_JOBS_PER_CORE * cores} syntheses at once ({MAX_JOBS_PER_CORE} a core)")
    if args.seed < 0:
        raise UserError(f"--seed {args.seed} must be 0 or more")
    if args.liberty:
        # Every sign-off step, in this process and its workers, takes the default library.
        os.environ["KALEIDO_LIBERTY"] = _library(args.liberty)
    out = Path(args.out)
    data = build_report(out, seed=args.seed, jobs=args.jobs, rtl=not args.no_rtl,
                        simulator=args.simulator, workload=args.workload, place=args.place)
    slowest = sorted(data["seconds_by_figure"].items(), key=lambda kv: -kv[1])[:3]
    print(f"report: {out}/report.md ({data['seconds']:.0f} s; slowest "
          f"{', '.join(f'{k} {v:.0f} s' for k, v in slowest)}), figures fig7, fig9, fig19, fig21, "
          f"fig23, the noise sweep, speed against the bound{' and fig18' if 'fig18' in data else ''} "
          f"as PNG, data in report.json")
    if args.publish:
        print(f"report: published as {publish(out, Path(args.publish))}, figures in {args.publish}/figures")
    return 0


def _library(value: str) -> str:
    from synth.flow import SynthError, check_liberty

    from .blocks_cmd import liberty_arg
    path = liberty_arg(value)
    try:
        check_liberty(path)
    except SynthError as exc:
        raise UserError(str(exc)) from None
    return os.path.abspath(path)


def register(sub) -> None:
    p = sub.add_parser("report", help="the paper's figures from our RTL and models, as Markdown + PNG")
    p.add_argument("--out", default="out/report", metavar="DIR", help="output folder (default out/report)")
    p.add_argument("--workload", default=DEFAULT_CLIP, metavar="proxy|CLIP|PATH",
                   help=f"what every figure runs on: proxy, a bundled clip or a video file "
                        f"(default {DEFAULT_CLIP})")
    p.add_argument("--seed", type=int, default=1, help="seed of the workload's model (default 1)")
    p.add_argument("--jobs", type=int, default=max(1, min(4, os.cpu_count() or 1)),
                   help="worker processes (default: up to 4, one per core)")
    p.add_argument("--no-rtl", action="store_true", help="skip the RTL runs of Fig. 19")
    p.add_argument("--publish", metavar="DIR", help="also write DIR/results.md and DIR/figures/ from the "
                   "report (make report: the project's docs)")
    p.add_argument("--simulator", choices=["verilator", "icarus"],
                   help="default: verilator when it can run here, else icarus")
    p.add_argument("--liberty", metavar="NAME|FILE",
                   help="the cell library every block is signed off on: nangate45 (the default), osu018 or a "
                        "liberty FILE")
    p.add_argument("--place", action="store_true",
                   help="place the FPGA table's blocks anew (default: reuse the placements the project ships "
                        "for the same Verilog, part, seed and tools)")
    p.set_defaults(func=cmd_report)
