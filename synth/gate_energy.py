"""Energy of a gate-level run, from the liberty's tables.

For every event of a run (:mod:`synth.gatesim`: zero delay, or timed, where
every glitch is an event too), every net whose value changed costs:

- **switching**: ``C V^2 / 2``, ``C`` the net's load: the input capacitance of
  every cell pin on it, plus the kit's ``output_load_pf`` on an output port,
  plus with ``wire`` the kit's wire-load model (:class:`synth.kits.CellKit`). Nets
  driven by input ports and the clock nets count too;
- **internal, at its driver**: the driving cell's energy table for that output
  (``rise_power`` for a rise, ``fall_power`` for a fall) of the arc from the
  input that changed last (in the same event for a zero-delay run, a delay
  before for a timed one; where several changed together, their arcs' mean;
  the clock arc for a flip-flop's output), at the net's load and that
  input's transition;
- **internal, at its loads**: the table of every input pin on it that has one of
  its own (a flip-flop's clock and data pins: the clock pins cost energy on
  every edge, whatever the flip-flop holds), at the net's transition.

A transition is the kit's ``slew_ns`` everywhere, or with ``real_slews`` each
net's own (:func:`slews`: its driver's transition tables at its load).
Leakage is every cell's ``cell_leakage_power`` for the run's time.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .clock_tree import PREFIX as TREE_PREFIX
from .gatesim import Activity, Netlist
from .kits import kit
from .liberty import Library, mean

__all__ = ["Loads", "loads", "slews", "leakage_nw", "energy"]


def leakage_nw(net: Netlist, lib: Library) -> float:
    """The netlist's leakage: every cell's ``cell_leakage_power``, in nW."""
    return sum(lib.cells[kind].leakage_nw for kind, _, _ in net.cells)


@dataclass
class Loads:
    """Each net's load, its driver and its sinks.

    Members
    -------
    cap : dict
        Net -> capacitance in pF (its pins, and its wire where asked for).
    driver : dict
        Net -> (cell type, {input pin: net}, output pin).
    sinks : dict
        Net -> [(cell type, input pin)].
    """

    cap: dict
    driver: dict
    sinks: dict
    #: Net -> the part of its capacitance that the clock tree adds (its buffers'
    #: input pins, and the wire of a net the tree made).
    tree_cap: dict = field(default_factory=dict)


def loads(net: Netlist, lib: Library, output_load: float | None = None, wire: bool = False) -> Loads:
    """The loads of every net of ``net``, from ``lib``'s pin capacitances, with
    ``output_load`` (pF, the kit's by default) on each output port, and with
    ``wire`` the kit's wire-load model."""
    k = kit(lib.path)
    output_load = k.output_load_pf if output_load is None else output_load
    cap, driver, sinks, tree_cap = defaultdict(float), {}, defaultdict(list), defaultdict(float)
    for kind, name, pins in net.cells:
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
                if name.startswith(TREE_PREFIX):
                    tree_cap[n] += pin.capacitance
            elif pin.direction == "output":
                driver[n] = (kind, inputs, p)
    for n in net.outputs:
        cap[net.root(n)] += output_load
    if wire:
        for n in set(sinks) | set(driver):
            cap[n] += k.wire_pf(len(sinks.get(n, ())))
            if n.startswith(TREE_PREFIX):
                tree_cap[n] += k.wire_pf(len(sinks.get(n, ())))
    return Loads(dict(cap), driver, dict(sinks), dict(tree_cap))


def slews(net: Netlist, lib: Library, where: Loads, source: float | None = None) -> dict:
    """Each net's transition (ns): its driver's ``rise_transition`` and
    ``fall_transition`` tables (their mean) at the net's load and at the
    transition of the input of each arc (the slowest arc), in order from the
    inputs. An input port is driven by the kit's driving cell from a
    ``source`` transition (the kit's ``slew_ns``); a storage cell's output follows its clock."""
    k = kit(lib.path)
    source = k.slew_ns if source is None else source
    clocks = {**k.flops, **k.latches}            # storage cell -> the pin its output follows
    drive = lib.cells[k.driving_cell].pins
    out_pin = next(p for p in drive.values() if p.transition)
    out = {}

    def at(kind: str, pin: str, arcs: dict, load: float) -> float:
        tables = lib.cells[kind].pins[pin].transition
        worst = [mean(tables[p], s, load) for p, s in arcs.items() if p in tables]
        return max(worst) if worst else source

    for n in net.inputs:
        n = net.root(n)
        out[n] = mean(next(iter(out_pin.transition.values())), source, where.cap.get(n, 0.0))
    waiting = {n: d for n, d in where.driver.items() if n not in out}
    while waiting:
        done = []
        for n, (kind, inputs, pin) in waiting.items():
            storage = lib.cells[kind].sequential
            needed = {p: src for p, src in inputs.items() if not storage or p == clocks.get(kind)}
            if all(src in out or src.startswith("1'") for src in needed.values()):
                arcs = {p: out.get(src, source) for p, src in needed.items()}
                out[n] = at(kind, pin, arcs, where.cap.get(n, 0.0))
                done.append(n)
        if not done:           # a loop of logic (none in a mapped netlist): the default
            out.update({n: source for n in waiting})
            break
        for n in done:
            del waiting[n]
    return out


def energy(net: Netlist, activity: Activity, lib: Library, period_ns: float,
           slew: float | None = None, output_load: float | None = None, wire: bool = False,
           real_slews: bool = False, prepared: tuple | None = None) -> dict:
    """Energy per cycle of a run (pJ): ``switching_pj``, ``internal_pj``,
    ``leakage_pj`` and their ``total_pj``; ``toggles`` per cycle; and
    ``clock_tree_pj``, the part of the first two that the clock tree adds: its
    buffers' internal energy, their input pins' switching and the wire of the
    nets it made (the flip-flops' clock pins are counted with or without it).

    Every table is read at ``slew`` (the kit's by default) unless ``real_slews``: then at each net's own
    transition (:func:`slews`). ``wire`` adds the wire-load model to every net.
    ``prepared``, ``(loads, slews)`` already worked out for this netlist, spares
    working them out again for each run of it.
    An output's change is charged to the arc of its cell's input that changed
    last, at or before it (a zero-delay run: in the same event; a timed one: a
    delay before), or the mean of those that changed together.
    """
    slew = kit(lib.path).slew_ns if slew is None else slew
    if prepared is None:
        where = loads(net, lib, output_load, wire)
        prepared = where, slews(net, lib, where, slew) if real_slews else {}
    where, slew_of = prepared
    v2 = lib.voltage ** 2
    memo = {}

    def driven(n: str, rise: int, related: tuple) -> float:
        key = (n, rise, related)
        if key not in memo:
            kind, inputs, out = where.driver[n]
            arcs = lib.cells[kind].pins[out].power
            pins = tuple(p for p in related if p in arcs) or tuple(arcs)
            load = where.cap.get(n, 0.0)
            memo[key] = (sum(arcs[p][1 - rise].at(slew_of.get(inputs.get(p), slew), load) for p in pins)
                         / len(pins) if pins else 0.0)
        return memo[key]

    def own(n: str, kind: str, pin: str, rise: int) -> float:
        at = slew_of.get(n, slew)
        key = (kind, pin, rise, at)
        if key not in memo:
            tables = lib.cells[kind].pins[pin].power.get(None)
            memo[key] = tables[1 - rise].at(at) if tables else 0.0
        return memo[key]

    # What a change of each net costs, but for its driver's arc, worked out once.
    per_net = {}

    def costs(n: str) -> tuple:
        sinks = where.sinks.get(n, ())
        drive = where.driver.get(n)
        return (0.5 * where.cap.get(n, 0.0) * v2,
                (sum(own(n, kind, pin, 0) for kind, pin in sinks), sum(own(n, kind, pin, 1) for kind, pin in sinks)),
                tuple(drive[1].items()) if drive is not None else None,
                0.5 * where.tree_cap.get(n, 0.0) * v2, n.startswith(TREE_PREFIX))

    root = {}
    last = {}                    # net -> index of the event it last changed in
    switching = internal = tree = 0.0
    toggles = 0
    for k, event in enumerate(activity.events):
        changed = {}
        for n, value in event.items():
            r = root.get(n)
            if r is None:
                r = root[n] = net.root(n)
            changed[r] = value
            last[r] = k
        for n, value in changed.items():
            c = per_net.get(n)
            if c is None:
                c = per_net[n] = costs(n)
            sw, owns, inputs, tree_sw, by_tree = c
            energy_in = owns[value]
            driver_in = 0.0
            if inputs is not None:
                # The arc of the input that changed last (those that changed together: their mean).
                latest, related = -1, ()
                for p, src in inputs:
                    t = last.get(src, -1)
                    if t > latest:
                        latest, related = t, (p,)
                    elif t == latest and t >= 0:
                        related += (p,)
                driver_in = driven(n, value, related)
            toggles += 1
            switching += sw
            internal += energy_in + driver_in
            tree += tree_sw + (driver_in if by_tree else 0.0)
    cycles = max(1, activity.cycles)
    out = {"switching_pj": switching / cycles, "internal_pj": internal / cycles,
           "leakage_pj": leakage_nw(net, lib) * period_ns * 1e-6,          # nW x ns = 1e-18 J
           "toggles": toggles / cycles, "clock_tree_pj": tree / cycles}
    out["total_pj"] = out["switching_pj"] + out["internal_pj"] + out["leakage_pj"]
    return out
