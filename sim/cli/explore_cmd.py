"""``kaleido explore``: the break-even map of Kaleido's chip against a baseline
chip of the same area, over reuse levels, vector lanes and the share of Kaleido
arrays, on Dask and on the same shards as ``kaleido estimate``
(:mod:`sim.chip.explore`)."""

from __future__ import annotations

import json
import os

from .common import atomic_output, json_safe, print_json
from .estimate_cmd import add_run_arguments, claimed, prepare, progress_bar

__all__ = ["register"]


def register(sub, parser_class) -> None:
    p = sub.add_parser("explore", help="where Kaleido's chip pays: a break-even map at equal area (on Dask)",
                       description=__doc__)
    add_run_arguments(p)
    p.add_argument("--json", action="store_true", help="print the map as JSON on stdout")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="output folder: explore.json, explore.png and shards/ (shared with estimate: a run "
                        "into an estimate's folder reuses its heads)")
    p.set_defaults(func=cmd_explore)


def cmd_explore(args) -> int:
    from sim.chip.estimate import compute_shards, dask_client
    from sim.chip.explore import explore

    model, chip, cfg, knobs, out, _, signs = prepare(args)
    with claimed(out), dask_client(args.scheduler, args.workers) as client:
        bar = progress_bar("heads")
        cfg, results = compute_shards(client, model, args.resolution, chip, args.workload, out, args.sample,
                                      args.tile_samples or None, args.seed, args.clip, bar, args.steps, **knobs)
        bar(None, None)
        bar = progress_bar("points")
        found = explore(model, args.resolution, chip, cfg, results, signs, client(), progress=bar)
        bar(None, None)
        found.update(workload=args.workload, per_step=args.sample, tile_samples=args.tile_samples or None,
                     shards=len(results))
        with atomic_output(os.path.join(out, "explore.json"), ".json") as tmp:
            with open(tmp, "w") as fh:
                json.dump(json_safe(found), fh, indent=2, sort_keys=True)
        plot(found, os.path.join(out, "explore.png"))
    if args.json:
        print_json(found)
    else:
        for m in found["maps"]:
            where = "Q K^T" if m["scope"] == "qk" else "every product"
            print(f"{m['lanes']:>6} lanes, {100 * m['share']:3.0f} % Kaleido arrays, reuse in {where}: {say(m)}")
        print(f"{out}/explore.json, {out}/explore.png")
    return 0


def say(m: dict) -> str:
    """One chip's map in words: where it pays, at equal area."""
    def level(x):
        return "never (up to 90 %)" if x is None else f"from {100 * x:.0f} %"
    b, own = m["break_even"], m["measured"]
    return (f"faster than the baseline of its area {level(b['iso_speedup'])} of the slots saved, "
            f"cheaper {level(b['iso_energy_ratio'])}; on the workload's own heads "
            f"{own['iso_speedup']:.3f}x the speed at {own['iso_energy_ratio']:.3f}x the energy")


def plot(found: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.9))
    levels = [100 * x for x in found["levels"]]
    own = [100 * x for x in found["measured_levels"].values()]
    colours = {}
    for m in found["maps"]:
        pts = sorted((p for p in found["points"] if p["level"] is not None and p["lanes"] == m["lanes"]
                      and p["share"] == m["share"] and p["scope"] == m["scope"]), key=lambda p: p["level"])
        key = (m["lanes"], m["share"])
        style = "o-" if m["scope"] == "qk" else "o--"
        label = f"{m['lanes']} lanes, {100 * m['share']:.0f} % Kaleido" if key not in colours else None
        line, = axes[0].plot(levels, [p["iso_speedup"] for p in pts], style, ms=3, label=label, color=colours.get(key))
        colours[key] = line.get_color()
        axes[1].plot(levels, [p["iso_energy_ratio"] for p in pts], style, ms=3, color=colours[key])
        axes[2].scatter([p["time_s"] / p["iso_time_s"] for p in pts], [p["energy_j"] / p["iso_energy_j"] for p in pts],
                        s=12, color=colours[key], marker="o" if m["scope"] == "qk" else "x")
    for ax, what in ((axes[0], "speed over the baseline of equal area"),
                     (axes[1], "energy over the baseline of equal area")):
        ax.axhline(1.0, color="k", lw=0.8)
        for x in own:
            ax.axvline(x, color="0.8", lw=0.6, zorder=0)
        ax.set_xlabel("slots saved (%)")
        ax.set_ylabel(what)
    paper = next(m for m in found["maps"] if m["lanes"] == found["paper_point"]["lanes"] and m["share"] == 1.0
                 and m["scope"] == "qk")
    p = paper["measured"]
    axes[2].scatter([p["time_s"] / p["iso_time_s"]], [p["energy_j"] / p["iso_energy_j"]], marker="*", s=160,
                    color="k", label="the paper's design point")
    axes[2].axvline(1.0, color="k", lw=0.8)
    axes[2].axhline(1.0, color="k", lw=0.8)
    axes[2].set_xlabel("time / baseline's (equal area)")
    axes[2].set_ylabel("energy / baseline's (equal area)")
    axes[2].legend(fontsize=7)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Where Kaleido pays: {found['model']} {found['resolution']} on the {found['chip']} chip against a "
                 "baseline chip of the same area. Solid (o): reuse in Q K^T; dashed (x): in every product, a bound; "
                 "grey: the workload's own steps", fontsize=9)
    fig.tight_layout()
    with atomic_output(path, ".png") as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
