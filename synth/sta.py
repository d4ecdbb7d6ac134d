"""Static timing with OpenSTA on the gate netlist Yosys maps.

Debian's ``opensta`` (the ``sta`` binary, a 2019 build) reads the liberty file
and the netlist of :func:`synth.flow.gate_netlist`, clock tree included
(:mod:`synth.clock_tree`). Timing: one clock on ``clk``, propagated through the
tree; inputs arriving and outputs leaving a stated share of the period after
and before a flip-flop's clock edge (``io_share``: the wiring a block sits in
when it is timed alone; 0 for the whole engine, whose ports face registers);
every net's wire from the kit's wire-load model (:func:`wire_loads`); inputs
driven by the kit's driving cell and outputs loaded with its output load
(:class:`synth.kits.CellKit`), in the liberty's own capacitance unit; and no path from the reset (held for many
cycles, and buffered at placement). The critical path is the longest
register-to-register, input-to-register or register-to-output path, with the
capturing flip-flop's setup time and the clocks' skew, or the longest path
into a clock gate's latch (:func:`timing`). Hold (the shortest path into
each flip-flop, against its hold time) and the clock gates' own checks (the
enable latch to the gating AND, setup and hold) are reported beside it, with
the tree's skew in them. :func:`delays` writes the same analysis's cell
delays as an SDF for the timed simulation. Energy does not come from here:
this build's ``report_power`` does not propagate activity once a global one
is set and sums rise and fall internal energy (see :mod:`synth.power` for the
gate-level flow).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .gatesim import instances, parse_any
from .kits import kit
from .liberty import library

__all__ = ["StaError", "sta_command", "timing", "delays", "wire_loads", "flop_outputs", "BLOCK_IO_SHARE"]

#: The share of the period a block timed alone gives the wiring on each side of
#: it: its inputs arrive this late, and its outputs must leave this early.
BLOCK_IO_SHARE = 0.1

class StaError(RuntimeError):
    """OpenSTA is missing or failed; the message says why."""


def sta_command() -> str:
    exe = shutil.which("sta")
    if not exe:
        raise StaError("OpenSTA is not installed (the sta command); run make setup, "
                       "or apt-get install opensta")
    return exe


def _run(script: str, netlist: str, liberty: str, wrote: str | None = None) -> str | tuple[str, str]:
    """OpenSTA's report of ``script``; with ``wrote``, the file of that name it
    wrote as well (as ``(report, file text)``)."""
    with tempfile.TemporaryDirectory(prefix="kaleido-sta-") as work:
        Path(work, "netlist.v").write_text(netlist)
        shutil.copyfile(liberty, Path(work, "cells.lib"))
        Path(work, "run.tcl").write_text(script)
        proc = subprocess.run([sta_command(), "-no_init", "-no_splash", "-exit", "run.tcl"], cwd=work,
                              capture_output=True, text=True)
        written = Path(work, wrote).read_text() if wrote and Path(work, wrote).is_file() else None
    text = proc.stdout + proc.stderr
    errors = [l.strip() for l in text.splitlines() if l.startswith(("Error", "error"))]
    if proc.returncode != 0 or errors:
        raise StaError("OpenSTA failed: " + (errors[0] if errors else text.strip()[-300:]))
    if wrote:
        if written is None:
            raise StaError(f"OpenSTA wrote no {wrote}")
        return text, written
    return text


def delays(netlist: str, top: str, liberty: str, period_ns: float, io_share: float = 0.0) -> tuple[str, float]:
    """The netlist's cell delays as an SDF (at each net's load and each input's
    transition, the same constraints and wire loads as :func:`timing`), and the
    clock tree's latency (ns): how long after the port's edge the flip-flops'
    clock arrives."""
    text, sdf = _run(_header(top, period_ns, io_share, netlist, liberty)
                     + "write_sdf -no_timestamp -no_version -digits 4 delays.sdf\n"
                     + "report_checks -path_delay min -digits 4 -to [all_registers -edge_triggered -data_pins]\n",
                     netlist, liberty, wrote="delays.sdf")
    # OpenSTA writes each value as (min::max), with no typical; Icarus annotates the
    # typical alone, and would keep the cell models' own fixed delays without a word.
    sdf = re.sub(r"\((-?[\d.]+)::(-?[\d.]+)\)", r"(\1:\2:\2)", sdf)
    latency = [float(v) for v in re.findall(r"^\s*([\d.]+)\s+[\d.]+\s+clock network delay \(propagated\)",
                                            text, re.M)]
    return sdf, max(latency, default=0.0)


def _header(top: str, period_ns: float, io_share: float, netlist: str, liberty: str) -> str:
    io = io_share * period_ns
    k, unit = kit(liberty), library(liberty).capacitance_pf
    clock_pin = sorted(set(k.flops.values()))[0]      # every flip-flop of a kit shares its clock pin's name
    # The clock is propagated through the netlist's clock tree (synth.clock_tree). A
    # block's neighbours sit on the same tree, so its inputs leave, and its outputs are
    # taken, on a flip-flop's clock as it arrives here, not on the ideal edge at the port.
    inputs = "[delete_from_list [all_inputs] [get_ports clk]]"
    return ("read_liberty cells.lib\nread_verilog netlist.v\n"
            f"link_design {top}\n"
            f"create_clock -name clk -period {period_ns} [get_ports clk]\n"
            "set_propagated_clock [all_clocks]\n"
            "if {[llength [all_registers -edge_triggered]]} {\n"
            "  set ref [get_pins [get_full_name [lindex [all_registers -edge_triggered] 0]]/" + clock_pin + "]\n"
            f"  set_input_delay {io:.4f} -clock clk -reference_pin $ref {inputs}\n"
            f"  set_output_delay {io:.4f} -clock clk -reference_pin $ref [all_outputs]\n"
            "} else {\n"
            f"  set_input_delay {io:.4f} -clock clk {inputs}\n"
            f"  set_output_delay {io:.4f} -clock clk [all_outputs]\n"
            "}\n"
            # The same boundary the timing-driven mapping was given.
            f"set_driving_cell -lib_cell {k.driving_cell} [delete_from_list [all_inputs] [get_ports clk]]\n"
            f"set_load {k.output_load_pf / unit:.6g} [all_outputs]\n"
            + wire_loads(netlist, liberty) +
            # Reset is held for many cycles and fans out to every flip-flop; buffering that
            # tree is placement's job, so its paths are not what limits the clock.
            "if {[llength [get_ports -quiet rst]]} { set_false_path -from [get_ports rst] }\n")


def wire_loads(netlist: str, liberty: str) -> str:
    """``set_load`` commands giving every net its wire (the kit's wire-load model), in the liberty's unit."""
    k, unit = kit(liberty), library(liberty).capacitance_pf
    net = parse_any(netlist)
    fanout = {}
    for _, _, pins in net.cells:
        for p, n in pins.items():
            n = net.root(n)
            if not n.startswith("1'"):
                fanout[n] = fanout.get(n, 0) + (p not in k.outputs)
    groups = {}
    for n, pins in fanout.items():
        groups.setdefault(k.wire_pf(pins) / unit, []).append(n)
    return "".join(f"set_load {pf:.6g} [get_nets {{{' '.join(_tcl(n) for n in names)}}}]\n"
                   for pf, names in sorted(groups.items()))


def _tcl(net: str) -> str:
    # An escaped Verilog name (\\$12) is the net $12 to OpenSTA; Tcl needs its $ escaped in braces.
    return net[1:] if net.startswith("\\") else net


#: The worst setup path into flip-flops, into output ports and into latches.
CHECKS = ("report_checks -path_delay max -digits 4 -to [all_registers -edge_triggered -data_pins]\n"
          "if {[llength [all_outputs]]} { report_checks -path_delay max -digits 4 -to [all_outputs] }\n"
          "set latch_inputs [all_registers -level_sensitive -data_pins]\n"
          "if {[llength $latch_inputs]} { report_checks -path_delay max -digits 4 -to $latch_inputs }\n")

#: The worst path of each group (the clock's, and the clock gates' checks) for
#: hold, and the gates' setup check.
MARK = "==== hold and gating ===="
OTHER_CHECKS = (f"puts \"{MARK}\"\n"
                "report_checks -path_delay min -digits 4 -group_count 1\n"
                "report_checks -path_delay max -digits 4 -group_count 1\n")


def timing(netlist: str, top: str, liberty: str, period_ns: float = 20.0, io_share: float = 0.0) -> dict:
    """The worst setup path: ``critical_path_ns`` (the least clock period that meets
    it), ``fmax_mhz``, ``startpoint``, ``endpoint`` and ``slack_ns`` at ``period_ns``
    (the period less the critical path); ``hold_slack_ns``, and with clock gates
    ``gating_setup_slack_ns`` and ``gating_hold_slack_ns`` (else None), at
    ``period_ns``; ``io_ns``, the input and output delay (``io_share`` of the period)."""
    # The worst path into each kind of endpoint: flip-flops, output ports and, with
    # clock gates, their latches. Reported together, a latch's input (checked at
    # the edge that opens it, half a period in) would hide the worst flip-flop
    # path at a long period; the least period of each says which one limits.
    text = _run(_header(top, period_ns, io_share, netlist, liberty) + CHECKS + OTHER_CHECKS, netlist, liberty)
    text, others = text.split(MARK, 1)
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
    regs = {pin.split("/")[0]: net for net, pin in flop_outputs(netlist, liberty).items()}
    name = lambda x: f"{regs[x]} ({x})" if x in regs else x
    return {"critical_path_ns": path, "fmax_mhz": 1000.0 / path, "startpoint": name(start.group(1)),
            "endpoint": name(end.group(1)), "slack_ns": period_ns - path, "period_ns": period_ns,
            **_other_slacks(others), "io_ns": io_share * period_ns}


def _other_slacks(text: str) -> dict:
    """Hold slack of the clock's paths, and the clock gates' setup and hold slack,
    from :data:`OTHER_CHECKS`' report (None where no such path exists)."""
    out = {"hold_slack_ns": None, "gating_setup_slack_ns": None, "gating_hold_slack_ns": None}
    for block in re.split(r"^(?=Startpoint:)", text, flags=re.M):
        group = re.search(r"^Path Group:\s*(\S+)", block, re.M)
        kind = re.search(r"^Path Type:\s*(min|max)", block, re.M)
        slack = re.search(r"^\s*(-?[\d.]+)\s+slack\s+\((MET|VIOLATED)\)", block, re.M)
        if not (group and kind and slack):
            continue
        gating = "clock_gating" in group.group(1)
        key = ("gating_" + ("hold" if kind.group(1) == "min" else "setup") if gating
               else "hold" if kind.group(1) == "min" else None)
        if key:
            value = float(slack.group(1))
            old = out[f"{key}_slack_ns"]
            out[f"{key}_slack_ns"] = value if old is None else min(old, value)
    return out


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


def flop_outputs(netlist: str, liberty: str) -> dict[str, str]:
    """``{net: instance/pin}`` of every flip-flop output in a Yosys netlist.

    A flip-flop is one of the kit's edge-triggered cells (a latch, which holds a
    clock gate's enable, is not one); its ``Q`` drives the net named after the
    register bit (a port, when the register is one).
    """
    flops = kit(liberty).flops
    return {pins["Q"]: f"{name}/Q" for cell, name, pins in instances(netlist)
            if cell in flops and "Q" in pins}
