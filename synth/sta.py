"""Static timing with OpenSTA on the gate netlist Yosys maps.

Debian's ``opensta`` (the ``sta`` binary, a 2019 build) reads the liberty file
and the netlist of :func:`synth.flow.gate_netlist`. Timing: one clock on
``clk``, inputs arriving and outputs leaving at its edge (zero external delay),
ideal clock network, no wire load, inputs driven by :data:`synth.flow.DRIVING_CELL`
and outputs loaded with :data:`synth.flow.OUTPUT_LOAD_PF`, and no path from the reset (held for many
cycles, and buffered at placement): the critical path is the longest
register-to-register, input-to-register or register-to-output path, with the
capturing flip-flop's setup time, or the longest path into a clock gate's latch
(:func:`timing`). Energy does not come from here: this build's
``report_power`` does not propagate activity once a global one is set and sums
rise and fall internal energy (see :mod:`synth.power` for the gate-level flow).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .flow import DRIVING_CELL, OUTPUT_LOAD_PF
from .gatesim import instances

__all__ = ["StaError", "sta_command", "timing", "flop_outputs", "LATCHES"]

#: The library's latches: storage, but not registers (the mapping uses them in clock gates).
LATCHES = frozenset({"LATCH"})


class StaError(RuntimeError):
    """OpenSTA is missing or failed; the message says why."""


def sta_command() -> str:
    exe = shutil.which("sta")
    if not exe:
        raise StaError("OpenSTA is not installed (the sta command); run make setup, "
                       "or apt-get install opensta")
    return exe


def _run(script: str, netlist: str, liberty: str) -> str:
    with tempfile.TemporaryDirectory(prefix="kaleido-sta-") as work:
        Path(work, "netlist.v").write_text(netlist)
        shutil.copyfile(liberty, Path(work, "cells.lib"))
        Path(work, "run.tcl").write_text(script)
        proc = subprocess.run([sta_command(), "-no_init", "-no_splash", "-exit", "run.tcl"], cwd=work,
                              capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    errors = [l.strip() for l in text.splitlines() if l.startswith(("Error", "error"))]
    if proc.returncode != 0 or errors:
        raise StaError("OpenSTA failed: " + (errors[0] if errors else text.strip()[-300:]))
    return text


def _header(top: str, period_ns: float) -> str:
    return ("read_liberty cells.lib\nread_verilog netlist.v\n"
            f"link_design {top}\n"
            f"create_clock -name clk -period {period_ns} [get_ports clk]\n"
            "set_input_delay 0 -clock clk [delete_from_list [all_inputs] [get_ports clk]]\n"
            "set_output_delay 0 -clock clk [all_outputs]\n"
            # The same boundary the timing-driven mapping was given.
            f"set_driving_cell -lib_cell {DRIVING_CELL} [delete_from_list [all_inputs] [get_ports clk]]\n"
            f"set_load {OUTPUT_LOAD_PF} [all_outputs]\n"
            # Reset is held for many cycles and fans out to every flip-flop; buffering that
            # tree is placement's job, so its paths are not what limits the clock.
            "if {[llength [get_ports -quiet rst]]} { set_false_path -from [get_ports rst] }\n")


#: The worst setup path into flip-flops, into output ports and into latches.
CHECKS = ("report_checks -path_delay max -digits 4 -to [all_registers -edge_triggered -data_pins]\n"
          "if {[llength [all_outputs]]} { report_checks -path_delay max -digits 4 -to [all_outputs] }\n"
          "set latch_inputs [all_registers -level_sensitive -data_pins]\n"
          "if {[llength $latch_inputs]} { report_checks -path_delay max -digits 4 -to $latch_inputs }\n")


def timing(netlist: str, top: str, liberty: str, period_ns: float = 20.0) -> dict:
    """The worst setup path: ``critical_path_ns`` (the least clock period that meets
    it), ``fmax_mhz``, ``startpoint``, ``endpoint`` and ``slack_ns`` at ``period_ns``
    (the period less the critical path)."""
    # The worst path into each kind of endpoint: flip-flops, output ports and, with
    # clock gates, their latches. Reported together, a latch's input (checked at
    # the edge that opens it, half a period in) would hide the worst flip-flop
    # path at a long period; the least period of each says which one limits.
    text = _run(_header(top, period_ns) + CHECKS, netlist, liberty)
    paths = []
    for block in re.split(r"^(?=Startpoint:)", text, flags=re.M):
        start = re.search(r"^Startpoint:\s*(\S+)", block, re.M)
        end = re.search(r"^Endpoint:\s*(\S+)", block, re.M)
        slack = re.search(r"^\s*(-?[\d.]+)\s+slack\s+\((MET|VIOLATED)\)", block, re.M)
        if start and end and slack:
            paths.append((_least_period(block, period_ns), start, end, slack))
    if not paths:
        raise StaError("OpenSTA reported no constrained path (is there a clk port?)")
    path, start, end, _ = max(paths, key=lambda p: p[0])
    # Name a flip-flop by the register bit it holds (its Q net), not its cell's number.
    regs = {pin.split("/")[0]: net for net, pin in flop_outputs(netlist).items()}
    name = lambda x: f"{regs[x]} ({x})" if x in regs else x
    return {"critical_path_ns": path, "fmax_mhz": 1000.0 / path, "startpoint": name(start.group(1)),
            "endpoint": name(end.group(1)), "slack_ns": period_ns - path, "period_ns": period_ns}


def _least_period(block: str, period_ns: float) -> float:
    """The least clock period at which one reported path meets its check. A path
    from a clock edge to the next takes its delay plus its setup; a gating check,
    launched by the latch at the falling edge and checked at the rising one, has
    half a period for the same, so it needs twice its delay. A path into a clock
    gate's latch, open from the falling edge to the next rising one, may borrow
    until it closes: it needs its delay (the latch's own D-to-Q, some 0.2 ns, is
    then the gating check's, and not added here)."""
    edges = [float(t) for t in re.findall(r"^\s*[\d.]+\s+([\d.]+)\s+clock \S+ \((?:rise|fall) edge\)",
                                          block, re.M)]
    arrival = re.search(r"^\s*(-?[\d.]+)\s+data arrival time", block, re.M)
    required = re.search(r"^\s*(-?[\d.]+)\s+data required time", block, re.M)
    if len(edges) < 2 or not (arrival and required):
        raise StaError("OpenSTA's path report has no clock edges or no arrival and required times")
    launch, capture = edges[0], edges[1]
    if "time borrowed from endpoint" in block:
        return float(arrival.group(1)) - launch
    share = (capture - launch) / period_ns              # of a period between the two edges
    return (float(arrival.group(1)) - launch + capture - float(required.group(1))) / share


def flop_outputs(netlist: str) -> dict[str, str]:
    """``{net: instance/pin}`` of every flip-flop output in a Yosys netlist.

    A flip-flop is a cell with a ``CLK`` pin (a latch, which holds a clock gate's
    enable, is not one); its ``Q`` drives the net named after the register bit (a
    port, when the register is one).
    """
    return {pins["Q"]: f"{name}/Q" for cell, name, pins in instances(netlist)
            if "CLK" in pins and "Q" in pins and cell not in LATCHES}
