"""``kaleido estimate``: Kaleido's chip against the baseline chip on a whole video
diffusion transformer, from sampled heads, on Dask.

A model's attention heads are independent *shards*, one per (step, layer,
head). Each shard builds its head's ``Q``, ``K`` and ``V`` (:func:`shard_operands`: the
workload at the step's noise level, the layer and head choosing the synthetic
model's seed) and prices its ``Q K^T`` on one array with the fast cycle model
and its ``P V~`` with V's folds (:func:`sim.chip.chip.kaleido_head`). A model has tens of thousands of shards, so
an estimate computes a stratified sample of them, the same number from each
step (the noise level is what changes the work), and scales each step's mean
to its ``layers x heads`` shards; the interval adds the spread between sampled
heads to each head's own. Every computed shard is written to ``DIR/shards/`` as
it finishes, so a run that stops resumes where it was.

The chip then runs each step's layers (:func:`sim.chip.layer.layer_cost`) for both
designs, with the sign-off's own figures (:func:`signoffs`) at the chip's node,
and for a third: the baseline chip with as many arrays as fit in Kaleido's
chip's area.

Shards run on a Dask cluster: a :class:`distributed.LocalCluster` of this
machine's cores by default, or the scheduler at ``--scheduler ADDRESS``, where
every worker needs this project installed (``pip install -e .``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import asdict, replace
from pathlib import Path
from statistics import NormalDist

import numpy as np

from golden import Config, proxy_workload, quantize
from golden.cycle_model import kaleido_tables, matcher_trace
from golden.dispatchers import design_blocks
from golden.softmax import row_cycles, softmax_spec
from golden.structure import SHUFFLE_SEED, structure
from golden.video import video_workload
from synth.area import block_area
from synth.clock_gate import clock_gate_cost
from synth.kits import signed_at
from synth.power import TRACE_CYCLES, TRACE_TILES, energy_per_action

from .activations import archive, archive_operands, captured_cells
from .chip import CHIP_LIMITS, DESIGNS, OPS, UNITS, Chip, HeadWork, SignOff, Unit, baseline_head, kaleido_head
from .cluster import dask_client
from .kinds import ALONE, chip_area, head_shares, kinds_of
from .layer import RESOURCES, layer_cost
from .memories import TABLE as MEMORY_TABLE
from .qk_schedule import alone, as_option, choose
from .qk_schedule import fastest as qk_fastest
from .reuse_where import reuse_where
from .vdits import VDiT, flow_sigmas

__all__ = ["WORKLOADS", "ACTIVATIONS", "workload_tag", "structure_by_step", "representative_trace", "computed_steps",
           "shard_config", "shard_operands", "run_shard", "plan_shards", "signoffs", "run_estimate",
           "summarize", "layer_pricer", "iso_area_arrays", "compute_shards"]

#: ``video``: a real clip at the model's grid, noised per step by the sampler's
#: flow-matching schedule; ``proxy``: the panned photograph, the same at every step.
WORKLOADS = ("video", "proxy")

#: A real model's activations from an archive (:mod:`sim.chip.activations`):
#: the workload of ``--activations DIR``, the folder standing where a clip would.
ACTIVATIONS = "activations"

DEFAULT_CLIP = "bigbuckbunny"

#: What a shard holds, in its file's name: P V~ and the linear layers beside Q K^T,
#: every Q K^T schedule's figures for the chip to choose between, and the head's
#: structure (:mod:`golden.structure`); a shard written before them is computed
#: again, not read as dense or as fixed.
SHARD_FORMAT = "qk-options-ports"

#: The head size the softmax unit's sign-off figures are measured at (:func:`signoffs`).
SOFTMAX_REFERENCE_GRID = (8, 16, 16)


def shard_config(model: VDiT, resolution: str, chip: Chip, **design) -> Config:
    """The design point of one head of ``model`` at ``resolution`` on ``chip``'s arrays."""
    if model.partition is not None:
        return Config(partition=model.partition, grid=model.grid(resolution), array=chip.array, **design)
    return Config.for_model(model.name, model.head_dim, grid=model.grid(resolution), array=chip.array, **design)


def shard_operands(model: VDiT, cfg: Config, workload: str, step: int, layer: int, head: int,
                   clip: str = DEFAULT_CLIP):
    """int8 ``Q``, ``K``, ``V`` of one head, its softmax scale ``sQ sK / sqrt(D)``,
    and the head's slice (``D`` channels) of the hidden state they are projected
    from: the synthetic model's seed comes from the layer and head, the noise
    level from the step."""
    if workload == ACTIVATIONS:
        return archive_operands(clip, step, layer, head, cfg.head_dim)
    seed = 1 + 1000 * layer + head
    if workload == "proxy":
        w = proxy_workload(cfg, seed=seed)
    elif workload == "video":
        sigma = flow_sigmas(model.steps, model.flow_shift)[step]
        w = video_workload(cfg, clip, noise=min(1.0, sigma), seed=seed)
    else:
        raise ValueError(f"unknown workload {workload!r}; choose one of {', '.join(WORKLOADS)}")
    (q, sq), (k, sk), (v, _) = quantize(w["q"]), quantize(w["k"]), quantize(w["v"])
    x = quantize(np.ascontiguousarray(w["x"][:, :cfg.head_dim]))[0]
    return q, k, v, sq * sk / math.sqrt(cfg.head_dim), x


def run_shard(model: VDiT, cfg: Config, workload: str, shard: tuple[int, int, int], samples: int | None,
              clip: str = DEFAULT_CLIP) -> dict:
    """One shard's head work (a Dask task: arguments and result are plain data)."""
    start = time.perf_counter()
    operands = shard_operands(model, cfg, workload, *shard, clip)
    out = shard_work(cfg, shard, operands, samples)
    middle = time.perf_counter()
    # The structure the head's reuse rests on, beside its oracle (its shuffle is the control).
    found = structure(operands[0], operands[1], cfg, SHUFFLE_SEED)
    end = time.perf_counter()
    return {**out, "structure": found, "seconds": end - start, "structure_seconds": end - middle}


def shard_work(cfg: Config, shard: tuple[int, int, int], operands: tuple, samples: int | None) -> dict:
    """The head work of one ``(step, layer, head)`` on its ``operands``
    (:func:`shard_operands`' five), as a shard holds it: what ``kaleido quality``
    measures its own run with, so its reductions are an estimate's."""
    step, layer, head = shard
    q, k, v, scale, x = operands
    work = kaleido_head(q, k, cfg, samples=samples, seed=step * 7919 + layer * 97 + head, v=v, scale=scale, x=x)
    return {"shard": list(shard), "head": asdict(work)}


def computed_steps(model: VDiT, steps: int | None) -> list[int]:
    """The denoising steps whose heads are computed: all of them, or ``steps``
    spread evenly from the first to the last (each then stands for its nearest
    model steps: a coarser stratification, for quick runs)."""
    if steps is None or steps >= model.steps:
        return list(range(model.steps))
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    return sorted({round(i * (model.steps - 1) / max(1, steps - 1)) for i in range(steps)})


def plan_shards(model: VDiT, per_step: int, seed: int = 0, steps: int | None = None,
                captured: dict | None = None) -> list[tuple[int, int, int]]:
    """``per_step`` distinct (layer, head) drawn at random for every computed step
    (all of them when ``per_step`` covers the step). ``captured`` (an archive's
    ``{step: [(layer, head), ...]}``) limits the draw to what was captured."""
    rng = np.random.default_rng(seed)
    if captured is None:
        every = [(layer, head) for layer in range(model.layers) for head in range(model.heads)]
        captured = {step: every for step in computed_steps(model, steps)}
    out = []
    for step, cells in sorted(captured.items()):
        picks = np.arange(len(cells)) if per_step >= len(cells) else rng.choice(len(cells), per_step, replace=False)
        out += [(step, *cells[int(c)]) for c in sorted(picks)]
    return out


def signoffs(cfg: Config, liberty: str, matcher_trace=None) -> dict[str, SignOff]:
    """Both designs' blocks, measured by this project's flow at ``cfg``'s design
    point (area, energy per action, leakage) on ``liberty``'s cells, at the node
    and supply of its kit; minutes the first time, cached after.
    With ``matcher_trace`` (:func:`representative_trace`) the matcher's busy cycle
    costs what that head's own data costs, not the random-data bound."""

    blocks = design_blocks(cfg, "kaleido")

    def unit(block, at=cfg):
        e = energy_per_action(block, at, liberty)
        per = dict(e["energy_pj"])
        if block == blocks.unit and blocks.traced and matcher_trace:
            per["busy"] = energy_per_action(block, at, liberty, TRACE_CYCLES, matcher_trace)["energy_pj"]["run"]
        return Unit(block_area(block, at, liberty)["area_um2"], per, e["leakage_uw"], e["measured_at_mhz"])

    node = signed_at(liberty)
    # The softmax unit's widths grow with a row's length by a few bits; it is
    # measured once, at the default head size, for every model and resolution
    # (a 32,760-token row would synthesize and simulate a new unit each time).
    softmax = unit("softmax", cfg.with_(grid=SOFTMAX_REFERENCE_GRID, max_channels=None, acc_bits=None,
                                        pe_acc_bits=None))
    # The variant's dispatcher parts, and the PEs beside its unit (golden.dispatchers).
    gate = Unit(**clock_gate_cost(liberty))
    kaleido = SignOff(node, unit(blocks.pe), softmax, cfg.vector_lanes,
                      scheduler=unit(blocks.scheduler) if blocks.scheduler else None,
                      matcher=unit(blocks.unit) if blocks.unit else None,
                      clusters=cfg.clusters, clock_gate=gate)
    baseline = SignOff(node, unit("baseline-pe"), softmax, cfg.vector_lanes, clock_gate=gate)
    return {"kaleido": kaleido, "baseline": baseline}


def representative_trace(model: VDiT, cfg: Config, workload: str, clip: str, steps: int | None) -> tuple:
    """What the matcher sees on one head of the run (layer 0, head 0, the middle
    computed step): :func:`golden.cycle_model.matcher_trace` of its tables as
    ``cfg``'s scheduler orders them."""

    if workload == ACTIVATIONS:
        a = archive(clip)
        step, layer, head = a.steps[len(a.steps) // 2], a.layers[0], a.heads[0]
    else:
        picked = computed_steps(model, steps)
        step, layer, head = picked[len(picked) // 2], 0, 0
    q, k, *_ = shard_operands(model, cfg, workload, step, layer, head, clip)
    return matcher_trace(*kaleido_tables(q, k, cfg), cfg, TRACE_TILES)


def _mixed(kinds: dict) -> HeadWork:
    """The Kaleido kinds' heads as one: each product count weighted by the share of
    the heads its kind runs (:func:`sim.chip.kinds.head_shares`)."""
    mine = {name: k for name, k in kinds.items() if name != "baseline"}
    share = head_shares(mine)
    pick = lambda field: sum(share[n] * getattr(k.work, field) for n, k in mine.items())
    first = next(iter(mine.values())).work
    return replace(first, full_products=pick("full_products"), nibble_products=pick("nibble_products"))


def _both(results: list[dict], model: VDiT, z: float) -> dict:
    """Per step, ``{kaleido: mean head, kaleido-alone: mean head}``: the heads as
    the arrays with a dispatcher run them, and as those without one do
    (:func:`sim.chip.qk_schedule.alone`)."""
    coupled = _combine(results, model, z)
    by_itself = _combine([{**r, "head": alone(r["head"])} for r in results], model, z)
    return {step: {"kaleido": coupled[step], ALONE: by_itself[step]} for step in coupled}


def _combine(results: list[dict], model: VDiT, z: float) -> dict:
    """Per step: the mean head and the variance of each figure's step total."""
    by_step = {}
    for r in results:
        by_step.setdefault(r["shard"][0], []).append(r["head"])
    cells = model.layers * model.heads
    steps = {}
    for step, heads in sorted(by_step.items()):
        flags = ("matcher", "paired", "qk_options", "qk_ran_as") + _PER_ROLE
        mean = {k: float(np.mean([h[k] for h in heads])) for k in heads[0]
                if k not in flags and all(h.get(k) is not None for h in heads)}
        for k in _PER_ROLE:                 # {role: figures} (captured inputs): averaged per role and figure
            if all(h.get(k) for h in heads):
                mean[k] = _mean_dicts([h[k] for h in heads])
        # The shares of heads that ran with the matcher, and paired. Shards written
        # before heads said whether they ran paired: a head with a dispatcher at work did.
        mean["matcher"] = float(np.mean([bool(h["matcher"]) for h in heads]))
        mean["paired"] = float(np.mean([bool(h.get("paired", h["matcher"] or h["scheduler_busy"] > 0))
                                        for h in heads]))
        slots = np.array([h["slots"] for h in heads])
        own = sum(((h["slots_high"] - h["slots_low"]) / (2 * z)) ** 2 for h in heads) / len(heads) ** 2
        spread = slots.var(ddof=1) / len(heads) * (1 - len(heads) / cells) if 1 < len(heads) < cells else 0.0
        half = z * math.sqrt(own + spread)
        mean["slots_low"], mean["slots_high"] = mean["slots"] - half, mean["slots"] + half
        steps[step] = HeadWork(**{k: (int(round(v)) if k in ("lead", "scheduler_busy") else v)
                                  for k, v in mean.items()})
    return steps


#: HeadWork's fields that hold a figure per linear layer.
_PER_ROLE = ("linear_roles", "linear_oracle")


def _mean_dicts(items: list):
    """The mean of nested dicts of numbers, each key over the items that have it
    (HunyuanVideo's single-stream blocks have no output projection of their own:
    the layers that have one stand for the layer type)."""
    if not isinstance(items[0], dict):
        return float(np.mean(items))
    keys = set(items[0]).union(*items[1:])
    return {k: _mean_dicts([i[k] for i in items if k in i]) for k in sorted(keys)}


def iso_area_arrays(chip: Chip, kinds: dict, signs: dict, base_head: HeadWork) -> int:
    """The arrays of a baseline chip as big as ``kinds``'s chip: the baseline's
    area is its arrays' (a plain array and its clock gate each) plus what does not
    scale with them (the vector unit, the SRAM)."""

    def area(arrays):
        c = replace(chip, arrays=arrays)
        return chip_area(kinds_of("baseline", c, {"baseline": base_head}, signs), c)["total"]
    per = area(2) - area(1)
    fixed = area(1) - per
    target = chip_area(kinds, chip)["total"]
    return int(min(CHIP_LIMITS["arrays"], max(1, (target - fixed) // per)))


def _price(model: VDiT, tokens: int, chip: Chip, design: str, heads: dict, stands_for: dict, base_head: HeadWork,
           signs: dict, per_row: int, cross: int, dense_factor: float = 1.0, fill: dict | None = None) -> dict:
    """One design's whole model: time (with its interval, and serially), energy
    (with its interval), both by operation, energy by unit, each operation's
    resources' seconds and what bounds it, and area. ``fill``: per computed
    step, the head whose Q K^T fills the pipeline (each head at its fastest),
    where the chip chose otherwise for the rest."""
    repeat = model.layers * model.passes_per_step
    total = {"time_s": 0.0, "time_low_s": 0.0, "time_high_s": 0.0, "serial_time_s": 0.0, "energy_j": 0.0,
             "energy_low_j": 0.0, "energy_high_j": 0.0, "time_by_op_s": dict.fromkeys(OPS, 0.0),
             "energy_by_op_j": dict.fromkeys(OPS, 0.0), "energy_by_unit_j": dict.fromkeys(UNITS, 0.0),
             "resource_s": {op: dict.fromkeys(RESOURCES, 0.0) for op in OPS}}
    kinds = None
    for step in range(model.steps):
        head = heads[stands_for[step]]          # {kaleido: HeadWork, kaleido-alone: HeadWork}
        kinds = kinds_of(design, chip, {**head, "baseline": base_head}, signs, dense_factor)
        filled = fill.get(stands_for[step]) if fill and design == "kaleido" else None
        fill_kinds = kinds_of(design, chip, {**filled, "baseline": base_head}, signs,
                              dense_factor) if filled else None
        layer = layer_cost(model, tokens, kinds, chip, per_row, cross, fill_kinds)
        # The energy interval: the layer again at the ends of the slots' interval
        # (the products held at their estimates).
        for end, key in (("slots_low", "energy_low_j"), ("slots_high", "energy_high_j")):
            ends = {name: replace(h, slots=getattr(h, end)) for name, h in head.items()}
            at = kinds_of(design, chip, {**ends, "baseline": base_head}, signs, dense_factor)
            total[key] += repeat * layer_cost(model, tokens, at, chip, per_row, cross, fill_kinds)["energy_j"]
        total["time_s"] += repeat * layer["time_s"]
        total["time_low_s"] += repeat * layer["time_interval_s"][0]
        total["time_high_s"] += repeat * layer["time_interval_s"][1]
        total["serial_time_s"] += repeat * layer["serial_time_s"]
        total["energy_j"] += repeat * layer["energy_j"]
        for op, o in layer["ops"].items():
            total["time_by_op_s"][op] += repeat * o["time_s"]
            total["energy_by_op_j"][op] += repeat * o["energy_total_j"]
            for r in RESOURCES:
                total["resource_s"][op][r] += repeat * o[_RESOURCE_KEYS[r]]
        for unit, j in layer["energy_by_unit_j"].items():
            total["energy_by_unit_j"][unit] += repeat * j
        total["linear_ran_dense"] = sorted(set(total.get("linear_ran_dense", [])) | set(
            layer["ops"]["linear"]["ran_dense"]))
    # The interval's ends are priced apart from the estimate; where an end is the
    # estimate (no interval), their sums may part in the last bit.
    total["energy_low_j"] = min(total["energy_low_j"], total["energy_j"])
    total["energy_high_j"] = max(total["energy_high_j"], total["energy_j"])
    total["bound_by_op"] = {op: max(RESOURCES, key=lambda r: t[r]) for op, t in total["resource_s"].items()}
    total["area_mm2"] = chip_area(kinds, chip)
    total["arrays"] = chip.arrays
    return total


#: A layer's operation's key for each resource's seconds.
_RESOURCE_KEYS = {"compute": "compute_s", "global_buffer": "global_buffer_s", "acc_buffer": "acc_buffer_s",
                  "dram": "memory_s"}


#: What an estimate on an activation archive stands on (its summary's ``scope``).
ARCHIVE_SCOPE = ("Q K^T, P V~ and every linear layer whose input was captured (the QKV, output and MLP "
                 "projections, a cross-attention's query and output) reuse at the captured activations' own level, "
                 "per head from the fast models; the text's projections, attention to the text and softmax dense; "
                 "the captured steps and heads stand for the model's others, as sampled heads do. "
                 "Activations from the archive's model, with the weights it names ({weights}).")


def layer_pricer(model: VDiT, tokens: int, chip: Chip, signs: dict, base_head: HeadWork, per_row: int, cross: int,
                 dense_factor: float = 1.0, z: float = 1.96):
    """``cost(heads, fill)``: one layer on Kaleido's chip (:func:`~sim.chip.layer.layer_cost`)
    with the mean of ``heads`` (shard head dicts), and of ``fill`` in the steps that
    fill the pipeline; what :func:`sim.chip.qk_schedule.choose` weighs."""
    def kinds(hs):
        mean = _both([{"shard": [0, 0, 0], "head": h} for h in hs], model, z)[0]
        return kinds_of("kaleido", chip, {**mean, "baseline": base_head}, signs, dense_factor)

    def cost(heads, fill):
        return layer_cost(model, tokens, kinds(heads), chip, per_row, cross, kinds(fill))
    return cost


def summarize(model: VDiT, resolution: str, chip: Chip, cfg: Config, results: list[dict],
              signs: dict[str, SignOff], confidence: float = 0.95, dense_factor: float = 1.0,
              objective="chip") -> dict:
    """The whole model on both chips, and on the baseline chip of Kaleido's area,
    from the computed shards. ``dense_factor`` below 1 is a what-if: Kaleido's
    arrays need that share of P V's and the linear layers' dense slots.
    ``objective`` chooses each head's Q K^T schedule (:mod:`sim.chip.qk_schedule`)."""
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    tokens = cfg.tokens
    if not results:
        raise ValueError("no shard computed")
    base_head = baseline_head(tokens, model.head_dim, chip.rows, chip.cols)
    spec = softmax_spec(tokens + (model.text_tokens if model.joint_text else 0), cfg.acc_bits)
    per_row = row_cycles(spec, cfg.vector_lanes)
    # A model with cross-attention to its text (not joint) has rows a text long too.
    cross = 0 if model.joint_text else row_cycles(softmax_spec(model.text_tokens, cfg.acc_bits), cfg.vector_lanes)

    step_cost = layer_pricer(model, tokens, chip, signs, base_head, per_row, cross, dense_factor, z)
    fastest = _both([{**r, "head": as_option(r["head"], qk_fastest(r["head"]))} if r["head"].get("qk_options")
                     else r for r in results], model, z)
    results, decided = choose(results, step_cost, objective)
    heads = _both(results, model, z)
    # Each model step takes the head work of the nearest computed step.
    computed = sorted(heads)
    stands_for = {step: min(computed, key=lambda c: (abs(c - step), c)) for step in range(model.steps)}
    args = (heads, stands_for, base_head, signs, per_row, cross)
    fill = {step: fastest[step] for step in decided}
    out = {d: _price(model, tokens, chip, d, *args, dense_factor, fill) for d in DESIGNS}
    first = heads[computed[0]]
    iso = replace(chip, arrays=iso_area_arrays(chip, kinds_of("kaleido", chip, {**first, "baseline": base_head},
                                                              signs), signs, base_head))
    out["baseline_iso_area"] = _price(model, tokens, iso, "baseline", *args)
    k, b, i = out["kaleido"], out["baseline"], out["baseline_iso_area"]
    weights = {c: sum(1 for s in stands_for.values() if s == c) for c in computed}
    # Q K^T's products as they ran: each Kaleido kind's head, on its share of the heads.
    mixed = {c: _mixed(kinds_of("kaleido", chip, {**pair, "baseline": base_head}, signs)) for c, pair in heads.items()}
    dense = sum(weights[c] * h.dense_macs for c, h in mixed.items())
    executed = sum(weights[c] * (h.full_products + h.nibble_products / 2) for c, h in mixed.items())
    oracle = sum(weights[c] * h.oracle_macs for c, h in mixed.items())
    coupled = {c: pair["kaleido"] for c, pair in heads.items()}   # P V's and the linear layers' are both kinds'

    over = {d: sorted(op for op, r in v["bound_by_op"].items() if r in ("global_buffer", "acc_buffer"))
            for d, v in out.items()}
    return {
        "model": model.name, "resolution": resolution, "tokens": tokens, "grid": list(cfg.grid),
        "config": json.loads(cfg.to_json()),
        "chip": asdict(chip), "confidence": confidence, "designs": out,
        "speedup": b["time_s"] / k["time_s"],
        "speedup_interval": [b["time_s"] / k["time_high_s"], b["time_s"] / k["time_low_s"]],
        "serial_speedup": b["serial_time_s"] / k["serial_time_s"],
        "energy_ratio": k["energy_j"] / b["energy_j"],
        "energy_ratio_interval": [k["energy_low_j"] / b["energy_j"], k["energy_high_j"] / b["energy_j"]],
        "area_overhead": k["area_mm2"]["total"] / b["area_mm2"]["total"] - 1,
        "iso_area": {"arrays": iso.arrays, "speedup": i["time_s"] / k["time_s"],
                     "speedup_interval": [i["time_s"] / k["time_high_s"], i["time_s"] / k["time_low_s"]],
                     "energy_ratio": k["energy_j"] / i["energy_j"]},
        "sram_bound_ops": over,
        "dispatcher_energy_share": k["energy_by_unit_j"].get("dispatcher", 0.0) / k["energy_j"],
        "qk_operation_reduction": {"hardware": 1 - executed / dense, "oracle": 1 - oracle / dense},
        "shards": len(results), "computed_steps": computed, "memory_table": MEMORY_TABLE,
        "structure": structure_by_step(results, weights),
        "pv": _pv_summary(coupled, weights, model.head_dim, chip.cols, tokens),
        "reuse": reuse_where(results, tokens, model.head_dim, decided),
        "qk_objective": objective,
        # The layers whose windows the chip left unused in some step (slower, or dearer, than dense).
        "linear": {**_linear_summary(coupled, weights), "ran_dense": k["linear_ran_dense"]},
        "scope": ("Q K^T per head from the cycle model (sampled heads, sampled tile groups); P V~ per head from its "
                  "fast model (V's folds, exact per head); the QKV projection, Wan2.1's cross-attention query and the "
                  "MLP's first layer from each head's slice of the hidden state (window reuse, exact per slice); "
                  "the output projections and the MLP's second layer dense (no workload for their inputs); "
                  "softmax dense on both designs; "
                  "attention pipelined by blocks of queries unless the "
                  "chip says serial; each operation bound by the busiest of its arrays, SRAM banks and DRAM. "
                  "The workloads are this project's, not the models' activations."),
    }


def structure_by_step(results: list[dict], weights: dict) -> dict | None:
    """The heads' structure (:func:`golden.structure.structure`) per computed step,
    and over the model's steps (each computed step weighted by the steps it
    stands for): the oracle, the shuffled oracle, the structured reuse, and the
    common share of Q and K with RoPE undone. None where a shard lacks it."""
    if not results or any("structure" not in r for r in results):
        return None
    by_step = {}
    for r in results:
        by_step.setdefault(r["shard"][0], []).append(r["structure"])

    def figures(found):
        return {**{k: float(np.mean([f["reuse"][k] for f in found])) for k in ("oracle", "shuffled", "structured")},
                **{f"{op}_common_share": float(np.mean([f[op]["derotated"]["all"] or 0.0 for f in found]))
                   for op in ("q", "k")}}
    steps = {step: figures(found) for step, found in sorted(by_step.items())}
    total = sum(weights[s] for s in steps)
    mean = {k: sum(weights[s] * v[k] for s, v in steps.items()) / total for k in next(iter(steps.values()))}
    seconds = sum(r.get("structure_seconds", 0.0) for r in results)
    return {"by_step": steps, "mean": mean, "seed": results[0]["structure"]["reuse"]["seed"], "seconds": seconds}


def _linear_summary(heads: dict, weights: dict) -> dict:
    """The linear layers that take the hidden state, over the model's steps: the
    share of heads whose windows ran, and the slots saved against dense."""
    if all(h.linear_roles for h in heads.values()):
        roles = sorted(set.union(*(set(h.linear_roles) for h in heads.values())))
        def share(r, key):              # over the steps whose heads have the layer
            have = {c: h for c, h in heads.items() if r in h.linear_roles}
            return sum(weights[c] * h.linear_roles[r][key] for c, h in have.items()) / sum(weights[c] for c in have)
        return {"by_role": {r: {"windows_heads": share(r, "linear_windows"),
                                "slot_reduction": 1 - share(r, "linear_slots")} for r in roles},
                "windows_heads": None, "slot_reduction": None}
    if any(h.linear_slots is None for h in heads.values()):
        return {"windows_heads": None, "slot_reduction": None}
    total = sum(weights.values())
    return {"windows_heads": sum(weights[c] * h.linear_windows for c, h in heads.items()) / total,
            "slot_reduction": 1 - sum(weights[c] * h.linear_slots for c, h in heads.items()) / total}


def _pv_summary(heads: dict, weights: dict, head_dim: int, cols: int, tokens: int) -> dict:
    """P V~ over the model's steps: the share of heads whose V folds ran, and the
    keys the arrays step through, less than dense (None where a step lacks them)."""
    if any(h.pv_keys is None for h in heads.values()):
        return {"shared_heads": None, "key_reduction": None}
    total = sum(weights.values())
    shared = sum(weights[c] * h.pv_shared for c, h in heads.items()) / total
    keys = sum(weights[c] * h.pv_keys for c, h in heads.items()) / total
    return {"shared_heads": shared, "key_reduction": 1 - keys / (-(-head_dim // cols) * tokens)}


def run_estimate(model: VDiT, resolution: str, chip: Chip, workload: str, out_dir: str, per_step: int,  # noqa: PLR0913
                 samples: int | None, signs: dict[str, SignOff], scheduler: str | None = None,
                 workers: int | None = None, seed: int = 0, clip: str = DEFAULT_CLIP, progress=None,
                 steps: int | None = None, objective="chip", **design) -> dict:
    """Compute the planned shards on Dask (skipping those ``out_dir/shards`` holds),
    then :func:`summarize` (``objective``: how each head's Q K^T schedule is
    chosen). ``progress(done, total)`` follows the shards."""
    with dask_client(scheduler, workers) as client:
        cfg, results = compute_shards(client, model, resolution, chip, workload, out_dir, per_step, samples, seed,
                                      clip, progress, steps, **design)
    summary = summarize(model, resolution, chip, cfg, results, signs, objective=objective)
    summary.update(workload=workload, per_step=per_step, tile_samples=samples,
                   shard_seconds=sum(r["seconds"] for r in results))
    if workload == ACTIVATIONS:
        a = archive(clip)
        summary["scope"] = ARCHIVE_SCOPE.format(weights=a.manifest["model"]["weights"])
        summary["activations"] = {"path": os.path.abspath(clip), "trained": a.trained, "steps": a.steps,
                                  "layers": a.layers, "heads": a.heads,
                                  "sigmas": {st["index"]: st["sigma"] for st in a.manifest["steps"]}}
    return summary


def compute_shards(client, model: VDiT, resolution: str, chip: Chip, workload: str, out_dir: str, per_step: int,
                   samples: int | None, seed: int = 0, clip: str = DEFAULT_CLIP, progress=None,
                   steps: int | None = None, **design) -> tuple[Config, list[dict]]:
    """The design point of the heads and every planned shard's result: read from
    ``out_dir/shards``, or computed on ``client`` (a callable giving a Dask client,
    asked only when a shard is missing) and written there as each finishes."""
    from dask.distributed import as_completed

    cfg = shard_config(model, resolution, chip, **design)
    # Made when the first shard is written: a run that cannot start leaves nothing.
    shard_dir = Path(out_dir) / "shards"
    key = (f"{model.name}-{resolution}-{workload}-{workload_tag(workload, clip)}-{samples}-{hash_config(cfg)}"
           f"-{SHARD_FORMAT}")
    captured = None
    if workload == ACTIVATIONS:
        captured = captured_cells(archive(clip))
    plan = plan_shards(model, per_step, seed, steps, captured)
    results, todo = [], []
    for shard in plan:
        path = shard_dir / f"{key}-{shard[0]}-{shard[1]}-{shard[2]}.json"
        if path.exists():
            results.append(json.loads(path.read_text()))
        else:
            todo.append((shard, path))
    if progress:
        progress(len(results), len(plan))
    if todo:
        c = client()
        futures = {c.submit(run_shard, model, cfg, workload, shard, samples, clip, pure=False): path
                   for shard, path in todo}
        for fut in as_completed(futures):
            r = fut.result()
            shard_dir.mkdir(parents=True, exist_ok=True)
            # A name of this process's own, should another run share the folder.
            tmp = futures[fut].with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(r))
            os.replace(tmp, futures[fut])
            results.append(r)
            if progress:
                progress(len(results), len(plan))
    return cfg, results


def workload_tag(workload: str, clip: str) -> str:
    """What a shard's name says of its operands beyond the workload: the clip of a
    video workload (a bundled name, or a short hash of a file's path), so that a
    rerun with another clip never reuses the old clip's heads."""
    if workload == ACTIVATIONS:
        # The archive's own manifest names it: another capture into the same folder is another workload.
        with open(os.path.join(clip, "manifest.json"), "rb") as fh:
            return "archive" + hashlib.sha256(fh.read()).hexdigest()[:10]
    if workload != "video":
        return "synthetic"
    if clip.replace("_", "").isalnum():
        return clip
    return "file" + hashlib.sha256(os.path.abspath(clip).encode()).hexdigest()[:10]


def hash_config(cfg: Config) -> str:
    """A short name of a design point, for its shards' file names. The clock is
    left out: a shard holds cycles and counts, which no clock changes, so the
    estimates of one design point on two cell libraries share their shards."""
    return hashlib.sha256(cfg.with_(clock_mhz=1.0).to_json().encode()).hexdigest()[:12]
