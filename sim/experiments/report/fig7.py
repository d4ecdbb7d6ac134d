"""Fig. 7: the output error of reusing one channel group along each direction (golden)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from golden import Config, pair_reuse
from golden.attention import quality
from golden.reuse_stats import AXES
from golden.rope import GROUPS
from sim.experiments.report.base import output, pyplot, quantized, save, sweep

from .figure import Figure

__all__ = ["point", "plot", "markdown"]


def point(args):
    cfg_json, group, axis, workload = args
    cfg = Config.from_json(cfg_json)
    ops = quantized(cfg, workload)
    q, k, v = (ops[n][0] for n in "qkv")
    exact = output(cfg, ops, q, k, v)
    d = {group: AXES.index(axis)}
    qa, ka, va = (pair_reuse(x, cfg, directions=d, groups=(group,)).approx for x in (q, k, v))
    return group, axis, quality(exact, output(cfg, ops, qa, ka, va))["mse"]


def plot(out: Path, data: dict) -> None:
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6, 3.6))
    width = 0.25
    for i, axis in enumerate(AXES):
        vals = [data["fig7"][g][axis] for g in GROUPS]
        ax.bar(np.arange(3) + (i - 1) * width, vals, width, label=f"reuse along {axis}")
    ax.set_xticks(range(3), [f"{g}-channels" for g in GROUPS])
    ax.set_yscale("log")
    ax.set_ylabel("output MSE")
    ax.set_title("Fig. 7 analog: one channel group reused along each direction")
    ax.legend(fontsize=8)
    save(fig, out / "fig7_directions.png")


def markdown(d: dict) -> list[str]:
    f7 = d["fig7"]
    own = {"t": "t", "y": "y", "x": "x"}
    worst = {g: max(AXES, key=lambda a: f7[g][a]) for g in GROUPS}
    lines = [
        "## Fig. 7: reuse direction per channel group (golden)",
        "",
        "![fig7](fig7_directions.png)",
        "",
        "| channel group | reuse along t | along y | along x | worst |",
        "|---|---:|---:|---:|---|",
    ]
    for g in GROUPS:
        lines.append(f"| {g} | {f7[g]['t']:.3g} | {f7[g]['y']:.3g} | {f7[g]['x']:.3g} | {worst[g]} |")
    lines += [
        "",
        f"Ours: the worst direction is the group's own for "
        f"{sum(worst[g] == own[g] for g in GROUPS)} of 3 groups. "
        "Paper: for every group, reuse along its own direction hurts most.",
        "",
    ]
    return lines


def compute(study) -> dict:
    """Each group's quality along each axis, on the golden study's head."""
    data = {g: {} for g in GROUPS}
    points = [(study.big.to_json(), g, a, study.workload) for g in GROUPS for a in AXES]
    for g, a, mse in sweep(point, points, "fig 7", study.jobs):
        data[g][a] = mse
    return data


FIGURE = Figure("fig7", compute, 1, plot, markdown)
