"""Where the reuse lives in an estimate: per denoising step, per layer and per
operation, the share of dense MACs that ideal reuse saves (the *oracle*) and
the share the hardware saved; and per step, how many heads ran each Q K^T
schedule and the margin that decided it: the best paired schedule's engine
cycles over the dense schedule's (the pairs' fill and drain slots against the
products they save), and how much of a pipelined step the arrays fill
(:mod:`sim.chip.qk_schedule`: what a slower schedule may take for free).

Everything here is read from the computed shards (:func:`reuse_where`), so a
figure is the mean over the heads computed at a step or layer.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["reuse_where", "head_reductions", "schedule_census", "format_steps", "schedule_line", "plot_reuse"]


def head_reductions(h: dict, n: int, d: int) -> dict:
    """``{op: (oracle, hardware)}`` of one head (a shard's ``head``); None where
    the head lacks the figure. ``n`` tokens, ``d`` channels a head."""
    out = {"qk": (1 - h["oracle_macs"] / h["dense_macs"],
                  1 - (h["full_products"] + h["nibble_products"] / 2) / h["dense_macs"])}
    if h.get("pv_channel_keys") is not None:
        out["pv"] = (None if h.get("pv_oracle") is None else 1 - h["pv_oracle"], 1 - h["pv_channel_keys"] / (d * n))
    roles = h.get("linear_roles")
    if roles:
        oracle = h.get("linear_oracle") or {}
        for role, f in roles.items():
            out[role] = (None if role not in oracle else 1 - oracle[role],
                         1 - f["linear_full"] - f["linear_nibble"] / 2)
    elif h.get("linear_full") is not None:
        out["hidden"] = (None, 1 - h["linear_full"] - h["linear_nibble"] / 2)
    return out


def _mean(rows: list[dict]) -> dict:
    ops = sorted({op for r in rows for op in r})
    out = {}
    for op in ops:
        pairs = [r[op] for r in rows if op in r]
        oracle = [p[0] for p in pairs if p[0] is not None]
        out[op] = {"oracle": float(np.mean(oracle)) if len(oracle) == len(pairs) else None,
                   "hardware": float(np.mean([p[1] for p in pairs]))}
    return out


def schedule_census(results: list[dict], decided: dict | None = None) -> dict[int, dict]:
    """Per step: heads computed, how many ran each ``Q K^T`` schedule (``ran``) and
    how many would have on their own (``fastest``), and the margin: over the
    heads, the best paired schedule's extra engine cycles against dense (mean
    and least, as a share of dense, and in cycles), and, where the chip chose
    (``decided``, :func:`sim.chip.qk_schedule.choose`), the share of a pipelined
    step in full flow that the arrays are busy and what bounds the step."""
    by_step: dict[int, list] = {}
    for r in results:
        by_step.setdefault(r["shard"][0], []).append(r["head"])
    out = {}
    for step, heads in sorted(by_step.items()):
        ran: dict[str, int] = {}
        for h in heads:
            name = h.get("qk_ran_as") or ("paired" if h.get("paired") else "dense")
            ran[name] = ran.get(name, 0) + 1
        known = [h for h in heads if h.get("qk_paired_cycles") is not None and h.get("qk_dense_cycles")]
        margins = [h["qk_paired_cycles"] - h["qk_dense_cycles"] for h in known]
        shares = [h["qk_paired_cycles"] / h["qk_dense_cycles"] - 1 for h in known]
        chip = (decided or {}).get(step)
        fastest: dict[str, int] = {}
        for name in (chip["fastest"] if chip else []):
            fastest[name] = fastest.get(name, 0) + 1
        out[step] = {"heads": len(heads), "dense": ran.get("dense", 0), "ran": ran, "fastest": fastest or None,
                     "extra_cycles_mean": float(np.mean(margins)) if margins else None,
                     "extra_share_mean": float(np.mean(shares)) if shares else None,
                     "extra_share_least": float(min(shares)) if shares else None,
                     "arrays_share": chip["arrays_share"] if chip else None, "bound": chip["bound"] if chip else None,
                     "time_s": chip["time_s"] if chip else None, "energy_j": chip["energy_j"] if chip else None}
    return out


def reuse_where(results: list[dict], tokens: int, head_dim: int, decided: dict | None = None) -> dict:
    """``by_step`` and ``by_layer``: ``{index: {op: {oracle, hardware}}}``, and
    ``schedules``: :func:`schedule_census` (``decided``: the chip's choice)."""
    by = {"by_step": {}, "by_layer": {}}
    for r in results:
        step, layer, _ = r["shard"]
        red = head_reductions(r["head"], tokens, head_dim)
        by["by_step"].setdefault(step, []).append(red)
        by["by_layer"].setdefault(layer, []).append(red)
    out = {key: {i: _mean(rows) for i, rows in sorted(v.items())} for key, v in by.items()}
    out["schedules"] = schedule_census(results, decided)
    return out


def _pct(v) -> str:
    return "  -  " if v is None else f"{100 * v:5.1f}"


def format_steps(where: dict, sigmas: dict | None = None) -> list[str]:
    """One line a step: each operation's oracle / hardware reduction (%), the heads
    per ``Q K^T`` schedule, and the margin that decided it."""
    lines = []
    for step, ops in where["by_step"].items():
        sched = where["schedules"][step]
        sigma = f" sigma {sigmas[step]:.3f}" if sigmas and step in sigmas else ""
        parts = " ".join(f"{op} {_pct(v['oracle']).strip()}/{_pct(v['hardware']).strip()}" for op, v in ops.items())
        ran = ", ".join(f"{n} {name}" for name, n in sorted(sched.get("ran", {}).items()))
        if sched["extra_share_mean"] is None:
            why = "; the margin is not recorded (shards computed by an older kaleido)"
        else:
            why = f"; paired {100 * sched['extra_share_mean']:+.2f} % Q K^T cycles against dense"
        if sched.get("arrays_share") is not None:
            own = ", ".join(f"{n} {name}" for name, n in sorted(sched["fastest"].items()))
            why += (f", arrays busy {100 * sched['arrays_share']:.0f} % of a full pipelined step "
                    f"({sched['bound']} bounds it); on their own: {own}")
        lines.append(f"step {step}{sigma}: oracle/hardware % {parts}; Q K^T of {sched['heads']} heads: {ran}{why}")
    return lines


def schedule_line(summary: dict) -> str:
    """The computed heads per Q K^T schedule over the run, as the chip chose and as
    each head would have on its own."""
    ran, own = {}, {}
    for v in summary["reuse"]["schedules"].values():
        for name, n in v["ran"].items():
            ran[name] = ran.get(name, 0) + n
        for name, n in (v["fastest"] or {}).items():
            own[name] = own.get(name, 0) + n
    line = f"Q K^T schedules ({summary['qk_objective']}): " + ", ".join(f"{n} {k}" for k, n in sorted(ran.items()))
    if own:
        line += "; each head on its own: " + ", ".join(f"{n} {k}" for k, n in sorted(own.items()))
    return line + f"; operations saved {100 * summary['qk_operation_reduction']['hardware']:.1f} % (oracle " \
        f"{100 * summary['qk_operation_reduction']['oracle']:.1f} %)"


def plot_reuse(where: dict, title: str, path: str) -> None:
    """Each operation's oracle (dashed) and hardware (solid) reduction by step
    and by layer, and the heads per Q K^T schedule by step (with the share that
    would run dense on its own), as a PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    ops = sorted({op for v in where["by_step"].values() for op in v})
    colours = dict(zip(ops, plt.rcParams["axes.prop_cycle"].by_key()["color"] * 3))
    for ax, key, label in ((axes[0], "by_step", "denoising step"), (axes[1], "by_layer", "layer")):
        xs = list(where[key])
        for op in ops:
            hw = [100 * where[key][x][op]["hardware"] if op in where[key][x] else np.nan for x in xs]
            orc = [100 * where[key][x][op]["oracle"] if op in where[key][x] and where[key][x][op]["oracle"]
                   is not None else np.nan for x in xs]
            ax.plot(xs, hw, "-o", color=colours[op], ms=3, label=op)
            ax.plot(xs, orc, "--", color=colours[op], lw=1)
        ax.set_xlabel(label)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("% of dense MACs saved")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, ncol=2, title="solid: hardware, dashed: oracle", title_fontsize=7)
    steps, sched = list(where["schedules"]), list(where["schedules"].values())
    names = sorted({name for v in sched for name in v.get("ran", {"dense": 0})})
    bottom = np.zeros(len(steps))
    for name in names:                  # the chip's choice, stacked
        share = np.array([100 * v.get("ran", {"dense": v["dense"]}).get(name, 0) / v["heads"] for v in sched])
        axes[2].bar(steps, share, bottom=bottom, label=name, color="grey" if name == "dense" else None)
        bottom += share
    own = [100 * v["fastest"].get("dense", 0) / v["heads"] if v.get("fastest") else np.nan for v in sched]
    if not np.all(np.isnan(own)):
        axes[2].plot(steps, own, "k_", ms=10, label="dense on its own")
    axes[2].set_xlabel("denoising step")
    axes[2].set_ylabel("% of heads, by the Q K^T schedule run")
    axes[2].set_ylim(0, 105)
    axes[2].legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    tmp = f"{path}.{os.getpid()}.tmp"
    fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    os.replace(tmp, path)
