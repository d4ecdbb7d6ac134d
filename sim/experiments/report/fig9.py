"""Fig. 9: channel-wise reuse against skipping, at equal savings (golden)."""

from __future__ import annotations

import math
from pathlib import Path

from golden import Config, int_gemm, run_attention
from golden.attention import mask_skip, quality, topk_output
from sim.experiments.report.base import output, pyplot, quantized, save, sweep

from .figure import Figure

__all__ = ["SKIP_SWEEP", "point", "plot", "markdown"]

#: The ``(F, P)`` points of the figure: from little reuse to much.
SKIP_SWEEP = [(2, 0), (3, 1), (4, 2), (5, 3), (6, 4), (7, 5)]


def point(args):
    cfg_json, F, P, workload = args
    cfg = Config.from_json(cfg_json).with_(full_bits=F, partial_bits=P)
    ops = quantized(cfg, workload)
    q, k, v = (ops[n][0] for n in "qkv")
    exact = output(cfg, ops, q, k, v)
    res = run_attention(q, k, cfg, v=v, scales=tuple(ops[n][1] for n in "qkv"))
    saving = res.oracle_reduction
    skip = output(cfg, ops, mask_skip(q, cfg), mask_skip(k, cfg), mask_skip(v, cfg))
    (_, sq), (_, sk), (_, sv) = ops["q"], ops["k"], ops["v"]
    keep = max(1, round((1 - saving) * cfg.tokens))
    topk = topk_output(int_gemm(q, k), v, sq * sk / math.sqrt(cfg.head_dim), keep) * sv
    return {"F": F, "P": P, "saving": saving, "reuse": res.float_mse,
            "mask_skip": quality(exact, skip)["mse"], "topk": quality(exact, topk)["mse"]}


def plot(out: Path, data: dict) -> None:
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6, 3.6))
    pts = data["fig9"]
    x = [100 * p["saving"] for p in pts]
    for key, label in (("reuse", "channel-wise reuse"), ("mask_skip", "mask-skip (same masks)"),
                       ("topk", "top-k sparse attention")):
        ax.plot(x, [p[key] for p in pts], "o-", label=label)
    ax.set_yscale("log")
    ax.set_xlabel("MACs saved (%)")
    ax.set_ylabel("output MSE")
    ax.set_title("Fig. 9 analog: reuse against skipping at equal savings")
    ax.legend(fontsize=8)
    save(fig, out / "fig9_reuse_vs_skip.png")


def markdown(d: dict) -> list[str]:
    f9 = d["fig9"]
    at_default = next(p for p in f9 if (p["F"], p["P"]) == (5, 3))
    lines = [
        "## Fig. 9: reuse against skipping at equal savings (golden)",
        "",
        "![fig9](fig9_reuse_vs_skip.png)",
        "",
        "| (F,P) | MACs saved | reuse MSE | mask-skip MSE | top-k MSE |",
        "|---|---:|---:|---:|---:|",
    ]
    for p in f9:
        lines.append(f"| ({p['F']},{p['P']}) | {100 * p['saving']:.1f} % | {p['reuse']:.3g} | "
                     f"{p['mask_skip']:.3g} | {p['topk']:.3g} |")
    lines += [
        "",
        f"Ours at (5,3): mask-skip MSE is {at_default['mask_skip'] / at_default['reuse']:.1f}x and "
        f"top-k {at_default['topk'] / at_default['reuse']:.1f}x the reuse MSE. "
        "Paper: about 10x lower MSE for reuse, at 85 % savings on HunyuanVideo.",
        "",
    ]
    return lines


def compute(study) -> list:
    return sweep(point, [(study.big.to_json(), F, P, study.workload) for F, P in SKIP_SWEEP], "fig 9", study.jobs)


FIGURE = Figure("fig9", compute, 2, plot, markdown)
