"""A clock tree for a mapped netlist: buffers to a stated fan-out, balanced in delay.

Yosys maps the clock as one net: ``clk`` drives every ungated flip-flop and
every clock gate directly, and each gate's AND drives its flip-flops
directly. A static timing run with ideal clocks, or a zero-delay simulation,
is all that such a netlist can honestly feed. A real chip buffers those nets,
and the buffers cost area and energy on every edge. This module builds that
tree in the netlist itself, so timing, the timed simulation and energy all
read the same cells.

How:

1. **Fan-out.** Every net of the clock network that drives more than
   :data:`FANOUT` pins is split: its pins are grouped :data:`FANOUT` to a
   buffer (the kit's, :class:`synth.kits.CellKit`), then the buffers likewise, until the net drives at most
   :data:`FANOUT`. The clock network is ``clk`` and each net that the clock
   reaches through a gate, before a storage cell. The net's flip-flops and
   its other cells (the clock gates) are split apart, each into a subtree of
   its own, so that the flip-flops' subtree can be delayed at its top
   (step 2).
2. **Delay.** The clock's arrival at every flip-flop is computed from the
   liberty's delay and transition tables, at each net's load (its pins, and
   its wire by the kit's wire-load model). Buffers are then put in above each
   subtree whose latest flip-flop is early, as high up as the subtree
   allows, each worth one buffer's delay, until every flip-flop's clock
   arrives within half a buffer's delay of the latest. This is done twice,
   since a buffer put in changes its net's load. No buffer goes above a
   clock gate: its AND and the latch that holds its enable keep the clock
   they had, and its flip-flops are delayed below it.
   A clock gate's latch (its enable) is then delayed to open no earlier than
   the clock falls at the gate's AND: the gate's hold check, which static
   timing reports.

This is what a clock-tree synthesis tool would build without placement: no
wire lengths, no sizing. Static timing (:mod:`synth.sta`) propagates the clock
through it and reports hold. :func:`insert` returns the new netlist and what
it added.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from .gatesim import _INSTANCE, _PIN, Netlist, parse
from .kits import kit
from .liberty import library, mean

__all__ = ["FANOUT", "ClockTree", "insert"]

#: Most pins a clock net drives (a clock buffer's fan-out).
FANOUT = 16
#: The prefix of every net and cell the tree adds.
PREFIX = "cktree"


@dataclass
class ClockTree:
    """What :func:`insert` added: ``buffers`` cells of type ``cell``; ``skew_ns``,
    the spread of the clock's arrival over the flip-flops by this module's own
    reckoning (static timing gives the real one)."""

    buffers: int
    cell: str
    skew_ns: float


def _name(net: str) -> str:
    # Yosys writes escaped identifiers (``\\$12``) with the space that ends them.
    return net + " " if net.startswith("\\") else net


class _Tree:
    """The clock network as a graph: each net's sinks, each cell's output."""

    def __init__(self, net: Netlist, liberty: str):
        self.kinds, self.drives = {}, {}
        self.kit = k = kit(liberty)
        pins_on = defaultdict(list)
        for kind, name, pins in net.cells:
            self.kinds[name] = kind
            for p, n in pins.items():
                if p in k.outputs:
                    self.drives[name] = net.root(n)
                else:
                    pins_on[net.root(n)].append((name, p))
        self.pins_on = pins_on
        self.lib = library(liberty)
        self.sinks = {}                  # clock net -> [(instance, pin)]
        self.added = {}                  # buffer -> (input net, output net)
        self.count = 0

    def is_flop(self, sink: tuple) -> bool:
        return self.kit.flops.get(self.kinds.get(sink[0])) == sink[1]

    def is_latch(self, sink: tuple) -> bool:
        return self.kit.latches.get(self.kinds.get(sink[0])) == sink[1]

    def is_clock_pin(self, sink: tuple) -> bool:
        """Whether ``sink`` is a storage cell's clock (or enable) pin: the clock stops there."""
        return self.is_flop(sink) or self.is_latch(sink)

    def output(self, inst: str) -> str | None:
        if inst in self.added:
            return self.added[inst][1]
        if self.kinds.get(inst) in self.kit.storage:
            return None
        return self.drives.get(inst)

    def buffer(self, src: str, sinks: list) -> tuple:
        """A new buffer on ``src`` driving ``sinks`` (taken off ``src``)."""
        inst, out = f"{PREFIX}_buf_{self.count}", f"{PREFIX}_{self.count}"
        self.count += 1
        self.kinds[inst] = self.kit.buffer[0]
        self.added[inst] = (src, out)
        self.sinks[out] = list(sinks)
        return inst, out

    def chain(self, src: str, sinks: list, length: int) -> tuple:
        """``length`` buffers in a row from ``src`` to ``sinks``; the first one's sink entry."""
        net = None
        for i in range(length):
            inst, out = self.buffer(src if i == 0 else net, sinks if i == length - 1 else [])
            if i:
                self.sinks[net] = [(inst, self.kit.buffer[1])]
            if i == 0:
                first = (inst, self.kit.buffer[1])
            net = out
        return first

    # Arrival of the clock, from the liberty's tables.
    def load(self, n: str) -> float:
        cap = 0.0
        for inst, pin in self.sinks.get(n, ()):
            cap += self.lib.cells[self.kinds[inst]].pins[pin].capacitance
        return cap + self.kit.wire_pf(len(self.sinks.get(n, ())))

    def arrivals(self, root: str) -> dict:
        """``{flip-flop sink: arrival ns}`` and per net its arrival, from ``root`` at 0."""
        at, flops = {root: (0.0, self.kit.clock_slew_ns)}, {}
        stack = [root]
        while stack:
            n = stack.pop()
            t, slew = at[n]
            for sink in self.sinks.get(n, ()):
                if self.is_flop(sink):
                    flops[sink] = t
                    continue
                inst, pin = sink
                out = self.output(inst)
                if out is None or out not in self.sinks:
                    continue
                kind = self.kinds[inst]
                cell = self.lib.cells[kind].pins[next(p for p in self.kit.outputs if p in self.lib.cells[kind].pins)]
                load = self.load(out)
                at[out] = (t + mean(cell.delay[pin], slew, load), mean(cell.transition[pin], slew, load))
                stack.append(out)
        self.at = at
        return flops

    def only_buffers_under(self, n: str) -> bool:
        """Whether the subtree under net ``n`` is this tree's buffers and flip-flops only:
        a clock gate's AND is not delayed apart from the latch that holds its enable."""
        return all(self.is_flop(s) or (s[0] in self.added and self.only_buffers_under(self.added[s[0]][1]))
                   for s in self.sinks.get(n, ()))

    def latest_under(self, n: str, flops: dict) -> float | None:
        best = None
        for sink in self.sinks.get(n, ()):
            if self.is_flop(sink):
                t = flops[sink]
            else:
                out = self.output(sink[0])
                t = self.latest_under(out, flops) if out in self.sinks else None
            if t is not None and (best is None or t > best):
                best = t
        return best


def insert(text: str, top: str, liberty: str, clock: str = "clk") -> tuple[str, ClockTree]:
    """``text`` (a flat netlist of :func:`synth.flow.gate_netlist`) with a clock
    tree, balanced with ``liberty``'s tables."""
    net = parse(text, top)
    if clock not in net.inputs:
        return text, ClockTree(0, kit(liberty).buffer[0], 0.0)
    tree = _Tree(net, liberty)
    # The clock network: from the port, through every cell that is not storage.
    network, frontier = [], [clock]
    while frontier:
        n = frontier.pop()
        if n in network:
            continue
        network.append(n)
        for inst, pin in tree.pins_on.get(n, ()):
            out = tree.output(inst)
            if out is not None and not tree.is_clock_pin((inst, pin)):
                frontier.append(out)
    # 1. Fan-out.
    for n in network:
        on = tree.pins_on.get(n, ())
        parts = [p for p in ([s for s in on if not tree.is_flop(s)], [s for s in on if tree.is_flop(s)]) if p]
        share = FANOUT // len(parts) if len(on) > FANOUT else FANOUT
        tree.sinks[n] = []
        for sinks in parts:
            while len(sinks) > share:
                sinks = [(tree.buffer(n, sinks[i:i + FANOUT])[0], tree.kit.buffer[1])
                         for i in range(0, len(sinks), FANOUT)]
            tree.sinks[n] += sinks
    skew = 0.0
    if any(tree.is_flop(s) for n in network for s in tree.pins_on.get(n, ())):
        step = _buffer_delay(tree)
        latest = _balance(tree, clock, step)
        _balance(tree, clock, step, latest)
        _latches(tree, clock, step)
        flops = tree.arrivals(clock)
        skew = max(flops.values()) - min(flops.values())
    return _write(text, top, tree), ClockTree(len(tree.added), tree.kit.buffer[0], skew)


def _buffer_delay(tree: _Tree) -> float:
    """One tree buffer's delay driving one more (a padding buffer's), in ns."""
    name, a, y = tree.kit.buffer
    cell = tree.lib.cells[name]
    load = cell.pins[a].capacitance + tree.kit.wire_pf(1)
    return mean(cell.pins[y].delay[a], mean(cell.pins[y].transition[a], tree.kit.slew_ns, load), load)


def _balance(tree: _Tree, clock: str, step: float, latest: float | None = None) -> float:
    """Buffers put in to bring every flip-flop's clock to ``latest`` (the latest
    arrival, by default); returns ``latest``."""
    flops = tree.arrivals(clock)
    latest = max(flops.values()) if latest is None else latest

    def pad(n: str, shift: float) -> None:
        sinks = tree.sinks.get(n, [])
        early = [s for s in sinks if tree.is_flop(s)]
        if early:
            k = round((latest - flops[early[0]] - shift) / step)
            if k > 0:
                # The flip-flops on this net share one chain.
                sinks[:] = [s for s in sinks if s not in early] + [tree.chain(n, early, k)]
        for sink in list(sinks):
            out = tree.output(sink[0])
            if out is None or out not in tree.sinks or tree.is_flop(sink):
                continue
            under = tree.latest_under(out, flops)
            if under is None:
                continue
            k = round((latest - under - shift) / step)
            if k > 0 and tree.only_buffers_under(out):
                # A chain above this cell brings its whole subtree later.
                sinks[sinks.index(sink)] = tree.chain(n, [sink], k)
                pad(out, shift + k * step)
            else:
                pad(out, shift)

    pad(clock, 0.0)
    return latest


def _latches(tree: _Tree, clock: str, step: float) -> None:
    """Buffers put in before each clock gate's latch, so that it opens no earlier
    than the clock falls at its AND (the gate's hold check)."""
    tree.arrivals(clock)
    on = defaultdict(list)               # cell -> the clock nets its pins are on
    for n, sinks in tree.sinks.items():
        for inst, _ in sinks:
            on[inst].append(n)
    for n, sinks in list(tree.sinks.items()):
        latches = [s for s in sinks if tree.is_latch(s)]
        if not latches or n not in tree.at:
            continue
        groups = defaultdict(list)
        for latch in latches:
            # The gates it enables: the cells on its output, at the clock net they are on.
            gates = [g for inst, _ in tree.pins_on.get(tree.drives.get(latch[0]), ()) for g in on.get(inst, ())]
            arrive = max((tree.at[g][0] for g in gates if g in tree.at), default=None)
            if arrive is not None:
                groups[round((arrive - tree.at[n][0]) / step)].append(latch)
        for k, group in groups.items():
            if k > 0:
                sinks[:] = [s for s in sinks if s not in group] + [tree.chain(n, group, k)]


def _write(text: str, top: str, tree: _Tree) -> str:
    # Each sink on the net that drives it now: a buffer's input (a buffer made while
    # splitting knows only the net its group first hung from), or a moved clock pin.
    rewires = defaultdict(dict)
    moved = {}
    for n, sinks in tree.sinks.items():
        for inst, pin in sinks:
            if inst in tree.added:
                tree.added[inst] = (n, tree.added[inst][1])
            else:
                moved[(inst, pin)] = n
    for (inst, pin), n in moved.items():
        rewires[inst][pin] = n

    def rewire(m: re.Match) -> str:
        edits = rewires.get(m.group(2))
        if not edits:
            return m.group(0)
        body = _PIN.sub(lambda p: f".{p.group(1)}({_name(edits[p.group(1)])})" if p.group(1) in edits
                        else p.group(0), m.group(3))
        return m.group(0).replace(m.group(3), body)

    start = re.search(rf"^module {re.escape(top)}\s*\(.*?\);\n", text, re.M | re.S)
    end = text.index("endmodule", start.end())
    body = _INSTANCE.sub(rewire, text[start.end():end])
    wires = "".join(f"  wire {out};\n" for _, out in tree.added.values())
    buffer, a, y = tree.kit.buffer
    cells = "".join(f"  {buffer} {name} (\n    .{a}({_name(src)}),\n    .{y}({out})\n  );\n"
                    for name, (src, out) in tree.added.items())
    return text[:start.end()] + wires + body + cells + text[end:]
