"""``kaleido explore``: the break-even map of Kaleido's chip against a baseline
chip of the same area, over reuse levels, vector lanes and the share of Kaleido
arrays, on Dask and on the same shards as ``kaleido estimate``
(:mod:`sim.chip.explore`)."""

from __future__ import annotations

import json
import math
import os
from argparse import Namespace

from sim.cli.outputs import atomic_output, json_safe, print_json
from sim.errors import UserError

from .estimate_cmd import add_record, add_run_arguments, claimed, prepare, progress_bar, structure_lines, use_archive
from .options import given

__all__ = ["register", "DESIGNS"]

#: Designs one run can map side by side: the knobs each sets over the command
#: line's (the dispatcher variants, and the exact PE with every dispatcher part).
DESIGNS = {"full": {"variant": "full"}, "pe-m": {"variant": "pe-m"}, "pe-sh": {"variant": "pe-sh"},
           "pe": {"variant": "pe"}, "exact": {"variant": "full", "accumulators": 4}}


def register(sub, parser_class) -> None:
    p = sub.add_parser("explore", help="where Kaleido's chip pays: a break-even map at equal area (on Dask)",
                       description=__doc__)
    add_run_arguments(p)
    add_record(p)
    p.add_argument("--designs", metavar="NAME[,NAME...]",
                   help=f"map several designs side by side, each on its own heads and sign-off: "
                        f"{', '.join(DESIGNS)} (default: the one the knobs give)")
    p.add_argument("--strengths", metavar="S[,S...]",
                   help="sweep the synthetic model's token-common strength instead of the reuse level: an estimate "
                        "of the chip as given at each strength (its own heads, its own shards), the break-even "
                        "strengths, strength.json and strength.png (default strengths: "
                        "0,0.25,1,2,4 with --strengths default)")
    p.add_argument("--json", action="store_true", help="print the map as JSON on stdout")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="output folder: explore.json, explore.png and shards/ (shared with estimate: a run "
                        "into an estimate's folder reuses its heads)")
    p.set_defaults(func=cmd_explore)


#: What a map writes into its folder (an estimate's, whose figures it leaves alone).
OUTPUTS = ("explore.json", "explore.png", *(f"explore-{name}.png" for name in DESIGNS))
#: What a strength sweep writes there.
STRENGTH_OUTPUTS = ("strength.json", "strength.png")


def _strengths(spec: str) -> list[float]:
    from sim.chip.explore import STRENGTHS

    if spec == "default":
        return list(STRENGTHS)
    try:
        values = [float(v) for v in spec.split(",")]
    except ValueError:
        raise UserError(f"--strengths {spec!r}: a comma list of numbers (or default)") from None
    if any(not math.isfinite(v) or v < 0 for v in values):
        raise UserError(f"--strengths {spec}: every strength a finite number of 0 or more")
    if len(set(values)) != len(values) or len(values) < 2:
        raise UserError(f"--strengths {spec}: at least two strengths, each once")
    return sorted(values)


def cmd_strengths(args) -> int:
    """``explore --strengths``: the chip as given at each strength of the token-common part."""
    from sim.chip.cluster import dask_client
    from sim.chip.estimate import compute_shards, summarize
    from sim.chip.explore import plot_strength, strength_break_even, strength_point

    strengths = _strengths(args.strengths)
    if args.common_strength is not None:
        raise UserError("--common-strength and --strengths: the sweep sets the strength; give one")
    if args.designs:
        raise UserError("--designs and --strengths: the strength sweep maps the design the knobs give")
    use_archive(args)
    if args.workload == "activations":
        raise UserError("--strengths sweeps the synthetic workload's structure: an archive has its own; give "
                        "--workload too to run the synthetic one on its shape")
    model, chip, cfg, knobs, out, _, signs = prepare(args)
    points = []
    with claimed(out, STRENGTH_OUTPUTS), dask_client(args.scheduler, args.workers) as client:
        for s in strengths:
            bar = progress_bar(f"heads at strength {s:g}")
            cfg_s, results = compute_shards(client, model, args.resolution, chip, args.workload, out, args.sample,
                                            args.tile_samples or None, args.seed, args.clip, bar, args.steps,
                                            **{**knobs, "common_strength": s})
            bar(None, None)
            summary = summarize(model, args.resolution, chip, cfg_s, results, signs, objective=args.objective)
            points.append(strength_point(summary, s))
        band = cfg.common_band
        found = {"model": model.name, "resolution": args.resolution, "chip": chip.name, "workload": args.workload,
                 "clip": args.clip, "band": band, "per_step": args.sample, "steps": args.steps,
                 "tile_samples": args.tile_samples or None, "knobs": knobs, "points": points,
                 "break_even": strength_break_even(points),
                 "assumption": "the sign-off's matcher energy is measured on the workload at the strength the knobs "
                               "give (default 0), and each strength's heads priced with it"}
        with atomic_output(os.path.join(out, "strength.json"), ".json") as tmp:
            with open(tmp, "w") as fh:
                json.dump(json_safe(found), fh, indent=2, sort_keys=True)
        plot_strength(found, os.path.join(out, "strength.png"))
    if args.record:
        from sim.experiments.published import record
        record(args.record, *strength_figures(found))
    if args.json:
        print_json(found)
        return 0
    for p in points:
        print(f"strength {p['strength']:g}: Q K^T oracle {100 * p['oracle']:.1f} %, structured "
              f"{100 * (p['structured'] or 0):+.1f} points, saved by the chip {100 * p['hardware']:.1f} %; "
              f"{p['speedup']:.3f}x the speed at {p['energy_ratio']:.3f}x the energy, at equal area "
              f"{p['iso_speedup']:.3f}x at {p['iso_energy_ratio']:.3f}x")
    print(f"break-even strengths ({band} band): " + say_strengths(found["break_even"], strengths[-1]))
    print(f"{out}/strength.json, {out}/strength.png")
    return 0


def say_strengths(even: dict, most: float) -> str:
    """The break-even strengths in words."""
    def at(x):
        return f"never (up to {most:g})" if x is None else f"from {x:.2f}"
    return (f"as fast {at(even['speedup'])}, as cheap {at(even['energy_ratio'])}; at equal area as fast "
            f"{at(even['iso_speedup'])}, as cheap {at(even['iso_energy_ratio'])}")


def strength_figures(found: dict) -> tuple[dict, dict]:
    """What a strength sweep publishes: the break-even strengths and each point as a table row."""
    most = max(p["strength"] for p in found["points"])
    even = found["break_even"]
    fmt = lambda x: f"never (up to {most:g})" if x is None else f"from {x:.2f}"
    figures = {f"{k}_even": fmt(v) for k, v in even.items()}
    figures["band"] = found["band"]
    rows = [["strength", "common share", "Q K^T oracle", "structured", "saved by the chip", "speed", "energy",
             "speed, equal area", "energy, equal area"]]
    for p in sorted(found["points"], key=lambda p: p["strength"]):
        rows.append([f"{p['strength']:g}", f"{100 * p['strength'] / (1 + p['strength']):.0f} %",
                     f"{100 * p['oracle']:.1f} %", f"{100 * (p['structured'] or 0):+.1f}",
                     f"{100 * p['hardware']:.1f} %", f"{p['speedup']:.3f}x", f"{p['energy_ratio']:.2f}x",
                     f"{p['iso_speedup']:.3f}x", f"{p['iso_energy_ratio']:.2f}x"])
    return figures, {"strengths": rows}


def cmd_explore(args) -> int:
    if args.strengths is not None:
        return cmd_strengths(args)
    from sim.chip.cluster import dask_client
    from sim.chip.estimate import compute_shards, summarize
    from sim.chip.explore import explore, plot_map
    from sim.chip.reuse_where import format_steps, schedule_line

    use_archive(args)
    names = _designs(args.designs)
    _refuse_overridden(names, given(args))
    # Every design's arguments are checked, and its blocks signed off, before any head runs.
    mine = {name: Namespace(**{**vars(args), **DESIGNS.get(name, {})}) for name in names}
    for a in mine.values():
        prepare(a, sign=False)
    runs = {name: prepare(a) for name, a in mine.items()}
    out = runs[names[0]][4]
    found = {}
    with claimed(out, OUTPUTS), dask_client(args.scheduler, args.workers) as client:
        for name, (model, chip, cfg, knobs, _, _, signs) in runs.items():
            bar = progress_bar("heads")
            cfg, results = compute_shards(client, model, args.resolution, chip, args.workload, out, args.sample,
                                          args.tile_samples or None, args.seed, args.clip, bar, args.steps, **knobs)
            bar(None, None)
            bar = progress_bar("points")
            found[name] = explore(model, args.resolution, chip, cfg, results, signs, client(), progress=bar,
                                  design=name, objective=mine[name].objective)
            bar(None, None)
            found[name].update(workload=args.workload, per_step=args.sample, shards=len(results),
                               tile_samples=args.tile_samples or None, knobs=knobs)
            # The chip as given, on the workload's own heads: each head's Q K^T schedule as it chose.
            own = summarize(model, args.resolution, chip, cfg, results, signs, objective=mine[name].objective)
            found[name].update(qk_objective=own["qk_objective"], schedules=own["reuse"]["schedules"],
                               qk_operation_reduction=own["qk_operation_reduction"], structure=own["structure"])
            own.update(workload=args.workload, shard_seconds=sum(r["seconds"] for r in results))
            found[name]["schedule_lines"] = [schedule_line(own), *format_steps(own["reuse"]), *structure_lines(own)]
        with atomic_output(os.path.join(out, "explore.json"), ".json") as tmp:
            with open(tmp, "w") as fh:
                json.dump(json_safe({"designs": found}), fh, indent=2, sort_keys=True)
        pictures = {name: os.path.join(out, "explore.png" if i == 0 else f"explore-{name}.png")
                    for i, name in enumerate(found)}
        for name, path in pictures.items():
            plot_map(found[name], path)
    if args.record:
        from sim.experiments.published import record
        record(args.record, *explore_figures(found[names[0]]))
    if args.json:
        print_json({"designs": found})
        return 0
    for name, f in found.items():
        for m in f["maps"]:
            where = "Q K^T (P V, linear their own)" if m["scope"] == "qk" else "every product"
            head = f"{name}: " if len(found) > 1 else ""
            print(f"{head}{m['lanes']:>6} lanes, {100 * m['share']:3.0f} % Kaleido arrays "
                  f"({100 * m['coupled']:.1f} % coupled), reuse in {where}: {say(m)}")
    for name, f in found.items():
        head = f"{name}: " if len(found) > 1 else ""
        for line in f["schedule_lines"]:
            print(f"{head}{line}")
    print(f"{out}/explore.json, " + ", ".join(pictures.values()))
    return 0


def _level(x) -> str:
    return "never (up to 90 %)" if x is None else f"{100 * x:.0f} %"


def explore_figures(found: dict) -> tuple[dict, dict]:
    """What a map publishes (:func:`sim.experiments.published.record`): at the chip as given (every
    array Kaleido's, its own vector unit) the reuse level where Kaleido's chip
    becomes as fast, and as cheap, as the baseline chip of its area, per scope; and
    the whole map as a table."""
    rows = [["vector lanes", "Kaleido arrays", "coupled to a dispatcher", "reuse in", "as fast from",
             "as cheap from"]]
    figures = {}
    star = found["paper_point"]                     # the chip as given: its own vector unit and coupled share
    for m in found["maps"]:
        b = m["break_even"]
        rows.append([f"{m['lanes']:,}", f"{100 * m['share']:.0f} %", f"{100 * m['coupled']:.1f} %", m["scope"],
                     _level(b["iso_speedup"]), _level(b["iso_energy_ratio"])])
        if (m["share"], m["lanes"], m["coupled"]) == (1.0, star["lanes"], star["coupled"]):
            figures[f"{m['scope']}_time"] = _level(b["iso_speedup"])
            figures[f"{m['scope']}_energy"] = _level(b["iso_energy_ratio"])
    return figures, {"map": rows}


def _refuse_overridden(names: list[str], knobs: dict) -> None:
    """A knob that a design of ``--designs`` sets to another value would be ignored: refused."""
    for name in names:
        for knob, value in DESIGNS.get(name, {}).items():
            if knob in knobs and knobs[knob] != value:
                flag = "--" + knob.replace("_", "-")
                raise UserError(f"{flag} {knobs[knob]} and --designs {name}: design {name} runs {flag} {value}, "
                                f"so yours would be ignored; give one")


def _designs(spec: str | None) -> list[str]:
    """The designs ``--designs`` names, in order, each once; ``as-given`` without it."""
    if spec is None:
        return ["as-given"]
    names = [n.strip() for n in spec.split(",")]
    if "" in names:
        raise UserError(f"--designs {spec!r} has an empty entry; name designs separated by single commas "
                        f"(from {', '.join(DESIGNS)})")
    unknown = [n for n in names if n not in DESIGNS]
    if unknown or not names:
        raise UserError(f"--designs {spec}: unknown design(s) {', '.join(unknown) or '(none given)'}; "
                        f"choose from {', '.join(DESIGNS)}")
    return list(dict.fromkeys(names))


def say(m: dict) -> str:
    """One chip's map in words: where it pays, at equal area."""
    def level(x):
        return "never (up to 90 %)" if x is None else f"from {100 * x:.0f} %"
    b, own = m["break_even"], m["measured"]
    return (f"faster than the baseline of its area {level(b['iso_speedup'])} of the slots saved, "
            f"cheaper {level(b['iso_energy_ratio'])}; on the workload's own heads "
            f"{own['iso_speedup']:.3f}x the speed at {own['iso_energy_ratio']:.3f}x the energy")
