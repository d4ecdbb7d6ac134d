"""Real video against the proxy, and reuse against the denoising step (golden and cycle model)."""

from __future__ import annotations

from pathlib import Path

from golden import Config, quantize, run_attention
from golden.cycle_model import baseline_cycles, kaleido_cycles
from golden.video import video_workload
from sim.experiments.report.base import legend, pyplot, quantized, save, sweep

from ...workload import DEFAULT_CLIP
from .. import THRESHOLDS
from .figure import Figure

__all__ = ["NOISE_SWEEP", "clips_point", "noise_point", "plot_noise", "markdown", "noise_markdown"]

#: The noise levels of the denoising-step sweep (1: the first step, 0: the last).
NOISE_SWEEP = [0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0]


def _speedup(q, k, cfg):
    return baseline_cycles(cfg.tokens, cfg.tokens, cfg).cycles / kaleido_cycles(q, k, cfg.with_(variant="full")).cycles


def clips_point(args):
    cfg_json, workload, F, P = args
    cfg = Config.from_json(cfg_json).with_(full_bits=F, partial_bits=P)
    ops = quantized(cfg, workload)
    q, k = ops["q"][0], ops["k"][0]
    return {"workload": workload, "F": F, "P": P,
            "oracle_reduction": run_attention(q, k, cfg).oracle_reduction,
            "speedup": _speedup(q, k, cfg)}


def noise_point(args):
    cfg_json, clip, sigma = args

    cfg = Config.from_json(cfg_json)
    w = video_workload(cfg, clip, noise=sigma)
    q, k = quantize(w["q"])[0], quantize(w["k"])[0]
    res = run_attention(q, k, cfg)
    return {"sigma": sigma, "oracle_reduction": res.oracle_reduction,
            "oracle_bound": 1 / (1 - res.oracle_reduction), "speedup": _speedup(q, k, cfg)}


def plot_noise(out: Path, data: dict) -> None:
    plt = pyplot()

    fig, ax1 = plt.subplots(figsize=(6, 3.6))
    pts = data["noise"]["points"]
    sig = [p["sigma"] for p in pts]
    ax1.plot(sig, [100 * p["oracle_reduction"] for p in pts], "o-", label="oracle reduction")
    ax1.set_ylabel("MACs the oracle saves (%)")
    ax1.set_ylim(0, 100)
    ax1.set_xlabel("noise sigma: (1 - sigma) latent + sigma noise")
    ax2 = ax1.twinx()
    ax2.plot(sig, [p["oracle_bound"] for p in pts], "s:", color="tab:gray", label="oracle bound (right)")
    ax2.plot(sig, [p["speedup"] for p in pts], "^--", color="tab:red",
             label="Kaleido speedup over baseline (right)")
    ax2.set_ylabel("speedup")
    ax2.set_ylim(0, max(p["oracle_bound"] for p in pts) * 1.1)
    legend(ax1, ax2, "upper right")
    ax1.set_title(f"Reuse against the denoising step ({data['noise']['clip']}, cycle model)")
    save(fig, out / "noise_sweep.png")


def markdown(d: dict) -> list[str]:
    lines = [
        "## Real video against the proxy (golden and cycle model, variant full)",
        "",
        "Oracle reduction of `Q K^T` / speedup over the baseline array; the cycle-model design "
        "point above. Clips are real motion through a synthetic model "
        "(`kaleido workload video`), not a vDiT's activations.",
        "",
        "| workload | " + " | ".join(f"({F},{P})" for F, P in THRESHOLDS) + " |",
        "|---|" + "---:|" * len(THRESHOLDS),
    ]
    by = {}
    for p in d["workloads"]:
        by.setdefault(p["workload"], {})[(p["F"], p["P"])] = p
    for name, row in by.items():
        lines.append(f"| {name} | " + " | ".join(
            f"{100 * row[t]['oracle_reduction']:.1f} % / {row[t]['speedup']:.2f}x" for t in THRESHOLDS) + " |")
    return lines


def noise_markdown(d: dict) -> list[str]:
    nz = d["noise"]
    lines = [
        "",
        f"## Reuse against the denoising step ({nz['clip']}, F=5 P=3)",
        "",
        "![noise](noise_sweep.png)",
        "",
        "The latent is mixed with seeded noise as a flow-matching step does: "
        "`(1 - sigma) x + sigma eps`; sigma = 1 is the first denoising step, 0 the last.",
        "",
        "| sigma | oracle reduction | oracle bound | Kaleido speedup | share of the bound |",
        "|---:|---:|---:|---:|---:|",
    ]
    for p in nz["points"]:
        lines.append(f"| {p['sigma']:.1f} | {100 * p['oracle_reduction']:.1f} % | {p['oracle_bound']:.2f}x | "
                     f"{p['speedup']:.3f}x | {100 * p['speedup'] / p['oracle_bound']:.0f} % |")
    return lines + [""]


def compute_clips(study) -> list:
    points = [(study.mid.to_json(), name, F, P) for name in ("proxy", *study.clips) for F, P in THRESHOLDS]
    return sweep(clips_point, points, "workloads", study.jobs)


def compute_noise(study) -> dict:
    """The noise sweep, on the study's clip (the default clip when it runs on the proxy)."""
    clip = DEFAULT_CLIP if study.workload == "proxy" else study.workload
    return {"clip": clip,
            "points": sweep(noise_point, [(study.mid.to_json(), clip, s) for s in NOISE_SWEEP], "noise", study.jobs)}


FIGURE = Figure("workloads", compute_clips, 6, markdown=markdown)
NOISE = Figure("noise", compute_noise, 7, plot_noise, noise_markdown)
