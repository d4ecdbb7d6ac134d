"""Hold repair: delay cells put in front of the flip-flops whose shortest path
arrives before their hold time, as a sign-off flow's hold fixing does after
the clock tree is built.

The clock tree (:mod:`synth.clock_tree`) balances the flip-flops' clocks to
within half a buffer's delay, and a flip-flop behind a clock gate sits a little
later than the one the block's inputs are timed from. A path with no logic (a
memory's write data straight from a port into its flip-flops) then arrives
before that flip-flop's hold time ends: static timing reports a negative hold
slack, and such a chip fails at every clock. A real flow repairs it with
delay cells; so does this one:

1. Static timing lists every flip-flop data pin whose hold slack is negative,
   and the setup slack of each (the same constraints as :func:`synth.sta.timing`).
2. Each such pin whose setup slack can spare one more cell's delay (without
   lowering the block's fmax: against the worst setup slack when the block
   misses its clock) is moved behind one more delay cell. Pins on one net
   share a cell, at most :data:`FANOUT` to a cell.
3. Repeat until no pin violates or none can spare the delay
   (:data:`ROUNDS` at most); what is left unrepaired is reported, and the
   block's hold stays failed.

The delay cell is the library's smallest non-inverting buffer (:func:`delay_cell`).
The cells are in the netlist itself, so the block's timing, its area and its
energy (the gate-level runs) all count them. A netlist whose hold is met is
returned unchanged: results measured on it stay what they were.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import asdict, dataclass, field

from .gatesim import _INSTANCE, _PIN, instances
from .kits import kit
from .liberty import library, mean
from .sta import _header, _run

__all__ = ["HoldRepair", "delay_cell", "repair", "violations", "FANOUT", "ROUNDS", "PREFIX"]

#: Most flip-flop pins one delay cell drives.
FANOUT = 8
#: Most cells put in front of one pin.
ROUNDS = 8
#: The prefix of every cell and net the repair adds.
PREFIX = "holdfix"

_END = re.compile(r"^(\S+)/(\w+) \((\w+)\)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+) \((?:MET|VIOLATED)\)", re.M)


@dataclass
class HoldRepair:
    """What :func:`repair` did: ``cells`` of type ``cell`` (``area_um2`` in all)
    put in over ``rounds`` rounds; the flip-flop pins it moved (``pins``) and
    those still violating (``unrepaired``, by static timing, and ``worst_ns``
    their worst slack; 0 when none)."""

    cell: str
    cells: int = 0
    area_um2: float = 0.0
    rounds: int = 0
    pins: int = 0
    unrepaired: int = 0
    worst_ns: float = 0.0
    moved: set = field(default_factory=set, repr=False)

    def as_dict(self) -> dict:
        d = asdict(self)
        d.pop("moved")
        return d


def delay_cell(liberty: str) -> tuple[str, str, str, float]:
    """The library's smallest non-inverting one-input buffer (of equal areas, the
    slowest into its own input): ``(cell, input pin, output pin, area um^2)``."""
    lib = library(liberty)
    found = []
    for name, cell in lib.cells.items():
        ins = [p for p, pin in cell.pins.items() if pin.direction == "input"]
        outs = [(p, pin) for p, pin in cell.pins.items() if pin.direction == "output"]
        if cell.sequential or len(ins) != 1 or len(outs) != 1 or not outs[0][1].function:
            continue
        if outs[0][1].function.strip("() ") != ins[0]:
            continue
        delay = mean(outs[0][1].delay[ins[0]], kit(liberty).slew_ns, cell.pins[ins[0]].capacitance)
        found.append((cell.area, -delay, name, ins[0], outs[0][0]))
    if not found:
        raise ValueError(f"{liberty}: no buffer cell to repair hold with")
    area, _, name, a, y = min(found)
    return name, a, y, area


def _ends(report: str) -> dict[tuple[str, str], float]:
    """``{(instance, pin): slack}`` of an OpenSTA ``-format end`` report."""
    return {(m.group(1), m.group(2)): float(m.group(6)) for m in _END.finditer(report)}


def violations(netlist: str, top: str, liberty: str, period_ns: float, io_share: float) -> dict:
    """``{(instance, pin): hold slack}`` of every flip-flop data pin that violates hold."""
    head = _header(top, period_ns, io_share, netlist, liberty)
    report = _run(head + "report_checks -path_delay min -format end -digits 4 -group_count 1000000 "
                  "-endpoint_count 1 -slack_max 0 -to [all_registers -edge_triggered -data_pins]\n",
                  netlist, liberty)
    return {end: slack for end, slack in _ends(report).items() if slack < 0}


def _setup(netlist: str, top: str, liberty: str, period_ns: float, io_share: float, pins: list) -> tuple:
    """The setup slack of each of ``pins``, and the worst setup slack of the block."""
    head = _header(top, period_ns, io_share, netlist, liberty)
    names = " ".join(f"{inst}/{pin}" for inst, pin in pins)
    report = _run(head + f"report_checks -path_delay max -format end -digits 4 -group_count 1000000 "
                  f"-endpoint_count 1 -to [get_pins {{{names}}}]\n"
                  "puts \"==== worst ====\"\nreport_checks -path_delay max -format end -digits 4\n",
                  netlist, liberty)
    mine, worst = report.split("==== worst ====", 1)
    return _ends(mine), min(_ends(worst).values(), default=0.0)


def _name(net: str) -> str:
    # An escaped Verilog name ends at a space.
    return net + " " if net.startswith("\\") else net


def _insert(text: str, top: str, moves: dict, cell: tuple, count: int) -> tuple[str, int]:
    """``text`` with each group of pins in ``moves`` (``{net: [(instance, pin)]}``)
    behind a new delay cell on its net; returns the text and the cell count."""
    name, a, y = cell[:3]
    rewire, cells, wires = defaultdict(dict), [], []
    for net, pins in moves.items():
        for i in range(0, len(pins), FANOUT):
            out = f"{PREFIX}_{count}"
            cells.append(f"  {name} {PREFIX}_cell_{count} (\n    .{a}({_name(net)}),\n    .{y}({out})\n  );\n")
            wires.append(f"  wire {out};\n")
            for inst, pin in pins[i:i + FANOUT]:
                rewire[inst][pin] = out
            count += 1

    def edit(m: re.Match) -> str:
        pins = rewire.get(m.group(2).lstrip("\\"))
        if not pins:
            return m.group(0)
        body = _PIN.sub(lambda p: f".{p.group(1)}({pins[p.group(1)]})" if p.group(1) in pins else p.group(0),
                        m.group(3))
        return m.group(0).replace(m.group(3), body)

    start = re.search(rf"^module {re.escape(top)}\s*\(.*?\);\n", text, re.M | re.S)
    end = text.index("endmodule", start.end())
    body = _INSTANCE.sub(edit, text[start.end():end])
    return text[:start.end()] + "".join(wires) + body + "".join(cells) + text[end:], count


def repair(netlist: str, top: str, liberty: str, period_ns: float, io_share: float) -> tuple[str, HoldRepair]:
    """``netlist`` with delay cells in front of the flip-flops that violate hold
    (unchanged when none does), and what was done (:class:`HoldRepair`)."""
    cell = delay_cell(liberty)
    done = HoldRepair(cell=cell[0])
    lib = library(liberty)
    bad = violations(netlist, top, liberty, period_ns, io_share)
    for _ in range(ROUNDS):
        if not bad:
            break
        setup, worst = _setup(netlist, top, liberty, period_ns, io_share, sorted(bad))
        nets = {(inst.lstrip("\\"), pin): n for _, inst, pins in instances(netlist) for pin, n in pins.items()}
        kinds = {inst.lstrip("\\"): kind for kind, inst, _ in instances(netlist)}
        # One more cell costs at most its delay driving a full group of pins and their wire.
        load = FANOUT * max(lib.cells[kinds[i]].pins[p].capacitance for i, p in bad) + kit(liberty).wire_pf(FANOUT)
        step = mean(lib.cells[cell[0]].pins[cell[2]].delay[cell[1]], kit(liberty).slew_ns, load)
        moves = defaultdict(list)
        for end in sorted(bad):
            if setup.get(end, float("inf")) - min(worst, 0.0) > step:
                moves[nets[end]].append(end)
        if not moves:
            break
        netlist, done.cells = _insert(netlist, top, moves, cell, done.cells)
        done.moved |= {end for pins in moves.values() for end in pins}
        done.rounds += 1
        bad = violations(netlist, top, liberty, period_ns, io_share)
    done.pins, done.unrepaired = len(done.moved), len(bad)
    done.worst_ns = min(bad.values(), default=0.0)
    done.area_um2 = done.cells * cell[3]
    return netlist, done
