"""Fig. 19: the dispatcher ablation, pe to full (cycle model, and the RTL where asked)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from golden import Config, expected_scores
from golden.cycle_model import kaleido_cycles
from golden.variants import VARIANTS
from sim.experiments.report.base import legend, pyplot, quantized, save, sweep
from sim.rtl.simulate import simulate

from .figure import Figure

__all__ = ["point", "rtl_runs", "plot", "markdown"]


def point(args):
    cfg_json, variant, workload = args
    cfg = Config.from_json(cfg_json).with_(variant=variant)
    ops = quantized(cfg, workload)
    r = kaleido_cycles(ops["q"][0], ops["k"][0], cfg)
    return variant, r.as_dict()


def rtl_runs(cfg: Config, workload: str, simulator: str, out: Path) -> dict:
    """Every variant on the RTL at ``cfg``: cycles against the model's, scores against S~."""
    ops = quantized(cfg, workload)
    q, k = ops["q"][0], ops["k"][0]
    runs = {}
    for variant in VARIANTS:
        work = out / f".work-{variant}"
        try:
            r = simulate(cfg.with_(variant=variant), q, k, "kaleido", simulator, work, label=f"fig 19 RTL {variant}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
        model = kaleido_cycles(q, k, cfg.with_(variant=variant))
        runs[variant] = {"cycles": r["cycles"], "model_cycles": model.cycles, "utilization": r["utilization"],
                         "scores_match": bool(np.array_equal(r["scores"], expected_scores(q, k, cfg, "kaleido")))}
    return {"simulator": simulator, "runs": runs}


def plot(out: Path, data: dict) -> None:
    plt = pyplot()

    fig, ax1 = plt.subplots(figsize=(6, 3.6))
    names = list(VARIANTS)
    cyc = [data["fig19"]["model"][v]["cycles"] for v in names]
    util = [100 * data["fig19"]["model"][v]["utilization"] for v in names]
    ax1.bar(names, [cyc[0] / c for c in cyc], color="tab:blue", label="speedup over pe")
    ax1.set_ylabel("speedup over pe")
    ax2 = ax1.twinx()
    ax2.plot(names, util, "o-", color="tab:red", label="utilization")
    ax2.set_ylabel("PE lane utilization (%)")
    ax2.set_ylim(0, 100)            # from zero: a 3-point change should look like one
    ax1.set_ylim(0, max(1.0, *(cyc[0] / c for c in cyc)) * 1.15)
    legend(ax1, ax2, "lower right")
    ax1.set_title("Fig. 19 analog: dispatcher ablation (cycle model)")
    save(fig, out / "fig19_ablation.png")


def markdown(d: dict) -> list[str]:
    f19 = d["fig19"]
    m = f19["model"]
    lines = [
        "## Fig. 19: dispatcher ablation",
        "",
        "![fig19](fig19_ablation.png)",
        "",
        "| variant | cycles (model) | speedup over pe | utilization |",
        "|---|---:|---:|---:|",
    ]
    for v in VARIANTS:
        lines.append(f"| {v} | {m[v]['cycles']:,} | {m['pe']['cycles'] / m[v]['cycles']:.3f} | "
                     f"{100 * m[v]['utilization']:.1f} % |")
    if "rtl" in f19:
        r = f19["rtl"]
        lines += ["", f"RTL ({r['simulator']}, the rtl design point above):", "",
                  "| variant | RTL cycles | model cycles | equal | utilization | scores = S~ |",
                  "|---|---:|---:|---|---:|---|"]
        for v, run in r["runs"].items():
            lines.append(f"| {v} | {run['cycles']:,} | {run['model_cycles']:,} | "
                         f"{run['cycles'] == run['model_cycles']} | {100 * run['utilization']:.1f} % | "
                         f"{run['scores_match']} |")
    lines += [
        "",
        f"Ours: utilization {100 * m['pe']['utilization']:.1f} % (pe) to "
        f"{100 * m['full']['utilization']:.1f} % (full), speedup "
        f"{m['pe']['cycles'] / m['full']['cycles']:.2f}x. Paper: 69.4 % to 85.2 %, 1.2x.",
        "",
    ]
    return lines


def compute(study) -> dict:
    """The ablation on the cycle model, and with a simulator on the RTL too."""
    data = {"model": dict(sweep(point, [(study.mid.to_json(), v, study.workload) for v in VARIANTS],
                                "fig 19", study.jobs))}
    if study.simulator:
        data["rtl"] = rtl_runs(study.small, study.workload, study.simulator, study.out)
    return data


FIGURE = Figure("fig19", compute, 3, plot, markdown)
