"""``kaleido golden attention`` and ``kaleido golden linear``: what the numpy model
says of a head (``S~``, reuse states, op counts; with ``--v`` the softmax codes
``P`` and ``O~ = P V~``) and of a linear layer (``X~ W``)."""

from __future__ import annotations

import sys

import numpy as np

from golden import model_partition, run_attention
from golden.linear import linear_layer
from golden.workload import load_operand
from sim.cli.arguments import add_partition_args, check_tokens, three, triple
from sim.cli.outputs import atomic_output, check_output_file, print_json
from sim.errors import UserError

from .operands import add_operand_args, load_attention_inputs
from .options import add_knobs, add_preset, design_point

#: What ``--json`` adds with ``--v``: P·V's op counts, then the quality of ``O~``
#: (7-bit P codes) and of reuse alone (float softmax).
V_FIGURES = ("pv_dense_macs", "pv_oracle_macs", "mse", "psnr_db", "cosine",
             "float_mse", "float_psnr_db", "float_cosine")

__all__ = ["register", "add_linear_args", "linear_inputs"]


def cmd_golden_attention(args) -> int:
    check_output_file(args.out)
    cfg, ops = load_attention_inputs(args, ("q", "k", "v"))
    v = ops.get("v")
    res = run_attention(ops["q"].data, ops["k"].data, cfg,
                        v=None if v is None else v.data,
                        scales=(ops["q"].scale, ops["k"].scale, v.scale if v else 1.0))
    with atomic_output(args.out, ".npz") as tmp:
        with open(tmp, "wb") as f:
            arrays = dict(scores=res.scores, q_states=res.q_states, k_states=res.k_states)
            if v is not None:
                arrays.update(probs=res.probs, out=res.out, v_states=res.v_states)
            np.savez(f, **arrays)
    summary = {k: res[k] for k in ("dense_macs", "oracle_macs", "oracle_reduction")}
    if v is not None:
        summary.update({k: res[k] for k in V_FIGURES})
    if args.json:
        print_json(summary)
    else:
        line = (f"S~ {res.scores.shape[0]}x{res.scores.shape[1]} -> {args.out}; "
                f"oracle reduction {100 * res.oracle_reduction:.1f} %")
        if v is not None:
            line += (f"; O~ = P V~ PSNR {res.psnr_db:.2f} dB, cosine {res.cosine:.5f} "
                     f"(reuse alone, float softmax: {res.float_psnr_db:.2f} dB); "
                     f"P V~ oracle reduction {100 * (1 - res.pv_oracle_macs / res.pv_dense_macs):.1f} %")
        print(line)
    return 0


def linear_inputs(args, max_window: int | None = None):
    """``(cfg, x, w)`` of ``golden linear``'s and ``sim linear``'s inputs, the knobs
    given included; ``max_window``: the widest window the command takes."""
    grid = triple(args.grid, "grid")
    check_tokens(grid)
    x_op = load_operand(args.x, None, "--x")
    w_op = load_operand(args.w, None, "--w", shape="[C, O]")
    x, w = x_op.data, w_op.data
    n, c = x.shape
    if n != grid[0] * grid[1] * grid[2]:
        raise UserError(f"--x {args.x}: {n} tokens, but grid {'x'.join(map(str, grid))} has "
                        f"{grid[0] * grid[1] * grid[2]}")
    if args.head_dim is not None and not args.model:
        raise UserError("--head-dim goes with --model (a --partition gives the head dimension itself)")
    partition = (triple(args.partition, "partition") if args.partition
                 else model_partition(args.model, args.head_dim or c))
    d = sum(partition)
    if d < 1 or c % d:
        raise UserError(f"--x {args.x}: {c} channels is not a whole number of heads of {d} channels")
    if w.shape[0] != c:
        raise UserError(f"--w {args.w}: {w.shape[0]} rows, but --x has {c} channels")
    cfg = design_point(args, partition=partition, grid=grid)
    if max_window is not None and cfg.window > max_window:
        raise UserError(f"--window {cfg.window}: the engine holds windows of up to {max_window} tokens")
    if cfg.window > max(grid):
        print(f"kaleido: warning: --window {cfg.window} spans more than every extent of grid "
              f"{'x'.join(map(str, grid))}: tokens reuse only within a window along its axis, so "
              f"expect little or no reduction", file=sys.stderr)
    for name, op, path in (("x", x_op, args.x), ("w", w_op, args.w)):
        if op.quantized:
            print(f"kaleido: --{name} {path} holds floats: quantized to int8 with scale {op.scale:.6g}",
                  file=sys.stderr)
    return cfg, x, w


def cmd_golden_linear(args) -> int:
    check_output_file(args.out)
    cfg, x, w = linear_inputs(args)
    res = linear_layer(x, w, cfg)
    with atomic_output(args.out, ".npz") as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, out=res.approx, exact=res.exact, x_states=res.states)
    summary = {"dense_macs": res.dense_macs, "oracle_macs": res.reuse_macs,
               "oracle_reduction": 1 - res.reuse_macs / res.dense_macs}
    if args.json:
        print_json(summary)
    else:
        print(f"X~ W {res.approx.shape[0]}x{res.approx.shape[1]} -> {args.out}; "
              f"oracle reduction {100 * summary['oracle_reduction']:.1f} % (window {cfg.window})")
    return 0


def add_linear_args(p) -> None:
    """The inputs of ``golden linear`` and ``sim linear``."""
    p.add_argument("--x", required=True, metavar="X.npy",
                   help="activations, int8 or float [N, C], C a whole number of heads")
    p.add_argument("--w", required=True, metavar="W.npy", help="weights, int8 or float [C, O]")
    p.add_argument("--grid", type=three("grid"), required=True, metavar="T,H,W", help="token grid")
    add_partition_args(p, head_dim=True, head_dim_default="C: one head of all the channels")
    add_knobs(p, "full_bits", "partial_bits", "window")
    add_preset(p)


def register(sub, parser_class) -> None:
    golden = sub.add_parser("golden", help="the numpy golden model")
    gsub = golden.add_subparsers(dest="what", required=True, parser_class=parser_class)
    ga = gsub.add_parser("attention", help="S~, reuse states and op counts of Q K^T")
    add_operand_args(ga, with_v=True)
    ga.add_argument("--out", required=True, metavar="OUT.npz",
                    help="scores (int64 [N, N]), q_states and k_states (int8 [N, D]); with --v also "
                         "probs (int8 [N, N], codes of 1/127), out (int64 O~ [N, D]) and v_states")
    ga.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    ga.set_defaults(func=cmd_golden_attention)

    gl = gsub.add_parser("linear", help="Y~ = X~ W with window reuse, and its op counts")
    add_linear_args(gl)
    gl.add_argument("--out", required=True, metavar="OUT.npz",
                    help="out (int64 X~ W [N, O]), exact (int64 X W) and x_states (int8 [N, C])")
    gl.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    gl.set_defaults(func=cmd_golden_linear)
