"""The operands of an attention command: their arguments, and loading them into a Config."""

from __future__ import annotations

import sys

from golden import model_partition
from golden.workload import load_operand
from sim.cli.arguments import add_partition_args, check_tokens, three, triple
from sim.errors import UserError

from .options import add_knobs, add_preset, design_point

__all__ = ["add_operand_args", "load_attention_inputs"]

_FILE_HELP = ("int8 or float .npy (or FILE.npz:KEY), [N, D] with tokens t-major, then y, then x, "
              "or [T, H, W, D]; floats are quantized per tensor")


def add_operand_args(p, with_v: bool, v_help: str | None = None) -> None:
    p.add_argument("--q", required=True, metavar="Q.npy", help="queries: " + _FILE_HELP)
    p.add_argument("--k", required=True, metavar="K.npy", help="keys, shaped like the queries")
    if with_v:
        p.add_argument("--v", metavar="V.npy", help=v_help or "values, shaped like the queries: adds "
                       "probs, out and v_states to OUT.npz and P V~'s figures to --json")
    p.add_argument("--grid", type=three("grid"), required=True, metavar="T,H,W", help="token grid of the head")
    add_partition_args(p)
    add_knobs(p, "full_bits", "partial_bits")
    add_preset(p)


def load_attention_inputs(args, names=("q", "k")):
    """Build the Config from the arguments and load the operands against it.

    Returns ``(cfg, {name: Operand})``. A float file is quantized, and said so on stderr.
    """
    grid = triple(args.grid, "grid")
    check_tokens(grid)
    first = load_operand(getattr(args, names[0]), None, "--" + names[0])
    d = first.data.shape[1]
    for name in names[1:]:
        # Against each other first: a width that differs is between the two files, not the partition.
        path = getattr(args, name, None)
        width = load_operand(path, None, "--" + name).data.shape[1] if path is not None else d
        if width != d:
            raise UserError(f"--{name} {path} has {width} channels and --{names[0]} {getattr(args, names[0])} "
                            f"{d}: they must have the same")
    partition = (triple(args.partition, "partition") if args.partition
                 else model_partition(args.model, d))
    cfg = design_point(args, partition=partition, grid=grid)
    ops, notes = {}, []
    for name in names:
        path = getattr(args, name, None)
        if path is None:
            continue
        op = load_operand(path, cfg, "--" + name)
        if op.quantized:
            notes.append(f"kaleido: --{name} {path} holds floats: quantized to int8 with scale {op.scale:.6g}")
        ops[name] = op
    # Only once every operand is taken: a refusal stays the one line it should be.
    for note in notes:
        print(note, file=sys.stderr)
    return cfg, ops
