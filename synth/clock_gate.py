"""What the clock gate of ``clock_gate.v`` costs, from the liberty's own tables.

The gate is a latch and an AND (the kit's ``gate_latch`` and ``gate_and``:
OSU018 has no integrated clock-gating cell, and the flow maps NanGate45's gate
the same way, so that both libraries' figures are of one circuit).
The chip model puts one on each array's clock; the gate's clock input toggles
every cycle whether it opens or not, so its cost a cycle is:

* switching the clock net's load at the gate: the latch's and the AND's clock
  pins, ``C V^2`` a cycle (a rise and a fall);
* the latch's clock pin's internal energy, rise and fall.

What the gated clock then drives is the array's (its PEs' ``idle``), not the gate's.
OSU018's liberty gives its latch no area (``area : 0``), so a latch without
one is costed as the library's smallest flip-flop, which is at least as big.
"""

from __future__ import annotations

from .kits import kit
from .liberty import library

__all__ = ["clock_gate_cost"]


def clock_gate_cost(liberty: str) -> dict:
    """``area_um2``, ``energy_pj`` (``{"cycle": ...}``) and ``leakage_uw`` of one clock gate."""
    lib, k = library(liberty), kit(liberty)
    (latch_name, enable), (and_name, and_pin) = k.gate_latch, k.gate_and
    latch, gate = lib.cells[latch_name], lib.cells[and_name]
    clk = latch.pins[enable]
    load_pf = clk.capacitance + gate.pins[and_pin].capacitance
    rise, fall = clk.power[None]
    internal = rise.at(k.slew_ns) + fall.at(k.slew_ns)
    smallest_flop = min(lib.cells[f].area for f in k.flops if f in lib.cells)
    area = (latch.area or smallest_flop) + gate.area
    return {"area_um2": area, "energy_pj": {"cycle": load_pf * lib.voltage ** 2 + internal},
            "leakage_uw": (latch.leakage_nw + gate.leakage_nw) / 1000}
