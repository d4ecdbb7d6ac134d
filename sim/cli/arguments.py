"""Argument helpers every ``kaleido`` subcommand shares: ``A,B,C`` triples, the
head's partition and model, and the largest grid a command takes."""

from __future__ import annotations

import argparse
import math

from golden import MODELS

from ..errors import UserError

__all__ = ["triple", "three", "add_partition_args", "MAX_TOKENS", "check_tokens"]

#: The largest grid a command takes: ``S~`` alone is ``N x N`` int64, 32 GiB at 65,536 tokens.
MAX_TOKENS = 65536


def triple(text: str, what: str) -> tuple[int, int, int]:
    try:
        parts = tuple(int(p) for p in text.split(","))
    except ValueError:
        raise UserError(f"{what} {text!r} must be three integers like 2,4,4") from None
    if len(parts) != 3:
        raise UserError(f"{what} {text!r} must have three values, got {len(parts)}")
    return parts


def three(what: str):
    """An argparse ``type`` for ``A,B,C`` options: refused at parsing when it is not
    three integers (an empty ``--partition ""`` included), so no command ever
    mistakes it for an option left out; the text itself is returned."""
    def parse(text: str) -> str:
        try:
            triple(text, what)
        except UserError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text
    return parse


def check_tokens(grid: tuple[int, int, int]) -> None:
    """Refuse a grid whose score matrix could not be held, before anything is allocated."""
    n = math.prod(grid)
    if n > MAX_TOKENS:
        gib = n * n * 8 / 2 ** 30
        raise UserError(f"grid {'x'.join(map(str, grid))} has {n:,} tokens; at most {MAX_TOKENS:,} "
                        f"are taken (its scores alone would need {gib:.3g} GiB)")


def add_partition_args(p, required: bool = True, head_dim: bool = False,
                       head_dim_default: str = "128") -> None:
    """``--partition Dt,Dy,Dx`` or ``--model NAME`` (with ``--head-dim D`` when asked;
    ``head_dim_default`` says what the command takes without it)."""
    part = p.add_mutually_exclusive_group(required=required)
    part.add_argument("--partition", metavar="Dt,Dy,Dx", type=three("partition"),
                      help="channels of the t-, y- and x-group, in that order")
    part.add_argument("--model", choices=list(MODELS),
                      help="take the partition from a model's 3-D RoPE"
                           + (" at --head-dim channels" if head_dim else " at the operands' width"))
    if head_dim:
        p.add_argument("--head-dim", type=int, metavar="D",
                       help=f"head dimension with --model (default {head_dim_default})")
