"""Each head's ``Q K^T`` schedule, chosen for the chip rather than for the head.

The driver can run a head's ``Q K^T`` paired (the dispatcher's passes A-D), in
order, or dense. On its own a head takes the option with the fewest engine
cycles (:func:`sim.chip.fast_cycles.estimate_cycles`; ``sim attention`` keeps that
rule). On the chip that is the wrong question. When the chip is pipelined,
``Q K^T`` runs beside the vector unit's softmax of the block before, so where
softmax (or a memory) sets the pace, a paired schedule a few per cent slower
than dense costs no time and still skips the products that reuse saves, with
their energy. Dense throws that away.

So the chip chooses. Every shard keeps each option's figures
(:attr:`~sim.chip.chip.HeadWork.qk_options`). For each computed denoising
step, :func:`choose` starts from each head's fastest option. It then moves
one head at a time to another option while the step's layer
(:func:`sim.chip.layer.layer_cost` on the Kaleido chip, every resource and the
pipeline included) improves under the objective:

* ``chip`` (the default): less time; at equal time, less energy. The layer's
  time never grows, so a head's new schedule never lengthens the critical path;
* ``head``: no choice, each head's fewest cycles (the rule before);
* a number ``W``: the least ``energy x time^W`` (0 is energy alone, 1 the
  energy-delay product).

The steps that fill the pipeline (the first blocks' ``Q K^T``, which nothing hides)
run each head's fastest option whatever the choice. The driver picks a schedule
per block of queries, and those blocks are on the critical path.
"""

from __future__ import annotations

import math
from typing import Callable

__all__ = ["OBJECTIVES", "parse_objective", "fastest", "needs_dispatcher", "alone", "as_option", "choose",
           "steady_arrays_share"]

#: The named objectives; a number is the third kind (``energy x time^W``).
OBJECTIVES = ("chip", "head")

#: Relative difference below which two times or energies are the same (float noise).
_SAME = 1e-12


def parse_objective(text) -> str | float:
    """``chip``, ``head``, or the weight ``W >= 0`` of ``energy x time^W``; a
    ValueError (one line) otherwise."""
    if text in OBJECTIVES:
        return text
    try:
        w = float(text)
    except (TypeError, ValueError):
        w = math.nan
    if not math.isfinite(w) or w < 0:
        raise ValueError(f"{text!r} is not an objective: give chip, head, or a weight W >= 0 of energy x time^W")
    return w


def fastest(head: dict) -> str:
    """The option a head takes on its own: the fewest engine cycles (the scheduler's
    lead counts; the tail is every option's), the first of equals."""
    options = head["qk_options"]
    return min(options, key=lambda name: options[name]["slots"] + options[name]["lead"])


def needs_dispatcher(fields: dict) -> bool:
    """Whether a schedule's figures (:data:`~sim.chip.chip.QK_FIELDS`) used a matcher or a scheduler."""
    return bool(fields.get("matcher")) or fields.get("scheduler_busy", 0) > 0


def alone(head: dict) -> dict:
    """A shard's ``head`` as an array without a dispatcher runs it: as it is if its
    schedule needs none, else the fastest of its schedules that need none (in
    channel order, or dense). A head without options is left as it is."""
    options = head.get("qk_options")
    if not options or not needs_dispatcher(head):
        return head
    free = [name for name, o in options.items() if not needs_dispatcher(o)]
    return as_option(head, min(free, key=lambda name: options[name]["slots"] + options[name]["lead"]))


def as_option(head: dict, name: str) -> dict:
    """A shard's ``head`` with its ``Q K^T`` figures those of the option ``name``."""
    return {**head, **head["qk_options"][name], "qk_ran_as": name}


def _better(new: dict, old: dict, objective) -> bool:
    # Layers (layer_cost's) compared under the objective.
    t1, e1, t0, e0 = new["time_s"], new["energy_j"], old["time_s"], old["energy_j"]
    if objective == "chip":
        if t1 < t0 * (1 - _SAME):
            return True
        return t1 <= t0 * (1 + _SAME) and e1 < e0 * (1 - _SAME)
    return e1 * t1 ** objective < e0 * t0 ** objective * (1 - _SAME)


def choose(results: list[dict], cost: Callable[[list[dict], list[dict]], dict], objective) -> tuple[list, dict]:
    """The shards ``results`` with each head's ``Q K^T`` as the chip chooses, and per
    step what the choice did.

    ``cost(heads, fill)`` prices one step's layer (:func:`sim.chip.layer.layer_cost`'s
    result) with ``heads`` (shard head dicts) running as they say and ``fill`` (the
    same heads at their fastest) in the steps that fill the pipeline. Shards
    written before heads kept their options are left as they ran.

    Per step: each head's ``fastest`` option and the one it ``ran``, the layer's
    ``time_s`` and ``energy_j`` before and after the choice, and the arrays'
    share of a pipelined step in full flow with what bounds it
    (:func:`steady_arrays_share`).

    The search is greedy: each round tries every head at every other option and
    takes the move that improves the objective most, until none does (a round
    costs ``heads x options`` layers, a step rarely more than a few rounds).
    """
    by_step: dict[int, list[int]] = {}
    for i, r in enumerate(results):
        by_step.setdefault(r["shard"][0], []).append(i)
    out = [dict(r) for r in results]
    decided = {}
    for step, rows in sorted(by_step.items()):
        heads = [results[i]["head"] for i in rows]
        if objective == "head" or not all(h.get("qk_options") for h in heads):
            continue
        fill = [as_option(h, fastest(h)) for h in heads]
        current = [fastest(h) for h in heads]
        start = best = cost(fill, fill)
        while True:
            trials = []
            for j, h in enumerate(heads):
                for name in h["qk_options"]:
                    if name == current[j]:
                        continue
                    picks = current[:j] + [name] + current[j + 1:]
                    value = cost([as_option(x, p) for x, p in zip(heads, picks)], fill)
                    if _better(value, best, objective):
                        trials.append((value, picks))
            if not trials:
                break
            top = trials[0]
            for t in trials[1:]:
                if _better(t[0], top[0], objective):
                    top = t
            best, current = top
        for i, h, name in zip(rows, heads, current):
            out[i] = {**results[i], "head": as_option(h, name)}
        share, bound = steady_arrays_share(best)
        decided[step] = {"fastest": [fastest(h) for h in heads], "ran": list(current),
                         "time_s": [start["time_s"], best["time_s"]],
                         "energy_j": [start["energy_j"], best["energy_j"]],
                         "arrays_share": share, "bound": bound}
    return out, decided


def steady_arrays_share(layer: dict) -> tuple[float, str]:
    """How much of a pipelined step in full flow (Q K^T, softmax and P V at once)
    the arrays are busy, and what sets the step's length: the slack a slower
    ``Q K^T`` schedule may take without costing time (``layer``:
    :func:`sim.chip.layer.layer_cost`'s)."""
    ops = layer["ops"]
    attn = ("qk", "softmax", "pv")
    arrays = ops["qk"]["compute_s"] + ops["pv"]["compute_s"]
    rivals = {"arrays": arrays, "softmax": ops["softmax"]["compute_s"],
              "global buffer": sum(ops[o]["global_buffer_s"] for o in attn),
              "accumulation buffer": sum(ops[o]["acc_buffer_s"] for o in attn),
              "DRAM": sum(ops[o]["memory_s"] for o in attn)}
    bound = max(rivals, key=rivals.get)
    return arrays / rivals[bound], bound
