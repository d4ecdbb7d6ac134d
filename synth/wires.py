"""What a block's ports and nets are taken to be loaded with: the one electrical
environment that the timing-driven mapping (:mod:`synth.flow`), the clock tree
(:mod:`synth.clock_tree`), static timing (:mod:`synth.sta`) and gate-level
energy (:mod:`synth.gate_energy`) all assume, so that none of them imports
another for it.
"""

from __future__ import annotations

__all__ = ["DRIVING_CELL", "OUTPUT_LOAD_PF", "WIRE_UM_PER_PIN", "WIRE_PF_PER_UM", "wire_pf"]

#: The cell assumed to drive every input port, and the load on every output port
#: (about two gate inputs, as a PE's outputs drive the next PE's), for the
#: timing-driven mapping, static timing and energy alike.
DRIVING_CELL = "BUFX2"
OUTPUT_LOAD_PF = 0.025

#: The wire-load model (an assumption: there is no placement). A net's wire is
#: :data:`WIRE_UM_PER_PIN` of metal for each pin it joins (its driver and every
#: load), at :data:`WIRE_PF_PER_UM`, a typical 180 nm figure for minimum-width
#: metal with its fringe. A two-pin net gets 4 fF, against some 10 fF a gate input.
WIRE_UM_PER_PIN = 10.0
WIRE_PF_PER_UM = 0.0002


def wire_pf(fanout: int) -> float:
    """The wire capacitance (pF) of a net driving ``fanout`` pins."""
    return WIRE_UM_PER_PIN * WIRE_PF_PER_UM * (fanout + 1)
