"""What the clock gate of ``clock_gate.v`` costs, from the liberty's own tables.

The gate is a latch and an AND (OSU018 has no integrated clock-gating cell).
The chip model puts one on each array's clock; the gate's clock input toggles
every cycle whether it opens or not, so its cost a cycle is:

* switching the clock net's load at the gate: the latch's and the AND's clock
  pins, ``C V^2`` a cycle (a rise and a fall);
* the latch's clock pin's internal energy, rise and fall.

What the gated clock then drives is the array's (its PEs' ``idle``), not the gate's.
OSU018's liberty gives its latch no area (``area : 0``), so the latch is
costed as the library's smallest flip-flop, which is at least as big.
"""

from __future__ import annotations

from .gate_energy import SLEW_NS
from .liberty import library

__all__ = ["LATCH", "AND", "FLOP", "clock_gate_cost"]

LATCH, AND, FLOP = "LATCH", "AND2X2", "DFFPOSX1"


def clock_gate_cost(liberty: str) -> dict:
    """``area_um2``, ``energy_pj`` (``{"cycle": ...}``) and ``leakage_uw`` of one clock gate."""
    lib = library(liberty)
    latch, gate = lib.cells[LATCH], lib.cells[AND]
    clk = latch.pins["CLK"]
    load_pf = clk.capacitance + gate.pins["A"].capacitance
    rise, fall = clk.power[None]
    internal = rise.at(SLEW_NS) + fall.at(SLEW_NS)
    area = (latch.area or lib.cells[FLOP].area) + gate.area
    return {"area_um2": area, "energy_pj": {"cycle": load_pf * lib.voltage ** 2 + internal},
            "leakage_uw": (latch.leakage_nw + gate.leakage_nw) / 1000}
