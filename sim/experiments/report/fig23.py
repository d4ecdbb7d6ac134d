"""Fig. 23: the reuse thresholds against savings and quality (golden and cycle model)."""

from __future__ import annotations

from pathlib import Path

from golden import Config, run_attention
from golden.cycle_model import baseline_cycles, kaleido_cycles
from sim.experiments.report.base import legend, pyplot, quantized, save, sweep

from .. import THRESHOLDS
from .figure import Figure

__all__ = ["point", "plot", "markdown"]


def point(args):
    cfg_json, F, P, workload = args
    cfg = Config.from_json(cfg_json).with_(full_bits=F, partial_bits=P, variant="full")
    ops = quantized(cfg, workload)
    q, k, v = (ops[n][0] for n in "qkv")
    res = run_attention(q, k, cfg, v=v, scales=tuple(ops[n][1] for n in "qkv"))
    hw = kaleido_cycles(q, k, cfg)
    base = baseline_cycles(cfg.tokens, cfg.tokens, cfg)
    return {"F": F, "P": P, "oracle_reduction": res.oracle_reduction,
            "hardware_reduction": 1 - hw.executed_macs / res.dense_macs,
            "psnr_db": res.float_psnr_db, "speedup": base.cycles / hw.cycles}


def plot(out: Path, data: dict) -> None:
    plt = pyplot()

    fig, ax1 = plt.subplots(figsize=(6, 3.6))
    pts = data["fig23"]
    labels = [f"({p['F']},{p['P']})" for p in pts]
    ax1.plot(labels, [100 * p["oracle_reduction"] for p in pts], "o-", label="oracle reduction")
    ax1.plot(labels, [100 * p["hardware_reduction"] for p in pts], "s-", label="hardware reduction")
    ax1.set_ylabel("MACs saved (%)")
    ax1.set_xlabel("(F, P) prefix bits")
    ax2 = ax1.twinx()
    ax2.plot(labels, [p["psnr_db"] for p in pts], "^--", color="tab:red", label="PSNR (right axis)")
    ax2.set_ylabel("output PSNR, float softmax (dB)")
    legend(ax1, ax2, "upper right")
    ax1.set_title("Fig. 23 analog: thresholds")
    save(fig, out / "fig23_thresholds.png")


def markdown(d: dict) -> list[str]:
    f23 = d["fig23"]
    lines = [
        "## Fig. 23: thresholds (golden and cycle model, variant full)",
        "",
        "![fig23](fig23_thresholds.png)",
        "",
        "| (F,P) | oracle reduction | hardware reduction | PSNR (float softmax) | speedup vs baseline |",
        "|---|---:|---:|---:|---:|",
    ]
    for p in f23:
        lines.append(f"| ({p['F']},{p['P']}) | {100 * p['oracle_reduction']:.1f} % | "
                     f"{100 * p['hardware_reduction']:.1f} % | {p['psnr_db']:.2f} dB | {p['speedup']:.3f} |")
    lines += [
        "",
        "Paper: fewer preserved bits save more but degrade quality; (5,3) is the default.",
        "",
    ]
    return lines


def compute(study) -> list:
    return sweep(point, [(study.mid.to_json(), F, P, study.workload) for F, P in THRESHOLDS], "fig 23", study.jobs)


FIGURE = Figure("fig23", compute, 5, plot, markdown)
