"""Zero-delay simulation of a mapped netlist with the library's own cell models.

The netlist is the one static timing reads (:func:`synth.flow.gate_netlist`:
every port and net one bit). A generated test bench holds reset for two
cycles (inputs at 0), then applies one stimulus vector per cycle (inputs change half a period
before the rising edge) under Icarus with the library's Verilog cell models
(``osu018_stdcells.v`` beside ``osu018_stdcells.lib``, ``stdcells.v`` beside
NanGate45's ``stdcells.lib``), and dumps every net of
the design. The simulation has no delays, so each net settles once per input
change and once per clock edge: what it counts is functional activity, without
glitches.

:func:`simulate` returns, per event (an input change, a rising and a falling
clock edge), the nets whose settled value changed and to what, and the outputs
sampled before every next input change, for checking against the RTL.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .kits import Storage, kit

__all__ = ["Netlist", "instances", "parse", "parse_any", "cell_models", "Activity", "simulate",
           "GateSimError"]


class GateSimError(RuntimeError):
    """The gate-level simulation could not run; the message says why."""


@dataclass
class Netlist:
    """A flat mapped netlist: ports (one bit each) and cell instances."""

    top: str
    inputs: list[str]
    outputs: list[str]
    #: (cell type, instance name, {pin: net})
    cells: list[tuple[str, str, dict]]
    #: ``assign a = b;``: net ``a`` is net ``b`` (or a constant), by another name
    aliases: dict

    def root(self, net: str) -> str:
        """The name the electrical net ``net`` is counted under."""
        seen = set()
        while net in self.aliases and net not in seen:
            seen.add(net)
            net = self.aliases[net]
        return net


_MODULE = r"^module {top}\s*\((?P<ports>.*?)\);(?P<body>.*?)^endmodule"
_PORT = re.compile(r"^\s*(input|output)\s+(\S+)\s*;", re.M)
_INSTANCE = re.compile(r"^\s*(\w+)\s+(\S+)\s*\((.*?)\);", re.M | re.S)
_PIN = re.compile(r"\.(\w+)\(\s*([^()\s]*)\s*\)")


def instances(text: str) -> list[tuple[str, str, dict]]:
    """``(cell type, instance name, {pin: net})`` of every cell instance in netlist text."""
    return [(kind, name, {p: n for p, n in _PIN.findall(pins) if n})
            for kind, name, pins in _INSTANCE.findall(text)
            if kind not in ("input", "output", "wire", "assign", "reg", "module")]


def parse(text: str, top: str) -> Netlist:
    """The ports and cells of module ``top`` of a netlist written by ``write_verilog -noattr -noexpr``."""
    module = re.search(_MODULE.format(top=re.escape(top)), text, re.M | re.S)
    if not module:
        raise GateSimError(f"no module {top} in the netlist")
    body = module["body"]
    ports = _PORT.findall(body)
    cells = instances(body)
    aliases = dict(re.findall(r"^\s*assign\s+(\S+)\s*=\s*(\S+?)\s*;", body, re.M))
    return Netlist(top, [n for d, n in ports if d == "input"], [n for d, n in ports if d == "output"],
                   cells, aliases)


def parse_any(text: str) -> Netlist:
    """:func:`parse` of the netlist's first module (a flat netlist has one)."""
    top = re.search(r"^module\s+(\S+?)\s*\(", text, re.M)
    if not top:
        raise GateSimError("no module in the netlist")
    return parse(text, top.group(1))


def cell_models(liberty: str) -> Path:
    """The cells' Verilog models shipped beside a Liberty file (same name, ``.v``)."""
    path = Path(liberty).with_suffix(".v")
    if not path.is_file():
        raise GateSimError(f"no cell models {path} beside the liberty; run `make setup`")
    return path


@dataclass
class Activity:
    """What a gate-level run showed.

    Members
    -------
    events : list of dict
        One per time step with a change, after reset: ``{net: new value}`` of
        every net whose value at the end of the step differs from the start (0
        or 1 on both sides). Zero delay: one per input change or clock edge.
        Timed: one per instant anything switched, glitches included.
    cycles : int
        Clock cycles simulated (one per stimulus vector).
    outputs : list of dict
        Per cycle, ``{output port: 0, 1 or None (X/Z)}`` sampled after the
        clock edge, before the next input change (zero delay only: a timed run
        samples nothing there, as its registers are still switching).
    times : list of float
        The time (ns) of each event.
    settled : list of dict
        ``{output port: value}`` sampled just before every rising edge, and at
        the end: what the netlist settled to each cycle, which a timed run
        must agree with its zero-delay run on.
    """

    events: list
    cycles: int
    outputs: list
    times: list = field(default_factory=list)
    settled: list = field(default_factory=list)


#: The zero-delay bench's period (ns); its events are the same at any period.
ZERO_DELAY_PERIOD_NS = 10.0


def _bench(net: Netlist, order: list[str], cycles: int, clock: str, reset: str | None,
           period: float, arrive: float, annotate: bool) -> str:
    """The bench: a rising clock edge at the port every ``period``; each stimulus
    vector is applied ``arrive`` after the edge before the one that takes it (a
    neighbour's flip-flop on the same clock tree, and the wiring between)."""
    width = max(1, len(order))
    drive = [f"    .{n}(vec[{i}])" for i, n in enumerate(order)]
    drive += [f"    .{clock}(clk)"] if clock in net.inputs else []
    drive += [f"    .{reset}(rst)"] if reset in net.inputs else []
    drive += [f"    .{n}(out_{i})" for i, n in enumerate(net.outputs)]
    wires = "".join(f"  wire out_{i};\n" for i in range(len(net.outputs)))
    sample = ", ".join(f"out_{i}" for i in range(len(net.outputs))) or "1'b0"
    half, eps = period / 2, 0.001
    sdf = '    $sdf_annotate("delays.sdf", dut);\n' if annotate else ""
    return f"""`timescale 1ns/1ps
module kaleido_gate_bench;
  reg clk = 0;
  reg rst = 0;
  reg [{width - 1}:0] stim [0:{cycles - 1}];
  reg [{width - 1}:0] vec;
  integer i, f, g;
{wires}  {net.top} dut (
{(',' + chr(10)).join(drive)}
  );
  initial begin
{sdf}    $readmemb("stim.mem", stim);
    f = $fopen("outputs.txt", "w");
    g = $fopen("settled.txt", "w");
    // Zeros during reset: the RTL run has no reset cycles, and a register without
    // a reset would otherwise load the first vector twice before it starts.
    vec = 0;
    rst = 1;
    #{half} clk = 1; #{half} clk = 0;
    #{half} clk = 1;
    #{arrive / 2} $dumpfile("gate.vcd");
    $dumpvars(1, dut);
    #{arrive / 2} rst = 0; vec = stim[0];
    for (i = 0; i < {cycles}; i = i + 1) begin
      #{half - arrive} clk = 0;
      #{half - eps} $fdisplay(g, "%b", {{{sample}}});
      #{eps} clk = 1;
      #{arrive / 2} $fdisplay(f, "%b", {{{sample}}});
      #{arrive / 2} if (i + 1 < {cycles}) vec = stim[i + 1];
    end
    // The last cycle's falling edge was the first one's (after reset): a cycle each.
    #{period - arrive - eps} $fdisplay(g, "%b", {{{sample}}});
    $fclose(f);
    $fclose(g);
    $finish;
  end
endmodule
"""


def simulate(netlist_text: str, top: str, stimulus: list[dict], models: Path,
             clock: str = "clk", reset: str | None = "rst", delays: str | None = None,
             period_ns: float = ZERO_DELAY_PERIOD_NS, arrive_ns: float = 1.0) -> Activity:
    """Run ``stimulus`` (one ``{input bit: 0/1}`` per cycle) through the netlist.

    Zero delay unless ``delays`` (an SDF's text, :func:`synth.sta.delays`) is
    given: then every cell switches after its annotated delay, and a pulse
    shorter than a cell's delay does not pass it (Icarus's module paths are
    inertial), at a clock of ``period_ns``, with inputs arriving ``arrive_ns``
    after each edge.
    """
    if not shutil.which("iverilog") or not shutil.which("vvp"):
        raise GateSimError("Icarus Verilog (iverilog) is not installed; run `make setup`")
    if not stimulus:
        raise GateSimError("an empty stimulus")
    if not 0 < arrive_ns < period_ns / 2:
        raise GateSimError(f"inputs must arrive within the first half of the {period_ns} ns period, "
                           f"not {arrive_ns} ns after the edge")
    net = parse(netlist_text, top)
    order = [n for n in net.inputs if n not in (clock, reset)]
    missing = [n for n in order if n not in stimulus[0]]
    if missing:
        raise GateSimError(f"the stimulus does not drive {', '.join(missing[:5])}")
    timed = delays is not None
    with tempfile.TemporaryDirectory(prefix="kaleido-gatesim-") as work:
        w = Path(work)
        (w / "netlist.v").write_text(netlist_text)
        (w / "bench.v").write_text(_bench(net, order, len(stimulus), clock, reset, period_ns, arrive_ns, timed))
        (w / "stim.mem").write_text("".join(
            "".join(str(int(vec[n])) for n in reversed(order)) + "\n" for vec in stimulus) if order
            else "0\n" * len(stimulus))
        storage = kit(str(Path(models).with_suffix(".lib"))).storage
        cells = _storage_after_the_clock(Path(models).read_text(), storage, timed)
        (w / "cells.v").write_text(_unconditional_paths(cells) if timed else cells)
        compile_ = ["iverilog", "-o", "sim.vvp", "-s", "kaleido_gate_bench"]
        if timed:
            (w / "delays.sdf").write_text(_unconditional_sdf(delays))
            compile_.append("-gspecify")
        for cmd in (compile_ + ["bench.v", "netlist.v", "cells.v"], ["vvp", "-n", "sim.vvp"]):
            proc = subprocess.run(cmd, cwd=w, capture_output=True, text=True)
            if proc.returncode != 0:
                said = (proc.stderr or proc.stdout).strip().splitlines()
                raise GateSimError(f"{cmd[0]} failed on the {top} netlist: {said[0] if said else proc.returncode}")
        times, events = _settled_changes(w / "gate.vcd")
        read = lambda name: [{n: (int(b) if b in "01" else None) for n, b in zip(net.outputs, line)}
                             for line in (w / name).read_text().split()]   # {out_0, ...} prints out_0 first
        outputs, settled = read("outputs.txt"), read("settled.txt")
    return Activity(events, len(stimulus), [] if timed else outputs, times, settled)


#: The library's storage cells (the kit's, :class:`synth.kits.Storage`) are
#: computed as its models compute them but updated once every clock edge has
#: arrived (nonblocking), as a clock tree balanced for hold makes them. The
#: library's own models update in the same step as the gates do: a flip-flop
#: behind a clock gate (one AND further from the clock) would see the new value
#: of one that is not, which no real clock tree allows. They start at 0, as the
#: RTL's registers do (a register without a reset, such as an accumulator, is not
#: X at first: its first loads count like any other). In a timed run the paths
#: to the outputs take the SDF's delays, and each cell updates when its own clock
#: arrives (the tree's skew is real there); timing checks are static timing's
#: (:mod:`synth.sta`), not the simulation's.
def _storage_model(name: str, cell: Storage, timed: bool) -> str:
    pins = list(cell.inputs) + list(cell.outputs)
    drive = "".join(f"  {'not' if e.startswith('!') else 'buf'} ({o}, q);\n" for o, e in cell.outputs.items())
    spec = ("  specify " + " ".join(f"({p} *> {o}) = (0.1, 0.1);" for p in cell.paths for o in cell.outputs)
            + " endspecify\n" if timed else "")
    return (f"module {name} ({', '.join(pins)}); input {', '.join(cell.inputs)}; "
            f"output {', '.join(cell.outputs)}; reg q = 1'b0;\n"
            f"  always @({cell.when}) {cell.takes};\n{drive}{spec}endmodule\n")


def _storage_after_the_clock(models: str, storage: dict, timed: bool = False) -> str:
    """``models`` with the kit's ``storage`` cells in place of the library's own."""
    for name, cell in storage.items():
        models, n = re.subn(rf"^module {name} \(.*?^endmodule\n", _storage_model(name, cell, timed), models,
                            flags=re.M | re.S)
        if n != 1:
            raise GateSimError(f"the cell models define {name} {n} times, not once")
    return models


# Icarus does not annotate an SDF's state-dependent delays (``COND``) onto a
# model's state-dependent paths (``if (...) (A => ZN)``): it leaves them at the
# model's own fixed delay, without a word. NanGate45's models and OpenSTA's SDF
# for them are full of both. So both become one path per arc, at the slowest of
# its states' delays: what static timing takes for the arc too.
_IF_PATH = re.compile(r"^(\s*)if\s*\(.*\)\s*(\(\s*\w+\s*=>\s*\w+\s*\)\s*=.*;)\s*$", re.M)
_COND = re.compile(r"\(COND\s+[^\n]*?\s*\(IOPATH\s+(\w+)\s+(\w+)\s+(\([^()]*\))\s*(\([^()]*\))?\s*\)\s*\)")
_IOPATH = re.compile(r"\(IOPATH\s+(\w+)\s+(\w+)\s+(\([^()]*\))\s*(\([^()]*\))?\s*\)")


def _unconditional_paths(models: str) -> str:
    """The cell models with each state-dependent path made plain, once per arc."""
    def module(m: re.Match) -> str:
        seen = set()

        def path(p: re.Match) -> str:
            arc = re.sub(r"\s+", "", p.group(2).split("=")[0])
            if arc in seen:
                return ""
            seen.add(arc)
            return f"{p.group(1)}{p.group(2)}"
        return _IF_PATH.sub(path, m.group(0))
    return re.sub(r"^module .*?^endmodule", module, models, flags=re.M | re.S)


def _unconditional_sdf(sdf: str) -> str:
    """The SDF with each cell's state-dependent delays of an arc folded into one plain
    ``IOPATH`` at their worst (per rise, fall and each of min:typ:max)."""
    if "(COND" not in sdf:
        return sdf

    def worst(a: str, b: str) -> str:
        return "(" + ":".join(f"{max(float(x), float(y)):.4f}" for x, y in
                              zip(a.strip("()").split(":"), b.strip("()").split(":"))) + ")"

    def cell(text: str) -> str:
        arcs = {}
        for m in list(_COND.finditer(text)) + list(_IOPATH.finditer(_COND.sub("", text))):
            key = (m.group(1), m.group(2))
            rise, fall = m.group(3), m.group(4) or m.group(3)
            old = arcs.get(key)
            arcs[key] = (rise, fall) if old is None else (worst(old[0], rise), worst(old[1], fall))
        if not arcs:
            return text
        body = "".join(f"    (IOPATH {i} {o} {r} {f})\n" for (i, o), (r, f) in arcs.items())
        return re.sub(r"\(ABSOLUTE\n.*?\n   \)", lambda _: f"(ABSOLUTE\n{body}   )", text, count=1, flags=re.S)
    parts = re.split(r"(?=^ \(CELL\n)", sdf, flags=re.M)
    return "".join(cell(p) if "(COND" in p else p for p in parts)


def _settled_changes(vcd: Path) -> tuple[list, list]:
    """The time (ns) of every time step after the first dump in which some net
    changed, and per such step ``{net: value}`` of the nets whose last value in
    the step differs from their value before it (both 0 or 1).

    Read line by line: the bench's VCD is Icarus's plain form (one-bit nets of one
    scope), and a general VCD reader takes most of a run's time on it.
    """
    names, value, events, times = {}, {}, [], []
    step, started, depth, now, scale = {}, False, 0, 0.0, 1e-3
    with open(vcd) as f:
        for line in f:
            c = line[:1]
            if c in "01xzXZ" and line[1:2] not in ("", "\n"):
                ident = line[1:].rstrip("\n")
                if ident in names:
                    step[ident] = c
            elif c == "#":
                if started:
                    events.append(_close(step, value, names))
                    times.append(now)
                started, step, now = True, {}, int(line[1:]) * scale
            elif c == "$":
                words = line.split()
                if words[0] == "$scope":
                    depth += 1
                elif words[0] == "$upscope":
                    depth -= 1
                elif words[0] == "$var" and depth == 2 and words[2] == "1":
                    names.setdefault(words[3], words[4])
                elif words[0] == "$timescale":
                    scale = _scale(words[1:] or [next(f).strip()])
    events.append(_close(step, value, names))
    times.append(now)
    # The first step is the dump of initial values; a step in which nothing settled
    # to another 0 or 1 (a net through X and back) is no event.
    kept = [(t, e) for t, e in zip(times[1:], events[1:]) if e]
    return [t for t, _ in kept], [e for _, e in kept]


def _scale(words: list) -> float:
    """ns per VCD time unit, from a ``$timescale`` declaration's words."""
    text = "".join(w for w in words if w != "$end")
    m = re.match(r"(\d+)\s*(s|ms|us|ns|ps|fs)", text)
    if not m:
        raise GateSimError(f"a VCD timescale this reader does not know: {text!r}")
    return int(m.group(1)) * {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0, "ps": 1e-3, "fs": 1e-6}[m.group(2)]


def _close(step: dict, value: dict, names: dict) -> dict:
    changed = {}
    for ident, v in step.items():
        old = value.get(ident)
        value[ident] = v
        if old in ("0", "1") and v in ("0", "1") and v != old:
            changed[names[ident]] = int(v)
    return changed
