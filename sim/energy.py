"""Energy and time of a run: the cycle model's action counts
(:func:`golden.cycle_model.executed_products`), each PE's measured energy per
action (:mod:`synth.power`), and the array's clock (:mod:`synth.timing`),
combined by :func:`golden.energy.workload_energy`; plus, for a Kaleido variant
with a dispatcher, its scheduler and matcher (:func:`golden.energy.unit_energy`)."""

from __future__ import annotations

from golden.cycle_model import (baseline_cycles, executed_products, kaleido_cycles, scheduler_busy,
                                variant_parts)
from golden.energy import unit_energy, workload_energy

__all__ = ["run_energy", "dispatcher_energy", "SCOPE", "DISPATCHER_SCOPE"]

SCOPE = ("the PE array: clock, products, register loads, drain, leakage; and the dispatcher where "
         "the variant has one")

DISPATCHER_SCOPE = (
    "The variant's dispatcher parts are clocked for the whole run (no clock gating). The scheduler is "
    "busy for its batches of Q's and K's strings when the run uses it, and is shared by the `clusters` "
    "arrays it feeds, as in the area split; the matcher (one per array) is busy for every engine cycle "
    "of passes A-D when the run pairs (an upper bound: pass C does not use it). Busy energy is measured "
    "under random data, an upper bound on a head's correlated strings.")


def dispatcher_energy(cfg, q, k, variant: str, report, liberty: str, cycles: int) -> dict:
    """``{"scheduler": pJ, "matcher": pJ}`` of the parts ``variant`` has over a run of
    ``cycles`` at the array's clock, as :data:`DISPATCHER_SCOPE` says."""
    from synth.power import energy_per_action
    from synth.timing import block_timing

    clock = block_timing("array", cfg, liberty)["fmax_mhz"]
    has_scheduler, has_matcher = variant_parts(variant)
    used_scheduler, used_matcher = (variant_parts(report.ran_as) if report.schedule == "pairs"
                                    else (False, False))
    out = {}
    if has_scheduler:
        e = energy_per_action("scheduler", cfg, liberty)
        busy = min(cycles, scheduler_busy(q, k, cfg)) if used_scheduler else 0
        out["scheduler"] = unit_energy(cycles, busy, e["energy_pj"], e["leakage_uw"], clock) / cfg.clusters
    if has_matcher:
        e = energy_per_action("matcher", cfg, liberty)
        busy = min(cycles, report.engine_cycles) if used_matcher else 0
        out["matcher"] = unit_energy(cycles, busy, e["energy_pj"], e["leakage_uw"], clock)
    return out


def run_energy(cfg, q, k, design: str, variant: str, cycles: int, schedule: str = "auto",
               report=None) -> dict:
    """``energy_pj``, ``time_us``, ``fmax_mhz`` of one ``Q K^T`` run, or nulls with
    ``energy_note`` saying why they could not be measured here. ``energy_split_pj``
    adds up to ``energy_pj``; ``dispatcher_pj`` is its dispatcher part. ``report``:
    the run's :class:`~golden.cycle_model.CycleReport`, when the caller has it."""
    from synth.flow import SynthError, default_liberty
    from synth.power import energy_per_action
    from synth.sta import StaError, sta_command
    from synth.timing import block_timing

    liberty = default_liberty()
    try:
        if liberty is None:
            raise SynthError("no liberty file (make setup fetches OSU018)")
        sta_command()
        pe, array = ("pe", "array") if design == "kaleido" else ("baseline-pe", "baseline-array")
        per_action = energy_per_action(pe, cfg, liberty)
        clock = block_timing(array, cfg, liberty)["fmax_mhz"]
        if design == "kaleido" and report is None:
            report = kaleido_cycles(q, k, cfg, variant, schedule=schedule)
        dispatcher = (dispatcher_energy(cfg, q, k, variant, report, liberty, cycles)
                      if design == "kaleido" else {})
    except (SynthError, StaError) as exc:
        return {"energy_pj": None, "time_us": None, "fmax_mhz": None, "energy_note": str(exc)}
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
    if dispatcher:
        res["dispatcher_scope"] = DISPATCHER_SCOPE
    return res
