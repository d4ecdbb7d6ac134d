"""Fig. 21: PEs per array, the same PEs in all (cycle model)."""

from __future__ import annotations

from pathlib import Path

from golden import Config
from golden.cycle_model import baseline_tile_slots, kaleido_tables, kaleido_tile_slots, split_cycles
from sim.experiments.report.base import pyplot, quantized, save, sweep

from .figure import Figure

__all__ = ["ARRAY_SIZES", "TOTAL_PES", "point", "plot", "markdown"]

ARRAY_SIZES = [2, 4, 8, 16]
TOTAL_PES = 256


def point(args):
    cfg_json, size, workload = args
    cfg = Config.from_json(cfg_json).with_(rows=size, cols=size, variant="full")
    arrays = TOTAL_PES // (size * size)
    ops = quantized(cfg, workload)
    q, k = ops["q"][0], ops["k"][0]
    qt, kt = kaleido_tables(q, k, cfg)
    slots, _ = kaleido_tile_slots(qt, kt, cfg, True)
    base = baseline_tile_slots(cfg.tokens, cfg.tokens, cfg)
    return size, {"arrays": arrays, "kaleido": split_cycles(slots, arrays, cfg),
                  "baseline": split_cycles(base, arrays, cfg)}


def plot(out: Path, data: dict) -> None:
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6, 3.6))
    sizes = sorted(data["fig21"], key=int)
    ref = data["fig21"]["4"]["kaleido"] if "4" in data["fig21"] else data["fig21"][sizes[0]]["kaleido"]
    ax.plot([f"{s}x{s}" for s in sizes], [ref / data["fig21"][s]["kaleido"] for s in sizes], "o-",
            label="Kaleido (full)")
    ax.plot([f"{s}x{s}" for s in sizes], [ref / data["fig21"][s]["baseline"] for s in sizes], "s--",
            label="baseline")
    ax.set_xlabel(f"PEs per array ({TOTAL_PES} PEs in all)")
    ax.set_ylabel("speedup, normalized to Kaleido 4x4")
    ax.set_title("Fig. 21 analog: per-array size (cycle model)")
    ax.legend(fontsize=8)
    save(fig, out / "fig21_array_size.png")


def markdown(d: dict) -> list[str]:
    f21 = d["fig21"]
    lines = [
        "## Fig. 21: PEs per array, 256 PEs in all (cycle model)",
        "",
        "![fig21](fig21_array_size.png)",
        "",
        "| PEs per array | arrays | Kaleido cycles | baseline cycles | Kaleido speedup vs 4x4 |",
        "|---|---:|---:|---:|---:|",
    ]
    ref = f21["4"]["kaleido"] if "4" in f21 else f21[min(f21, key=int)]["kaleido"]
    for size in sorted(f21, key=int):
        r = f21[size]
        lines.append(f"| {size}x{size} | {r['arrays']} | {r['kaleido']:,} | {r['baseline']:,} | "
                     f"{ref / r['kaleido']:.3f} |")
    lines += [
        "",
        "Ours: see the last column. Paper: speedup degrades slightly as arrays grow; 2x2 gains "
        "little over 4x4.",
        "",
    ]
    return lines


def compute(study) -> dict:
    points = [(study.mid.to_json(), s, study.workload) for s in ARRAY_SIZES]
    return {str(s): r for s, r in sweep(point, points, "fig 21", study.jobs)}


FIGURE = Figure("fig21", compute, 4, plot, markdown)
