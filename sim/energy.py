"""Energy and time of a run on the PE array: the cycle model's action counts
(:func:`golden.cycle_model.executed_products`), each PE's measured energy per
action (:mod:`synth.power`), and the array's clock (:mod:`synth.timing`),
combined by :func:`golden.energy.workload_energy`."""

from __future__ import annotations

from golden.cycle_model import baseline_cycles, executed_products, kaleido_cycles
from golden.energy import workload_energy

__all__ = ["run_energy", "SCOPE"]

SCOPE = "the PE array: clock, products, register loads, drain, leakage; not the dispatcher or buffers"


def run_energy(cfg, q, k, design: str, variant: str, cycles: int, schedule: str = "auto") -> dict:
    """``energy_pj``, ``time_us``, ``fmax_mhz`` of one ``Q K^T`` run, or nulls with
    ``energy_note`` saying why they could not be measured here."""
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
    except (SynthError, StaError) as exc:
        return {"energy_pj": None, "time_us": None, "fmax_mhz": None, "energy_note": str(exc)}
    if design == "kaleido":
        counts = executed_products(q, k, cfg, kaleido_cycles(q, k, cfg, variant, schedule=schedule))
        full, nibble = counts["full_products"], counts["nibble_products"]
        passes = counts["passes"] * counts["tiles"]
    else:
        base = baseline_cycles(q.shape[0], k.shape[0], cfg)
        full, nibble, passes = q.shape[0] * k.shape[0] * q.shape[1], 0, base.tiles
    res = workload_energy(cycles, cfg.rows, cfg.cols, full, nibble, passes,
                          per_action["energy_pj"], per_action["leakage_uw"], clock)
    res["energy_scope"] = SCOPE
    return res
