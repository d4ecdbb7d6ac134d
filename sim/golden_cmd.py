"""``kaleido golden attention``: ``S~``, reuse states and op counts from the numpy model."""

from __future__ import annotations

import numpy as np

from golden import run_attention

from .common import atomic_output, check_output_file, print_json
from .operands import add_operand_args, load_attention_inputs

__all__ = ["register"]


def cmd_golden_attention(args) -> int:
    check_output_file(args.out)
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


def register(sub, parser_class) -> None:
    golden = sub.add_parser("golden", help="the numpy golden model")
    gsub = golden.add_subparsers(dest="what", required=True, parser_class=parser_class)
    ga = gsub.add_parser("attention", help="S~, reuse states and op counts of Q K^T")
    add_operand_args(ga, with_v=True)
    ga.add_argument("--out", required=True, metavar="OUT.npz",
                    help="scores (int64 [N, N]), q_states and k_states (int8 [N, D])")
    ga.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    ga.set_defaults(func=cmd_golden_attention)
