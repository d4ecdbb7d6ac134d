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
    from sim.chip.explore import explore, plot_map

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
        plot_map(found, os.path.join(out, "explore.png"))
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
