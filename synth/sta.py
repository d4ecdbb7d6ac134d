"""Static timing and power with OpenSTA on the gate netlist Yosys maps.

Debian's ``opensta`` (the ``sta`` binary, a 2019 build) reads the liberty file
and the netlist of :func:`synth.flow.gate_netlist`. Timing: one clock on
``clk``, inputs arriving and outputs leaving at its edge (zero external delay),
ideal clock network, no wire load, inputs driven by :data:`synth.flow.DRIVING_CELL`
and outputs loaded with :data:`synth.flow.OUTPUT_LOAD_PF`, and no path from the reset (held for many
cycles, and buffered at placement): the critical path is the longest
register-to-register, input-to-register or register-to-output path, with the
capturing flip-flop's setup time. Power: ``report_power`` under switching
activities the caller measured, set on input ports and flip-flop outputs
(this build has no ``read_vcd`` / ``read_saif``); OpenSTA propagates them
through the logic.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .flow import DRIVING_CELL, OUTPUT_LOAD_PF
from .liberty import inverter

__all__ = ["StaError", "sta_command", "timing", "power", "flop_outputs", "tie_constants"]


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


def timing(netlist: str, top: str, liberty: str, period_ns: float = 20.0) -> dict:
    """The worst setup path: ``critical_path_ns`` (the least clock period that meets
    it), ``fmax_mhz``, ``startpoint``, ``endpoint`` and ``slack_ns`` at ``period_ns``."""
    text = _run(_header(top, period_ns) + "report_checks -path_delay max -digits 4\n", netlist, liberty)
    start = re.search(r"^Startpoint:\s*(\S+)", text, re.M)
    end = re.search(r"^Endpoint:\s*(\S+)", text, re.M)
    slack = re.search(r"^\s*(-?[\d.]+)\s+slack\s+\((MET|VIOLATED)\)", text, re.M)
    if not (start and end and slack):
        raise StaError("OpenSTA reported no constrained path (is there a clk port?)")
    path = period_ns - float(slack.group(1))
    # Name a flip-flop by the register bit it holds (its Q net), not its cell's number.
    regs = {pin.split("/")[0]: net for net, pin in flop_outputs(netlist).items()}
    name = lambda x: f"{regs[x]} ({x})" if x in regs else x
    return {"critical_path_ns": path, "fmax_mhz": 1000.0 / path, "startpoint": name(start.group(1)),
            "endpoint": name(end.group(1)), "slack_ns": float(slack.group(1)), "period_ns": period_ns}


def flop_outputs(netlist: str) -> dict[str, str]:
    """``{net: instance/pin}`` of every flip-flop output in a Yosys netlist.

    A flip-flop is a cell with a ``CLK`` pin; its ``Q`` drives the net named
    after the register bit (a port, when the register is one).
    """
    out = {}
    for m in re.finditer(r"^\s*(\w+)\s+(\S+)\s*\((.*?)\);", netlist, re.M | re.S):
        pins = dict(re.findall(r"\.(\w+)\(([^()]*)\)", m.group(3)))
        if "CLK" in pins and "Q" in pins:
            out[pins["Q"].strip()] = f"{m.group(2)}/Q"
    return out


#: The nets :func:`tie_constants` adds for a steady 1: an undriven net, which
#: OpenSTA gives the global activity (duty 0 when that is still), and its inverse.
HELD_LOW, HELD_HIGH = "kaleido_held_low", "kaleido_held_high"


def tie_constants(netlist: str, nets, high=(), liberty: str | None = None) -> str:
    """The netlist with every load of each of ``nets`` tied to a constant, and
    every load of each of ``high`` fed a steady 1.

    Drivers stay (a flip-flop still clocks; its ``Q`` pin is kept); the cells
    the net fed now see a constant, which this OpenSTA build treats as a
    source with the ``-input`` activity (see :func:`power`). A constant ``1'b1``
    would toggle the same way, so the steady 1 is the liberty's inverter of an
    undriven net: held at the global activity, which :func:`power` keeps still.
    """
    nets, high = set(nets), set(high) - set(nets)

    def repl(m):
        pin, net = m.group(1), m.group(2).strip()
        if pin == "Q" or net not in nets | high:
            return m.group(0)
        return f".{pin}(1'b0)" if net in nets else f".{pin}({HELD_HIGH})"
    out = re.sub(r"\.(\w+)\(([^()]*)\)", repl, netlist)
    if high:
        if liberty is None:
            raise ValueError("a steady 1 needs the liberty file, for its inverter")
        if out.count("endmodule") != 1:
            raise StaError("steady nets need a flat netlist of one module")
        cell, a, y = inverter(liberty)
        out = out.replace("endmodule", f"  wire {HELD_LOW};\n  wire {HELD_HIGH};\n"
                                       f"  {cell} kaleido_tie_high (.{a}({HELD_LOW}), .{y}({HELD_HIGH}));\n"
                                       "endmodule")
    return out


def power(netlist: str, top: str, liberty: str, period_ns: float, tied=(),
          tied_activity: tuple[float, float] = (0.0, 0.0),
          global_activity: tuple[float, float] = (0.0, 0.0), held_high=()) -> dict:
    """``report_power`` at ``period_ns``, with switching activity in two classes.

    What Debian's 2019 OpenSTA does, measured: ``-global`` (toggles per clock
    cycle) sets every source, input ports and flip-flop outputs alike;
    ``-input`` (toggles per second) reaches only constant-driven pins; the
    per-port and per-pin options and case analysis change nothing. So the
    loads of the nets in ``tied`` are tied to constants (:func:`tie_constants`)
    and toggle at ``tied_activity``; every other source at ``global_activity``.
    Both are ``(toggles per cycle, duty)``. A source at ``global_activity``
    has one duty; the loads of the nets in ``held_high`` see a steady 1
    instead (:func:`tie_constants`). Input ports not tied add only their own
    nets' switching, at ``tied_activity``: measured, the ``-input`` activity
    reaches them too, but not the logic they feed. Returns the total's
    ``internal_w``, ``switching_w``, ``leakage_w`` and ``total_w``.
    """
    per_second = 1e9 / period_ns
    script = (_header(top, period_ns)
              + f"set_power_activity -global -activity {global_activity[0]:.6g} -duty {global_activity[1]:.6g}\n"
              + f"set_power_activity -input -activity {tied_activity[0] * per_second:.6g} "
                f"-duty {tied_activity[1]:.6g}\n"
              + "report_power -digits 6\n")
    text = _run(script, tie_constants(netlist, tied, held_high, liberty), liberty)
    row = re.search(r"^Total\s+([-\d.eE+]+)\s+([-\d.eE+]+)\s+([-\d.eE+]+)\s+([-\d.eE+]+)", text, re.M)
    if not row:
        raise StaError("OpenSTA printed no power total")
    internal, switching, leakage, total = (float(v) for v in row.groups())
    return {"internal_w": internal, "switching_w": switching, "leakage_w": leakage, "total_w": total}
