"""The break-even map: where, in reuse and chip parameters, Kaleido's chip is
faster or cheaper than a baseline chip of the same area.

A design point is a chip (the given one or its ``balanced`` version, with a
vector unit and an accumulation buffer that keep up with its arrays; the share
of its arrays that are Kaleido's, and with every array Kaleido's, the share of
those coupled to a dispatcher) and a reuse level. The reuse level is the share of the baseline
array's ``Q K^T`` slots that Kaleido's array saves on a head. The heads an
estimate computed (:func:`sim.chip.estimate.compute_shards`) carry the
workload's own level, step by step (the noise level sets it); the map goes
beyond them by scaling every computed head to a level: its slots, their
interval, its products and passes by the same factor, so that a head keeps its
mix of products and its dispatcher's work per slot. Each point is then priced as
``kaleido estimate`` prices a model (:func:`sim.chip.estimate.summarize`), with
the level in Q K^T alone (P V~ and the linear layers at the workload's own
reuse, as the estimate has them) or, as a bound, in P V and every linear layer
too,
against the baseline chip of Kaleido's area and against the baseline chip of
the same arrays. The points run on Dask, like the shards.
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np

from .chip import Chip, balanced, baseline_head
from .estimate import summarize
from .vdits import VDiT

__all__ = ["REUSE_LEVELS", "SHARES", "COUPLED", "SCOPES", "STRENGTHS", "chip_presets", "measured_levels", "at_level",
           "price_point", "strength_point", "strength_break_even", "plot_strength",
           "break_even", "explore", "plot_map"]

#: Reuse levels the map prices: the share of the baseline's Q K^T slots saved.
REUSE_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
#: Shares of the arrays that are Kaleido's (at the chip's own coupled share).
SHARES = (0.25, 0.5, 1.0)
#: Shares of the Kaleido arrays coupled to a dispatcher, with every array Kaleido's
#: (beside the chip's own): Table 2's eighth, a half and all of them.
COUPLED = (0.125, 0.5, 1.0)
#: Where the reuse level applies: ``qk`` (Q K^T; P V~ and the linear layers at
#: the workload's own reuse, as the estimate has them) or ``all`` (P V and every
#: linear layer at the same level too: a bound on what reuse there could add,
#: including the layers whose inputs no workload here models).
SCOPES = ("qk", "all")

#: What scales with a head's slots when its reuse level changes.
_SCALED = ("slots", "slots_low", "slots_high", "full_products", "nibble_products", "passes")


def chip_presets(chip: Chip) -> dict[str, Chip]:
    """The chips the map tries: ``chip`` and ``chip`` with a vector unit and an
    accumulation buffer that keep up with its arrays (:func:`sim.chip.chip.balanced`)."""
    return {"chip": chip, "balanced": balanced(chip)}


def _base_slots(model: VDiT, tokens: int, chip: Chip) -> float:
    return baseline_head(tokens, model.head_dim, chip.rows, chip.cols).slots


def measured_levels(model: VDiT, tokens: int, chip: Chip, results: list[dict]) -> dict[int, float]:
    """Each computed step's reuse level: one less its heads' mean slots over the baseline's."""
    base = _base_slots(model, tokens, chip)
    steps = {}
    for r in results:
        steps.setdefault(r["shard"][0], []).append(r["head"]["slots"])
    return {s: 1 - float(np.mean(v)) / base for s, v in sorted(steps.items())}


def at_level(model: VDiT, tokens: int, chip: Chip, results: list[dict], level: float) -> list[dict]:
    """``results`` with every head scaled to ``level``."""
    base = _base_slots(model, tokens, chip)
    out = []
    for r in results:
        head = dict(r["head"])
        factor = base * (1 - level) / head["slots"]
        for k in _SCALED:
            head[k] = head[k] * factor
        head.pop("qk_options", None)           # a what-if head: no schedule to choose between
        out.append({**r, "head": head})
    return out


def price_point(model: VDiT, resolution: str, chip: Chip, cfg, results: list[dict], signs: dict,
                level: float | None, scope: str = "qk", objective="chip") -> dict:
    """One design point (a Dask task): ``chip`` at reuse ``level`` (None: the
    workload's own) in Q K^T (P V~ and the linear layers at the workload's own),
    and with ``scope="all"`` in P V and the linear
    layers too, against the baseline at equal area and at equal arrays;
    ``objective`` chooses each head's Q K^T schedule (:mod:`sim.chip.qk_schedule`)."""
    heads = results if level is None else at_level(model, cfg.tokens, chip, results, level)
    factor = 1 - level if scope == "all" and level is not None else 1.0
    s = summarize(model, resolution, chip, cfg, heads, signs, dense_factor=factor, objective=objective)
    k, iso = s["designs"]["kaleido"], s["designs"]["baseline_iso_area"]
    return {"level": level, "scope": scope, "lanes": chip.softmax_lanes, "share": chip.kaleido_share,
            "coupled": chip.coupled_share,
            "iso_speedup": s["iso_area"]["speedup"], "iso_energy_ratio": s["iso_area"]["energy_ratio"],
            "speedup": s["speedup"], "energy_ratio": s["energy_ratio"], "area_overhead": s["area_overhead"],
            "time_s": k["time_s"], "energy_j": k["energy_j"], "area_mm2": k["area_mm2"]["total"],
            "iso_time_s": iso["time_s"], "iso_energy_j": iso["energy_j"], "iso_arrays": s["iso_area"]["arrays"]}


def break_even(points: list[dict], key: str) -> float | None:
    """The reuse level at which ``key`` (Kaleido's time or energy over the
    baseline's, as a ratio where 1 is even) reaches 1, linearly between the
    levels priced; None if it never does, 0.0 if it is there without reuse.
    ``key`` ending in ``speedup`` is even from below (faster), else from above."""
    pts = sorted((p for p in points if p["level"] is not None), key=lambda p: p["level"])
    faster = key.endswith("speedup")

    def pays(v):
        return v >= 1 if faster else v <= 1
    for a, b in zip(pts, pts[1:]):
        if pays(a[key]):
            return a["level"]
        if pays(b[key]):
            return a["level"] + (b["level"] - a["level"]) * (1 - a[key]) / (b[key] - a[key])
    return pts[-1]["level"] if pts and pays(pts[-1][key]) else None


def explore(model: VDiT, resolution: str, chip: Chip, cfg, results: list[dict], signs: dict, client,
            levels=REUSE_LEVELS, shares=(SHARES, COUPLED), progress=None, design: str = "as-given",
            objective="chip") -> dict:
    """Every design point on ``client`` (a Dask client), the break-even levels of
    each chip, and the workload's own levels; ``shares``: the shares of Kaleido
    arrays to try (at the chip's coupled share), and the coupled shares (with
    every array Kaleido's); ``design`` names the PE and dispatcher that ``cfg``
    and ``signs`` describe."""
    from dask.distributed import as_completed

    shares, coupled = shares
    chips = []
    for c in chip_presets(chip).values():
        pairs = [(share, c.coupled_share) for share in shares] + [(1.0, x) for x in coupled]
        chips += [replace(c, kaleido_share=share, coupled_share=x) for share, x in dict.fromkeys(pairs)]
    same = lambda p, c: (p["lanes"], p["share"], p["coupled"]) == (c.softmax_lanes, c.kaleido_share, c.coupled_share)
    jobs = [(c, level, scope) for c in chips for scope in SCOPES for level in (None, *levels)
            if level is not None or scope == "qk"]
    scattered = client.scatter(results, broadcast=True)
    futures = [client.submit(price_point, model, resolution, c, cfg, scattered, signs, level, scope, objective,
                             pure=False)
               for c, level, scope in jobs]
    done = 0
    for _ in as_completed(futures):
        done += 1
        if progress:
            progress(done, len(futures))
    points = [f.result() for f in futures]
    maps = []
    for c in chips:
        for scope in SCOPES:
            mine = [p for p in points if same(p, c) and p["scope"] == scope]
            own = next(p for p in points if same(p, c) and p["level"] is None)
            maps.append({"lanes": c.softmax_lanes, "share": c.kaleido_share, "coupled": c.coupled_share,
                         "scope": scope, "measured": own,
                         "break_even": {k: break_even(mine, k) for k in ("iso_speedup", "iso_energy_ratio",
                                                                       "speedup", "energy_ratio")}})
    return {"model": model.name, "resolution": resolution, "chip": chip.name, "design": design,
            "levels": list(levels),
            "shares": list(shares), "coupled": list(coupled),
            "lanes": {k: c.softmax_lanes for k, c in chip_presets(chip).items()},
            "points": points, "maps": maps,
            "measured_levels": measured_levels(model, cfg.tokens, chip, results),
            "paper_point": {"lanes": chip.softmax_lanes, "share": 1.0, "coupled": chip.coupled_share}}


def plot_map(found: dict, path: str) -> None:
    """The map as a picture at ``path`` (a PNG): speed and energy against the
    baseline of equal area over the reuse level, and the Pareto plot of time and
    energy at equal area with the paper's design point starred."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.9))
    levels = [100 * x for x in found["levels"]]
    own = [100 * x for x in found["measured_levels"].values()]
    colours = {}
    for m in found["maps"]:
        key = (m["lanes"], m["share"], m["coupled"])
        pts = sorted((p for p in found["points"] if p["level"] is not None and (p["lanes"], p["share"], p["coupled"])
                      == key and p["scope"] == m["scope"]), key=lambda p: p["level"])
        style = "o-" if m["scope"] == "qk" else "o--"
        label = (f"{m['lanes']} lanes, {100 * m['share']:.0f} % Kaleido, {100 * m['coupled']:.0f} % coupled"
                 if key not in colours else None)
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
    star = found["paper_point"]
    paper = next(m for m in found["maps"] if (m["lanes"], m["share"], m["coupled"]) == (
        star["lanes"], star["share"], star["coupled"]) and m["scope"] == "qk")
    p = paper["measured"]
    axes[2].scatter([p["time_s"] / p["iso_time_s"]], [p["energy_j"] / p["iso_energy_j"]], marker="*", s=160,
                    color="k", label="the paper's design point")
    axes[2].axvline(1.0, color="k", lw=0.8)
    axes[2].axhline(1.0, color="k", lw=0.8)
    axes[2].set_xlabel("time / baseline's (equal area)")
    axes[2].set_ylabel("energy / baseline's (equal area)")
    axes[2].legend(fontsize=7)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Where Kaleido pays: {found['model']} {found['resolution']}, design {found['design']}, on the "
                 f"{found['chip']} chip, against a baseline chip of the same area\n"
                 "solid (o): the level in Q K^T, P V and linear at their own; dashed (x): in every product, a bound; "
                 "grey: the workload's own steps",
                 fontsize=9)
    _save(fig, path)


#: Strengths of the token-common part ``kaleido explore --strengths`` prices by
#: default (:class:`golden.config.WorkloadConfig`): the common share of Q's and K's
#: energy is ``s / (1 + s)``, so 0, 20 %, 50 %, 67 % and 80 %.
STRENGTHS = (0.0, 0.25, 1.0, 2.0, 4.0)

#: The figures of a strength point that :func:`strength_break_even` reads.
_EVEN_KEYS = ("speedup", "energy_ratio", "iso_speedup", "iso_energy_ratio")


def strength_point(summary: dict, strength: float) -> dict:
    """What the strength sweep keeps of one estimate's summary (:func:`sim.chip.estimate.summarize`)."""
    st = summary.get("structure") or {}
    mean = st.get("mean") or {}
    qk = summary["qk_operation_reduction"]
    return {"level": strength, "strength": strength, "speedup": summary["speedup"],
            "energy_ratio": summary["energy_ratio"], "iso_speedup": summary["iso_area"]["speedup"],
            "iso_energy_ratio": summary["iso_area"]["energy_ratio"], "area_overhead": summary["area_overhead"],
            "oracle": qk["oracle"], "hardware": qk["hardware"], "structured": mean.get("structured"),
            "shuffled": mean.get("shuffled"), "q_common_share": mean.get("q_common_share"),
            "k_common_share": mean.get("k_common_share")}


def strength_break_even(points: list[dict]) -> dict:
    """The strength at which Kaleido's chip becomes as fast, and as cheap, as the
    baseline chip with its arrays and as the baseline chip of its area
    (:func:`break_even` over the strengths priced; None: not within them)."""
    return {key: break_even(points, key) for key in _EVEN_KEYS}


def plot_strength(found: dict, path: str) -> None:
    """The verdict over the strength: Kaleido's chip over the baseline's (left)
    and the reuse on offer and taken (right)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = sorted(found["points"], key=lambda p: p["strength"])
    xs = [p["strength"] for p in pts]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.9))
    for key, label, style in (("speedup", "speed, same arrays", "o-"), ("energy_ratio", "energy, same arrays", "s-"),
                              ("iso_speedup", "speed, equal area", "o--"),
                              ("iso_energy_ratio", "energy, equal area", "s--")):
        axes[0].plot(xs, [p[key] for p in pts], style, ms=4, label=label)
    axes[0].axhline(1.0, color="k", lw=0.8)
    for ax in axes:                         # strengths span decades: linear near 0, logarithmic beyond
        ax.set_xscale("symlog", linthresh=0.25)
        ax.set_xticks(xs, [f"{x:g}" for x in xs])
    axes[0].set_xlabel("token-common strength s (common share s/(1+s))")
    axes[0].set_ylabel("Kaleido's chip / the baseline's")
    axes[0].legend(fontsize=7)
    for key, label, style in (("oracle", "Q K^T oracle", "o-"), ("shuffled", "oracle, tokens shuffled", "x--"),
                              ("structured", "structured reuse", "d-"), ("hardware", "Q K^T saved by the chip", "s-")):
        axes[1].plot(xs, [100 * (p[key] or 0.0) for p in pts], style, ms=4, label=label)
    axes[1].set_xlabel("token-common strength s")
    axes[1].set_ylabel("operations (%)")
    axes[1].legend(fontsize=7)
    fig.suptitle(f"The verdict as a function of structure: {found['model']} {found['resolution']}, "
                 f"{found['workload']} workload, common part in the {found['band']} RoPE band, {found['chip']} chip",
                 fontsize=9)
    _save(fig, path)


def _save(fig, path: str) -> None:
    """Write ``fig`` as a PNG at ``path`` whole or not at all (a scratch name, then a rename)."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    tmp = f"{path}.{os.getpid()}.tmp"
    fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    os.replace(tmp, path)
