"""Zero-delay simulation of a mapped netlist with the library's own cell models.

The netlist is the one static timing reads (:func:`synth.flow.gate_netlist`:
every port and net one bit). A generated test bench holds reset for two
cycles (inputs at 0), then applies one stimulus vector per cycle (inputs change half a period
before the rising edge) under Icarus with the library's Verilog cell models
(``osu018_stdcells.v`` beside ``osu018_stdcells.lib``), and dumps every net of
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
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Netlist", "instances", "parse", "cell_models", "Activity", "simulate", "GateSimError"]


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
        One per input change or clock edge after reset: ``{net: new value}`` of
        every net whose settled value changed (0 or 1 on both sides).
    cycles : int
        Clock cycles simulated (one per stimulus vector).
    outputs : list of dict
        Per cycle, ``{output port: 0, 1 or None (X/Z)}`` sampled before the next input change.
    """

    events: list
    cycles: int
    outputs: list


def _bench(net: Netlist, order: list[str], cycles: int, clock: str, reset: str | None) -> str:
    width = max(1, len(order))
    drive = [f"    .{n}(vec[{i}])" for i, n in enumerate(order)]
    drive += [f"    .{clock}(clk)"] if clock in net.inputs else []
    drive += [f"    .{reset}(rst)"] if reset in net.inputs else []
    drive += [f"    .{n}(out_{i})" for i, n in enumerate(net.outputs)]
    wires = "".join(f"  wire out_{i};\n" for i in range(len(net.outputs)))
    sample = ", ".join(f"out_{i}" for i in range(len(net.outputs))) or "1'b0"
    return f"""`timescale 1ns/1ps
module kaleido_gate_bench;
  reg clk = 0;
  reg rst = 0;
  reg [{width - 1}:0] stim [0:{cycles - 1}];
  reg [{width - 1}:0] vec;
  integer i, f;
{wires}  {net.top} dut (
{(',' + chr(10)).join(drive)}
  );
  initial begin
    $readmemb("stim.mem", stim);
    f = $fopen("outputs.txt", "w");
    // Zeros during reset: the RTL run has no reset cycles, and a register without
    // a reset would otherwise load the first vector twice before it starts.
    vec = 0;
    rst = 1;
    repeat (2) begin #5 clk = 1; #5 clk = 0; end
    rst = 0;
    #1 $dumpfile("gate.vcd");
    $dumpvars(1, dut);
    for (i = 0; i < {cycles}; i = i + 1) begin
      #4 vec = stim[i];
      #5 clk = 1;
      #4 $fdisplay(f, "%b", {{{sample}}});
      #1 clk = 0;
    end
    $fclose(f);
    $finish;
  end
endmodule
"""


def simulate(netlist_text: str, top: str, stimulus: list[dict], models: Path,
             clock: str = "clk", reset: str | None = "rst") -> Activity:
    """Run ``stimulus`` (one ``{input bit: 0/1}`` per cycle) through the netlist."""
    if not shutil.which("iverilog") or not shutil.which("vvp"):
        raise GateSimError("Icarus Verilog (iverilog) is not installed; run `make setup`")
    if not stimulus:
        raise GateSimError("an empty stimulus")
    net = parse(netlist_text, top)
    order = [n for n in net.inputs if n not in (clock, reset)]
    missing = [n for n in order if n not in stimulus[0]]
    if missing:
        raise GateSimError(f"the stimulus does not drive {', '.join(missing[:5])}")
    with tempfile.TemporaryDirectory(prefix="kaleido-gatesim-") as work:
        w = Path(work)
        (w / "netlist.v").write_text(netlist_text)
        (w / "bench.v").write_text(_bench(net, order, len(stimulus), clock, reset))
        (w / "stim.mem").write_text("".join(
            "".join(str(int(vec[n])) for n in reversed(order)) + "\n" for vec in stimulus) if order
            else "0\n" * len(stimulus))
        (w / "cells.v").write_text(_storage_after_the_clock(models.read_text()))
        for cmd in (["iverilog", "-o", "sim.vvp", "-s", "kaleido_gate_bench", "bench.v", "netlist.v", "cells.v"],
                    ["vvp", "-n", "sim.vvp"]):
            proc = subprocess.run(cmd, cwd=w, capture_output=True, text=True)
            if proc.returncode != 0:
                said = (proc.stderr or proc.stdout).strip().splitlines()
                raise GateSimError(f"{cmd[0]} failed on the {top} netlist: {said[0] if said else proc.returncode}")
        events = _settled_changes(w / "gate.vcd")
        outputs = []
        for line in (w / "outputs.txt").read_text().split():
            # {out_0, out_1, ...} prints out_0 first
            outputs.append({n: (int(b) if b in "01" else None) for n, b in zip(net.outputs, line)})
    return Activity(events, len(stimulus), outputs)


#: The library's storage cells, computed as its models compute them but updated
#: once every clock edge has arrived (nonblocking), as a clock tree balanced for
#: hold makes them. The library's own models update in the same step as the gates
#: do: a flip-flop behind a clock gate (one AND further from the clock) would see
#: the new value of one that is not, which no real clock tree allows. They start
#: at 0, as the RTL's registers do (a register without a reset, such as an
#: accumulator, is not X at first: its first loads count like any other).
STORAGE_MODELS = {
    "DFFPOSX1": "module DFFPOSX1 (CLK, D, Q); input CLK, D; output reg Q = 1'b0;\n"
                "  always @(posedge CLK) Q <= D;\nendmodule\n",
    "DFFNEGX1": "module DFFNEGX1 (CLK, D, Q); input CLK, D; output reg Q = 1'b0;\n"
                "  always @(negedge CLK) Q <= D;\nendmodule\n",
    "LATCH": "module LATCH (CLK, D, Q); input CLK, D; output reg Q = 1'b0;\n"
             "  always @(CLK or D) if (CLK) Q <= D;\nendmodule\n",
}


def _storage_after_the_clock(models: str) -> str:
    """``models`` with :data:`STORAGE_MODELS` in place of the library's own."""
    for name, model in STORAGE_MODELS.items():
        models, n = re.subn(rf"^module {name} \(.*?^endmodule\n", model, models, flags=re.M | re.S)
        if n != 1:
            raise GateSimError(f"the cell models define {name} {n} times, not once")
    return models


def _settled_changes(vcd: Path) -> list[dict]:
    """Per time step after the first dump, ``{net: value}`` of the nets whose last
    value in the step differs from their value before it (both 0 or 1).

    Read line by line: the bench's VCD is Icarus's plain form (one-bit nets of one
    scope), and a general VCD reader takes most of a run's time on it.
    """
    names, value, events = {}, {}, []
    step, started, depth = {}, False, 0
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
                started, step = True, {}
            elif c == "$":
                words = line.split()
                if words[0] == "$scope":
                    depth += 1
                elif words[0] == "$upscope":
                    depth -= 1
                elif words[0] == "$var" and depth == 2 and words[2] == "1":
                    names.setdefault(words[3], words[4])
    events.append(_close(step, value, names))
    return events[1:]           # the first step is the dump of initial values


def _close(step: dict, value: dict, names: dict) -> dict:
    changed = {}
    for ident, v in step.items():
        old = value.get(ident)
        value[ident] = v
        if old in ("0", "1") and v in ("0", "1") and v != old:
            changed[names[ident]] = int(v)
    return changed
