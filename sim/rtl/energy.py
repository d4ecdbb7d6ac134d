"""Energy and time of a run: the cycle model's action counts
(:func:`golden.cycle_model.executed_products`), each PE's measured energy per
action (:mod:`synth.power`), and the clock the design's blocks meet at the chip
clock (:func:`run_clock`, :mod:`synth.timing`),
combined by :func:`golden.energy.workload_energy`; plus, for a Kaleido variant
with a dispatcher, its scheduler and matcher (:func:`golden.energy.unit_energy`)."""

from __future__ import annotations

from golden.cycle_model import (
    baseline_cycles,
    executed_products,
    kaleido_cycles,
    kaleido_tables,
    matcher_trace,
    scheduler_busy,
    variant_parts,
)
from golden.dispatchers import design_blocks
from golden.energy import unit_energy, workload_energy
from golden.head_cycles import pv_config
from golden.scheduler import operand_stream
from golden.tiling import pair_tables
from synth import clock_gate, flow, power, sta, timing
from synth.flow import SynthError
from synth.gatesim import GateSimError
from synth.power import TRACE_CYCLES, TRACE_TILES
from synth.sta import StaError

__all__ = ["run_energy", "run_clock", "chip_blocks", "dispatcher_energy", "head_energy", "SCOPE",
           "DISPATCHER_SCOPE", "HEAD_SCOPE"]

SCOPE = ("the PE array: clock, products, register loads, drain, leakage; and the dispatcher where "
         "the variant has one")

DISPATCHER_SCOPE = (
    "A dispatcher part the run does not use (a dense schedule) is clock-gated for the whole run: it "
    "costs its clock gate's cycle (a latch and an AND, synth/clock_gate.py) and its leakage. A part "
    "the run uses is clocked for the whole run. The scheduler is "
    "busy for its batches of Q's and K's strings when the run uses it, and is shared by the `clusters` "
    "arrays it feeds, as in the area split; the matcher, or the channel window in its place (one per "
    "array), is busy for every engine cycle "
    "of passes A-D when the run pairs, busy as its bench runs passes A-D in the engine's protocol. A busy "
    "cycle costs what the block spends on the run's own data, replayed on its gate netlist: the "
    f"matcher on {TRACE_TILES} whole tile groups spread over the run (their states and the channels each "
    f"pass streams), the scheduler on the first {TRACE_CYCLES} cycles of Q's string stream. The channel "
    "window is still measured on random data, an upper bound.")


HEAD_SCOPE = (
    "qk: as energy_scope says; softmax: the vector unit busy for every cycle of its stage (random-score "
    "activity), plus leakage; pv: the array's PEs (built for P V~'s reduction), every executed product a "
    "full one, one register load and drain per tile group. Every stage at the run's clock_mhz. The "
    "stages do not overlap.")


def chip_blocks(cfg, design: str, head: bool = False) -> dict:
    """``{label: (block, Config)}``: every block a design has on the chip (the
    dispatcher's parts ``cfg.variant`` has, whether or not a run uses them: they share its clock), the
    whole engine that joins them (``engine``: timed as one netlist, it holds the loops between
    the blocks, which each block alone hides), and with ``head`` the softmax unit and the P V~ array.
    (The P V~ engine, the same controller over a reduction of ``N`` keys, is not timed as a
    whole: at a real head its dispatcher would keep ``N`` entries.)"""

    if design == "kaleido":
        blocks = design_blocks(cfg, design)
        used = {"array": ("array", cfg)}
        for unit in (blocks.scheduler, blocks.unit):
            if unit:
                used[unit] = (unit, cfg)
        used["engine"] = ("engine", cfg)
    else:
        used = {"array": ("baseline-array", cfg), "engine": ("baseline-engine", cfg)}
    if head:
        used["softmax"] = ("softmax", cfg)
        used["pv array"] = (used["array"][0], pv_config(cfg))
    return used


def run_clock(cfg, design: str, liberty: str, head: bool = False) -> dict:
    """The chip clock (``chip_clock_mhz``, ``cfg.clock_mhz``) and the clock a design's
    blocks meet (``clock_mhz``): the chip clock if every block, and the whole engine,
    meets it, else the slowest one's fmax, named in ``slowest_block``; every block's
    ``slack_ns`` at the chip clock and ``fmax_mhz``, each mapped for the chip clock,
    and its hold and clock-gating slacks there."""

    blocks = {label: timing.block_timing(name, bcfg, liberty)
              for label, (name, bcfg) in chip_blocks(cfg, design, head).items()}
    slowest = min(blocks, key=lambda b: blocks[b]["fmax_mhz"])
    meets = blocks[slowest]["slack_ns"] >= 0
    return {"chip_clock_mhz": cfg.clock_mhz,
            "clock_mhz": cfg.clock_mhz if meets else blocks[slowest]["fmax_mhz"],
            "slowest_block": None if meets else slowest,
            "blocks_timing": {b: {"slack_ns": t["slack_ns"], "fmax_mhz": t["fmax_mhz"], "met": timing.meets(t),
                                  **{k: t.get(k) for k in ("hold_slack_ns", "gating_setup_slack_ns",
                                                           "gating_hold_slack_ns")}}
                              for b, t in blocks.items()}}


def dispatcher_energy(cfg, q, k, report, liberty: str, cycles: int, clock: float) -> dict:
    """``{"scheduler": pJ, "matcher": pJ}`` of the parts ``cfg.variant`` has over a run of
    ``cycles`` at ``clock`` MHz, as :data:`DISPATCHER_SCOPE` says."""

    blocks = design_blocks(cfg, "kaleido")
    used_scheduler, used_matcher = (variant_parts(report.ran_as) if report.schedule == "pairs"
                                    else (False, False))
    def measured(unit, trace, used):
        # Idle from the bench, busy from the run's own data where it has a trace;
        # a part the run leaves alone has its clock gated: its gate's cycle.
        e = power.energy_per_action(unit, cfg, liberty)
        if not used:
            return {"busy": 0.0, "idle": clock_gate.clock_gate_cost(liberty)["energy_pj"]["cycle"]}, e["leakage_uw"]
        per = dict(e["energy_pj"])
        if trace:
            per["busy"] = power.energy_per_action(unit, cfg, liberty, TRACE_CYCLES, trace)["energy_pj"]["run"]
        return per, e["leakage_uw"]

    out = {}
    if blocks.scheduler:
        busy = min(cycles, scheduler_busy(q, k, cfg)) if used_scheduler else 0
        strings, last = operand_stream(pair_tables(q, cfg), cfg)
        per, leak = measured("scheduler", (tuple(strings[:TRACE_CYCLES]), tuple(last[:TRACE_CYCLES])),
                             used_scheduler)
        out["scheduler"] = unit_energy(cycles, busy, per, leak, clock) / cfg.clusters
    if blocks.unit:
        # The unit in the matcher's place (golden.dispatchers), if it is more than a priority encoder.
        unit = blocks.unit
        busy = min(cycles, report.engine_cycles) if used_matcher else 0
        trace = (matcher_trace(*kaleido_tables(q, k, cfg), cfg, TRACE_TILES)
                 if blocks.traced and used_matcher else None)
        per, leak = measured(unit, trace, used_matcher)
        out[unit] = unit_energy(cycles, busy, per, leak, clock)
    return out


def run_energy(cfg, q, k, design: str, cycles: int, schedule: str = "auto",
               report=None, head: bool = False) -> dict:
    """``energy_pj`` and ``time_us`` of one ``Q K^T`` run at the clock its design's
    blocks meet (:func:`run_clock`'s figures, which it carries; ``head``: the
    whole head's blocks count too), or nulls with ``energy_note`` saying why they
    could not be measured here. ``energy_split_pj`` adds up to ``energy_pj``;
    ``dispatcher_pj`` is its dispatcher part. ``report``: the run's
    :class:`~golden.cycle_model.CycleReport`, when the caller has it."""

    liberty = flow.default_liberty()
    try:
        if liberty is None:
            raise SynthError("no liberty file (make setup fetches NanGate45)")
        sta.sta_command()
        if cfg.issue_window and not (design == "kaleido" and cfg.dispatch.parts[1]):
            cfg = cfg.with_(issue_window=0)         # the window comes with a matcher variant only
        per_action = power.energy_per_action(design_blocks(cfg, design).pe, cfg, liberty)
        timing = run_clock(cfg, design, liberty, head)
        clock = timing["clock_mhz"]
        if design == "kaleido" and report is None:
            report = kaleido_cycles(q, k, cfg, schedule=schedule)
        dispatcher = (dispatcher_energy(cfg, q, k, report, liberty, cycles, clock)
                      if design == "kaleido" else {})
    except (SynthError, StaError, GateSimError) as exc:
        return {"energy_pj": None, "time_us": None, "clock_mhz": None, "chip_clock_mhz": cfg.clock_mhz,
                "energy_note": str(exc)}
    if design == "kaleido":
        counts = executed_products(q, k, cfg, report)
        full, nibble = counts["full_products"], counts["nibble_products"]
        passes = counts["passes"] * counts["tiles"]
    else:
        base = baseline_cycles(q.shape[0], k.shape[0], cfg)
        full, nibble, passes = q.shape[0] * k.shape[0] * q.shape[1], 0, base.tiles
    res = workload_energy(cycles, cfg.rows, cfg.cols, full, nibble, passes,
                          per_action["energy_pj"], per_action["leakage_uw"], clock)
    for part, pj in dispatcher.items():
        res["energy_split_pj"][f"dispatcher_{part}"] = pj
    res["dispatcher_pj"] = sum(dispatcher.values())
    res["energy_pj"] += res["dispatcher_pj"]
    res["energy_scope"] = SCOPE
    res.update(timing)
    if dispatcher:
        res["dispatcher_scope"] = DISPATCHER_SCOPE
    return res


def head_energy(cfg, design: str, stages: dict, qk: dict) -> dict:
    """``head_energy_pj``, its split by stage and ``head_time_us`` of a whole head
    whose ``S~`` stage measured ``qk`` (:func:`run_energy`'s result), as
    :data:`HEAD_SCOPE` says; ``stages`` holds each stage's ``cycles``. Nulls and
    a note when the figures cannot be measured here."""

    if qk.get("energy_pj") is None:
        return {"head_energy_pj": None, "head_time_us": None}
    liberty = flow.default_liberty()
    pv_cfg = pv_config(cfg)
    pe = "pe" if design == "kaleido" else "baseline-pe"
    clock = qk["clock_mhz"]           # the chip's: every stage runs at the clock its slowest block meets
    try:
        soft = power.energy_per_action("softmax", cfg, liberty)
        per_action = power.energy_per_action(pe, pv_cfg, liberty)
    except (SynthError, StaError, GateSimError) as exc:
        return {"head_energy_pj": None, "head_time_us": None, "head_energy_note": str(exc)}
    n, d = cfg.tokens, cfg.head_dim
    soft_cycles, pv_cycles = stages["softmax"]["cycles"], stages["pv"]["cycles"]
    # Every P V~ product is a full one: n*n*d of them dense, fewer where V's reuse folds keys.
    full = stages["pv"].get("executed_macs", n * n * d)
    passes = stages["pv"].get("tile_groups", baseline_cycles(n, d, pv_cfg).tiles)
    pv = workload_energy(pv_cycles, cfg.rows, cfg.cols, full, 0, passes, per_action["energy_pj"],
                         per_action["leakage_uw"], clock)
    split = {"qk": qk["energy_pj"],
             "softmax": unit_energy(soft_cycles, soft_cycles, soft["energy_pj"], soft["leakage_uw"], clock),
             "pv": pv["energy_pj"]}
    return {"head_energy_pj": sum(split.values()), "head_energy_split_pj": split,
            "head_time_us": qk["time_us"] + soft_cycles / clock + pv["time_us"],
            "head_energy_scope": HEAD_SCOPE}
