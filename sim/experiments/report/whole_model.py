"""The chip-level figures: Fig. 18 (speedup and energy per model), Fig. 22 (arrays x
buffer size) and Fig. 25 (480p against 720p) analogs, the break-even map at equal
area, and the paper's chip-level claims beside ours, from ``kaleido estimate``'s model (:mod:`sim.chip.estimate`) on a
small sampled configuration (:data:`QUICK`)."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from sim.chip.chip import CHIPS
from sim.chip.vdits import VDITS, vdit
from sim.experiments.report.base import pyplot, save
from synth.kits import at_signoff, kit

from ...chip.cluster import dask_client
from ...chip.estimate import run_estimate, shard_config, signoffs, summarize
from ...chip.explore import explore, plot_map
from .fig18 import measured
from .figure import Figure

__all__ = ["QUICK", "PAPER_FIG18", "PAPER_FIG22", "PAPER_CLAIMS", "ARRAY_SIDES", "BUFFERS_MB", "run", "brief",
           "fig22_grid", "break_even_map", "plot", "markdown", "explore_lines"]

#: The report's quick estimate: 3 denoising steps (first, middle, last) of 1 head
#: each, 3,000 tile groups a head, the real clip. ``make report`` says so beside
#: every figure; ``kaleido estimate`` runs the full sample.
QUICK = {"steps": 3, "per_step": 1, "tile_samples": 3000, "workload": "video"}

#: The paper's Fig. 18 (section 7.2): Kaleido's speedup and energy saving over an
#: A100 GPU (not over its own baseline accelerator, which it does not report per model).
PAPER_FIG18 = {"hunyuanvideo": (6.6, 14.8), "wan2.1": (5.6, 15.6), "turbodiffusion": (5.2, 15.2),
               "cogvideox": (6.1, 18.4)}

#: Fig. 22 grids as the paper's text gives them, normalized to 128x128 arrays and
#: 96 MB: (a) performance, (b) energy; rows are arrays, columns :data:`BUFFERS_MB`.
PAPER_FIG22 = {
    "performance": {64: [0.18, 0.26, 0.26, 0.26, 0.26], 128: [0.23, 0.43, 0.71, 1.00, 1.03],
                    256: [0.24, 0.47, 0.89, 1.62, 2.63], 512: [0.24, 0.47, 0.90, 1.66, 2.88]},
    "energy": {64: [4.29, 2.44, 1.53, 1.06, 0.83], 128: [4.25, 2.40, 1.47, 1.00, 0.77],
               256: [4.25, 2.39, 1.46, 0.99, 0.75], 512: [4.24, 2.39, 1.46, 0.99, 0.75]},
}
ARRAY_SIDES = (64, 128, 256, 512)
BUFFERS_MB = (12, 24, 48, 96, 192)

#: The paper's chip-level claims (sections 1, 6 and 7).
PAPER_CLAIMS = {"area_overhead": 0.079, "dispatcher_energy_share": 0.001, "hardware_reduction": 0.60,
                "oracle_reduction": 0.85}


def _estimate(model: str, resolution: str, signs_of, workers: int):
    """The quick estimate's summary, with what re-pricing it needs: its heads, design point and sign-off."""
    import json


    m, chip = vdit(model), CHIPS["paper"]
    cfg = shard_config(m, resolution, chip)
    signs = signs_of(cfg)
    with tempfile.TemporaryDirectory() as tmp:
        summary = run_estimate(m, resolution, chip, QUICK["workload"], tmp, QUICK["per_step"], QUICK["tile_samples"],
                               signs, workers=workers, steps=QUICK["steps"])
        results = [json.loads(p.read_text()) for p in sorted((Path(tmp) / "shards").glob("*.json"))]
    return summary, (m, cfg, results, signs)


def run(liberty: str, workers: int = 2) -> dict:
    """Every model at 480p, Wan2.1 and HunyuanVideo at 720p, and the Fig. 22 grid
    re-priced from Wan2.1's 480p heads (a head's work does not depend on the
    number of arrays or the buffers)."""

    cache = {}

    def signs_of(cfg):
        key = (cfg.partition, cfg.head_dim)
        if key not in cache:
            cache[key] = signoffs(at_signoff(cfg, liberty), liberty)
        return cache[key]

    out = {"quick": QUICK, "models": {}, "resolutions": {}, "library": kit(liberty).name,
           "node_nm": kit(liberty).node_nm}
    heads = {}
    for name in VDITS:
        summary, heads[name] = _estimate(name, "480p", signs_of, workers)
        out["models"][name] = brief(summary)
    for name in ("wan2.1", "hunyuanvideo"):
        out["resolutions"][name] = {"480p": out["models"][name],
                                    "720p": brief(_estimate(name, "720p", signs_of, workers)[0])}
    m, cfg, results, signs = heads["wan2.1"]
    out["fig22"] = fig22_grid(m, "480p", cfg, results, signs, CHIPS["paper"])
    out["explore"] = break_even_map(m, cfg, results, signs, workers)
    return out


def brief(s: dict) -> dict:
    """What the report keeps of an estimate's summary."""
    keep = ("model", "resolution", "tokens", "speedup", "speedup_interval", "energy_ratio", "area_overhead",
            "dispatcher_energy_share", "qk_operation_reduction", "computed_steps", "shards")
    out = {k: s[k] for k in keep}
    out["designs"] = {d: {"time_s": v["time_s"], "energy_j": v["energy_j"], "time_by_op_s": v["time_by_op_s"],
                          "energy_by_unit_j": v["energy_by_unit_j"], "area_mm2": v["area_mm2"]}
                      for d, v in s["designs"].items()}
    return out


def break_even_map(model, cfg, results: list, signs: dict, workers: int = 2) -> dict:
    """``kaleido explore``'s map of Wan2.1 at 480p on the paper's chip, on a local Dask cluster."""

    with dask_client(None, workers) as client:
        return explore(model, "480p", CHIPS["paper"], cfg, results, signs, client())


def fig22_grid(model, resolution: str, cfg, results: list, signs: dict, base_chip) -> dict:
    """Both designs' time and energy with ``side x side`` arrays and ``mb`` MB of
    buffers (two thirds global, one third accumulation), for the shards ``results``."""

    grid = {}
    for side in ARRAY_SIDES:
        for mb in BUFFERS_MB:
            chip = replace(base_chip, arrays=side * side, global_buffer_mib=mb * 2 / 3, acc_buffer_mib=mb / 3)
            s = summarize(model, resolution, chip, cfg, results, signs)
            grid[f"{side}x{mb}"] = {d: {"time_s": s["designs"][d]["time_s"], "energy_j": s["designs"][d]["energy_j"]}
                                    for d in ("kaleido", "baseline")}
    return grid


def plot(out: Path, data: dict) -> None:
    plt = pyplot()
    c = data["chip"]
    names = list(c["models"])
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    axes[0].bar(names, [c["models"][n]["speedup"] for n in names], color="tab:blue")
    axes[0].axhline(1.0, color="k", lw=0.8)
    axes[0].set_ylabel("Kaleido speedup over the baseline chip")
    axes[1].bar(names, [1 / c["models"][n]["energy_ratio"] for n in names], color="tab:green")
    axes[1].axhline(1.0, color="k", lw=0.8)
    axes[1].set_ylabel("energy saving (baseline / Kaleido)")
    for ax in axes:
        ax.tick_params(axis="x", labelsize=8)
    fig.suptitle("Fig. 18 analog: whole models at 480p on the paper's chip (quick sample)", fontsize=9)
    save(fig, out / "fig18_chip.png")

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    ref = c["fig22"][f"128x{BUFFERS_MB[3]}"]["kaleido"]
    for side in ARRAY_SIDES:
        axes[0].plot(BUFFERS_MB, [ref["time_s"] / c["fig22"][f"{side}x{mb}"]["kaleido"]["time_s"] for mb in BUFFERS_MB],
                     "o-", label=f"{side}x{side} arrays")
        axes[1].plot(BUFFERS_MB, [c["fig22"][f"{side}x{mb}"]["kaleido"]["energy_j"] / ref["energy_j"]
                                  for mb in BUFFERS_MB], "o-", label=f"{side}x{side} arrays")
    axes[0].set_ylabel("performance (1 = 128x128, 96 MB)")
    axes[1].set_ylabel("energy (1 = 128x128, 96 MB)")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("buffer size (MB)")
    axes[0].legend(fontsize=7)
    fig.suptitle("Fig. 22 analog: Kaleido on Wan2.1 480p, arrays x buffers (quick sample)", fontsize=9)
    save(fig, out / "fig22_chip.png")
    if "explore" in c:
        plot_map(c["explore"], str(out / "explore_chip.png"))


def markdown(d: dict) -> list[str]:
    c = d["chip"]
    q = c["quick"]
    lines = [
        "## Chip level: whole models on the paper's chip (Fig. 18, 22, 25 analogs)",
        "",
        f"From `kaleido estimate`'s model on a **quick sample**: {q['steps']} denoising steps (first, middle, "
        f"last; each stands for its nearest steps) of {q['per_step']} head each, {q['tile_samples']} tile "
        "groups per head, the real clip noised per step. The paper's chip (128x128 arrays of 4x4 PEs at 1 GHz "
        "in 16 nm, 512 softmax lanes, 64 + 32 MB SRAM, 16 DDR5-6400 channels), with this project's sign-off "
        f"figures ({c.get('library', 'osu018')}) brought from {c.get('node_nm', 180)} nm by Stillmaker and Baas's "
        "equations. Kaleido's arrays reuse in Q K^T, in "
        "P V~ (V's folds) and in the linear layers that take the hidden state (each head's slice of the "
        "workload's embedding); the output projections, the MLP's second layer and softmax are dense on both "
        "designs. The workloads are this project's, not the models' activations. `kaleido estimate` gives the "
        "full sample with intervals (docs/chip.md).",
        "",
        "![fig18 chip](fig18_chip.png)",
        "",
        "| model | tokens | Kaleido speedup | energy ratio (K/B) | softmax share of Kaleido's time | "
        "paper: speedup, energy saving over A100 |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, r in c["models"].items():
        k = r["designs"]["kaleido"]
        soft = k["time_by_op_s"]["softmax"] / k["time_s"]
        ps, pe = PAPER_FIG18[name]
        lo, hi = r["speedup_interval"]
        lines.append(f"| {name} | {r['tokens']} | {r['speedup']:.3f} [{lo:.3f}, {hi:.3f}] | "
                     f"{r['energy_ratio']:.3f} | {100 * soft:.0f} % | {ps}x, {pe}x |")
    w = c["models"]["wan2.1"]
    lines += [
        "",
        "The paper reports its speedups over a GPU, not over its baseline accelerator; ours are over the "
        "baseline chip, the same but for the PE and the dispatcher.",
        "",
        "### The paper's chip-level claims, ours beside them (Wan2.1, 480p)",
        "",
        "| claim | paper | ours |",
        "|---|---:|---:|",
        f"| area overhead of Kaleido | {100 * PAPER_CLAIMS['area_overhead']:.1f} % | "
        f"{100 * w['area_overhead']:.1f} % |",
        f"| dispatcher's share of energy | {100 * PAPER_CLAIMS['dispatcher_energy_share']:.1f} % | "
        f"{100 * w['dispatcher_energy_share']:.1f} % |",
        f"| hardware operation reduction (Q K^T) | {100 * PAPER_CLAIMS['hardware_reduction']:.0f} % | "
        f"{100 * w['qk_operation_reduction']['hardware']:.0f} % |",
        f"| oracle operation reduction (Q K^T) | {100 * PAPER_CLAIMS['oracle_reduction']:.0f} % | "
        f"{100 * w['qk_operation_reduction']['oracle']:.0f} % |",
        "",
        "### Fig. 25 analog: 480p against 720p",
        "",
        "| model | resolution | tokens | Kaleido speedup | energy ratio (K/B) |",
        "|---|---|---:|---:|---:|",
    ]
    for name, res in c["resolutions"].items():
        for r_name, r in res.items():
            lines.append(f"| {name} | {r_name} | {r['tokens']} | {r['speedup']:.3f} | {r['energy_ratio']:.3f} |")
    lines += [
        "",
        "### Fig. 22 analog: arrays x buffer size (Wan2.1 480p, Kaleido)",
        "",
        "![fig22 chip](fig22_chip.png)",
        "",
        "Performance (1 / time), normalized to 128x128 arrays and 96 MB; the paper's value after the slash.",
        "",
        "| arrays | " + " | ".join(f"{mb} MB" for mb in BUFFERS_MB) + " |",
        "|---|" + "---:|" * len(BUFFERS_MB),
    ]
    ref = c["fig22"][f"128x{BUFFERS_MB[3]}"]["kaleido"]
    for side in ARRAY_SIDES:
        cells = [f"{ref['time_s'] / c['fig22'][f'{side}x{mb}']['kaleido']['time_s']:.2f} / "
                 f"{PAPER_FIG22['performance'][side][i]:.2f}" for i, mb in enumerate(BUFFERS_MB)]
        lines.append(f"| {side}x{side} | " + " | ".join(cells) + " |")
    lines += ["", "Energy, normalized the same way; the paper's value after the slash.", "",
              "| arrays | " + " | ".join(f"{mb} MB" for mb in BUFFERS_MB) + " |",
              "|---|" + "---:|" * len(BUFFERS_MB)]
    for side in ARRAY_SIDES:
        cells = [f"{c['fig22'][f'{side}x{mb}']['kaleido']['energy_j'] / ref['energy_j']:.2f} / "
                 f"{PAPER_FIG22['energy'][side][i]:.2f}" for i, mb in enumerate(BUFFERS_MB)]
        lines.append(f"| {side}x{side} | " + " | ".join(cells) + " |")
    lines.append("")
    if "explore" in c:
        lines += explore_lines(c["explore"])
    return lines


def explore_lines(found: dict) -> list[str]:
    """The break-even map's section: the picture, and each chip's break-even levels."""
    def level(x):
        return "never (to 90 %)" if x is None else f"{100 * x:.0f} %"
    lines = ["### Where Kaleido pays: the break-even map (Wan2.1 480p, `kaleido explore`)", "",
             "![explore](explore_chip.png)", "",
             "Against the baseline chip of the same area. The reuse level is the share of Q K^T's slots saved "
             "(every head of the quick sample scaled to it), in Q K^T (P V and the linear layers at the "
             "workload's own reuse) or, as a bound, in every product. "
             "The paper's design point is starred.", "",
             "| vector lanes | Kaleido arrays | coupled to a dispatcher | reuse in | as fast from | as cheap from | "
             "the workload's own: speed, energy |", "|---:|---:|---:|---|---:|---:|---|"]
    for m in found["maps"]:
        b, own = m["break_even"], m["measured"]
        lines.append(f"| {m['lanes']} | {100 * m['share']:.0f} % | {100 * m['coupled']:.1f} % | "
                     f"{'Q K^T' if m['scope'] == 'qk' else 'all'} | "
                     f"{level(b['iso_speedup'])} | {level(b['iso_energy_ratio'])} | "
                     f"{own['iso_speedup']:.3f}x, {own['iso_energy_ratio']:.3f}x |")
    lines.append("")
    return lines


def compute(study) -> dict:
    return run(study.liberty, workers=study.jobs)


FIGURE = Figure("chip", compute, 12, plot, markdown, lambda study: study.chip_level and measured(study))
