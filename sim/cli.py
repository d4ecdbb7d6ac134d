"""The ``kaleido`` command (DESIGN.md §7).

Every figure a user needs comes out of here as a file or one JSON object on
stdout. Every error is one line on stderr and a non-zero exit; outputs are
written to a temporary file beside the target and renamed into place, so a
failed run never leaves a half-written file.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from golden import Config, ConfigError, model_partition
from golden.workload import WorkloadError, load_operand

from .common import UserError, atomic_output, print_json, triple

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    # argparse prints a usage block and exits; the contract is one line on stderr.
    def error(self, message):
        raise UserError(f"{self.prog}: {message}")


# -- shared argument handling -------------------------------------------------------------

def add_operand_args(p: argparse.ArgumentParser, with_v: bool) -> None:
    p.add_argument("--q", required=True, metavar="Q.npy", help="queries, [N, D] or [T, H, W, D]")
    p.add_argument("--k", required=True, metavar="K.npy", help="keys, same shape as Q")
    if with_v:
        p.add_argument("--v", metavar="V.npy", help="values: adds output quality to --json")
    p.add_argument("--grid", required=True, metavar="T,H,W", help="token grid of the head")
    part = p.add_mutually_exclusive_group(required=True)
    part.add_argument("--partition", metavar="Dt,Dy,Dx", help="channels per group")
    part.add_argument("--model", choices=["hunyuanvideo", "wan2.1", "turbodiffusion", "cogvideox"],
                      help="take the partition from a model's 3-D RoPE")
    p.add_argument("--full-bits", type=int, default=5, metavar="F", help="full-reuse prefix bits (5)")
    p.add_argument("--partial-bits", type=int, default=3, metavar="P",
                   help="partial-reuse prefix bits (3)")


def load_attention_inputs(args, names=("q", "k")):
    """Build the Config from the arguments and load the operands against it.

    Returns ``(cfg, {name: Operand})``.
    """
    grid = triple(args.grid, "grid")
    first = load_operand(getattr(args, names[0]), None, "--" + names[0])
    d = first.data.shape[1]
    partition = (triple(args.partition, "partition") if args.partition
                 else model_partition(args.model, d))
    extra = {k: getattr(args, k) for k in ("rows", "cols") if getattr(args, k, None) is not None}
    cfg = Config(partition=partition, grid=grid, full_bits=args.full_bits,
                 partial_bits=args.partial_bits, **extra)
    ops = {}
    for name in names:
        path = getattr(args, name, None)
        if path is None:
            continue
        op = load_operand(path, cfg, "--" + name)
        if op.quantized:
            print(f"kaleido: --{name} {path} holds floats: quantized to int8 with scale {op.scale:.6g}",
                  file=sys.stderr)
        ops[name] = op
    return cfg, ops


# -- kaleido golden attention -------------------------------------------------------------

def cmd_golden_attention(args) -> int:
    from golden import run_attention

    cfg, ops = load_attention_inputs(args, ("q", "k", "v"))
    v = ops.get("v")
    res = run_attention(ops["q"].data, ops["k"].data, cfg,
                        v=None if v is None else v.data,
                        scales=(ops["q"].scale, ops["k"].scale, v.scale if v else 1.0))
    with atomic_output(args.out, ".npz") as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, scores=res.scores, q_states=res.q_states, k_states=res.k_states)
    summary = {k: res[k] for k in ("dense_macs", "oracle_macs", "oracle_reduction")}
    if v is not None:
        summary.update({k: res[k] for k in ("mse", "psnr_db", "cosine")})
    if args.json:
        print_json(summary)
    else:
        line = (f"S~ {res.scores.shape[0]}x{res.scores.shape[1]} -> {args.out}; "
                f"oracle reduction {100 * res.oracle_reduction:.1f} %")
        if v is not None:
            line += f", PSNR {res.psnr_db:.2f} dB, cosine {res.cosine:.5f}"
        print(line)
    return 0


# -- parser -------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="kaleido", description="Generate and verify the Kaleido accelerator.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    golden = sub.add_parser("golden", help="the numpy golden model")
    gsub = golden.add_subparsers(dest="what", required=True, parser_class=_Parser)
    ga = gsub.add_parser("attention", help="S~, reuse states and op counts of Q K^T")
    add_operand_args(ga, with_v=True)
    ga.add_argument("--out", required=True, metavar="OUT.npz")
    ga.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    ga.set_defaults(func=cmd_golden_attention)
    from . import attention_cmd, blocks_cmd, report, workload_cmd
    blocks_cmd.register(sub, _Parser)
    attention_cmd.register(sub)
    report.register(sub)

    workload_cmd.register(sub, _Parser)

    dm = sub.add_parser("demo", help="the main job on the defaults, with a summary")
    dm.add_argument("--out", default="out/demo", metavar="DIR", help="output folder (default out/demo)")
    dm.add_argument("--workload", default=workload_cmd.DEFAULT_CLIP, metavar="proxy|CLIP|PATH",
                    help=f"proxy, a bundled clip (bigbuckbunny, bikes, carphone) or a video file "
                         f"(default {workload_cmd.DEFAULT_CLIP})")
    dm.add_argument("--simulator", choices=["verilator", "icarus"],
                    help="default: verilator when it can run here, else icarus")
    dm.set_defaults(func=_lazy("sim.demo", "cmd_demo"))
    return p


def _lazy(module: str, name: str):
    # Subcommands import their (heavy) modules only when run.
    def run(args):
        import importlib
        return getattr(importlib.import_module(module), name)(args)
    return run


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except (UserError, ConfigError, WorkloadError) as exc:
        msg = str(exc)
        print(msg if msg.startswith("kaleido") else f"kaleido: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kaleido: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        # Not the user's fault: still one line, with the way to see more.
        if os.environ.get("KALEIDO_DEBUG"):
            raise
        print(f"kaleido: internal error: {exc.__class__.__name__}: {exc} "
              f"(set KALEIDO_DEBUG=1 for a traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())      # prefer `python -m sim`: one copy of this module
