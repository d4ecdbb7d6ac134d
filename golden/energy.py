"""The energy of a workload on a PE array: actions counted by the cycle model,
times the energy each action costs (measured per PE, see ``kaleido power``),
plus leakage over the run.

For ``Q K^T`` on ``R x C`` PEs:

- every PE spends every cycle at least an idle slot (clock, operands held);
- a full product costs ``full_mac - idle`` more, a nibble product
  ``nibble_mac - idle`` (nibbles paired into one slot are counted as two
  lone ones: pairing's saving, ``2 nibble_mac - paired_nibbles - idle``,
  is not credited);
- each pass starts with a register load in every PE (a clear, or R0 taking
  R1 or R2), costing ``hand_over - full_mac`` more;
- each pass drains one score per PE; the score from row ``i`` moves ``i + 1``
  links up its column, each move costing ``drain_shift - idle``;
- leakage of every PE over the run's time.
"""

from __future__ import annotations

__all__ = ["workload_energy", "unit_energy"]


def workload_energy(cycles: int, rows: int, cols: int, full: int, nibble: int, passes: int,
                    energy_pj: dict, leakage_uw: float, clock_mhz: float) -> dict:
    """``energy_pj`` (total), ``time_us`` and the split by action of one run.

    ``passes`` counts tile-group passes (each loads a register and drains a
    score in every PE); ``energy_pj`` maps actions to pJ as ``kaleido power`` prints.
    """
    e = energy_pj
    pes = rows * cols
    time_us = cycles / clock_mhz
    hops = passes * cols * rows * (rows + 1) // 2
    split = {
        "clock_and_idle": cycles * pes * e["idle"],
        "full_products": full * (e["full_mac"] - e["idle"]),
        "nibble_products": nibble * (e.get("nibble_mac", e["full_mac"]) - e["idle"]),
        "register_loads": passes * pes * (e["hand_over"] - e["full_mac"]),
        "drain": hops * (e["drain_shift"] - e["idle"]),
        "leakage": pes * leakage_uw * time_us,            # uW x us = pJ
    }
    return {"energy_pj": sum(split.values()), "time_us": time_us, "clock_mhz": clock_mhz,
            "energy_split_pj": split}


def unit_energy(cycles: int, busy: int, energy_pj: dict, leakage_uw: float, clock_mhz: float) -> float:
    """pJ of a dispatcher unit over a run of ``cycles``: ``busy`` cycles at its
    ``busy`` energy, the rest at ``idle`` (its clock runs), and its leakage."""
    if not 0 <= busy <= cycles:
        raise ValueError(f"a unit busy {busy} cycles of a {cycles}-cycle run")
    return (busy * energy_pj["busy"] + (cycles - busy) * energy_pj["idle"]
            + leakage_uw * cycles / clock_mhz)
