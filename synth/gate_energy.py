"""Energy of a gate-level run, from the liberty's tables.

For every event of a zero-delay run (:mod:`synth.gatesim`), every net whose
settled value changed costs:

- **switching**: ``C V^2 / 2``, ``C`` the net's load: the input capacitance of
  every cell pin on it, plus :data:`OUTPUT_LOAD_PF` on an output port. Nets
  driven by input ports and the clock net count too;
- **internal, at its driver**: the driving cell's energy table for that output
  (``rise_power`` for a rise, ``fall_power`` for a fall) of the arc from the
  input that switched in the same event, at the net's load and an input
  transition of :data:`SLEW_NS`; where several inputs switched, their arcs'
  mean; the clock arc for a flip-flop's output;
- **internal, at its loads**: the table of every input pin on it that has one of
  its own (a flip-flop's clock and data pins: the clock pins cost energy on
  every edge, whatever the flip-flop holds).

Leakage is every cell's ``cell_leakage_power`` for the run's time. Nothing
counts wires (the library has no wire load) or glitches (zero delay).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .flow import OUTPUT_LOAD_PF
from .gatesim import Activity, Netlist
from .liberty import Library

__all__ = ["SLEW_NS", "OUTPUT_LOAD_PF", "Loads", "loads", "leakage_nw", "energy"]

#: The input transition every table is read at (ns). OSU018's tables start at
#: 0.06 ns; a gate driving a few loads in this library switches in about 0.1 ns.
SLEW_NS = 0.1


def leakage_nw(net: Netlist, lib: Library) -> float:
    """The netlist's leakage: every cell's ``cell_leakage_power``, in nW."""
    return sum(lib.cells[kind].leakage_nw for kind, _, _ in net.cells)


@dataclass
class Loads:
    """Each net's load, its driver and its sinks.

    Members
    -------
    cap : dict
        Net -> capacitance in pF.
    driver : dict
        Net -> (cell type, {input pin: net}, output pin).
    sinks : dict
        Net -> [(cell type, input pin)].
    """

    cap: dict
    driver: dict
    sinks: dict


def loads(net: Netlist, lib: Library, output_load: float = OUTPUT_LOAD_PF) -> Loads:
    """The loads of every net of ``net``, from ``lib``'s pin capacitances."""
    cap, driver, sinks = defaultdict(float), {}, defaultdict(list)
    for kind, _, pins in net.cells:
        cell = lib.cells.get(kind)
        if cell is None:
            raise ValueError(f"cell {kind} is not in {lib.path}")
        inputs = {p: net.root(n) for p, n in pins.items() if cell.pins.get(p) and cell.pins[p].direction == "input"}
        for p, n in pins.items():
            pin = cell.pins.get(p)
            if pin is None:
                raise ValueError(f"cell {kind} has no pin {p} in {lib.path}")
            n = net.root(n)
            if pin.direction == "input":
                cap[n] += pin.capacitance
                sinks[n].append((kind, p))
            elif pin.direction == "output":
                driver[n] = (kind, inputs, p)
    for n in net.outputs:
        cap[net.root(n)] += output_load
    return Loads(dict(cap), driver, dict(sinks))


def energy(net: Netlist, activity: Activity, lib: Library, period_ns: float,
           slew: float = SLEW_NS, output_load: float = OUTPUT_LOAD_PF) -> dict:
    """Energy per cycle of a run (pJ): ``switching_pj``, ``internal_pj``,
    ``leakage_pj`` and their ``total_pj``; ``toggles`` per cycle."""
    where = loads(net, lib, output_load)
    v2 = lib.voltage ** 2
    memo = {}

    def driven(n: str, rise: int, related: tuple) -> float:
        # The driver's table for this edge: the arcs from the inputs that switched with it
        # (their mean), or every arc where none did (a net renamed by an assign).
        key = (n, rise, related)
        if key not in memo:
            kind, _, out = where.driver[n]
            arcs = lib.cells[kind].pins[out].power
            pins = tuple(p for p in related if p in arcs) or tuple(arcs)
            load = where.cap.get(n, 0.0)
            # Nets alike (one cell, one arc, one load) share the value.
            alike = (kind, out, pins, rise, load)
            if alike not in memo:
                memo[alike] = (sum(arcs[p][1 - rise].at(slew, load) for p in pins) / len(pins) if pins else 0.0)
            memo[key] = memo[alike]
        return memo[key]

    def own(kind: str, pin: str, rise: int) -> float:
        key = (kind, pin, rise)
        if key not in memo:
            tables = lib.cells[kind].pins[pin].power.get(None)
            memo[key] = tables[1 - rise].at(slew) if tables else 0.0
        return memo[key]

    root = {}
    switching = internal = 0.0
    toggles = 0
    for event in activity.events:
        changed = {}
        for n, value in event.items():
            r = root.get(n)
            if r is None:
                r = root[n] = net.root(n)
            changed[r] = value
        for n, value in changed.items():
            toggles += 1
            switching += 0.5 * where.cap.get(n, 0.0) * v2
            drive = where.driver.get(n)
            if drive is not None:
                internal += driven(n, value, tuple(p for p, src in drive[1].items() if src in changed))
            for kind, pin in where.sinks.get(n, ()):
                internal += own(kind, pin, value)
    cycles = max(1, activity.cycles)
    out = {"switching_pj": switching / cycles, "internal_pj": internal / cycles,
           "leakage_pj": leakage_nw(net, lib) * period_ns * 1e-6,          # nW x ns = 1e-18 J
           "toggles": toggles / cycles}
    out["total_pj"] = out["switching_pj"] + out["internal_pj"] + out["leakage_pj"]
    return out
