"""P V~ with V's reuse folded per column tile, against the baseline (cycle model)."""

from __future__ import annotations

from golden import Config
from sim.experiments.bench import bench_pv
from sim.experiments.report.base import sweep

from .figure import Figure

__all__ = ["point", "markdown"]


def point(args):
    """``P V~`` on the Kaleido array (V's full reuse folded per column tile) against the baseline."""

    cfg_json, workload = args
    cfg = Config.from_json(cfg_json)
    return bench_pv([(workload, cfg.grid, cfg.head_dim)], cfg)[0]


def markdown(d: dict) -> list[str]:
    lines = [
        "## P V~ with V's reuse (cycle model, equal to the RTL's `kaleido sim attention --v`)",
        "",
        "A fully reused key folds into its reference (`(P0 + P1) V0`, the shared multiply) only where every "
        "channel of a column tile reuses it fully, because the array's columns step through the keys "
        "together (`golden/pv_tiles.py`); the engine runs each column tile over its own keys, or the dense "
        "product where that is faster.",
        "",
        "| workload | speedup over the baseline | oracle bound | share of the bound | executed / oracle |",
        "|---|---:|---:|---:|---:|",
    ]
    for p in d["pv"]:
        lines.append(f"| {p['workload']} | {p['speedup']:.3f}x ({p['schedule']}) | {p['oracle_bound']:.3f}x | "
                     f"{100 * p['share_of_bound']:.0f} % | {p['executed_over_oracle']:.2f} |")
    return lines + ["", "Real video's static regions repeat in every channel, so many keys fold; the "
                    "proxy's random embedding decorrelates channels, so few do.", ""]


def compute(study) -> list:
    return sweep(point, [(study.mid.to_json(), name) for name in ("proxy", *study.clips)], "P V~", study.jobs)


FIGURE = Figure("pv", compute, 9, markdown=markdown)
